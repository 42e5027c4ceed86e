"""Results of the stencil applications (`apps` runs of mg_stencil): time per
iteration, speedup and efficiency over the process counts, communication share,
setup cost and memory per halo-exchange variant, and which packing wins where.

A variant's time per iteration in one launch is the median of its nrep
repetitions (each the maximum over ranks of `steps` iterations, divided by
steps); over the launches: mean, min and max of those medians. Which of two
packings wins is decided with the statistics of mpiguide.core.stats in both
directions: the ratio per launch (mg_stencil interleaves the variants'
repetitions in every launch), every comparison of a pair of packings judged
as one family (the run's tolerance and alpha).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from mpiguide.core import stats
from mpiguide.core.charts import error_bars, per_group, plt
from mpiguide.core.document import Document, Heatmap, fields, host_text, worst_cells, write_csvs
from mpiguide.core.errors import MpiguideError
from mpiguide.core.measurements import Measured, stack_versions, unfinished
from mpiguide.core.pairing import decide, paired
from mpiguide.core.runner import RunDir
from mpiguide.core.suite import POINT_COLUMNS
from mpiguide.suites.apps import job as apps

POINT = ["stack", "app", "scaling", "nprocs"]  # one launch template of one stack
CONFIG = [*POINT, "packing", "mode"]  # one variant there
# The comparisons of packings the report makes: (reference, challenger, what it shows).
PAIRS = (("basic", "ddt", "manual packing against derived datatypes (the question of Adefemi 2025)"),
         ("basic", "subarray", "manual packing against MPI_Type_create_subarray types"),
         ("ddt", "normalized", "what mpiguide's normalized types change for the MPI library"))
# Notes of mg_stencil per variant: raw kind -> column.
NOTES = {"setup": "setup_s", "comm": "comm_share", "rss_before": "rss_before", "rss": "rss_peak", "mem": "mem",
         "halo_bytes": "halo_bytes"}
TIE, UNCLEAR = "tie", "unclear"


@dataclass
class AppsResult:
    rd: RunDir
    measurements: pd.DataFrame  # one row per repetition (analysis.load_measurements, plus scaling)
    notes: pd.DataFrame  # one row per launch and variant: NOTES columns
    summary: pd.DataFrame  # one row per CONFIG
    errors: pd.DataFrame  # variants that failed their bitwise check or setup (not timed)
    versions: dict[str, str]
    failed: list[str]  # launches that did not complete
    settings: dict

    @property
    def cores(self) -> int:
        return int(self.rd.meta["host"].get("cores") or 1)


def _variant_notes(m: Measured, info: dict[str, tuple[str, str, int]]) -> pd.DataFrame:
    """One row per launch and variant with the NOTES columns."""
    rows: dict[tuple[str, str], dict] = {}
    for kind, column in NOTES.items():
        for x, label, value in m.notes(kind):
            _, packing, mode = label.split()
            row = rows.setdefault((x.id, label), dict(zip(POINT, (x.stack, *info[x.template]), strict=True),
                                                      packing=packing, mode=mode, launch=x.run_index))
            row[column] = float(value)
    return pd.DataFrame(list(rows.values()), columns=[*CONFIG, "launch", *NOTES.values()])


def load(rd: RunDir) -> AppsResult:
    if rd.job != "apps":
        raise MpiguideError(f"{rd.path} is a '{rd.job}' run, not a stencil applications (apps) run")
    info = apps.template_info(rd.meta["params"])
    measured = Measured.load(rd)
    df, errors = measured.tables()
    notes = _variant_notes(measured, info)
    if not df.empty:
        df.insert(df.columns.get_loc("app") + 1, "scaling", df["template"].map(lambda t: info[t][1]))
    summary = _summarize(df, notes) if not df.empty else pd.DataFrame()
    return AppsResult(rd, df, notes, summary, errors, stack_versions(rd), [x.id for x in unfinished(rd)],
                      rd.meta["analysis"])


def _summarize(df: pd.DataFrame, notes: pd.DataFrame) -> pd.DataFrame:
    keys = [*CONFIG, "gnx", "gny", "steps"]
    s = stats.summarize(df, keys)
    s["total_s"] = s["mean_s"] * s["steps"]
    med = notes.groupby(CONFIG)[list(NOTES.values())].median()
    s = s.join(med, on=CONFIG)
    # Speedup (strong) or efficiency (weak): the variant's time on 1 process over its time on P.
    one = s[s["nprocs"] == 1].set_index([c for c in CONFIG if c != "nprocs"])["mean_s"]
    base = s.set_index([c for c in CONFIG if c != "nprocs"]).index.map(one.get)
    s["speedup"] = np.asarray(base, dtype=float) / s["mean_s"].to_numpy()
    return s.reset_index(drop=True)


def oversubscribed(r: AppsResult, nprocs: int) -> bool:
    return nprocs > r.cores


def headline_nprocs(r: AppsResult) -> int:
    """The process count of the winner matrix: the largest measured one that fits the cores (timings of
    oversubscribed launches mean little), else the smallest."""
    counts = sorted(set(r.summary["nprocs"])) if not r.summary.empty else []
    fitting = [n for n in counts if not oversubscribed(r, n)]
    fitting = [n for n in fitting if n > 1] or fitting or counts[:1]
    return fitting[-1] if fitting else 1


def winners(r: AppsResult, reference: str, challenger: str) -> pd.DataFrame:
    """Per stack, application, scaling, processes and mode: reference against challenger packing (the
    variants share each launch), both ways, every point of the comparison judged as one family.
    factor: the loser's time over the winner's (>= 1); winner: a packing name (shown slower the other way by
    more than the tolerance), tie (shown within the tolerance both ways) or unclear."""
    if r.measurements.empty:
        return pd.DataFrame()
    rows, estimates = [], []
    m = r.measurements
    for where, a, b in paired(m[m["packing"] == reference], m[m["packing"] == challenger], [*POINT, "mode"]):
        ab = stats.estimate(a, b, r.settings["samples"])
        estimates += [ab, ab.reversed()]
        rows.append(dict(zip([*POINT, "mode"], where, strict=True), reference=reference, challenger=challenger,
                         reference_s=a.groupby("launch")["time_s"].median().mean(),
                         challenger_s=b.groupby("launch")["time_s"].median().mean(),
                         launches=min(a["launch"].nunique(), b["launch"].nunique())))
    verdicts = iter(decide(estimates, r.settings, [row["stack"] for row in rows for _ in (0, 1)]))
    for row in rows:
        # reference ⪯ challenger violated: the challenger wins; the other way round: the reference wins
        slower_ref, slower_ch = next(verdicts), next(verdicts)
        if slower_ref.verdict == stats.VIOLATED:
            winner, p = challenger, slower_ref.p_value
        elif slower_ch.verdict == stats.VIOLATED:
            winner, p = reference, slower_ch.p_value
        else:
            tied = slower_ref.verdict == stats.PASS and slower_ch.verdict == stats.PASS
            winner, p = TIE if tied else UNCLEAR, min(slower_ref.p_value, slower_ch.p_value)
        ratio = slower_ref.ratio  # the reference over the challenger, per launch
        row.update(winner=winner, factor=max(ratio, 1 / ratio), low=slower_ref.low, high=slower_ref.high,
                   p_value=p, reason=slower_ref.reason if winner == UNCLEAR else "", ratio=ratio,
                   se_log=slower_ref.se_log, df=slower_ref.df)
    return pd.DataFrame(rows)


def verdict_points(r: AppsResult) -> pd.DataFrame:
    """The packing comparisons as `mpiguide compare` points (POINT_COLUMNS, then the point's POINT and mode
    columns): guideline "CHALLENGER ⪯ REFERENCE" (derived datatypes no slower than manual packing, ...),
    VIOLATED where the reference wins, PASS where the challenger wins or ties, INCONCLUSIVE where unclear;
    factor = challenger / reference (of the mean times); ratio: the estimate's challenger / reference."""
    rows = []
    for reference, challenger, _ in PAIRS:
        w = winners(r, reference, challenger)
        for x in w.itertuples():
            verdict = stats.VIOLATED if x.winner == reference else stats.INCONCLUSIVE if x.winner == UNCLEAR \
                else stats.PASS
            rows.append(dict(stack=x.stack, guideline=f"{challenger} ⪯ {reference}",
                             point=f"{x.app} {x.scaling} np{x.nprocs} {x.mode}", verdict=verdict,
                             factor=x.challenger_s / x.reference_s, p_value=x.p_value, ratio=1 / x.ratio,
                             se_log=x.se_log, df=x.df, app=x.app,
                             scaling=x.scaling, nprocs=x.nprocs, mode=x.mode))
    return pd.DataFrame(rows, columns=[*POINT_COLUMNS, "app", "scaling", "nprocs", "mode"])


