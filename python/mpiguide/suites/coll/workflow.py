"""`mpiguide tune`: measure every collective natively and with each mock-up,
find the guideline violations, write profiles where a mock-up is faster by the
threshold, measure again with the tuned library, and report (docs/tuning.md).

A tune directory holds tune.json (the threshold and the command), measure/ and
validate/ (two run directories) and the report."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from mpiguide.core import commands, launch, runner
from mpiguide.core.errors import MpiguideError
from mpiguide.core.runner import RunDir
from mpiguide.core.suite import Suite
from mpiguide.suites.coll import analysis as tune
from mpiguide.suites.coll import report
from mpiguide.suites.coll.profiles import write_profiles

TUNE_STATE = "tune.json"
console, out = commands.console, commands.out


def _state(path: Path) -> dict:
    if not (path / TUNE_STATE).is_file():
        raise MpiguideError(f"{path} is not a tune directory (no {TUNE_STATE}); start one with mpiguide tune")
    return runner.read_json(path / TUNE_STATE)


def _validation(suite: Suite, out_dir: Path, m: tune.CollResult, state: dict) -> RunDir:
    """The second set of launches: the same grid, plus the library in tuned mode with the profiles chosen
    from the measurement (written into the validation run, one directory per stack)."""
    rd_m = m.rd
    params = {**rd_m.meta["params"], "profiles": "{run_dir}/profiles/{stack}"}
    launches = runner.plan(suite, params, rd_m.meta["stacks_order"], rd_m.meta["runs"], rd_m.meta["measurement"])
    if rd_m.meta["measurement"]["nrep"] == "estimate":  # same collectives, same t_nrep1: no new calibration
        launches = [x for x in launches if x.phase == runner.MEASURE]
        for x in launches:
            t1 = runner.t1_for(rd_m, x)
            if t1 is None:
                raise MpiguideError(f"no t_nrep1 for {x.template} on {x.stack} in {rd_m.path}: its calibration "
                                    "launches did not complete")
            x.args += ["--t1", f"{t1:.9e}"]
    meta = runner.new_meta(suite, params, rd_m.meta["stacks_order"], rd_m.meta["runs"], rd_m.meta["measurement"],
                           rd_m.meta["analysis"], launch.LaunchSpec.from_dict(rd_m.meta["launch"]),
                           runner.new_run_id("coll-validate"), state["command"])
    return RunDir.create(out_dir / "validate", meta, launches)


def _profiles(rd_v: RunDir, m: tune.CollResult, state: dict) -> None:
    """The validation run's profiles, chosen from the measurement; written once, and whole or not at all (a
    resume after an interruption writes them again)."""
    final = rd_v.path / "profiles"
    if final.is_dir():
        return
    tmp = rd_v.path / "profiles.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    written = write_profiles(tune.choose(m, state["threshold"]), tmp,
                             f"chosen by mpiguide tune from run {m.rd.meta['run_id']} (threshold "
                             f"{state['threshold']:.0%})")
    tmp.rename(final)
    console.print(f"{len(written)} profile(s) written to {final}")


def write_report(out_dir: Path, state: dict, m: tune.CollResult | None = None) -> Path:
    """The tune report (m: the measurement, if the caller has loaded it already)."""
    m = m or tune.load(RunDir.open(out_dir / "measure"))
    v = tune.load(RunDir.open(out_dir / "validate")) if (out_dir / "validate" / "meta.json").exists() else None
    t = tune.analyze(m, v, state["threshold"])
    profiles = sorted((out_dir / "validate" / "profiles").glob("*/*.prof")) if v is not None else []
    path = report.write_tune(t, profiles, out_dir)
    for line in report.console_summary(t.verdicts, t.choices, t.gains, t.repairs):
        out.print(line, highlight=False)
    out.print(f"tune report: {path}", highlight=False)
    return path


def _start(suite: Suite, args: argparse.Namespace) -> tuple[Path, dict] | None:
    """A new tune directory with its measurement run (None after a dry run)."""
    if not 0 <= args.threshold < 1:
        raise MpiguideError(f"bad --threshold {args.threshold}: the fraction of time a mock-up must save, "
                            "such as 0.1 for 10%")
    if args.runs < 3:
        raise MpiguideError(f"bad --runs {args.runs}: profiles need at least 3 launches per configuration "
                            "(the significance test cannot pass with fewer)")
    plan = commands.Plan(suite, args)
    run_id = runner.new_run_id("tune")
    out_dir = Path(args.output) if args.output else Path("results") / run_id
    console.print(plan.describe() + "; then the same again with the tuned library", highlight=False)
    if args.dry_run:
        plan.dry_run(out_dir / "measure", "measurement launch(es), then as many validation launches")
        return None
    if (out_dir / TUNE_STATE).exists():
        raise MpiguideError(f"{out_dir} already holds a tune run; continue it with: mpiguide tune --resume {out_dir}")
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise MpiguideError(f"{out_dir} exists and is not an empty directory; choose another --output")
    plan.require_stacks()
    state = {"threshold": args.threshold, "command": args.argv}
    commands.make_dir(out_dir)
    runner.write_json(out_dir / TUNE_STATE, state)
    plan.create(out_dir / "measure", run_id + "-measure")
    return out_dir, state


def run(suite: Suite, args: argparse.Namespace) -> int:
    """`mpiguide tune`: start, resume (--resume DIR) or only report (--report DIR)."""
    if args.report:
        out_dir = Path(args.report)
        write_report(out_dir, _state(out_dir))
        return 0
    commands.check_timeout(args.timeout)
    if args.resume:
        out_dir = Path(args.resume)
        state = _state(out_dir)
    else:
        started = _start(suite, args)
        if started is None:
            return 0
        out_dir, state = started
    hint = f"mpiguide tune --resume {out_dir}"
    rd_m = RunDir.open(out_dir / "measure")
    if rd_m.pending():
        console.print("1/2 measurement: every collective natively and with each mock-up")
        rc = commands.execute(rd_m, suite, args.timeout, hint)
        if rc:
            console.print("the profiles are chosen once every measurement launch has completed")
            return rc
    m = tune.load(rd_m)
    rd_v = RunDir.open(out_dir / "validate") if (out_dir / "validate" / "meta.json").exists() \
        else _validation(suite, out_dir, m, state)
    _profiles(rd_v, m, state)
    rc = 0
    if rd_v.pending():
        console.print("2/2 validation: native, every mock-up and the tuned library")
        rc = commands.execute(rd_v, suite, args.timeout, hint)
    write_report(out_dir, state, m)
    return rc
