"""`mpiguide ddt tune`: measure the expectation tests' layouts natively, with
MPI_Pack, with the engine's packing and with the normalized type; write datatype
profiles where a strategy of libmpiguide-tune is faster by the threshold; run the
tests again with the tuned library beside the four modes; report which guideline
violations it repaired and what it gained (docs/tuning.md). The course (tune
directory, phases, resume) is mpiguide.front.tuneflow's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from mpiguide.core.document import Document, fields, write_csvs
from mpiguide.core.runner import RunDir
from mpiguide.core.tuning import PROFILES
from mpiguide.front import commands
from mpiguide.front.tuneflow import TuneWorkflow
from mpiguide.suites.ddt import report
from mpiguide.suites.ddt import tune as dtune
from mpiguide.suites.ddt.expectations import TUNED
from mpiguide.suites.ddt.report import DdtResult


class DdtTune(TuneWorkflow):
    command = "mpiguide ddt tune"
    measured = "every layout natively, with MPI_Pack, the engine's packing and the normalized type"
    validated = "the same, and the datatype mode under the tuned library"
    alternative = "a strategy"
    run_name = "ddt-tune"

    def load(self, rd: RunDir) -> DdtResult:
        return report.load([rd])

    def validation_params(self, params: dict, measured: Any, state: dict) -> dict:
        entries = [{**e, "modes": [*e["modes"], TUNED]} for e in params["entries"]]
        return {**params, "entries": entries, "datatype_profiles": PROFILES}

    def write_profiles(self, measured: DdtResult, state: dict, out: Path, origin: str) -> list[Path]:
        return dtune.write_profiles(dtune.choose(measured, state["threshold"]), measured.stacks, out, origin)

    def write_report(self, out_dir: Path, state: dict, measured: DdtResult | None = None) -> Path:
        m = measured or report.load([RunDir.open(out_dir / "measure")])
        v = report.load([RunDir.open(out_dir / "validate")]) if (out_dir / "validate" / "meta.json").exists() \
            else None
        t = dtune.analyze(m, v, state["threshold"])
        profiles = sorted((out_dir / "validate" / "profiles").glob("*/*.prof")) if v is not None else []
        path = write_tune_report(t, profiles, out_dir)
        for line in ["measurement:", *report.console_lines(m), "tuning:", *dtune.console_lines(t)]:
            commands.out.print(line, highlight=False)
        commands.out.print(f"tune report: {path}", highlight=False)
        return path


def write_tune_report(t: dtune.TuneAnalysis, profiles: list[Path], out: Path) -> Path:
    """CSVs (verdicts of the measurement, choices, gains, repairs) and report.md/html in `out`."""
    m, v = t.measured, t.validated
    tables = {"verdicts": m.verdicts, "matrix": report.matrix(m), "choices": t.choices}
    if v is not None:
        tables.update(gains=t.gains, repairs=t.repairs)
    write_csvs(out, tables, keep_index=("matrix",))
    doc = Document("mpiguide ddt tune: datatype strategies for libmpiguide-tune")
    doc.heatmap(report.heatmap(m.verdicts))
    meta = m.runs[0].meta
    doc.section("Run", fields({
        "measurement run": meta["run_id"],
        "validation run": v.runs[0].meta["run_id"] if v is not None else "not yet",
        "launches per configuration": meta["runs"],
        "profile rule": f"per stack, operation, processes, normalized shape, mean block and size: the strategy "
                        "(normalized "
                        f"type or engine packing) that takes at least {t.threshold:.0%} less time than the native "
                        "call over the configurations of that shape and block together, shown so by the interval of "
                        "the per-launch totals' ratio, the run's groups judged as one family (false discovery "
                        f"rate {meta['analysis']['alpha']})"}))
    doc.section("Stacks", pd.DataFrame({"MPI_Get_library_version": m.versions}))
    doc.section("Measurement: verdicts per stack and guideline", report.verdict_counts(m))
    doc.section("Measurement: cross-stack matrix", report.matrix(m), colored=True,
                note="As in mpiguide ddt report: the worst verdict over A, how many A have it, the worst factor.")
    written = [{"profile": p.relative_to(out).as_posix(), "rules": "; ".join(
        line for line in p.read_text().splitlines() if line and not line.startswith(("#", "datatypes", "procs")))}
        for p in profiles]
    ch = t.choices[t.choices["shape"] != "*"]
    doc.section("Profiles written", pd.DataFrame(written),
                note=f"{(ch['strategy'] != dtune.NATIVE).sum()} of {len(ch)} (operation, size, shape, block) points "
                     "use a strategy; every decision is in choices.csv. Each measured size and mean block stands "
                     "for those nearest to it on a log scale.")
    if v is None or t.gains.empty:
        doc.text("The validation run has no data yet (mpiguide ddt tune --resume continues it).")
    else:
        doc.section("Validation: outcome of each measured violation", dtune.repair_counts(t.repairs),
                    note="Violations of the guidelines on the call with the derived type in the measurement run, "
                         "measured again: repaired when the tuned library is no slower than the side that was "
                         "faster (tuned ⪯ fast side passes). worst_after: the tuned call over that side.")
        doc.section("Validation: the tuned library against the native call", dtune.gain_summary(t.gains),
                    note="speedup = native time / tuned time over the configurations the profiles tune; "
                         "slower_than_native and slower_than_best count the configurations (all of them) where "
                         "'tuned ⪯ native' or 'tuned ⪯ the fastest of datatype, MPI_Pack, engine and normalized' "
                         "is VIOLATED.")
        doc.section("Validation: every measured violation with the tuned library", t.repairs.set_index("stack"))
    if m.failed or (v is not None and v.failed):
        doc.section("Launches not completed", pd.DataFrame({"launch": m.failed + (v.failed if v else [])}))
    return doc.write(out)