def heatmap(r: AppsResult) -> Heatmap:
    """The winner matrix at a glance: comparison, application and mode x stack; red where the reference
    packing wins (the challenger is slower), green where the challenger wins or ties."""
    pts = verdict_points(r)
    return Heatmap(worst_cells(pts, ["guideline", "app", "mode"], ["stack"]), ["guideline", "app", "mode"],
                   ["stack"], "Per comparison CHALLENGER ⪯ REFERENCE (Adefemi 2025: derived datatypes against "
                   "manual packing, ...), application, communication mode and stack, over the process counts and "
                   "scalings: VIOLATED where the reference wins somewhere, PASS where the challenger wins or ties "
                   "everywhere; the number: the largest challenger / reference time among those points. The "
                   "winner matrices below have every point.")


def cell(row: pd.Series) -> str:
    """'DDT x1.23', 'tie', 'unclear (BASIC x1.08?)'."""
    faster = row["challenger"] if row["reference_s"] > row["challenger_s"] else row["reference"]
    if row["winner"] == TIE:
        return "tie"
    if row["winner"] == UNCLEAR:
        return f"unclear ({faster.upper()} x{row['factor']:.2f}?)"
    return f"{row['winner'].upper()} x{row['factor']:.2f}"


def winner_matrix(w: pd.DataFrame, scaling: str, nprocs: int) -> pd.DataFrame:
    """Application x mode rows, one column per stack, at one scaling and process count."""
    part = w[(w["scaling"] == scaling) & (w["nprocs"] == nprocs)]
    if part.empty:
        return pd.DataFrame()
    part = part.assign(cell=part.apply(cell, axis=1))
    m = part.pivot_table(index=["app", "mode"], columns="stack", values="cell", aggfunc="first")
    stacks = list(dict.fromkeys(w["stack"]))
    return m.reindex(columns=[s for s in stacks if s in m.columns]).fillna("-")


