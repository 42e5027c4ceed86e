"""The course every tune workflow follows (`mpiguide tune` for the collectives,
`mpiguide ddt tune` for derived datatypes; docs/tuning.md): measure every
alternative, choose profiles where one is faster by the threshold, measure again
with the tuned library, report.

A tune directory holds tune.json (the threshold and the command), measure/ and
validate/ (two run directories; the profiles in validate/profiles/<stack>/) and
the report. A workflow starts, resumes after an interruption in either phase,
or only rebuilds its report."""

from __future__ import annotations

import argparse
import shutil
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from mpiguide.core import launch, runner
from mpiguide.core.errors import MpiguideError
from mpiguide.core.runner import RunDir
from mpiguide.core.suite import Suite
from mpiguide.front import commands

TUNE_STATE = "tune.json"
CHECKS_FAILED = 3  # commands.execute: every launch completed, some configurations failed their data check
console = commands.console


class TuneWorkflow(ABC):
    """One suite's tune workflow: what it measures, how it chooses and writes profiles, its report."""

    command: str  # e.g. "mpiguide tune"
    measured: str  # what the measurement phase measures, for the console
    validated: str  # what the validation phase measures
    alternative: str  # what must save time over native: "a mock-up"
    run_name: str  # of the run ids: "tune" gives 20261125-101500-tune-measure

    def __init__(self, suite: Suite):
        self.suite = suite

    @abstractmethod
    def load(self, rd: RunDir) -> Any:
        """The analysis input of a run of the suite (the measurement or the validation)."""

    @abstractmethod
    def validation_params(self, params: dict, measured: Any, state: dict) -> dict:
        """The validation run's parameters from the measurement's (and what it measured): the same grid plus
        the tuned library with the profiles in PROFILES."""

    @abstractmethod
    def write_profiles(self, measured: Any, state: dict, out: Path, origin: str) -> list[Path]:
        """Profiles chosen from the measurement, in out/<stack>/ (every stack gets its directory)."""

    @abstractmethod
    def write_report(self, out_dir: Path, state: dict, measured: Any | None = None) -> Path:
        """The tune report in out_dir (measured: the measurement, if the caller has loaded it already)."""

    # ------------------------------------------------------------ the course

    def state(self, path: Path) -> dict:
        if not (path / TUNE_STATE).is_file():
            raise MpiguideError(f"{path} is not a tune directory (no {TUNE_STATE}); start one with {self.command}")
        return runner.read_json(path / TUNE_STATE)

    def validation_run(self, out_dir: Path, rd_m: RunDir, state: dict, measured: Any) -> RunDir:
        """The second set of launches, planned from the measurement's parameters."""
        params = self.validation_params(rd_m.meta["params"], measured, state)
        launches = runner.plan(self.suite, params, rd_m.meta["stacks_order"], rd_m.meta["runs"],
                               rd_m.meta["measurement"])
        if rd_m.meta["measurement"]["nrep"] == "estimate":
            launches = runner.reuse_calibration(rd_m, launches)
        meta = runner.new_meta(self.suite, params, rd_m.meta["stacks_order"], rd_m.meta["runs"],
                               rd_m.meta["measurement"], rd_m.meta["analysis"],
                               launch.LaunchSpec.from_dict(rd_m.meta["launch"]),
                               runner.new_run_id(f"{self.suite.name}-validate"), state["command"])
        return RunDir.create(out_dir / "validate", meta, launches)

    def profiles(self, rd_v: RunDir, measured: Any, rd_m: RunDir, state: dict) -> None:
        """The validation run's profiles; written once, and whole or not at all (a resume after an
        interruption writes them again)."""
        final = rd_v.path / "profiles"
        if final.is_dir():
            return
        tmp = rd_v.path / "profiles.partial"
        shutil.rmtree(tmp, ignore_errors=True)
        written = self.write_profiles(measured, state, tmp, f"chosen by {self.command} from run "
                                      f"{rd_m.meta['run_id']} (threshold {state['threshold']:.0%})")
        tmp.rename(final)
        console.print(f"{len(written)} profile(s) written to {final}")

    def start(self, args: argparse.Namespace) -> tuple[Path, dict] | None:
        """A new tune directory with its measurement run (None after a dry run)."""
        if not 0 <= args.threshold < 1:
            raise MpiguideError(f"bad --threshold {args.threshold}: the fraction of time {self.alternative} must "
                                "save, such as 0.1 for 10%")
        if args.runs < 2:
            raise MpiguideError(f"bad --runs {args.runs}: profiles need at least 2 launches per configuration "
                                "(one launch says nothing of the next: no gain can be shown with fewer)")
        plan = commands.Plan(self.suite, args)
        run_id = runner.new_run_id(self.run_name)
        out_dir = Path(args.output) if args.output else Path("results") / run_id
        console.print(plan.describe() + "; then the same again with the tuned library", highlight=False)
        if args.dry_run:
            plan.dry_run(out_dir / "measure", "measurement launch(es), then as many validation launches")
            return None
        if (out_dir / TUNE_STATE).exists():
            raise MpiguideError(f"{out_dir} already holds a tune run; continue it with: {self.command} --resume "
                                f"{out_dir}")
        if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
            raise MpiguideError(f"{out_dir} exists and is not an empty directory; choose another --output")
        plan.require_stacks()
        state = {"threshold": args.threshold, "command": args.argv}
        commands.make_dir(out_dir)
        runner.write_json(out_dir / TUNE_STATE, state)
        plan.create(out_dir / "measure", run_id + "-measure")
        return out_dir, state

    def run(self, args: argparse.Namespace) -> int:
        """Start, resume (--resume DIR) or only report (--report DIR)."""
        if args.report:
            out_dir = Path(args.report)
            self.write_report(out_dir, self.state(out_dir))
            return 0
        commands.check_timeout(args.timeout)
        if args.resume:
            out_dir = Path(args.resume)
            state = self.state(out_dir)
        else:
            started = self.start(args)
            if started is None:
                return 0
            out_dir, state = started
        hint = f"{self.command} --resume {out_dir}"
        rd_m = RunDir.open(out_dir / "measure")
        if rd_m.pending():
            console.print(f"1/2 measurement: {self.measured}")
            rc = commands.execute(rd_m, self.suite, args.timeout, hint)
            if rc and rc != CHECKS_FAILED:
                console.print("the profiles are chosen once every measurement launch has completed")
                return rc
        # every launch completed: a configuration whose data check failed (a mock-up or a form of a call that
        # gave another result, an MPI library's bug) was not timed and is no candidate; the rest is tuned
        checked = CHECKS_FAILED if commands.data_checks_failed(rd_m) else 0
        m = self.load(rd_m)
        rd_v = RunDir.open(out_dir / "validate") if (out_dir / "validate" / "meta.json").exists() \
            else self.validation_run(out_dir, rd_m, state, m)
        self.profiles(rd_v, m, rd_m, state)
        rc = 0
        if rd_v.pending():
            console.print(f"2/2 validation: {self.validated}")
            rc = commands.execute(rd_v, self.suite, args.timeout, hint)
        self.write_report(out_dir, state, m)
        return rc or checked


def add_tune_options(parser: argparse.ArgumentParser, command: str, alternative: str) -> None:
    """--resume, --report and --threshold of a tune command."""
    parser.add_argument("--resume", metavar="DIR", help="continue a tune directory (either phase)")
    parser.add_argument("--report", metavar="DIR", help=f"only rebuild the report of a {command} directory")
    parser.add_argument("--threshold", type=float, default=0.10,
                        help=f"use {alternative} where it takes at least this fraction less time than native (0.10)")
