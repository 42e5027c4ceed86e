"""Plots and the run report (report.md and report.html) of a run directory."""

from __future__ import annotations

import html
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from mpiguide import dtreport  # noqa: E402
from mpiguide.analysis import Analysis  # noqa: E402
from mpiguide.htmldoc import save_figure  # noqa: E402
from mpiguide.runner import OK, RunDir  # noqa: E402


def fmt_size(n: int) -> str:
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div and n % div == 0:
            return f"{n // div} {unit}"
    return f"{n} B"


def series_order(rd: RunDir, a: Analysis) -> list:
    """Series values in the order the driver measured them (the user's order)."""
    return list(dict.fromkeys(a.measurements[rd.job.series]))


def latency_tables(rd: RunDir, a: Analysis) -> dict[str, pd.DataFrame]:
    """Per series value (variant): mean of the launch medians in microseconds,
    one row per x value, one column per stack (stacks side by side)."""
    job = rd.job
    if a.summary.empty:
        return {}
    s = a.summary.copy()
    s["us"] = s["mean_s"] * 1e6
    order = [n for n in rd.meta["stacks_order"] if n in set(s["stack"])]
    tables = {}
    for value in series_order(rd, a):
        part = s[s[job.series] == value]
        table = part.pivot_table(index=job.x, columns="stack", values="us", aggfunc="first")
        table = table[[st for st in order if st in table.columns]]
        table.columns.name = None
        table.index = [fmt_size(int(i)) if job.x == "msize_bytes" else i for i in table.index]
        table.index.name = "size" if job.x == "msize_bytes" else job.x
        tables[str(value)] = table
    return tables


def job_tables(rd: RunDir, a: Analysis) -> dict[str, pd.DataFrame]:
    """The job's result tables, titled, in report order."""
    if rd.job.name == "dtbench":
        return dtreport.report_tables(a.summary, a.dt_ratios) if not a.summary.empty else {}
    return {f"Latency of {value} (microseconds, mean of launch medians)": table
            for value, table in latency_tables(rd, a).items()}


def console_tables(rd: RunDir, a: Analysis) -> dict[str, pd.DataFrame]:
    """The tables worth printing at the end of a run (the rest is in the report)."""
    tables = job_tables(rd, a)
    if rd.job.name == "dtbench":
        picked = {k: v for k, v in tables.items() if k.startswith(("Engine goals", "Commit cost"))}
        return {k: (v.T if k.startswith("Commit cost") else v) for k, v in picked.items()}
    return tables


def plot(rd: RunDir, a: Analysis) -> list[Path]:
    """One panel per series value (variant), one line per stack, error bars = min/max of launch medians."""
    job = rd.job
    if a.summary.empty:
        return []
    if job.name == "dtbench":
        return plot_engine_ratios(rd, a.dt_ratios)
    out = rd.path / "plots"
    out.mkdir(exist_ok=True)
    series = series_order(rd, a)
    fig, axes = plt.subplots(1, len(series), figsize=(4.2 * len(series), 3.6), squeeze=False, sharey=True)
    for ax, value in zip(axes[0], series, strict=True):
        part = a.summary[a.summary[job.series] == value]
        for stack in rd.meta["stacks_order"]:
            d = part[part["stack"] == stack].sort_values(job.x)
            if d.empty:
                continue
            y = d["mean_s"] * 1e6
            err = [y - d["min_s"] * 1e6, d["max_s"] * 1e6 - y]
            ax.errorbar(d[job.x], y, yerr=err, marker="o", ms=3, capsize=2, label=stack)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(str(value))
        ax.set_xlabel("message size [bytes]" if job.x == "msize_bytes" else job.x)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("latency [us] (mean of launch medians)")
    fig.suptitle(f"{rd.meta['title']} - {rd.meta['run_id']}", fontsize=9)
    return [save_figure(fig, out / "latency.png", dpi=110)]


