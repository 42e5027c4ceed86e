"""Tables and chart of the datatype engine bench (driver src/bench/dtbench.c):
the engine against each stack's MPI_Pack/MPI_Unpack, a hand-written loop,
memcpy and a memory-traffic bound, all from times measured side by side in one
run, and whether the engine's goals are met."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from mpiguide.core import stats
from mpiguide.core.charts import plt, save_figure
from mpiguide.core.measurements import Measured

CONFIG = ["layout", "geometry", "A", "msize"]
METHODS = ("engine", "mpi", "normalized", "hand", "memcpy")
DIRECTIONS = ("pack", "unpack")
# Descriptions that MPI libraries fail to normalize (Carpen-Amarie et al. 2016, Tests 5, 7, 10, 11).
HARD = ("vector-tiled", "tiled-struct", "alternating-repeated", "rowcol-fully-indexed")


def load_info(m: Measured) -> pd.DataFrame:
    """The per-configuration #@info lines (packed, span, touched, blocks, n), one row per stack."""
    normal = {(x.stack, label): value for x, label, value in m.notes("normal")}
    rows = []
    for x, label, value in m.notes("info"):
        parts = label.split()
        if len(parts) != len(CONFIG):
            continue
        row = {"stack": x.stack, **dict(zip(CONFIG, parts, strict=True))}
        row.update({k: float(v) for k, v in (kv.split("=", 1) for kv in value.split(",") if "=" in kv)})
        row["normal"] = normal.get((x.stack, label), "")
        rows.append(row)
    df = pd.DataFrame(rows).drop_duplicates(subset=["stack", *CONFIG])
    if not df.empty:
        df["A"] = df["A"].astype(int)
        df["msize"] = df["msize"].astype(int)
    return df


def ratios(summary: pd.DataFrame, info: pd.DataFrame) -> pd.DataFrame:
    """One row per (stack, configuration, direction) with the time of each
    method (mean of launch medians) and the ratios the goals are about; info
    (from load_info) gives the bytes for the traffic bound."""
    s = summary[summary["direction"].isin(DIRECTIONS)]
    if s.empty:
        return pd.DataFrame()
    wide = s.pivot_table(index=["stack", *CONFIG, "direction"], columns="method", values="mean_s",
                         aggfunc="first").reset_index()
    wide.columns.name = None
    for m in METHODS:
        if m not in wide.columns:
            wide[m] = np.nan
    wide["engine/mpi"] = wide["engine"] / wide["mpi"]
    wide["engine/hand"] = wide["engine"] / wide["hand"]
    wide["normalized/mpi"] = wide["normalized"] / wide["mpi"]
    # The slowest stack's MPI_Pack for this configuration, against each stack's engine.
    slowest = wide.groupby([*CONFIG, "direction"])["mpi"].transform("max")
    wide["slowest-mpi/engine"] = slowest / wide["engine"]
    # Best description of the same layout (geometry), per stack and size.
    best = wide.groupby(["stack", "geometry", "A", "msize", "direction"])["engine"].transform("min")
    wide["engine/best-description"] = wide["engine"] / best
    if not info.empty and {"touched", "packed"} <= set(info.columns):
        wide = wide.merge(info[["stack", *CONFIG, "touched", "packed", "normal"]], on=["stack", *CONFIG], how="left")
        # Traffic bound: the distinct cache lines read plus the bytes written,
        # at the bandwidth memcpy reaches on the packed size (read + write).
        bandwidth = 2 * wide["packed"] / wide["memcpy"]
        wide["engine/bound"] = wide["engine"] / ((wide["touched"] + wide["packed"]) / bandwidth)
    else:
        wide["engine/bound"] = np.nan
    return wide


# The goals of the engine (issue 16): (title, ratio, configurations, statistic, op, target).
SMALL = 3200
BIG = 64_000_000


def _goal_spec(r: pd.DataFrame) -> list[tuple[str, str, pd.Series, str, str, float]]:
    every = pd.Series(True, index=r.index)
    hard = r["layout"].isin(HARD) & (r["A"] <= 10)
    return [
        ("engine vs MPI_Pack/MPI_Unpack of the stack", "engine/mpi", every, "median", "<=", 1.0),
        ("engine vs hand-written loop, worst at 3.2 kB", "engine/hand", r["msize"] == SMALL, "worst", "<=", 1.10),
        ("engine vs hand-written loop, median over the grid", "engine/hand", every, "median", "<=", 1.0),
        ("slowest stack's MPI_Pack vs engine, descriptions stacks fail to normalize, A <= 10",
         "slowest-mpi/engine", hard, "median", ">=", 2.0),
        ("engine vs memory-traffic bound at 64 MB", "engine/bound", r["msize"] >= BIG, "median", "<=", 1.25),
        ("engine vs hand-written loop at 64 MB (where the bound is out of reach)", "engine/hand",
         r["msize"] >= BIG, "median", "<=", 0.85),
        ("each description vs the best description of its layout (engine)", "engine/best-description",
         every, "median", "<=", 1.05),
    ]


