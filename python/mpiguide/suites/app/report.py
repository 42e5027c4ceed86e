"""The reports of `mpiguide app`: of one app run (a record: where the time goes; a validation: the speedup),
and of an app directory, the chain from record to validation (docs/app-tuning.md)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from mpiguide.core import stats
from mpiguide.core.charts import plt, save_figure
from mpiguide.core.document import Document, Heatmap, fields, write_csvs
from mpiguide.core.measurements import stack_versions
from mpiguide.core.record import Record
from mpiguide.core.runner import RunDir
from mpiguide.suites.app import analysis
from mpiguide.suites.app.job import LIBRARY

TOP = 12  # operations and call shapes shown in the tables
VERDICT = {analysis.FASTER: stats.PASS, analysis.SLOWER: stats.VIOLATED, analysis.NO_DIFFERENCE: stats.INCONCLUSIVE}


def _short(text: str, n: int = 70) -> str:
    return text if len(text) <= n else text[:n - 3] + "..."


def record_lines(stack: str, rec: Record) -> list[str]:
    """Where the time goes, for the console."""
    ops = rec.by_operation()
    head = (f"{stack}: {rec.nprocs} process(es), wall {rec.wall:.3g} s, in the recorded MPI calls {rec.mpi:.3g} s "
            f"per rank ({rec.mpi_share:.0%})")
    top = ", ".join(f"{o.op} {o.share:.0%}" for o in ops.head(5).itertuples())
    return [head, f"  by operation: {top}" if top else "  no MPI call recorded"]


def record_sections(doc: Document, records: dict[str, Record], out: Path, title: str = "Where the time goes") -> None:
    """Per stack: the run, operations by time, the costliest call shapes and a chart."""
    for stack, rec in records.items():
        ops, calls = rec.by_operation(), rec.calls()
        doc.section(f"{title}: {stack}", fields({
            "processes": rec.nprocs, "wall time (longest rank)": f"{rec.wall:.4g} s",
            "in the recorded MPI calls (mean over ranks)": f"{rec.mpi:.4g} s ({rec.mpi_share:.1%} of the run)",
            "library": rec.library_version, "mode": rec.header.get("mode", "?"),
            **({"lost": "; ".join(f"{k}: {v}" for k, v in rec.lost.items())} if rec.lost else {})}))
        doc.section(f"{stack}: by operation (all ranks)", ops.set_index("op"),
                    note="seconds summed over ranks; share of the time in recorded calls")
        shown = calls.head(TOP).assign(send_type=lambda d: d["send_type"].map(_short),
                                       recv_type=lambda d: d["recv_type"].map(_short))
        doc.section(f"{stack}: the costliest call shapes ({min(TOP, len(calls))} of {len(calls)})",
                    shown, note="a shape: operation, communicator size, bytes, implementation, strategy, types")
        if not ops.empty:
            fig, ax = plt.subplots(figsize=(7, 0.35 * min(TOP, len(ops)) + 1.2))
            top = ops.head(TOP).iloc[::-1]
            ax.barh(top["op"], top["seconds"] / max(rec.nprocs, 1))
            ax.set_xlabel("seconds per rank")
            ax.set_title(f"{stack}: time in MPI by operation", fontsize=10)
            (out / "plots").mkdir(parents=True, exist_ok=True)
            path = save_figure(fig, out / "plots" / f"record_{stack}.png")
            doc.images([path], out)


def validation_sections(doc: Document, r: analysis.AppResult) -> list[str]:
    """The speedup of each side over native and the output check; console lines."""
    lines = []
    s = r.speedups
    doc.section("End-to-end: each side against the native program, paired round by round",
                s.set_index(["stack", "side"]),
                note="speedup = native / side (the time of a launch: its wall time, or --metric), with its "
                     "interval; faster / slower only where shown, every stack and side judged together")
    for x in s.itertuples():
        lines.append(f"{x.stack}: {x.side}: speedup x{x.speedup:.3f} (x{x.low:.3f} to x{x.high:.3f}, {x.rounds} "
                     f"round(s)): {x.verdict}")
    if r.wall_speedups is not s:
        doc.section("The whole launches (wall time), beside --metric", r.wall_speedups.set_index(["stack", "side"]),
                    note="the same launches timed from start to exit: what the prediction from the record is about")
        for x in r.wall_speedups.itertuples():
            lines.append(f"{x.stack}: {x.side}: whole launch x{x.speedup:.3f} (x{x.low:.3f} to x{x.high:.3f})")
    if r.output_problems:
        doc.section("OUTPUT DIFFERS: the validation failed", pd.DataFrame({"problem": r.output_problems}))
        lines += [f"FAIL: {p}" for p in r.output_problems]
    else:
        lines.append(f"outputs: every launch printed what the native program prints ({len(r.launches)} launch(es))")
    if r.warnings:
        doc.section("The library's warnings", pd.DataFrame({"warning": r.warnings}))
    doc.section("Launches", r.launches.set_index(["stack", "side", "round"]))
    return lines


def speed_heatmap(s: pd.DataFrame) -> Heatmap:
    cells = pd.DataFrame([dict(side=x.side, stack=x.stack, verdict=VERDICT[x.verdict], count=1, points=1,
                               factor=x.speedup) for x in s.itertuples()],
                         columns=["side", "stack", "verdict", "count", "points", "factor"])
    return Heatmap(cells, ["side"], ["stack"], "Per side and stack: green where the program is shown faster than "
                   "natively, red where shown slower, yellow where no difference is shown; the text is the speedup.",
                   text=lambda c: f"x{c.factor:.3f}")


def run_document(rd: RunDir, out: Path) -> tuple[Document, list[str]]:
    """The report of one app run."""
    p = rd.meta["params"]
    doc = Document(f"mpiguide app: {' '.join(p['program'])}")
    lines = []
    if set(p["sides"]) <= {"record", "tuned-record", "record-normalized"}:  # (the natively recorded side first)
        records = analysis.records(rd, p["sides"][0])
        record_sections(doc, records, out)
        for stack, rec in records.items():
            lines += record_lines(stack, rec)
        return doc, lines
    r = analysis.load(rd)
    doc.heatmap(speed_heatmap(r.speedups))
    lines += validation_sections(doc, r)
    write_csvs(out, {"speedups": r.speedups, "launches": r.launches})
    return doc, lines


PREDICTION_COLUMNS = ["stack", "wall_s", "saved_s", "predicted_speedup", "low", "high"]


# A nonblocking point-to-point call returns at once and its data moves until its completion (MPI_Wait*,
# MPI_Test*), which the record charges with that time: the call's own time says nothing of its cost.
NONBLOCKING_P2P = ("MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend", "MPI_Irecv", "MPI_Imrecv")


def _prediction(records: dict[str, Record], taken: pd.DataFrame, decisions: pd.DataFrame,
                walls: dict[str, float] | None = None) -> pd.DataFrame:
    """Per stack: Amdahl over the record: the time per rank of every measured call shape, saved by its decided
    gain (none where the choice is native), against the run's wall time (the record's, or walls[stack]: the
    native launches' measured in the validation, start to exit); low and high from the ends of the gains'
    intervals (each shape's interval at once: a conservative band). A nonblocking point-to-point shape is
    charged with its calls times the native call's time measured alone (decisions' native_s), where that is
    more than the calls' own time; all shapes together at most the rank's time in MPI."""
    def speedup(wall: float, saved: float) -> float:
        return wall / (wall - saved) if 0 < saved < wall else 1.0

    rows = []
    for stack, rec in records.items():
        d = decisions[decisions["stack"] == stack]
        native_s = d["native_s"] if "native_s" in d else pd.Series(float("nan"), index=d.index)
        gains = {(s, k): (g, lo, hi, n) for s, k, g, lo, hi, c, n in
                 zip(d["suite"], d["key"], d["gain"], d["low"], d["high"], d["choice"], native_s, strict=True)
                 if c != "native" and pd.notna(g)}
        t = taken.drop_duplicates(["suite", "key", "op", "comm_size", "bytes", "send_type", "recv_type"])
        saved = [0.0, 0.0, 0.0]  # point, low end, high end
        for x in t.itertuples():
            g = gains.get((x.suite, x.key))
            if g is None:
                continue
            spent = float(x.seconds_per_rank)
            if x.op in NONBLOCKING_P2P and pd.notna(g[3]):
                spent = max(spent, float(x.calls_per_rank) * float(g[3]))
            for i in range(3):
                if pd.notna(g[i]):
                    saved[i] += spent * g[i]
        if rec.mpi > 0:
            saved = [min(v, rec.mpi) for v in saved]
        wall = (walls or {}).get(stack, rec.wall)
        rows.append(dict(stack=stack, wall_s=wall, saved_s=saved[0], predicted_speedup=speedup(wall, saved[0]),
                         low=speedup(wall, saved[1]), high=speedup(wall, saved[2])))
    return pd.DataFrame(rows, columns=PREDICTION_COLUMNS)


def _prediction_check(records: dict[str, Record], taken: pd.DataFrame, decisions: pd.DataFrame,
                      validated: analysis.AppResult) -> list[str]:
    """Per stack: whether the tuned side's measured speedup of the whole launch meets the predicted band, the
    prediction taken over the native launches' wall time measured beside it; and why not."""
    measured = validated.wall_speedups
    launches = validated.launches
    native = launches[launches["side"] == "native"].groupby("stack")["seconds"].mean()
    pred = _prediction(records, taken, decisions, {s: float(t) for s, t in native.items() if t > 0})
    whole = "whole-launch " if measured is not validated.speedups else ""
    lines = []
    for x in pred.itertuples():
        m = measured[(measured["stack"] == x.stack) & (measured["side"] == "tuned")]
        if m.empty:
            continue
        v = m.iloc[0]
        said = (f"{x.stack}: the measured {whole}speedup x{v['speedup']:.3f} (x{v['low']:.3f} to x{v['high']:.3f}) "
                f"{{}} the prediction x{x.low:.3f} to x{x.high:.3f} ({x.saved_s:.3g} s saved of the native "
                f"launch's {x.wall_s:.3g} s)")
        if v["high"] >= x.low and v["low"] <= x.high:
            lines.append(said.format("meets"))
        else:
            lines.append(said.format("is outside") + ": the calls measured alone do not cost in the program what "
                         "they cost in the benchmark (caches, overlap with computation, contention), or the "
                         "program's own time varies more than one record shows")
    return lines


