"""Results of the datatype expectation tests (job `ddt`): guideline verdicts,
slowdown factors, the cross-stack matrix, bar charts in the style of the
figures of Carpen-Amarie et al. (2016), and the HTML report of one run or of
several runs together.

Everything is computed from the run directories' raw files."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from mpiguide.core import launch, stats
from mpiguide.core.charts import grouped_bars, per_group, plt
from mpiguide.core.document import Document, Heatmap, fields, host_text, worst_cells, write_csvs
from mpiguide.core.dtchoice import NO_BLOCK
from mpiguide.core.errors import MpiguideError
from mpiguide.core.measurements import NOT_MEASURED, Measured, oversubscription, stack_versions, unfinished
from mpiguide.core.pairing import decide, paired
from mpiguide.core.runner import RunDir
from mpiguide.core.suite import POINT_COLUMNS, POINT_MORE, POINT_TEMPLATE
from mpiguide.suites.ddt.expectations import ALL_MODES, CHARACTERIZE, PRECEDES, TESTS, TUNED, Comparison, label

# what both sides of a comparison share
MATCH = ["stack", "nprocs", "placement", "pattern", "A", "m", "msize"]
PAPER_GUIDELINES = ("DT-GL1", "DT-GL2/3", "DT-GL4")
VERDICT_COLUMNS = ["test", "template", "guideline", "comparison", "relation", "compared", "compared_mode", "reference",
                   "reference_mode", *MATCH, "factor", *stats.VERDICT_FIELDS]
FACTOR_COLUMNS = ["test", "compared", "reference", *MATCH, "time_s", "reference_s", "factor"]


@dataclass
class DdtResult:
    """One or several ddt runs, their stacks renamed apart where two runs share a name."""

    runs: list[RunDir]
    stacks: list[str]
    measurements: pd.DataFrame
    versions: dict[str, str]  # stack -> first line of MPI_Get_library_version
    entries: pd.DataFrame  # one row per (stack, launch template): test, pattern, nprocs, comparisons
    summary: pd.DataFrame
    verdicts: pd.DataFrame
    factors: pd.DataFrame
    notes: pd.DataFrame  # skipped configurations: stack, test, pattern, layout, A, m, reason
    errors: pd.DataFrame  # failed data checks
    shapes: pd.DataFrame  # SHAPE_COLUMNS: the normalized shape of each configuration's type (mg_dt_shape)
    failed: list[str] = field(default_factory=list)  # launches that did not complete


# ---------------------------------------------------------------- verdicts and factors

def comparison_text(c: Comparison) -> str:
    def side(spec: str, mode: str) -> str:
        return label(spec) + ("" if mode == "datatype" else f" [{mode}]")
    reference = f"fastest of {', '.join(label(s) for s in c.among)}" if c.among else side(*c.reference)
    return f"{side(*c.compared)} {c.relation} {reference}"


def _fastest(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Per configuration (MATCH), the rows of the layout with the lowest median time among the frames."""
    rows = pd.concat(frames, ignore_index=True)
    med = rows.groupby([*MATCH, "layout"], sort=False)["time_s"].median().reset_index()
    best = med.loc[med.groupby(MATCH, sort=False)["time_s"].idxmin(), [*MATCH, "layout"]]
    return rows.merge(best, on=[*MATCH, "layout"])


