"""Results of the datatype expectation tests (job `ddt`): guideline verdicts,
slowdown factors, the cross-stack matrix, bar charts in the style of paper
000's figures, and the HTML report of one run or of several runs together.

Everything is computed from the run directories' raw files."""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from mpiguide import analysis, rawfile, stats  # noqa: E402
from mpiguide.ddt import CHARACTERIZE, MODES, PRECEDES, TESTS, Comparison, label  # noqa: E402
from mpiguide.errors import MpiguideError  # noqa: E402
from mpiguide.htmldoc import STYLE, html_table, md_table, save_figure  # noqa: E402
from mpiguide.runner import MEASURE, OK, RunDir  # noqa: E402

MATCH = ["stack", "nprocs", "pattern", "A", "m", "msize"]  # what both sides of a comparison share
RANK = {stats.VIOLATED: 2, stats.INCONCLUSIVE: 1, stats.PASS: 0}
PAPER_GUIDELINES = ("DT-GL1", "DT-GL2/3", "DT-GL4")
VERDICT_COLUMNS = ["test", "guideline", "comparison", "relation", "compared", "compared_mode", "reference",
                   "reference_mode", *MATCH, "verdict", "ratio", "factor", "p_value", "n_a", "n_b"]
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
    failed: list[str] = field(default_factory=list)  # launches that did not complete


# ---------------------------------------------------------------- verdicts and factors

def comparison_text(c: Comparison) -> str:
    def side(spec: str, mode: str) -> str:
        return label(spec) + ("" if mode == "datatype" else f" [{mode}]")
    return f"{side(*c.compared)} {c.relation} {side(*c.reference)}"


def _verdict_row(c: Comparison, part_a: pd.DataFrame, part_b: pd.DataFrame, samples: str, tolerance: float,
                 alpha: float) -> dict:
    ab = stats.compare_samples(part_a, part_b, samples, tolerance, alpha)
    if c.relation == PRECEDES:
        return {"verdict": ab.verdict, "ratio": ab.ratio, "factor": ab.ratio, "p_value": ab.p_value,
                "n_a": ab.n_a, "n_b": ab.n_b}
    # ≃: each side is no slower than the other; the verdict of the slower direction counts.
    ba = stats.compare_samples(part_b, part_a, samples, tolerance, alpha)
    worse = ab if RANK[ab.verdict] > RANK[ba.verdict] or (ab.verdict == ba.verdict and ab.ratio >= 1) else ba
    return {"verdict": worse.verdict, "ratio": ab.ratio, "factor": max(ab.ratio, 1 / ab.ratio),
            "p_value": worse.p_value, "n_a": ab.n_a, "n_b": ab.n_b}


def compute_verdicts(df: pd.DataFrame, entries: pd.DataFrame, samples: str, tolerance: float,
                     alpha: float) -> pd.DataFrame:
    """Every guideline comparison of every test on every configuration where both sides were measured."""
    if df.empty:
        return pd.DataFrame(columns=VERDICT_COLUMNS)
    groups = dict(iter(df.groupby(["stack", "template", "layout", "mode"], sort=False)))
    rows = []
    for e in entries.itertuples():
        for d in e.comparisons:
            c = Comparison.from_dict(d)
            if c.guideline == "slowdown":
                continue
            a = groups.get((e.stack, e.template, label(c.compared[0]), c.compared[1]))
            b = groups.get((e.stack, e.template, label(c.reference[0]), c.reference[1]))
            if a is None or b is None:
                continue
            side_b = dict(iter(b.groupby(MATCH, sort=True)))
            for key, part_a in a.groupby(MATCH, sort=True):
                part_b = side_b.get(key)
                if part_b is None:
                    continue
                row = {"test": e.test, "guideline": c.guideline, "comparison": comparison_text(c),
                       "relation": c.relation, "compared": label(c.compared[0]), "compared_mode": c.compared[1],
                       "reference": label(c.reference[0]), "reference_mode": c.reference[1],
                       **dict(zip(MATCH, key, strict=True))}
                row.update(_verdict_row(c, part_a, part_b, samples, tolerance, alpha))
                rows.append(row)
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

def _notes(rd: RunDir, stack_name: dict[str, str], tests: dict[str, int]) -> pd.DataFrame:
    rows = []
    for x in rd.launches:
        if x.phase != MEASURE or x.status != OK:
            continue
        raw = rawfile.parse(rd.path / x.raw)
        for key, reason in raw.notes.get("skip", {}).items():
            parts = key.split()
            if len(parts) == 4:
                rows.append({"stack": stack_name[x.stack], "test": tests.get(x.template), "pattern": parts[0],
                             "layout": parts[1], "A": int(parts[2]), "m": int(parts[3]), "reason": reason})
    return pd.DataFrame(rows, columns=["stack", "test", "pattern", "layout", "A", "m", "reason"]).drop_duplicates()