def _read_csv(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path) if path.exists() and path.stat().st_size else pd.DataFrame()
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def app_report(app_dir: Path, state: dict) -> tuple[Path, list[str], int]:
    """The app directory's report (report.html, report.md, CSVs); its console lines; the exit status: 1 where
    the validation found another output (or a launch failed), else 0."""
    p = state["params"]
    doc = Document(f"mpiguide app: {' '.join(p['program'])} on {p['np']} process(es)")
    lines, rc = [], 0
    rd_rec = RunDir.open(app_dir / "record") if (app_dir / "record" / "meta.json").exists() else None
    records = analysis.records(rd_rec) if rd_rec is not None and not rd_rec.pending() else {}
    validated = None
    if (app_dir / "validate" / "meta.json").exists():
        rd_v = RunDir.open(app_dir / "validate")
        if not rd_v.pending():
            validated = analysis.load(rd_v)
            doc.heatmap(speed_heatmap(validated.speedups))
    doc.section("The program", fields({
        "program": " ".join(p["program"]), "processes": p["np"], "stacks": ", ".join(state["stacks"]),
        "libraries": "; ".join(f"{s}: {v}" for s, v in stack_versions(rd_rec).items()) if rd_rec else "?",
        "output compared": "by --check " + p["check"] if p.get("check") else
        "line by line" + (f", without lines matching {', '.join(p['masks'])}" if p.get("masks") else ""),
        "measured": f"the number --metric {p['metric']!r} finds" if p.get("metric") else "each launch's wall time",
        "directory": str(app_dir)}))
    record_sections(doc, records, app_dir)
    for stack, rec in records.items():
        lines += record_lines(stack, rec)
    taken, left = _read_csv(app_dir / "plan_taken.csv"), _read_csv(app_dir / "plan_left.csv")
    decisions = _read_csv(app_dir / "decisions.csv")
    if "tune" in state:
        t = state["tune"]
        lines.append(f"plan: {len(taken)} call shape(s) measured by {len(t['runs'])} run(s), {len(left)} not "
                     "measured (plan_left.csv says why)")
        if not left.empty:
            doc.section("Calls not measured, and why", left[["op", "comm_size", "bytes", "send_type", "recv_type",
                                                              "calls", "seconds", "reason"]].assign(
                send_type=lambda d: d["send_type"].map(_short), recv_type=lambda d: d["recv_type"].map(_short)))
        if not decisions.empty:
            chosen = decisions[decisions["choice"] != "native"]
            doc.section("What the tuned library takes, from decided gains", decisions.set_index(["stack", "suite"]),
                        note=f"gain = 1 - alternative / native with its interval; an alternative is taken where "
                             f"the gain is shown above {t['threshold']:.0%} (docs/measurement.md)")
            lines.append(f"choices: {len(chosen)} of {len(decisions)} measured point(s) take an alternative: "
                         + ", ".join(f"{c.stack} {c.key} -> {c.choice} ({c.gain:+.0%})" for c in chosen.head(5)
                                     .itertuples()))
        if records and not taken.empty and not decisions.empty:
            pred = _prediction(records, taken, decisions)
            doc.section("Predicted from the record (Amdahl over the decided gains)", pred.set_index("stack"))
            for x in pred.itertuples():
                lines.append(f"{x.stack}: predicted speedup x{x.predicted_speedup:.3f} (x{x.low:.3f} to "
                             f"x{x.high:.3f}; {x.saved_s:.3g} s of {x.wall_s:.3g} s saved per rank)")
        env_lines = [f"{s}: LD_PRELOAD={LIBRARY.replace('{build}', 'build/' + s)} MPIGUIDE_TUNE_MODE=tuned "
                     f"MPIGUIDE_TUNE_PROFILES={(app_dir / 'profiles' / s).resolve()}"
                     + "".join(f" {k}={v}" for k, v in t.get("file_env", {}).get(s, {}).items())
                     for s in state["stacks"]]
        doc.section("To use it in production", pd.DataFrame({"environment": env_lines}),
                    note="the profiles, and each library's own tuning file where one was written (docs/tuning.md); "
                         "libmpiguide-tune is installed with mpiguide (docs/install.md)")
    if validated is not None:
        lines += validation_sections(doc, validated)
        if records and not taken.empty and not decisions.empty:
            lines += _prediction_check(records, taken, decisions, validated)
        if not validated.output_ok or any(x.status != "ok" for x in validated.rd.launches):
            rc = 1
        write_csvs(app_dir, {"speedups": validated.speedups})
    if (app_dir / "record-tuned" / "meta.json").exists():
        tuned = analysis.records(RunDir.open(app_dir / "record-tuned"), "tuned-record")
        for stack, after in tuned.items():
            before = records.get(stack)
            if before is None:
                continue
            a, b = after.by_operation().set_index("op"), before.by_operation().set_index("op")
            both = pd.DataFrame({"native_s": b["seconds"], "tuned_s": a["seconds"]}).fillna(0.0)
            both["ratio"] = both["tuned_s"] / both["native_s"].where(both["native_s"] > 0, math.nan)
            doc.section(f"{stack}: per operation, natively (record) and tuned (record-tuned)",
                        both.sort_values("native_s", ascending=False),
                        note="seconds summed over ranks, each from one launch: a picture of what changed, not "
                             "a measurement (the validation above is)")
    path = doc.write(app_dir)
    return path, lines, rc
