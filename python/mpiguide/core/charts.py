"""What every report's charts share: one PNG per group of a table, grouped bars
with min/max error bars, and saving a figure. matplotlib runs headless here."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

# A chart of one group: the figure and its file name, or None to draw nothing for that group.
Draw = Callable[[tuple, pd.DataFrame], tuple[Figure, str] | None]


def save_figure(fig: Figure, path: Path, dpi: int = 90) -> Path:
    """Lays out, writes and closes a figure."""
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def per_group(frame: pd.DataFrame, by: list[str], out: Path, draw: Draw, dpi: int = 90) -> list[Path]:
    """One chart per group of `frame` (grouped by `by`, in order of appearance), written into `out`."""
    if frame.empty:
        return []
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for key, part in frame.groupby(by, sort=False):
        drawn = draw(key if isinstance(key, tuple) else (key,), part)
        if drawn is not None:
            fig, name = drawn
            paths.append(save_figure(fig, out / name.replace("/", "_").replace("@", "_"), dpi))
    return paths


def error_bars(y, low, high) -> np.ndarray:
    """matplotlib's yerr for bars from low to high around y: never negative (the mean of equal values can land a
    rounding error outside them) and 0 where a bound is NaN."""
    y, low, high = (np.asarray(v, dtype=float) for v in (y, low, high))
    return np.clip(np.nan_to_num(np.vstack([y - low, high - y])), 0, None)


def grouped_bars(ax, series: list[tuple[str, np.ndarray, np.ndarray, np.ndarray, dict]], capsize: float = 2) -> None:
    """Bars of several series side by side at x = 0, 1, ...: each series is (label, values, lows, highs,
    bar style); the error bars go from low to high (NaN: no bar)."""
    width = 0.8 / max(1, len(series))
    for i, (label, y, lo, hi, style) in enumerate(series):
        y = np.asarray(y, dtype=float)
        err = error_bars(y, lo, hi)
        ax.bar(np.arange(len(y)) + (i - (len(series) - 1) / 2) * width, y, width, yerr=err, capsize=capsize,
               label=label, **style)