def plot_engine_ratios(rd: RunDir, r: pd.DataFrame) -> list[Path]:
    """Engine bench: median engine/MPI_Pack ratio per layout description, one marker per stack."""
    if r.empty:
        return []
    out = rd.path / "plots"
    out.mkdir(exist_ok=True)
    dirs = [d for d in dtreport.DIRECTIONS if d in set(r["direction"])]
    layouts = list(dict.fromkeys(r["layout"]))
    fig, axes = plt.subplots(1, len(dirs), figsize=(7 * len(dirs), 4.5), squeeze=False, sharey=True)
    for ax, d in zip(axes[0], dirs, strict=True):
        part = r[r["direction"] == d]
        for stack in rd.meta["stacks_order"]:
            med = part[part["stack"] == stack].groupby("layout")["engine/mpi"].median().reindex(layouts)
            if med.notna().any():
                ax.plot(range(len(layouts)), med.values, "o", label=stack)
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xticks(range(len(layouts)), layouts, rotation=70, ha="right", fontsize=7)
        ax.set_yscale("log")
        ax.set_title(f"{d}: engine time / MPI_{'Pack' if d == 'pack' else 'Unpack'} time (median over A, m)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    return [save_figure(fig, out / "engine_vs_mpi.png", dpi=110)]


def _fields(values: dict[str, str]) -> pd.DataFrame:
    frame = pd.DataFrame({"value": values})
    frame.index.name = "field"
    return frame


def _md_table(df: pd.DataFrame, index: bool = True) -> str:
    if df.empty:
        return "_none_\n"
    frame = df.reset_index() if index else df
    head = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


def _cell(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1e4 else f"{v:.0f}"
    return str(v)


def verdict_table(a: Analysis) -> pd.DataFrame:
    if a.verdicts.empty:
        return a.verdicts
    cols = [c for c in a.verdicts.columns if c not in ("statement", "n_a", "n_b", "template", "nprocs")]
    front = ["guideline", "stack"]
    rest = [c for c in cols if c not in front]
    return a.verdicts[front + rest]


def write_report(rd: RunDir, a: Analysis, plots: list[Path]) -> tuple[Path, Path]:
    meta = rd.meta
    failed = [x for x in rd.launches if x.status != OK]
    host = meta["host"]
    stacks = pd.DataFrame(
        [{"stack": n, "library version": " ".join(s["library_version"].splitlines()[0].split()),
          "source": s["source"], "compiler": s["compiler"]} for n, s in meta["stacks"].items()]
    )
    params = {**meta["params"], **meta["measurement"], "runs": meta["runs"], **meta["analysis"]}
    sections = [
        ("Run", _fields({
            "run": meta["run_id"], "job": meta["title"], "created": meta["created"],
            "host": f"{host['hostname']} ({host['cpu_model']}, {host['cores']} cores)",
            "commit": meta["git"]["commit"][:12] + (" (dirty)" if meta["git"]["dirty"] else ""),
            "launches": f"{len(rd.launches) - len(failed)} ok, {len(failed)} not ok",
        })),
        ("Stacks", stacks.set_index("stack")),
        ("Parameters", _fields({k: str(v) for k, v in params.items()})),
        *job_tables(rd, a).items(),
        ("Guideline verdicts", verdict_table(a).set_index("guideline") if not a.verdicts.empty else a.verdicts),
    ]
    if failed:
        sections.append(("Launches not completed", pd.DataFrame(
            [{"launch": x.id, "status": x.status, "message": x.message} for x in failed]).set_index("launch")))
    if not a.config_errors.empty:
        sections.append(("Configurations that failed their data check", a.config_errors.set_index("stack")))

    md = [f"# mpiguide report: {meta['title']}\n"]
    body = [f"<h1>mpiguide report: {html.escape(meta['title'])}</h1>"]
    for title, frame in sections:
        md += [f"## {title}\n", _md_table(frame, index=not frame.empty)]
        body += [f"<h2>{html.escape(title)}</h2>",
                 frame.to_html(float_format=lambda v: f"{v:.3g}") if not frame.empty else "<p>none</p>"]
    guideline_text = "\n".join(f"- **{g.name}**: {g.text}" for g in rd.job.guidelines)
    md += ["## Guidelines\n", guideline_text + "\n",
           "A guideline `A ⪯ B` is VIOLATED when A is slower than B by more than the tolerance and a one-sided "
           "Mann-Whitney U test rejects `A ⪯ B` at level alpha; INCONCLUSIVE when A is slower but not "
           "significantly.\n"]
    body += ["<h2>Guidelines</h2><ul>"] + [f"<li><b>{g.name}</b>: {html.escape(g.text)}</li>"
                                           for g in rd.job.guidelines] + ["</ul>"]
    for p in plots:
        rel = p.relative_to(rd.path)
        md.append(f"![{p.stem}]({rel})\n")
        body.append(f'<p><img src="{rel}" alt="{p.stem}"></p>')
    md_path, html_path = rd.path / "report.md", rd.path / "report.html"
    md_path.write_text("\n".join(md))
    style = ("body{font-family:sans-serif;max-width:72em;margin:2em auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}img{max-width:100%}")
    html_path.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(meta['run_id'])}"
                         f"</title><style>{style}</style></head><body>{''.join(body)}</body></html>\n")
    return md_path, html_path