# The ratios measured side by side in one launch (the methods interleaved): judged with their intervals.
PAIRED = {"engine/mpi": ("engine", "mpi"), "engine/hand": ("engine", "hand"), "normalized/mpi": ("normalized", "mpi")}


def estimates(df: pd.DataFrame) -> pd.DataFrame:
    """Per stack, configuration and direction, the estimate (stats.Estimate, paired by launch) of each ratio of
    PAIRED, from the raw rows."""
    rows = []
    df = df[df["direction"].isin(DIRECTIONS)] if not df.empty else df
    for key, part in df.groupby(["stack", *CONFIG, "direction"], sort=False):
        by = {m: stats.per_launch(p) for m, p in part.groupby("method", sort=False)}
        row = dict(zip(["stack", *CONFIG, "direction"], key, strict=True))
        for col, (a, b) in PAIRED.items():
            row[col] = stats.from_medians(by[a], by[b]) if a in by and b in by else None
        rows.append(row)
    return pd.DataFrame(rows)


def _goal_row(stack: str, title: str, vals: pd.Series, stat: str, op: str, target: float,
              est: list[stats.Estimate] | None = None, alpha: float = 0.05) -> dict:
    """A goal over configurations. Where the ratio was measured side by side (est), each configuration's
    ratio is judged against the target with its interval (the goal's configurations as one family): a worst
    goal is met when every configuration is shown on the target's side, missed when one is shown beyond it;
    a median goal when more than half are. Other ratios (across stacks, against a bound) are point
    estimates: PASS/FAIL on the statistic."""
    row = {"stack": stack, "goal": title, "target": f"{stat} {op} {target}", "median": np.nan, "worst": np.nan,
           "configs": len(vals), "met": "not measured", "evidence": "point estimate"}
    if vals.empty:
        return row
    row["median"] = float(vals.median())
    row["worst"] = float(vals.max() if op == "<=" else vals.min())
    if est and all(e is not None for e in est):
        below = [e if op == "<=" else e.reversed() for e in est]  # ">= target": the inverse ratio <= 1 / target
        bound = target if op == "<=" else 1 / target
        verdicts = [v.verdict for v in stats.decide(below, bound - 1, alpha)]
        ok, bad = verdicts.count(stats.PASS), verdicts.count(stats.VIOLATED)
        need = len(verdicts) if stat == "worst" else len(verdicts) // 2 + 1
        row["met"] = "PASS" if ok >= need else "FAIL" if bad >= (1 if stat == "worst" else need) \
            else stats.INCONCLUSIVE
        row["evidence"] = f"intervals: {ok} shown within, {bad} beyond, of {len(verdicts)}"
        return row
    value = row[stat]
    row["met"] = "PASS" if (value <= target if op == "<=" else value >= target) else "FAIL"
    return row


def goals(r: pd.DataFrame, commit: pd.DataFrame | None = None, est: pd.DataFrame | None = None,
          alpha: float = 0.05) -> pd.DataFrame:
    """Each goal of the engine per stack: the median and worst ratio over its
    configurations and whether it is met (_goal_row; est: `estimates`, whose
    ratios are judged with their intervals). commit (the summary's commit rows)
    adds the commit goal: the engine's decode + normalize + compile of the
    largest indexed type vs building it with MPI's constructors + commit."""
    rows = []
    if not r.empty:
        spec = _goal_spec(r)
        keyed = est.set_index(["stack", *CONFIG, "direction"]) if est is not None and not est.empty else None
        for stack, part in r.groupby("stack", sort=False):
            for title, col, mask, stat, op, target in spec:
                chosen = part.loc[mask.loc[part.index]].dropna(subset=[col])
                found = None
                if keyed is not None and col in PAIRED:
                    index = list(zip(chosen["stack"], *(chosen[c] for c in CONFIG), chosen["direction"], strict=True))
                    found = [keyed[col].get(i) for i in index]
                rows.append(_goal_row(stack, title, chosen[col], stat, op, target, found, alpha))
    if commit is not None and not commit.empty:
        c = commit[commit["layout"] == "commit-indexed"]
        if not c.empty:
            c = c[c["A"] == c["A"].max()]
            for stack, part in c.groupby("stack", sort=False):
                t = part.set_index("method")["mean_s"]
                vals = pd.Series([t["engine"] / t["mpi-create"]]) if {"engine", "mpi-create"} <= set(t.index) \
                    else pd.Series(dtype=float)
                rows.append(_goal_row(stack, f"commit of an indexed type of {int(part['A'].iloc[0])} blocks vs MPI's "
                                      "constructor + MPI_Type_commit", vals, "median", "<=", 1.0))
    return pd.DataFrame(rows)


