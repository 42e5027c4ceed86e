"""`mpiguide tune`: measure every collective natively and with each mock-up,
find the guideline violations, write profiles where a mock-up is faster by the
threshold, measure again with the tuned library, and report (docs/tuning.md).
The course (tune directory, phases, resume) is mpiguide.core.tuneflow's."""

from __future__ import annotations

from pathlib import Path

from mpiguide.core import commands
from mpiguide.core.runner import RunDir
from mpiguide.core.tuneflow import PROFILES, TuneWorkflow
from mpiguide.suites.coll import analysis as tune
from mpiguide.suites.coll import report
from mpiguide.suites.coll.profiles import write_profiles


class CollTune(TuneWorkflow):
    command = "mpiguide tune"
    measured = "every collective natively and with each mock-up"
    validated = "native, every mock-up and the tuned library"
    alternative = "a mock-up"
    run_name = "tune"

    def load(self, rd: RunDir) -> tune.CollResult:
        return tune.load(rd)

    def validation_params(self, params: dict) -> dict:
        # the profiles are the library's mock-ups: the native algorithms are not measured again
        return {**params, "profiles": PROFILES, "algorithms": {}}

    def write_profiles(self, measured: tune.CollResult, state: dict, out: Path, origin: str) -> list[Path]:
        return write_profiles(tune.choose(measured, state["threshold"]), out, origin)

    def write_report(self, out_dir: Path, state: dict, measured: tune.CollResult | None = None) -> Path:
        m = measured or tune.load(RunDir.open(out_dir / "measure"))
        v = tune.load(RunDir.open(out_dir / "validate")) if (out_dir / "validate" / "meta.json").exists() else None
        t = tune.analyze(m, v, state["threshold"])
        profiles = sorted((out_dir / "validate" / "profiles").glob("*/*.prof")) if v is not None else []
        path = report.write_tune(t, profiles, out_dir)
        for line in report.console_summary(t.verdicts, t.choices, t.gains, t.repairs):
            commands.out.print(line, highlight=False)
        commands.out.print(f"tune report: {path}", highlight=False)
        return path
