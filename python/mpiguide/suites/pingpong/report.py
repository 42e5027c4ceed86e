"""The ping-pong latency tables (one per variant, stacks side by side) and chart."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mpiguide.core.charts import error_bars, plt, save_figure
from mpiguide.core.guidelines import Analysis


def fmt_size(n: int) -> str:
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div and n % div == 0:
            return f"{n // div} {unit}"
    return f"{n} B"


def variants(a: Analysis) -> list[str]:
    """The variants in the order the driver measured them (the user's order)."""
    return list(dict.fromkeys(a.measurements["variant"])) if not a.measurements.empty else []


def latency_tables(a: Analysis) -> dict[str, pd.DataFrame]:
    """Per variant: the mean of the launch medians in microseconds, one row per message size, one column per
    stack."""
    if a.summary.empty:
        return {}
    s = a.summary.assign(us=a.summary["mean_s"] * 1e6)
    order = [n for n in a.rd.meta["stacks_order"] if n in set(s["stack"])]
    tables = {}
    for value in variants(a):
        table = s[s["variant"] == value].pivot_table(index="msize_bytes", columns="stack", values="us",
                                                     aggfunc="first")
        table = table[[st for st in order if st in table.columns]]
        table.columns.name = None
        table.index = [fmt_size(int(i)) for i in table.index]
        table.index.name = "size"
        tables[str(value)] = table
    return tables


def latency_chart(a: Analysis, out: Path) -> list[Path]:
    """One panel per variant, one line per stack, error bars from the smallest to the largest launch median."""
    if a.summary.empty:
        return []
    out.mkdir(parents=True, exist_ok=True)
    series = variants(a)
    fig, axes = plt.subplots(1, len(series), figsize=(4.2 * len(series), 3.6), squeeze=False, sharey=True)
    for ax, value in zip(axes[0], series, strict=True):
        part = a.summary[a.summary["variant"] == value]
        for stack in a.rd.meta["stacks_order"]:
            d = part[part["stack"] == stack].sort_values("msize_bytes")
            if d.empty:
                continue
            y = d["mean_s"] * 1e6
            ax.errorbar(d["msize_bytes"], y, yerr=error_bars(y, d["min_s"] * 1e6, d["max_s"] * 1e6), marker="o",
                        ms=3, capsize=2, label=stack)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(str(value))
        ax.set_xlabel("message size [bytes]")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("latency [us] (mean of launch medians)")
    fig.suptitle(f"{a.rd.meta['title']} - {a.rd.meta['run_id']}", fontsize=9)
    return [save_figure(fig, out / "latency.png", dpi=110)]