def commit_table(summary: pd.DataFrame) -> pd.DataFrame:
    c = summary[summary["direction"] == "commit"]
    if c.empty:
        return pd.DataFrame()
    t = c.pivot_table(index=["layout", "A"], columns=["stack", "method"], values="mean_s", aggfunc="first") * 1e6
    t.columns = [f"{st} {m} [us]" for st, m in t.columns]
    # mpi: MPI_Type_dup + MPI_Type_commit; mpi-create: the constructor calls + commit
    for st in dict.fromkeys(c["stack"]):
        for ref in ("mpi", "mpi-create"):
            if f"{st} engine [us]" in t.columns and f"{st} {ref} [us]" in t.columns:
                t[f"{st} engine/{ref}"] = t[f"{st} engine [us]"] / t[f"{st} {ref} [us]"]
    t.index.names = ["type", "blocks"]
    return t


def median_ratio_table(r: pd.DataFrame) -> pd.DataFrame:
    """Per stack, layout and direction: median over A and m of each ratio."""
    cols = ["engine/mpi", "engine/hand", "normalized/mpi", "slowest-mpi/engine", "engine/bound",
            "engine/best-description"]
    t = r.groupby(["layout", "direction", "stack"], sort=False)[cols].median()
    return t


def report_tables(summary: pd.DataFrame, r: pd.DataFrame, est: pd.DataFrame | None = None,
                  alpha: float = 0.05) -> dict[str, pd.DataFrame]:
    """The report's tables from the summary, the ratios and their estimates (computed once per analysis)."""
    tables = {}
    g = goals(r, summary[summary["direction"] == "commit"], est, alpha)
    if not g.empty:
        title = ("Engine goals (per stack: median and worst ratio; met where the intervals of the ratios measured "
                 "side by side show it, else on the point estimate)")
        tables[title] = g.set_index(["stack", "goal"])
    if not r.empty:
        tables["Median ratios per layout description (over A and m)"] = median_ratio_table(r)
        bw = r.copy()
        for m in ("engine", "mpi", "hand", "memcpy"):
            bw[f"{m} GB/s"] = bw["msize"] / bw[m] / 1e9
        keep = ["stack", *CONFIG, "direction", "engine GB/s", "mpi GB/s", "hand GB/s", "memcpy GB/s", "engine/mpi",
                "engine/hand", "engine/bound"]
        tables["Bandwidth per configuration"] = bw[[c for c in keep if c in bw.columns]].set_index(
            ["stack", "layout", "A", "msize", "direction"])
    ct = commit_table(summary)
    if not ct.empty:
        tables["Commit cost: decode + normalize + compile (engine) vs MPI_Type_dup + MPI_Type_commit (mpi) "
               "and vs building the type with its constructors + MPI_Type_commit (mpi-create), microseconds"] = ct
    return tables


def engine_chart(a, out: Path) -> list[Path]:
    """Median engine/MPI_Pack ratio per layout description, one marker per stack, a panel per direction."""
    r = a.extra.get("dt_ratios", pd.DataFrame())
    if r.empty:
        return []
    out.mkdir(parents=True, exist_ok=True)
    dirs = [d for d in DIRECTIONS if d in set(r["direction"])]
    layouts = list(dict.fromkeys(r["layout"]))
    fig, axes = plt.subplots(1, len(dirs), figsize=(7 * len(dirs), 4.5), squeeze=False, sharey=True)
    for ax, d in zip(axes[0], dirs, strict=True):
        part = r[r["direction"] == d]
        for stack in a.rd.meta["stacks_order"]:
            med = part[part["stack"] == stack].groupby("layout")["engine/mpi"].median().reindex(layouts)
            if med.notna().any():
                ax.plot(range(len(layouts)), med.values, "o", label=stack)
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xticks(range(len(layouts)), layouts, rotation=70, ha="right", fontsize=7)
        ax.set_yscale("log")
        ax.set_title(f"{d}: engine time / MPI_{'Pack' if d == 'pack' else 'Unpack'} time (median over A, m)")
        ax.grid(True, which="both", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:  # nothing to plot without the mpi method
            ax.legend(fontsize=8)
    return [save_figure(fig, out / "engine_vs_mpi.png", dpi=110)]