def winner_counts(w: pd.DataFrame) -> pd.DataFrame:
    """Per stack: how often each side wins over every measured (application, scaling, processes, mode)."""
    if w.empty:
        return pd.DataFrame()
    t = w.groupby(["stack", "winner"], sort=False).size().unstack(fill_value=0)
    return t.reindex(columns=[w["reference"].iloc[0], w["challenger"].iloc[0], TIE, UNCLEAR], fill_value=0)


def packing_costs(r: AppsResult) -> pd.DataFrame:
    """Per stack and packing, over the measured configurations (application, scaling, processes, mode):
    the setup of its halo objects, the memory a prepared variant adds (resident set increase, max over
    ranks, median over launches) and the difference to BASIC in the same configuration, and its own
    scratch buffers."""
    n = r.notes.dropna(subset=["mem", "setup_s"])
    if n.empty:
        return pd.DataFrame()
    per = n.groupby(CONFIG, sort=False)[["mem", "halo_bytes", "setup_s"]].median().reset_index()
    basic = per[per["packing"] == "basic"].set_index([*POINT, "mode"])["mem"]
    per["mem_vs_basic"] = per["mem"].to_numpy() - np.asarray(
        per.set_index([*POINT, "mode"]).index.map(basic.get), dtype=float)
    out = per.groupby(["stack", "packing"], sort=False).agg(
        setup_us=("setup_s", "median"), mem_median_kib=("mem", "median"), mem_max_kib=("mem", "max"),
        vs_basic_median_kib=("mem_vs_basic", "median"), vs_basic_max_kib=("mem_vs_basic", "max"),
        halo_buffers_max_kib=("halo_bytes", "max"), configurations=("mem", "size"))
    out["setup_us"] *= 1e6
    kib = [c for c in out.columns if c.endswith("_kib")]
    out[kib] = out[kib] / 1024.0
    order = [(st, p) for st in r.versions for p in apps.PACKINGS if (st, p) in out.index]
    return out.reindex(order)