def compute_verdicts(df: pd.DataFrame, entries: pd.DataFrame, opts: dict) -> pd.DataFrame:
    """Every guideline comparison of every test on every configuration where both sides were measured, all judged
    together as one family (stats.decide). A `≃` comparison is judged both ways and the worse direction counts."""
    if df.empty:
        return pd.DataFrame(columns=VERDICT_COLUMNS)
    groups = dict(iter(df.groupby(["stack", "template", "layout", "mode"], sort=False)))
    rows, estimates, strata = [], [], []
    for e in entries.itertuples():
        for d in e.comparisons:
            c = Comparison.from_dict(d)
            if c.guideline == "slowdown":
                continue
            a = groups.get((e.stack, e.template, label(c.compared[0]), c.compared[1]))
            if c.among:
                found = [g for g in (groups.get((e.stack, e.template, label(s), c.reference[1])) for s in c.among)
                         if g is not None]
                b = _fastest(found) if found else None
            else:
                b = groups.get((e.stack, e.template, label(c.reference[0]), c.reference[1]))
            if a is None or b is None:
                continue
            for key, part_a, part_b in paired(a, b, MATCH):
                reference = str(part_b["layout"].iloc[0]) if c.among else label(c.reference[0])
                rows.append({"test": e.test, "template": e.template, "guideline": c.guideline,
                             "comparison": comparison_text(c), "relation": c.relation, "compared": label(c.compared[0]),
                             "compared_mode": c.compared[1], "reference": reference, "reference_mode": c.reference[1],
                             **dict(zip(MATCH, key, strict=True))})
                ab = stats.estimate(part_a, part_b, opts["samples"])
                estimates += [ab] if c.relation == PRECEDES else [ab, ab.reversed()]
                strata += [e.stack] * (1 if c.relation == PRECEDES else 2)
    verdicts = iter(decide(estimates, opts, strata))
    for row in rows:
        v = next(verdicts)
        if row["relation"] != PRECEDES:
            v = stats.worse(v, next(verdicts))
        row.update(stats.verdict_dict(v), factor=v.ratio if row["relation"] == PRECEDES else max(v.ratio, 1 / v.ratio))
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def compute_factors(summary: pd.DataFrame, entries: pd.DataFrame) -> pd.DataFrame:
    """Tests 1 and 2: each layout's time over the reference's (mean of launch medians)."""
    if summary.empty:
        return pd.DataFrame(columns=FACTOR_COLUMNS)
    frames = []
    for e in entries.itertuples():
        if TESTS[e.test].kind != CHARACTERIZE:
            continue
        part = summary[(summary["stack"] == e.stack) & (summary["template"] == e.template)
                       & (summary["mode"] == "datatype")]
        for d in e.comparisons:
            c = Comparison.from_dict(d)
            a = part[part["layout"] == label(c.compared[0])][[*MATCH, "mean_s"]]
            b = part[part["layout"] == label(c.reference[0])][[*MATCH, "mean_s"]]
            both = a.merge(b, on=MATCH, suffixes=("", "_ref"))
            if both.empty:
                continue
            frames.append(pd.DataFrame({"test": e.test, "compared": label(c.compared[0]),
                                        "reference": label(c.reference[0]), **{k: both[k] for k in MATCH},
                                        "time_s": both["mean_s"], "reference_s": both["mean_s_ref"],
                                        "factor": both["mean_s"] / both["mean_s_ref"]}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=FACTOR_COLUMNS)


# ---------------------------------------------------------------- loading runs

SKIP_COLUMNS = ["stack", "test", "pattern", "layout", "A", "m", "reason"]
SHAPE_COLUMNS = ["stack", "template", "layout", "A", "m", "shape", "block"]


def _skipped(m: Measured, stack_name: dict[str, str], tests: dict[str, int]) -> pd.DataFrame:
    """The configurations the driver skipped as impossible (`#@skip[pattern layout A m]=reason`)."""
    rows = []
    for x, key, reason in m.notes("skip"):
        parts = key.split()
        if len(parts) == 4:
            rows.append({"stack": stack_name[x.stack], "test": tests.get(x.template), "pattern": parts[0],
                         "layout": parts[1], "A": int(parts[2]), "m": int(parts[3]), "reason": reason})
    return pd.DataFrame(rows, columns=SKIP_COLUMNS).drop_duplicates()


def _shapes(m: Measured, stack_name: dict[str, str]) -> pd.DataFrame:
    """`#@shape[pattern layout A m]=shape` and `#@block[...]=bytes` of every launch, once per configuration
    (NO_BLOCK where a run predates the block note)."""
    blocks = {(x.stack, x.template, key): value for x, key, value in m.notes("block")}
    rows = []
    for x, key, shape in m.notes("shape"):
        parts = key.split()
        if len(parts) == 4:
            rows.append((stack_name[x.stack], x.template, parts[1], int(parts[2]), int(parts[3]), shape,
                         int(blocks.get((x.stack, x.template, key), NO_BLOCK))))
    return pd.DataFrame(rows, columns=SHAPE_COLUMNS).drop_duplicates(SHAPE_COLUMNS[:-2])


def load(rds: list[RunDir]) -> DdtResult:
    """Measurements of every run, stacks renamed `stack@run` where two runs share a stack name; verdicts with
    the first run's analysis settings."""
    for rd in rds:
        if rd.meta["job"] != "ddt":
            raise MpiguideError(f"{rd.path} is a '{rd.meta['job']}' run, not a ddt run (mpiguide ddt run)")
    seen: dict[str, int] = {}
    for rd in rds:
        for s in rd.meta["stacks_order"]:
            seen[s] = seen.get(s, 0) + 1
    opts = rds[0].meta["analysis"]
    stacks, versions, entry_rows, frames, notes, errors, failed, shapes = [], {}, [], [], [], [], [], []
    for rd in rds:
        rename = {s: (s if seen[s] == 1 else f"{s}@{rd.meta['run_id']}") for s in rd.meta["stacks_order"]}
        stacks += rename.values()
        versions.update({rename[s]: v for s, v in stack_versions(rd).items()})
        tests = {e["key"]: e["test"] for e in rd.meta["params"]["entries"]}
        placements = {e["key"]: placement_label(e, rd.meta["launch"]) for e in rd.meta["params"]["entries"]}
        for s in rd.meta["stacks_order"]:
            for e in rd.meta["params"]["entries"]:
                entry_rows.append({"stack": rename[s], "template": e["key"], "test": e["test"],
                                   "pattern": e["pattern"], "nprocs": e["nprocs"], "placement": placements[e["key"]],
                                   "comparisons": e["comparisons"], "A": e["A"], "sizes": e["sizes"],
                                   "layouts": e["layouts"], "modes": e["modes"]})
        measured = Measured.load(rd)
        df, errs = measured.tables()
        if not df.empty:
            df["stack"] = df["stack"].map(rename)
            df.insert(df.columns.get_loc("nprocs") + 1, "placement", df["template"].map(placements))
            frames.append(df)
        if not errs.empty:
            errs["stack"] = errs["stack"].map(rename)
            errors.append(errs)
        notes.append(_skipped(measured, rename, tests))
        shapes.append(_shapes(measured, rename))
        failed += [f"{rd.meta['run_id']}: {x.id}: {x.status} {x.message}" for x in unfinished(rd)]
    entries = pd.DataFrame(entry_rows)
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    summary = stats.summarize(df, [c for c in df.columns if c not in NOT_MEASURED]) if not df.empty \
        else pd.DataFrame()
    return DdtResult(
        runs=rds, stacks=stacks, measurements=df, versions=versions, entries=entries, summary=summary,
        verdicts=compute_verdicts(df, entries, opts),
        factors=compute_factors(summary, entries),
        notes=pd.concat(notes, ignore_index=True) if notes else pd.DataFrame(columns=SKIP_COLUMNS),
        errors=pd.concat(errors, ignore_index=True) if errors else pd.DataFrame(),
        shapes=pd.concat(shapes, ignore_index=True) if shapes else pd.DataFrame(columns=SHAPE_COLUMNS),
        failed=failed)


def heatmap(verdicts: pd.DataFrame) -> Heatmap:
    """Guideline and test x stack: the worst verdict over every comparison and configuration, its worst
    factor (the cross-stack matrix at a glance)."""
    v = verdicts.sort_values(["guideline", "test"], kind="stable") if not verdicts.empty else verdicts
    return Heatmap(worst_cells(v, ["guideline", "test"], ["stack"]), ["guideline", "test"], ["stack"],
                   "Worst verdict per guideline, test and stack over every comparison, A, m and pattern; the "
                   "number: the largest factor (compared / reference time) among the points with that verdict. "
                   "The cross-stack matrix below has the details.")


def verdict_points(r: DdtResult) -> pd.DataFrame:
    """The verdicts as `mpiguide compare` points (POINT_COLUMNS): a point is a test's comparison on one
    configuration (DT-GL4-BEST names its rule, not the description that was fastest); with the comparison, A and
    m that DdtSuite.narrow reads."""
    v = r.verdicts
    if v.empty:
        return pd.DataFrame(columns=POINT_COLUMNS)
    point = ("test " + v["test"].astype(str) + ": " + v["comparison"] + ", " + v["pattern"] + " np"
             + v["nprocs"].astype(str) + " " + v["placement"].astype(str) + ", A=" + v["A"].astype(str) + " m="
             + v["m"].astype(str))
    return v.assign(point=point)[[*POINT_COLUMNS, POINT_TEMPLATE, POINT_MORE, "comparison", "A", "m"]]


def placement_label(entry: dict, spec: dict) -> str:
    """NODESxPPN of an entry's launches: its own, the run's, or (local launcher) all on one node; "?" where a
    cluster launcher was given no placement."""
    run_spec = launch.LaunchSpec.from_dict(spec).with_placement(entry.get("placement") or entry.get("launch_layout"))
    if run_spec.ppn is None and run_spec.launcher != "local":
        return "?"
    nodes, ppn = run_spec.shape(entry["nprocs"])
    return f"{nodes}x{ppn}"


# ---------------------------------------------------------------- tables

def _worst(part: pd.DataFrame) -> pd.Series:
    return part.loc[part["factor"].idxmax()]


def _size(m: int) -> str:
    return f"{m / 1e6:g} MB" if m >= 1e6 else f"{m / 1e3:g} kB" if m >= 1e3 else f"{m} B"


def _where(w: pd.Series, *extra: str) -> str:
    """'A=2, ...' of a verdict row; for ≃ it also says when the reference was the slower side."""
    slower = ["reference slower"] if w["relation"] != PRECEDES and w["ratio"] < 1 else []
    return ", ".join([f"A={w['A']}", *extra, *slower])


def verdict_cell(part: pd.DataFrame) -> str:
    worst_verdict = max(part["verdict"], key=lambda v: stats.RANK[v])
    bad = part[part["verdict"] == worst_verdict]
    w = _worst(bad if worst_verdict != stats.PASS else part)
    return f"{worst_verdict} {len(bad)}/{len(part)} x{w['factor']:.2f} ({_where(w)})"


def factor_cell(part: pd.DataFrame) -> str:
    w = _worst(part)
    return f"x{part['factor'].median():.2f} median, x{w['factor']:.2f} max (A={w['A']})"


MATRIX_INDEX = ["test", "guideline", "comparison", "pattern", "nprocs", "placement", "m"]


def matrix(r: DdtResult) -> pd.DataFrame:
    """Rows: test, guideline, comparison, pattern, processes, m; columns: stacks; cells: the worst verdict over A
    with how many A values have it and the worst factor (Tests 1-2: median and largest slowdown)."""
    rows: dict[tuple, dict[str, str]] = {}
    if not r.verdicts.empty:
        for key, part in r.verdicts.groupby([*MATRIX_INDEX, "stack"], sort=False):
            rows.setdefault(key[:-1], {})[key[-1]] = verdict_cell(part)
    if not r.factors.empty:
        f = r.factors.assign(guideline="slowdown", comparison=r.factors["compared"] + " / " + r.factors["reference"])
        for key, part in f.groupby([*MATRIX_INDEX, "stack"], sort=False):
            rows.setdefault(key[:-1], {})[key[-1]] = factor_cell(part)
    if not rows:
        return pd.DataFrame()
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index = pd.MultiIndex.from_tuples(out.index, names=MATRIX_INDEX)
    out = out[[s for s in r.stacks if s in out.columns]].fillna("-")
    return out.sort_index(level=["test", "guideline", "m"], sort_remaining=False)


INTER_INTRA = ("DT-GL2/3", "DT-GL2/3-ENG")


def placement_contrast(r: DdtResult) -> pd.DataFrame:
    """DT-GL2/3 at each placement side by side (Carpen-Amarie et al. 2016, Section 3.2.1: inter- vs intra-node):
    rows stack, test, comparison, pattern, m; columns the placements; empty unless the runs measured several."""
    v = r.verdicts[r.verdicts["guideline"].isin(INTER_INTRA)] if not r.verdicts.empty else r.verdicts
    if v.empty or v["placement"].nunique() < 2:
        return pd.DataFrame()
    index = ["stack", "test", "guideline", "comparison", "pattern", "m"]
    rows: dict[tuple, dict[str, str]] = {}
    for key, part in v.groupby([*index, "placement"], sort=False):
        rows.setdefault(key[:-1], {})[key[-1]] = verdict_cell(part)
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index = pd.MultiIndex.from_tuples(out.index, names=index)
    order = sorted(out.columns, key=lambda p: (-launch.parse_placement(p)[0], p))  # inter-node first
    return out[order].fillna("-").sort_index(level=["stack", "test", "m"], sort_remaining=False)


def verdict_counts(r: DdtResult) -> pd.DataFrame:
    """Per stack and guideline: how many configurations PASS, are VIOLATED or INCONCLUSIVE."""
    if r.verdicts.empty:
        return pd.DataFrame()
    t = r.verdicts.pivot_table(index=["stack", "guideline"], columns="verdict", values="ratio", aggfunc="size",
                               fill_value=0)
    t.columns.name = None
    for v in (stats.PASS, stats.VIOLATED, stats.INCONCLUSIVE):
        if v not in t.columns:
            t[v] = 0
    t = t[[stats.PASS, stats.VIOLATED, stats.INCONCLUSIVE]]
    return t.reindex([s for s in r.stacks if s in t.index.get_level_values(0)], level=0)


def worst_violations(r: DdtResult, k: int = 5) -> pd.DataFrame:
    v = r.verdicts[r.verdicts["verdict"] == stats.VIOLATED]
    return v.sort_values("factor", ascending=False).head(k)


def paper_comparison(r: DdtResult) -> list[tuple[int, str, str, dict[str, str]]]:
    """Per test: the paper's expectation and finding, and one sentence per stack on what was measured here."""
    out = []
    tested = sorted(set(r.entries["test"])) if not r.entries.empty else []
    for n in tested:
        t = TESTS[n]
        here: dict[str, str] = {}
        for stack in r.stacks:
            if t.kind == CHARACTERIZE:
                f = r.factors[(r.factors["test"] == n) & (r.factors["stack"] == stack)]
                if f.empty:
                    continue
                w = _worst(f)
                here[stack] = (f"slower than {w['reference']} by x{f['factor'].median():.2f} (median of {len(f)}), "
                               f"at most x{w['factor']:.2f} ({w['compared']}, A={w['A']}, m={_size(w['m'])}, "
                               f"{w['pattern']})")
                continue
            v = r.verdicts[(r.verdicts["test"] == n) & (r.verdicts["stack"] == stack)]
            parts = []
            for g, part in v.groupby("guideline", sort=False):
                bad = part[part["verdict"] == stats.VIOLATED]
                text = f"{g}: {len(bad)} of {len(part)} VIOLATED"
                if not bad.empty:
                    w = _worst(bad)
                    where = _where(w, f"m={_size(w['m'])}", w["pattern"])
                    text += f", worst x{w['factor']:.2f} ({w['comparison']}, {where})"
                parts.append(text)
            if parts:
                here[stack] = "; ".join(parts)
        out.append((n, t.expectation, t.finding, here))
    return out


# ---------------------------------------------------------------- charts

def _series(test: int, layout: str, mode: str) -> tuple[str, str]:
    """(panel, bar label) of a summary row."""
    t = TESTS[test]
    bar = layout + ("" if mode == "datatype" else f" [{mode}]")
    if t.panel == "variant":
        return ("Variant 2" if "variant=2" in layout else "Variant 1"), bar.replace(":variant=2", "")
    if t.panel == "layout":
        return layout, mode
    return "", bar


def charts(r: DdtResult, out: Path) -> list[Path]:
    """One PNG per test x pattern x processes x m x stack: time over A, a bar per layout (or mode), error bars
    from the smallest to the largest launch median."""
    if r.summary.empty:
        return []
    first = r.entries.drop_duplicates("template").set_index("template")
    tests = first["test"].to_dict()
    layouts = {k: [label(s) for s in v] for k, v in first["layouts"].items()}

    def draw(key: tuple, part: pd.DataFrame):
        stack, template, m = key
        test = tests.get(template)
        if test is None:
            return None
        part = part.copy()
        part[["panel", "bar"]] = [list(_series(test, lay, mo)) for lay, mo in zip(part["layout"], part["mode"],
                                                                                   strict=True)]
        if TESTS[test].panel == "variant":  # the Contiguous reference belongs to both variants
            ref = part[part["layout"] == "contiguous"]
            part = pd.concat([part, ref.assign(panel="Variant 2")], ignore_index=True)
        order = {lab: i for i, lab in enumerate(layouts.get(template, []))}
        modes = (*ALL_MODES, TUNED)
        part["order"] = [order.get(lay, len(order)) * len(modes) + modes.index(mo)
                         for lay, mo in zip(part["layout"], part["mode"], strict=True)]
        part = part.sort_values("order", kind="stable")
        panels = list(dict.fromkeys(part["panel"]))
        colors = {b: f"C{i % 10}" for i, b in enumerate(dict.fromkeys(part["bar"]))}
        A = sorted(set(part["A"]))
        wide = 7.0 if TESTS[test].exchange else 4.5  # a bar per mode at one or two A, and a longer title
        fig, axes = plt.subplots(1, len(panels), figsize=(max(wide, 1.1 * len(A) + 2.5) * len(panels), 3.8),
                                 squeeze=False)
        scale, unit = (1e3, "ms") if part["mean_s"].max() >= 1e-3 else (1e6, "us")
        for ax, panel in zip(axes[0], panels, strict=True):
            p = part[part["panel"] == panel]
            series = []
            for bar in dict.fromkeys(p["bar"]):
                d = p[p["bar"] == bar].set_index("A").reindex(A)
                series.append((bar, d["mean_s"] * scale, d["min_s"] * scale, d["max_s"] * scale,
                               {"color": colors[bar]}))
            grouped_bars(ax, series)
            ax.set_xticks(range(len(A)), [str(a) for a in A])
            ax.set_xlabel(TESTS[test].a_label)
            ax.set_ylabel(f"run-time [{unit}]")
            if panel:
                ax.set_title(panel, fontsize=9)
            ax.grid(True, axis="y", alpha=0.3)
            ax.legend(fontsize=7)
        pattern, nprocs = part["pattern"].iloc[0], int(part["nprocs"].iloc[0])
        fig.suptitle(f"Test {test}: {TESTS[test].title} - {pattern}, {nprocs} processes, m = {_size(int(m))}, "
                     f"{stack}", fontsize=9)
        return fig, f"{template}-m{int(m)}-{stack}.png"

    return per_group(r.summary, ["stack", "template", "m"], out, draw)


# ---------------------------------------------------------------- report

def write(r: DdtResult, out: Path) -> Path:
    """The CSVs (measurements, summary, verdicts, factors, matrix, skipped, config_errors), plots/*.png,
    report.md and report.html in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    m = matrix(r)
    contrast = placement_contrast(r)
    write_csvs(out, {"measurements": r.measurements, "summary": r.summary, "verdicts": r.verdicts,
                     "factors": r.factors, "matrix": m, "placements": contrast, "skipped": r.notes,
                     "config_errors": r.errors},
               keep_index=("matrix", "placements"), drop_empty=("config_errors", "placements"))
    plots = charts(r, out / "plots")
    meta0 = r.runs[0].meta
    host = meta0["host"]
    crowded = [text for rd in r.runs if (text := oversubscription(Measured.load(rd)))]
    doc = Document("mpiguide: derived datatype expectation tests")
    doc.heatmap(heatmap(r.verdicts))
    doc.section("Run", fields({
        "runs": ", ".join(rd.meta["run_id"] for rd in r.runs),
        "grid": ", ".join(sorted({rd.meta["params"]["grid"] for rd in r.runs})),
        "launches per configuration": ", ".join(sorted({str(rd.meta["runs"]) for rd in r.runs})),
        "host": host_text(host),
        "verdicts": "the ratio per launch (both sides of a comparison share each launch), a confidence interval "
                    "across launches and a false-discovery-rate step-up over the run's points (docs/measurement.md): "
                    + stats.error_rate_text(meta0["analysis"]["tolerance"], meta0["analysis"]["alpha"],
                                            meta0["analysis"].get("looks", 1)),
        **({"oversubscribed": "; ".join(crowded)} if crowded else {})}))
    doc.section("Stacks", pd.DataFrame({"MPI_Get_library_version": r.versions}))
    doc.section("Cross-stack matrix", m, colored=True,
                note="Worst verdict over the blocksizes A, how many A values have it, the worst factor "
                     "(compared / reference time; for ≃ the slower side over the faster) and its A. "
                     "Tests 1 and 2 characterize: slowdown of each layout against the contiguous reference.")
    if not contrast.empty:
        doc.section("DT-GL2/3 across placements (inter- vs intra-node)", contrast, colored=True,
                    note="The same comparisons at each placement (nodes x processes per node), side by side; "
                         "Carpen-Amarie et al. (2016), Section 3.2.1, contrast the inter-node ping-pong (2x1) "
                         "with the intra-node one (1x2). Cells as in the matrix.")
    doc.section("Verdicts per stack and guideline", verdict_counts(r))
    worst = worst_violations(r, 10)
    doc.section("Largest violations", worst[["stack", "test", "guideline", "comparison", "pattern", "nprocs",
                                             "placement", "A", "m", "msize", "factor", "low", "high", "p_value",
                                             "design"]].set_index("stack")
                if not worst.empty else pd.DataFrame())
    doc.heading("The expectations and findings of the sources next to this run")
    for n, expectation, finding, here in paper_comparison(r):
        t = TESTS[n]
        doc.heading(f"Test {n}: {t.title} ({t.origin})", 3)
        found = "Paper found" if t.section else "Sources found"
        doc.items([("Expected", expectation), (found, finding), *here.items()])
    doc.heading("Tests")
    for n in sorted(set(r.entries["test"])) if not r.entries.empty else []:
        doc.heading(f"Test {n}: {TESTS[n].title}", 3)
        doc.text(_test_description(r, n))
        doc.table(_test_table(r, n))
        doc.images([p for p in plots if p.name.startswith(f"t{n:02d}-")], out)
    if not r.notes.empty:
        doc.section("Skipped configurations (impossible for these parameters)",
                    r.notes.groupby(["stack", "test", "layout", "reason"]).agg(A=("A", lambda a: sorted(set(a)))))
    if not r.errors.empty:
        doc.section("Configurations that failed their data check (not timed)", r.errors.set_index("stack"))
    if r.failed:
        doc.section("Launches not completed", pd.DataFrame({"launch": r.failed}))
    return doc.write(out)


def _test_description(r: DdtResult, n: int) -> str:
    e = r.entries[r.entries["test"] == n].iloc[0]
    return (f"Layouts: {', '.join(label(s) for s in e['layouts'])}; modes: {', '.join(e['modes'])}; "
            f"A: {', '.join(map(str, e['A']))}; m: {', '.join(_size(x) for x in e['sizes'])}; patterns: "
            f"{', '.join(sorted(set(r.entries[r.entries['test'] == n]['pattern'])))}.")


def _test_table(r: DdtResult, n: int) -> pd.DataFrame:
    """Tests 1-2: slowdown per stack and A; the others: verdict and factor per stack and A."""
    if TESTS[n].kind == CHARACTERIZE:
        f = r.factors[r.factors["test"] == n]
        return f.pivot_table(index=["pattern", "nprocs", "placement", "m", "compared"], columns=["stack", "A"],
                             values="factor", aggfunc="first") if not f.empty else pd.DataFrame()
    v = r.verdicts[r.verdicts["test"] == n]
    if v.empty:
        return pd.DataFrame()
    cells = v.assign(cell=v["verdict"].str[:4] + " x" + v["factor"].map(lambda x: f"{x:.2f}"))
    return cells.pivot_table(index=["guideline", "comparison", "pattern", "nprocs", "placement", "m"],
                             columns=["stack", "A"],
                             values="cell", aggfunc="first").fillna("-")


def default_output(rds: list[RunDir]) -> Path:
    if len(rds) == 1:
        return rds[0].path
    return Path("results") / (time.strftime("%Y%m%d-%H%M%S") + "-ddt-report")


def console_lines(r: DdtResult) -> list[str]:
    """The verdict counts, the five largest violations and the launches missing."""
    lines = []
    counts = verdict_counts(r)
    if not counts.empty:
        lines += ["verdicts per stack and guideline (configurations):", counts.to_string()]
    for _, v in worst_violations(r, 5).iterrows():
        slower = ", reference slower" if v["relation"] != PRECEDES and v["ratio"] < 1 else ""
        lines.append(f"  VIOLATED {v['guideline']} test {v['test']} {v['comparison']} on {v['stack']}, "
                     f"{v['pattern']} {v['placement']}, A={v['A']}, m={v['m']}: x{v['factor']:.2f}{slower} "
                     f"(x{v['low']:.3g} to x{v['high']:.3g}, q={v['p_value']:.2g})")
    if r.failed:
        lines.append(f"{len(r.failed)} launch(es) did not complete; the report covers what was measured")
    return lines