def load(rds: list[RunDir], samples: str | None = None, tolerance: float | None = None,
         alpha: float | None = None) -> DdtResult:
    """Measurements of every run, stacks renamed `stack@run` where two runs share a stack name."""
    for rd in rds:
        if rd.meta["job"] != "ddt":
            raise MpiguideError(f"{rd.path} is a '{rd.meta['job']}' run, not a ddt run (mpiguide ddt run)")
    seen: dict[str, int] = {}
    for rd in rds:
        for s in rd.meta["stacks_order"]:
            seen[s] = seen.get(s, 0) + 1
    opts = dict(rds[0].meta["analysis"])
    opts.update({k: v for k, v in (("samples", samples), ("tolerance", tolerance), ("alpha", alpha))
                 if v is not None})
    stacks, versions, entry_rows, frames, notes, errors, failed = [], {}, [], [], [], [], []
    for rd in rds:
        rename = {s: (s if seen[s] == 1 else f"{s}@{rd.meta['run_id']}") for s in rd.meta["stacks_order"]}
        for s, new in rename.items():
            stacks.append(new)
            lib = rd.meta["stacks"].get(s, {}).get("library_version", "")
            versions[new] = " ".join(lib.splitlines()[0].split()) if lib else "?"
        tests = {e["key"]: e["test"] for e in rd.meta["params"]["entries"]}
        for s in rd.meta["stacks_order"]:
            for e in rd.meta["params"]["entries"]:
                entry_rows.append({"stack": rename[s], "template": e["key"], "test": e["test"],
                                   "pattern": e["pattern"], "nprocs": e["nprocs"], "comparisons": e["comparisons"],
                                   "A": e["A"], "sizes": e["sizes"], "layouts": e["layouts"], "modes": e["modes"]})
        df, errs = analysis.load_measurements(rd)
        if not df.empty:
            df["stack"] = df["stack"].map(rename)
            frames.append(df)
        if not errs.empty:
            errs["stack"] = errs["stack"].map(rename)
            errors.append(errs)
        notes.append(_notes(rd, rename, tests))
        failed += [f"{rd.meta['run_id']}: {x.id}: {x.status} {x.message}" for x in rd.launches if x.status != OK]
    entries = pd.DataFrame(entry_rows)
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if df.empty:
        summary = pd.DataFrame()
    else:
        keys = [c for c in df.columns if c not in ("launch", "launch_id", "rep", "time_s")]
        summary = stats.summarize(df, keys)
    return DdtResult(
        runs=rds, stacks=stacks, measurements=df, versions=versions, entries=entries, summary=summary,
        verdicts=compute_verdicts(df, entries, opts["samples"], opts["tolerance"], opts["alpha"]),
        factors=compute_factors(summary, entries),
        notes=pd.concat(notes, ignore_index=True) if notes else pd.DataFrame(),
        errors=pd.concat(errors, ignore_index=True) if errors else pd.DataFrame(),
        failed=failed)


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
    worst_verdict = max(part["verdict"], key=lambda v: RANK[v])
    bad = part[part["verdict"] == worst_verdict]
    w = _worst(bad if worst_verdict != stats.PASS else part)
    return f"{worst_verdict} {len(bad)}/{len(part)} x{w['factor']:.2f} ({_where(w)})"


def factor_cell(part: pd.DataFrame) -> str:
    w = _worst(part)
    return f"x{part['factor'].median():.2f} median, x{w['factor']:.2f} max (A={w['A']})"


MATRIX_INDEX = ["test", "guideline", "comparison", "pattern", "nprocs", "m"]


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
    if t.panel == "variant":
        return ("Variant 2" if "variant=2" in layout else "Variant 1"), layout.replace(":variant=2", "")
    if t.panel == "layout":
        return layout, mode
    return "", layout + ("" if mode == "datatype" else f" [{mode}]")


