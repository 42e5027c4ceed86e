"""Statistics of 000 Sec. 2.3.3 and the guideline test.

Per launch: the median of its nrep repetitions. Over the r launches: mean, min
and max of those medians (the error bars). A guideline `A ⪯ B` ("A is no slower
than B") is VIOLATED when A is slower by more than the tolerance and a one-sided
Wilcoxon rank-sum (Mann-Whitney U) test says so at level alpha; PASS when A is
within the tolerance; INCONCLUSIVE when A looks slower but the samples cannot
show it (too much noise), or when a side has fewer than 2 samples (no test is
possible, whatever the ratio).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu

PASS, VIOLATED, INCONCLUSIVE = "PASS", "VIOLATED", "INCONCLUSIVE"
RANK = {VIOLATED: 2, INCONCLUSIVE: 1, PASS: 0}  # the worst verdict ranks highest
SAMPLE_MODES = ("medians", "reps")


def launch_medians(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per configuration and launch: median time and the number of repetitions."""
    g = df.groupby([*keys, "launch"], sort=True)["time_s"]
    return g.agg(median_s="median", nrep="size").reset_index()


def summarize(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per configuration: mean/min/max over the launch medians."""
    med = launch_medians(df, keys)
    g = med.groupby(keys, sort=True)
    out = g["median_s"].agg(mean_s="mean", min_s="min", max_s="max", launches="size")
    out["nrep"] = g["nrep"].median().astype(int)
    return out.reset_index()


@dataclass(frozen=True)
class Comparison:
    verdict: str
    ratio: float  # mean launch median of A / that of B; > 1 means A is slower
    p_value: float
    n_a: int
    n_b: int


def compare(
    a: np.ndarray | list[float],
    b: np.ndarray | list[float],
    ratio: float,
    tolerance: float = 0.05,
    alpha: float = 0.05,
) -> Comparison:
    """Tests `A ⪯ B` on samples a and b (launch medians or all repetitions)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if len(a) < 2 or len(b) < 2:
        return Comparison(INCONCLUSIVE, ratio, float("nan"), len(a), len(b))
    p = float(mannwhitneyu(a, b, alternative="greater").pvalue)
    if ratio <= 1.0 + tolerance:
        verdict = PASS
    elif p <= alpha:
        verdict = VIOLATED
    else:
        verdict = INCONCLUSIVE
    return Comparison(verdict, ratio, p, len(a), len(b))


def compare_samples(
    df_a: pd.DataFrame,
    df_b: pd.DataFrame,
    samples: str = "medians",
    tolerance: float = 0.05,
    alpha: float = 0.05,
) -> Comparison:
    """Compares two sets of raw rows (each holding `launch` and `time_s`)."""
    if samples not in SAMPLE_MODES:
        raise ValueError(f"samples must be one of {SAMPLE_MODES}")
    med_a = df_a.groupby("launch")["time_s"].median()
    med_b = df_b.groupby("launch")["time_s"].median()
    ratio = float(med_a.mean() / med_b.mean()) if len(med_a) and len(med_b) else float("nan")
    if samples == "medians":
        return compare(med_a.to_numpy(), med_b.to_numpy(), ratio, tolerance, alpha)
    return compare(df_a["time_s"].to_numpy(), df_b["time_s"].to_numpy(), ratio, tolerance, alpha)


def both_ways(df_a: pd.DataFrame, df_b: pd.DataFrame, samples: str = "medians", tolerance: float = 0.05,
              alpha: float = 0.05) -> tuple[Comparison, Comparison]:
    """`A ⪯ B` and `B ⪯ A`, for relations that hold both ways (≃) and for deciding which side wins."""
    return (compare_samples(df_a, df_b, samples, tolerance, alpha),
            compare_samples(df_b, df_a, samples, tolerance, alpha))