def per_process_count(r: AppsResult, value: str, scale: float = 1.0) -> pd.DataFrame:
    """A summary column as rows (application, scaling, packing, mode) x columns 'stack P=processes'."""
    s = r.summary
    if s.empty:
        return s
    t = s.assign(v=s[value] * scale).pivot_table(index=["app", "scaling", "packing", "mode"],
                                                   columns=["stack", "nprocs"], values="v", aggfunc="first")
    packing_order = {p: i for i, p in enumerate(apps.PACKINGS)}
    stack_order = {st: i for i, st in enumerate(r.versions)}
    rows = sorted(t.index, key=lambda k: (k[0], k[1], packing_order.get(k[2], 9), k[3]))
    cols = sorted(t.columns, key=lambda c: (stack_order.get(c[0], 99), c[1]))
    t = t.reindex(index=rows, columns=cols)
    t.columns = [f"{st} P={n}" for st, n in t.columns]
    return t


_MODE_COLORS = {m: f"C{i}" for i, m in enumerate(apps.MODES)}
_PACKING_STYLES = {"basic": ("-", "o"), "ddt": ("--", "s"), "subarray": (":", "^"), "normalized": ("-.", "x")}


def scaling_charts(r: AppsResult, out: Path) -> list[Path]:
    """Per stack, application and scaling: time per iteration and speedup (strong) or efficiency (weak) over
    the process counts; colour = mode, line style = packing; oversubscribed counts shaded."""

    def draw(key: tuple, part: pd.DataFrame):
        stack, app, scaling = key
        fig, (ax_t, ax_s) = plt.subplots(1, 2, figsize=(11, 4))
        counts = sorted(set(part["nprocs"]))
        for (packing, mode), v in part.groupby(["packing", "mode"], sort=False):
            v = v.sort_values("nprocs")
            ls, marker = _PACKING_STYLES.get(packing, ("-", "."))
            style = dict(color=_MODE_COLORS.get(mode, "k"), linestyle=ls, marker=marker, markersize=4,
                         label=f"{packing}:{mode}")
            y = v["mean_s"].to_numpy() * 1e6
            err = error_bars(y, v["min_s"].to_numpy() * 1e6, v["max_s"].to_numpy() * 1e6)
            ax_t.errorbar(v["nprocs"], y, yerr=err, capsize=2, **style)
            ax_s.plot(v["nprocs"], v["speedup"], **style)
        ideal = counts if scaling == "strong" else [1.0] * len(counts)
        ax_s.plot(counts, ideal, color="grey", linewidth=1, label="ideal")
        for ax in (ax_t, ax_s):
            ax.set_xticks(counts)
            ax.set_xlabel("processes")
            ax.grid(True, alpha=0.3)
            over = [n for n in counts if oversubscribed(r, n)]
            if over:
                ax.axvspan(r.cores + 0.5, max(over) + 0.5, color="grey", alpha=0.12, label="more ranks than cores")
        ax_t.set_ylabel("time per iteration [us]")
        ax_t.set_yscale("log")
        ax_s.set_ylabel("speedup T(1)/T(P)" if scaling == "strong" else "efficiency T(1)/T(P)")
        ax_s.legend(fontsize=6, ncol=2)
        g = part.iloc[0]
        size = f"{g['gnx']}x{g['gny']} global" if scaling == "strong" else "fixed block per rank"
        fig.suptitle(f"{app}, {scaling} scaling ({size}, {g['steps']} iterations), {stack}", fontsize=10)
        return fig, f"apps-{app}-{scaling}-{stack}.png"

    return per_group(r.summary, ["stack", "app", "scaling"], out, draw, dpi=85)


def _run_table(r: AppsResult) -> pd.DataFrame:
    meta = r.rd.meta
    p, m, host = meta["params"], meta["measurement"], meta["host"]
    grids = "; ".join(f"{a}: " + ", ".join(f"{s} {nx}x{ny} x {steps} it." for s, (nx, ny, steps)
                                          in p["scales"][a].items() if s in p["scalings"]) for a in p["apps"])
    values = {
        "run": meta["run_id"], "applications": ", ".join(p["apps"]),
        "variants": ", ".join(p["variants"]) if p["variants"] else "all the stack supports",
        "processes": ", ".join(map(str, p["ranks"])), "scaling": ", ".join(p["scalings"]),
        "preset": p["preset"], "grids (strong: global, weak: per rank) and iterations": grids,
        "image": p.get("image") or "generated", "check": "bitwise against the serial run and BASIC halos"
        if p["check"] else "off",
        "launches (mpiexec calls)": str(meta["runs"]), "repetitions per launch": str(m["nrep"]),
        "synchronization": m["sync"],
        "host": host_text(host),
        "winners": "the ratio per launch both ways, each comparison's points as one family: "
                   + stats.error_rate_text(r.settings["tolerance"], r.settings["alpha"], r.settings.get("looks", 1)),
    }
    return fields(values)