def charts(r: DdtResult, out: Path) -> list[Path]:
    """One PNG per test x pattern x processes x m x stack: time over A, a bar per layout (or mode), error bars
    from the smallest to the largest launch median."""
    if r.summary.empty:
        return []
    out.mkdir(parents=True, exist_ok=True)
    first = r.entries.drop_duplicates("template").set_index("template")
    tests = first["test"].to_dict()
    layouts = {k: [label(s) for s in v] for k, v in first["layouts"].items()}
    paths = []
    for (stack, template, m), part in r.summary.groupby(["stack", "template", "m"], sort=False):
        test = tests.get(template)
        if test is None:
            continue
        part = part.copy()
        part[["panel", "bar"]] = [list(_series(test, lay, mo)) for lay, mo in zip(part["layout"], part["mode"],
                                                                                   strict=True)]
        if TESTS[test].panel == "variant":  # the Contiguous reference belongs to both variants
            ref = part[part["layout"] == "contiguous"]
            part = pd.concat([part, ref.assign(panel="Variant 2")], ignore_index=True)
        order = {lab: i for i, lab in enumerate(layouts.get(template, []))}
        part["order"] = [order.get(lay, len(order)) * len(MODES) + MODES.index(mo)
                         for lay, mo in zip(part["layout"], part["mode"], strict=True)]
        part = part.sort_values("order", kind="stable")
        panels = list(dict.fromkeys(part["panel"]))
        colors = {b: f"C{i % 10}" for i, b in enumerate(dict.fromkeys(part["bar"]))}
        A = sorted(set(part["A"]))
        fig, axes = plt.subplots(1, len(panels), figsize=(max(4.5, 1.1 * len(A) + 2.5) * len(panels), 3.8),
                                 squeeze=False)
        scale, unit = (1e3, "ms") if part["mean_s"].max() >= 1e-3 else (1e6, "us")
        for ax, panel in zip(axes[0], panels, strict=True):
            p = part[part["panel"] == panel]
            bars = list(dict.fromkeys(p["bar"]))
            width = 0.8 / len(bars)
            for i, bar in enumerate(bars):
                d = p[p["bar"] == bar].set_index("A").reindex(A)
                y = d["mean_s"].to_numpy() * scale
                err = np.vstack([y - d["min_s"].to_numpy() * scale, d["max_s"].to_numpy() * scale - y])
                ax.bar(np.arange(len(A)) + (i - (len(bars) - 1) / 2) * width, y, width, yerr=err, capsize=2,
                       label=bar, color=colors[bar])
            ax.set_xticks(range(len(A)), [str(a) for a in A])
            ax.set_xlabel("blocksize A [elements]")
            ax.set_ylabel(f"run-time [{unit}]")
            if panel:
                ax.set_title(panel, fontsize=9)
            ax.grid(True, axis="y", alpha=0.3)
            ax.legend(fontsize=7)
        pattern, nprocs = part["pattern"].iloc[0], int(part["nprocs"].iloc[0])
        fig.suptitle(f"Test {test}: {TESTS[test].title} - {pattern}, {nprocs} processes, m = {_size(int(m))}, "
                     f"{stack}", fontsize=9)
        paths.append(save_figure(fig, out / f"{template}-m{int(m)}-{stack}.png".replace("/", "_").replace("@", "_")))
    return paths


# ---------------------------------------------------------------- report

