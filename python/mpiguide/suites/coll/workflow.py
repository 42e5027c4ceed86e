"""`mpiguide tune`: measure every collective natively and with each mock-up
(with --algorithms, and with each of the library's own algorithms), find the
guideline violations, write profiles where a mock-up is faster by the threshold
(and the library's own tuning file where one of its algorithms is), measure
again with the tuned library (and with the library's file alone), and report
(docs/tuning.md). The course (tune directory, phases, resume) is
mpiguide.front.tuneflow's."""

from __future__ import annotations

from pathlib import Path

from mpiguide.core.runner import RunDir
from mpiguide.core.stats import VIOLATED
from mpiguide.core.tuning import PROFILES
from mpiguide.front import commands
from mpiguide.front.tuneflow import TuneWorkflow
from mpiguide.suites.coll import analysis as tune
from mpiguide.suites.coll import native, report, selection
from mpiguide.suites.coll.catalog import COLLECTIVES
from mpiguide.suites.coll.profiles import write_profiles


class CollTune(TuneWorkflow):
    command = "mpiguide tune"
    measured = "every collective natively and with each mock-up"
    validated = "native, every mock-up and the tuned library"
    alternative = "a mock-up"
    run_name = "tune"

    def load(self, rd: RunDir) -> tune.CollResult:
        return tune.load(rd)

    def validation_params(self, params: dict, measured: tune.CollResult, state: dict) -> dict:
        """The tuned library with the profiles; where the measurement had the library's own algorithms, the
        library with its own tuning file too, and the algorithms that file chooses or that a violation names."""
        # the forms and the neighbourhood collectives are measured, never tuned: nothing of them to validate
        out = {**params, "profiles": PROFILES, "algorithms": {}, "forms": [],
               "collectives": [c for c in params["collectives"] if c in COLLECTIVES]}
        if selection.labels(params):
            chosen = tune.choose_native(measured, state["threshold"])
            verdicts = tune.guideline_verdicts(measured)
            sel = verdicts[(verdicts["guideline"] == selection.GUIDELINE) & (verdicts["verdict"] == VIOLATED)]
            keep = {(s, c, i[len(selection.PREFIX):]) for frame in (chosen, sel)
                    for s, c, i in zip(frame["stack"], frame["collective"], frame["impl"], strict=True)
                    if i.startswith(selection.PREFIX)}
            out["algorithms"] = selection.for_validation(params, keep)
        return out

    def profiles(self, rd_v: RunDir, measured: tune.CollResult, rd_m: RunDir, state: dict) -> None:
        super().profiles(rd_v, measured, rd_m, state)
        written = native.write(measured, state["threshold"], rd_v, f"chosen by {self.command} from run "
                               f"{rd_m.meta['run_id']} (threshold {state['threshold']:.0%})")
        if written:
            commands.console.print(f"{len(written)} tuning file(s) of the libraries written to "
                                   f"{rd_v.path / 'native'}")

    def write_profiles(self, measured: tune.CollResult, state: dict, out: Path, origin: str) -> list[Path]:
        return write_profiles(tune.choose(measured, state["threshold"]), out, origin)

    def write_report(self, out_dir: Path, state: dict, measured: tune.CollResult | None = None) -> Path:
        m = measured or tune.load(RunDir.open(out_dir / "measure"))
        v = tune.load(RunDir.open(out_dir / "validate")) if (out_dir / "validate" / "meta.json").exists() else None
        t = tune.analyze(m, v, state["threshold"], native.summaries(v.rd) if v is not None else None)
        profiles = sorted((out_dir / "validate" / "profiles").glob("*/*.prof")) if v is not None else []
        path = report.write_tune(t, profiles, out_dir)
        for line in report.console_summary(t.verdicts, t.choices, t.gains, t.repairs) + report.native_summary(t):
            commands.out.print(line, highlight=False)
        commands.out.print(f"tune report: {path}", highlight=False)
        return path