def write(r: AppsResult, out: Path) -> Path:
    comparisons = {f"{ref}_vs_{ch}": winners(r, ref, ch) for ref, ch, _ in PAIRS}
    costs = packing_costs(r)
    write_csvs(out, {"measurements": r.measurements, "summary": r.summary, "notes": r.notes,
                     "config_errors": r.errors, "packing_costs": costs,
                     **{f"winners_{k}": v for k, v in comparisons.items()}}, keep_index=("packing_costs",))
    doc = Document("mpiguide: stencil applications, manual packing vs derived datatypes")
    doc.heatmap(heatmap(r))
    doc.section("Run", _run_table(r))
    doc.section("Stacks", pd.DataFrame({"MPI_Get_library_version": r.versions}))
    if not r.errors.empty:
        doc.section("Variants that FAILED their bitwise check (not timed)", r.errors.set_index("stack"))
    n = headline_nprocs(r)
    for (ref, ch, what), (key, w) in zip(PAIRS, comparisons.items(), strict=True):
        if w.empty:
            continue
        doc.heading(f"{ref.upper()} vs {ch.upper()}: {what}")
        doc.text(f"Which packing is faster per application and communication mode on {n} processes: the winner "
                 "and by how much (the loser's time per iteration over the winner's); tie: shown within the tolerance "
                 f"both ways; unclear: neither shown. Every scaling and process count is in winners_{key}.csv.")
        for scaling in dict.fromkeys(w["scaling"]):
            doc.heading(f"{scaling} scaling, {n} processes", 3)
            doc.table(winner_matrix(w, scaling, n))
        doc.heading("Wins over every application, scaling, process count and mode", 3)
        doc.table(winner_counts(w))
    doc.section("Setup and memory per packing", costs,
                note="setup: creating the halo objects (datatypes, communicators, persistent requests), never "
                     "inside the timed loop. mem: increase of a rank's resident set (max over ranks) from when the "
                     "variant's grids are written (the same for all variants, left out) to the end of its "
                     "preparation (check and one warm-up exchange): its halo objects and what the MPI library "
                     "allocates for them; a one-time setup of the library's datatype engine lands on the first "
                     "datatype variant (mem_max). vs_basic: mem minus BASIC's in the same configuration. "
                     "halo_buffers: the pack/unpack buffers of the halo objects themselves. Medians over "
                     "launches, then over configurations.")
    over = f" Columns with more processes than the {r.cores} cores are oversubscribed: their timings mean little."
    doc.section("Time per iteration [us] by stack and processes", per_process_count(r, "mean_s", 1e6),
                note="Mean of the launch medians; min and max are in summary.csv." + over)
    doc.section("Speedup (strong) or efficiency (weak): T(1)/T(P) of the same variant",
                per_process_count(r, "speedup"), note="Ideal: P for strong scaling, 1 for weak scaling." + over)
    doc.section("Communication share: time in the halo exchange over the loop time (max over ranks)",
                per_process_count(r, "comm_share"))
    doc.heading("Scaling charts")
    doc.images(scaling_charts(r, out / "plots"), out)
    if r.failed:
        doc.section("Launches not completed", pd.DataFrame({"launch": r.failed}))
    return doc.write(out)


def console_summary(r: AppsResult) -> list[str]:
    lines = []
    if not r.errors.empty:
        for _, e in r.errors.iterrows():
            lines.append(f"CHECK FAILED {e['stack']} {e['launch_id']} {e['config']}: {e['error']}")
    w = winners(r, "basic", "ddt")
    if w.empty:
        return lines + ["no BASIC/DDT pair measured"]
    n = headline_nprocs(r)
    for scaling in dict.fromkeys(w["scaling"]):
        m = winner_matrix(w, scaling, n)
        if not m.empty:
            lines.append(f"BASIC vs DDT, {scaling} scaling, {n} processes:")
            lines += ["  " + line for line in m.to_string().splitlines()]
    for stack, row in winner_counts(w).iterrows():
        lines.append(f"{stack}: over all points " + ", ".join(f"{k} {v}" for k, v in row.items()))
    return lines
