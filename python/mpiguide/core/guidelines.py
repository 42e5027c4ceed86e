"""Suites whose results are `A ⪯ B` guidelines over the configurations of one
run (the ping-pong latency, the datatype engine bench): measurements.csv,
summary.csv, verdicts.csv and a report with the run, the stacks, the
parameters, the suite's own tables and charts and every verdict. Such a suite
declares its guidelines and adds its tables, charts and console lines."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from mpiguide.core import stats
from mpiguide.core.document import Document, Heatmap, fields, host_text, worst_cells, write_csvs
from mpiguide.core.measurements import ID_COLUMNS, Measured, config_keys, unfinished
from mpiguide.core.pairing import guideline_verdicts
from mpiguide.core.runner import RunDir
from mpiguide.core.suite import POINT_COLUMNS, POINT_MORE, POINT_TEMPLATE, Guideline, Report, Suite

# Columns that an empty table still names, so that every CSV can be read back.
EMPTY_COLUMNS = {
    "measurements": [*ID_COLUMNS, "launch", "launch_id", "rep", "time_s"],
    "summary": [*ID_COLUMNS, "mean_s", "min_s", "max_s", "launches", "nrep"],
    "verdicts": ["guideline", "statement", "a", "b", *stats.VERDICT_FIELDS],
}


@dataclass
class Analysis:
    rd: RunDir
    measured: Measured
    measurements: pd.DataFrame
    summary: pd.DataFrame
    verdicts: pd.DataFrame
    config_errors: pd.DataFrame
    keys: list[str]  # columns identifying one configuration
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)  # the suite's own CSV tables (name -> table)


class GuidelineSuite(Suite):
    guidelines: list[Guideline] = []
    ignore_keys: tuple[str, ...] = ()  # columns that never identify a configuration

    # ---- what a suite adds

    def extend(self, a: Analysis) -> None:
        """Adds the suite's own tables to a.extra (written as CSVs, dropped when empty)."""

    def tables(self, a: Analysis) -> dict[str, pd.DataFrame]:
        """The suite's result tables, titled, in report order."""
        return {}

    def charts(self, a: Analysis, out: Path) -> list[Path]:
        return []

    def console_tables(self, a: Analysis) -> dict[str, pd.DataFrame]:
        """The tables worth printing at the end of a run (the rest is in the report)."""
        return self.tables(a)

    # ---- the common part

    def analyze(self, rd: RunDir) -> Analysis:
        measured = Measured.load(rd)
        df, errors = measured.tables()
        if df.empty:
            return Analysis(rd, measured, df, pd.DataFrame(), pd.DataFrame(), errors, [])
        keys = config_keys(df, self.ignore_keys)
        a = Analysis(rd, measured, df, stats.summarize(df, keys),
                     guideline_verdicts(self.guidelines, df, keys, rd.meta["analysis"]), errors, keys)
        self.extend(a)
        return a

    def verdict_points(self, rd: RunDir) -> pd.DataFrame:
        v = self.analyze(rd).verdicts
        if v.empty:
            return pd.DataFrame(columns=POINT_COLUMNS)
        where = [c for c in v.columns if c not in (*EMPTY_COLUMNS["verdicts"], "stack")]
        point = v[where].astype(str).apply(lambda r: " ".join(f"{k}={x}" for k, x in r.items()), axis=1) \
            if where else pd.Series("", index=v.index)
        cols = [*POINT_COLUMNS, *(c for c in (POINT_TEMPLATE, POINT_MORE) if c in v.columns)]
        return v.assign(point=point, factor=v["ratio"])[cols]

    def report(self, runs: list[RunDir], out: Path) -> Report:
        (rd,) = runs
        a = self.analyze(rd)
        tables = {"measurements": a.measurements, "summary": a.summary, "verdicts": a.verdicts}
        tables = {k: (pd.DataFrame(columns=EMPTY_COLUMNS[k]) if v.empty and v.columns.empty else v)
                  for k, v in tables.items()}
        write_csvs(out, {**tables, "config_errors": a.config_errors, **a.extra},
                   drop_empty=("config_errors", *a.extra))
        charts = self.charts(a, out / "plots")
        return Report(self._document(a, charts, out).write(out), self._console(a))

    def _document(self, a: Analysis, charts: list[Path], out: Path) -> Document:
        rd, meta = a.rd, a.rd.meta
        failed = unfinished(rd)
        host = meta["host"]
        doc = Document(f"mpiguide report: {meta['title']}")
        doc.heatmap(Heatmap(worst_cells(a.verdicts, ["guideline"], ["stack"], "ratio"), ["guideline"], ["stack"],
                            "Worst verdict per guideline and stack over its configurations; the number: the largest "
                            "ratio (left side / right side) among the points with that verdict."))
        doc.section("Run", fields({
            "run": meta["run_id"], "job": meta["title"], "created": meta["created"],
            "host": host_text(host),
            "commit": meta["git"]["commit"][:12] + (" (dirty)" if meta["git"]["dirty"] else ""),
            "launches": f"{len(rd.launches) - len(failed)} ok, {len(failed)} not ok"}))
        doc.section("Stacks", pd.DataFrame(
            [{"stack": n, "library version": " ".join(s["library_version"].splitlines()[0].split()),
              "source": s["source"], "compiler": s["compiler"]} for n, s in meta["stacks"].items()]).set_index("stack"))
        params = {**meta["params"], **meta["measurement"], "runs": meta["runs"], **meta["analysis"]}
        doc.section("Parameters", fields(params))
        for title, table in self.tables(a).items():
            doc.section(title, table)
        doc.section("Guideline verdicts", _verdict_table(a.verdicts), colored=True)
        if failed:
            doc.section("Launches not completed", pd.DataFrame(
                [{"launch": x.id, "status": x.status, "message": x.message} for x in failed]).set_index("launch"))
        if not a.config_errors.empty:
            doc.section("Configurations that failed their data check", a.config_errors.set_index("stack"))
        doc.heading("Guidelines")
        doc.items([(g.name, g.text) for g in self.guidelines])
        opts = meta["analysis"]
        doc.text("A guideline `A ⪯ B` is judged on the ratio A / B (per launch where both sides share it): "
                 + stats.error_rate_text(opts["tolerance"], opts["alpha"], opts.get("looks", 1))
                 + "; INCONCLUSIVE otherwise, with the reason (docs/measurement.md).")
        doc.images(charts, out)
        return doc

    def _console(self, a: Analysis) -> list[str]:
        lines = []
        for title, table in self.console_tables(a).items():
            lines += [f"{title}:", table.to_string(float_format=lambda v: f"{v:.3g}"), ""]
        if not a.verdicts.empty:
            counts = a.verdicts["verdict"].value_counts().to_dict()
            lines.append("guideline verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
            for _, v in a.verdicts[a.verdicts["verdict"] == stats.VIOLATED].iterrows():
                where = ", ".join(f"{k}={v[k]}" for k in a.keys if k in v and k != "template")
                lines.append(f"  VIOLATED {v['guideline']} ({v['statement']}) at {where}: ratio {v['ratio']:.2f} "
                             f"(x{v['low']:.3g} to x{v['high']:.3g}, q={v['p_value']:.2g})")
        return lines


def _verdict_table(verdicts: pd.DataFrame) -> pd.DataFrame:
    if verdicts.empty:
        return verdicts
    cols = [c for c in verdicts.columns if c not in ("statement", "n_a", "n_b", "template", "nprocs", "more")]
    front = ["guideline", "stack"]
    return verdicts[front + [c for c in cols if c not in front]].set_index("guideline")