def write(r: DdtResult, out: Path) -> Path:
    """The CSVs (measurements, summary, verdicts, factors, matrix, skipped, config_errors), plots/*.png,
    report.md and report.html in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    m = matrix(r)
    for name, frame, index in (("measurements", r.measurements, False), ("summary", r.summary, False),
                               ("verdicts", r.verdicts, False), ("factors", r.factors, False),
                               ("matrix", m, True), ("skipped", r.notes, False), ("config_errors", r.errors, False)):
        path = out / f"{name}.csv"
        if name == "config_errors" and frame.empty:
            path.unlink(missing_ok=True)
            continue
        try:
            frame.to_csv(path, index=index, float_format="%.9g")
        except OSError as exc:
            raise MpiguideError(f"cannot write {path}: {exc.strerror}") from exc
    plots = charts(r, out / "plots")
    runs = ", ".join(rd.meta["run_id"] for rd in r.runs)
    meta0 = r.runs[0].meta
    host = meta0["host"]
    head = pd.DataFrame({"value": {
        "runs": runs, "grid": ", ".join(sorted({rd.meta["params"]["grid"] for rd in r.runs})),
        "launches per configuration": ", ".join(sorted({str(rd.meta["runs"]) for rd in r.runs})),
        "host": f"{host['hostname']} ({host['cpu_model']}, {host['cores']} cores)",
        "verdicts": "one-sided Mann-Whitney U on the per-launch medians (see docs/measurement.md), "
                    f"tolerance {meta0['analysis']['tolerance']}, alpha {meta0['analysis']['alpha']}",
    }})
    stacks = pd.DataFrame({"MPI_Get_library_version": r.versions})
    sections: list[tuple[str, str, str]] = []  # (title, html, markdown)

    def add(title: str, frame: pd.DataFrame, colored: bool = False, note: str = "") -> None:
        sections.append((title, (f"<p>{html.escape(note)}</p>" if note else "") + html_table(frame, colored),
                         (note + "\n\n" if note else "") + md_table(frame)))

    add("Run", head)
    add("Stacks", stacks)
    add("Cross-stack matrix", m, colored=True,
        note="Worst verdict over the blocksizes A, how many A values have it, the worst factor "
             "(compared / reference time; for ≃ the slower side over the faster) and its A. "
             "Tests 1 and 2 characterize: slowdown of each layout against the contiguous reference.")
    add("Verdicts per stack and guideline", verdict_counts(r))
    worst = worst_violations(r, 10)
    add("Largest violations", worst[["stack", "test", "guideline", "comparison", "pattern", "nprocs", "A", "m",
                                     "msize", "factor", "p_value"]].set_index("stack") if not worst.empty
        else pd.DataFrame())

    paper_html = ["<h2>The paper's expectations and findings next to this run</h2>"]
    paper_md = ["## The paper's expectations and findings next to this run\n"]
    for n, expectation, finding, here in paper_comparison(r):
        t = TESTS[n]
        paper_html.append(f"<h3>Test {n}: {html.escape(t.title)} (000 Section {t.section})</h3><ul>"
                          f"<li><b>Expected</b>: {html.escape(expectation)}</li>"
                          f"<li><b>Paper found</b>: {html.escape(finding)}</li>"
                          + "".join(f"<li><b>{html.escape(s)}</b>: {html.escape(v)}</li>" for s, v in here.items())
                          + "</ul>")
        paper_md.append(f"### Test {n}: {t.title} (000 Section {t.section})\n\n- Expected: {expectation}\n"
                        f"- Paper found: {finding}\n" + "".join(f"- {s}: {v}\n" for s, v in here.items()))

    detail_html, detail_md = [], []
    for n in sorted(set(r.entries["test"])) if not r.entries.empty else []:
        t = TESTS[n]
        e = r.entries[r.entries["test"] == n].iloc[0]
        desc = (f"Layouts: {', '.join(label(s) for s in e['layouts'])}; modes: {', '.join(e['modes'])}; "
                f"A: {', '.join(map(str, e['A']))}; m: {', '.join(_size(x) for x in e['sizes'])}; patterns: "
                f"{', '.join(sorted(set(r.entries[r.entries['test'] == n]['pattern'])))}.")
        if t.kind == CHARACTERIZE:
            f = r.factors[r.factors["test"] == n]
            table = f.pivot_table(index=["pattern", "nprocs", "m", "compared"], columns=["stack", "A"],
                                  values="factor", aggfunc="first") if not f.empty else pd.DataFrame()
        else:
            v = r.verdicts[r.verdicts["test"] == n]
            table = v.assign(cell=v["verdict"].str[:4] + " x" + v["factor"].map(lambda x: f"{x:.2f}")).pivot_table(
                index=["guideline", "comparison", "pattern", "nprocs", "m"], columns=["stack", "A"], values="cell",
                aggfunc="first").fillna("-") if not v.empty else pd.DataFrame()
        imgs = [p for p in plots if p.name.startswith(f"t{n:02d}-")]
        detail_html.append(f"<h3>Test {n}: {html.escape(t.title)}</h3><p>{html.escape(desc)}</p>"
                           + html_table(table) + "".join(f'<p><img src="plots/{p.name}" alt="{p.stem}"></p>'
                                                          for p in imgs))
        detail_md.append(f"### Test {n}: {t.title}\n\n{desc}\n\n" + md_table(table)
                         + "".join(f"\n![{p.stem}](plots/{p.name})\n" for p in imgs))

    tail = []
    if not r.notes.empty:
        skipped = r.notes.groupby(["stack", "test", "layout", "reason"]).agg(A=("A", lambda a: sorted(set(a))))
        tail.append(("Skipped configurations (impossible for these parameters)", skipped))
    if not r.errors.empty:
        tail.append(("Configurations that failed their data check (not timed)", r.errors.set_index("stack")))
    if r.failed:
        tail.append(("Launches not completed", pd.DataFrame({"launch": r.failed})))

    title = "mpiguide: derived datatype expectation tests"
    body = [f"<h1>{title}</h1>"]
    md = [f"# {title}\n"]
    for t_, h, mdt in sections:
        body += [f"<h2>{html.escape(t_)}</h2>", h]
        md += [f"## {t_}\n", mdt]
    body += paper_html + ["<h2>Tests</h2>"] + detail_html
    md += paper_md + ["## Tests\n"] + detail_md
    for t_, frame in tail:
        body += [f"<h2>{html.escape(t_)}</h2>", html_table(frame)]
        md += [f"## {t_}\n", md_table(frame)]
    (out / "report.md").write_text("\n".join(md))
    path = out / "report.html"
    path.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(runs)}</title>"
                    f"<style>{STYLE}</style></head><body>{''.join(body)}</body></html>\n")
    return path


def default_output(rds: list[RunDir]) -> Path:
    if len(rds) == 1:
        return rds[0].path
    return Path("results") / (time.strftime("%Y%m%d-%H%M%S") + "-ddt-report")
