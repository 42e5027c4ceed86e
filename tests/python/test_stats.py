"""stats.py on constructed inputs whose answers are known by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from mpiguide.core import stats
from mpiguide.core.stats import INCONCLUSIVE, PASS, VIOLATED

B_MEDIANS = [1.0e-6, 1.1e-6, 1.2e-6, 1.3e-6, 1.4e-6]


def launches_frame(medians: list[float], spread: tuple[float, ...] = (0.9, 1.0, 1.2)) -> pd.DataFrame:
    """One launch per median; its repetitions are median * spread (so its median is exactly `median`)."""
    rows = [{"launch": i, "rep": r, "time_s": m * f} for i, m in enumerate(medians) for r, f in enumerate(spread)]
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- compare / compare_samples

def test_clear_violation_exact_mann_whitney_p():
    a = launches_frame([2 * m for m in B_MEDIANS])
    c = stats.compare_samples(a, launches_frame(B_MEDIANS))
    assert c.verdict == VIOLATED
    # Exact one-sided rank-sum test: every A median beats every B median -> 1 / C(10, 5).
    assert c.p_value == pytest.approx(1 / math.comb(10, 5), rel=1e-12)
    assert c.p_value == pytest.approx(1 / 252, rel=1e-12)
    assert c.ratio == pytest.approx(2.0, rel=1e-12)
    assert (c.n_a, c.n_b) == (5, 5)


def test_clear_pass_when_a_is_faster():
    c = stats.compare_samples(launches_frame([m / 2 for m in B_MEDIANS]), launches_frame(B_MEDIANS))
    assert c.verdict == PASS
    assert c.ratio == pytest.approx(0.5, rel=1e-12)
    assert c.p_value == pytest.approx(1.0)  # "A slower" is not supported at all


def test_tie_identical_samples_pass_with_ratio_one():
    c = stats.compare_samples(launches_frame(B_MEDIANS), launches_frame(B_MEDIANS))
    assert c.verdict == PASS
    assert c.ratio == 1.0
    assert c.p_value > 0.05


def test_tie_of_constant_samples_pass():
    c = stats.compare([2e-6] * 4, [2e-6] * 4, ratio=1.0)
    assert c.verdict == PASS
    assert c.ratio == 1.0
    assert (c.n_a, c.n_b) == (4, 4)


def test_slower_but_two_launches_cannot_be_significant():
    c = stats.compare_samples(launches_frame([2e-6, 2.2e-6]), launches_frame([1e-6, 1.1e-6]))
    assert c.verdict == INCONCLUSIVE
    assert c.ratio == pytest.approx(2.0, rel=1e-12)
    assert c.p_value == pytest.approx(1 / 6, rel=1e-12)  # the smallest p two against two can reach


def test_slower_but_noisy_is_inconclusive():
    a = [1.0, 2.6, 1.15, 2.2, 1.05]
    b = [1.1, 1.2, 0.99, 1.3, 1.25]
    ratio = float(np.mean(a) / np.mean(b))
    assert ratio > 1.05
    c = stats.compare(a, b, ratio)
    assert c.verdict == INCONCLUSIVE
    assert c.p_value > 0.05


def test_within_tolerance_but_significant_is_pass():
    tight = [1.000e-6, 1.005e-6, 1.010e-6, 1.015e-6, 1.020e-6]  # 1.03 x the smallest beats the largest
    a = launches_frame([1.03 * m for m in tight])
    b = launches_frame(tight)
    c = stats.compare_samples(a, b)
    assert c.p_value == pytest.approx(1 / 252, rel=1e-12)
    assert c.ratio == pytest.approx(1.03, rel=1e-12)
    assert c.verdict == PASS
    # The same samples violate a 1% tolerance.
    assert stats.compare_samples(a, b, tolerance=0.01).verdict == VIOLATED


def test_ratio_exactly_at_tolerance_is_pass():
    assert stats.compare([2, 3, 4, 5], [1, 1.2, 1.4, 1.6], ratio=1.05, tolerance=0.05).verdict == PASS
    assert stats.compare([2, 3, 4, 5], [1, 1.2, 1.4, 1.6], ratio=1.0501, tolerance=0.05).verdict == VIOLATED


def test_alpha_decides_between_violated_and_inconclusive():
    a, b = [2.0, 2.1, 2.2, 2.3], [1.0, 1.1, 1.2, 1.3]
    c = stats.compare(a, b, ratio=2.0)
    assert c.p_value == pytest.approx(1 / 70, rel=1e-12)  # 1 / C(8, 4)
    assert c.verdict == VIOLATED
    assert stats.compare(a, b, ratio=2.0, alpha=0.01).verdict == INCONCLUSIVE


def test_single_launch_slower_is_inconclusive():
    c = stats.compare([3.0], [1.0], ratio=3.0)
    assert c.verdict == INCONCLUSIVE
    assert math.isnan(c.p_value)
    assert (c.n_a, c.n_b) == (1, 1)


def test_single_launch_is_inconclusive_even_when_faster():
    # docs/measurement.md: INCONCLUSIVE with fewer than 2 samples per side, whatever the ratio.
    c = stats.compare([1.0], [3.0], ratio=1 / 3)
    assert c.verdict == INCONCLUSIVE
    assert math.isnan(c.p_value)


def test_compare_samples_medians_versus_reps():
    spread = (0.95, 0.97, 1.0, 1.02, 1.1)
    a = launches_frame([2e-6, 2.2e-6], spread)
    b = launches_frame([1e-6, 1.1e-6], spread)
    by_medians = stats.compare_samples(a, b, samples="medians")
    by_reps = stats.compare_samples(a, b, samples="reps")
    # The ratio is always that of the mean launch medians.
    assert by_medians.ratio == pytest.approx(2.0, rel=1e-12)
    assert by_reps.ratio == pytest.approx(2.0, rel=1e-12)
    assert (by_medians.n_a, by_medians.n_b) == (2, 2)
    assert (by_reps.n_a, by_reps.n_b) == (10, 10)
    # Two medians each cannot show anything; ten repetitions each, all of A above all of B, can.
    assert by_medians.verdict == INCONCLUSIVE
    assert by_medians.p_value == pytest.approx(1 / 6, rel=1e-12)
    assert by_reps.verdict == VIOLATED
    assert by_reps.p_value < 1e-3


def test_compare_samples_rejects_unknown_mode():
    with pytest.raises(ValueError, match="samples must be one of"):
        stats.compare_samples(launches_frame(B_MEDIANS), launches_frame(B_MEDIANS), samples="mean")


# ---------------------------------------------------------------- launch_medians / summarize

@pytest.fixture
def hand_frame() -> pd.DataFrame:
    rows = []
    data = {
        ("x", 4): {0: [3, 1, 2], 1: [10, 4, 6], 2: [5, 5, 9]},  # launch medians 2, 6, 5
        ("y", 4): {0: [1, 1, 1], 1: [2, 4, 3]},  # launch medians 1, 3
    }
    for (variant, size), launches in data.items():
        for launch, times in launches.items():
            for rep, t in enumerate(times):
                rows.append({"variant": variant, "msize_bytes": size, "launch": launch, "rep": rep,
                             "time_s": float(t)})
    return pd.DataFrame(rows)


def test_launch_medians_known_values(hand_frame):
    med = stats.launch_medians(hand_frame, ["variant", "msize_bytes"])
    assert list(med.columns) == ["variant", "msize_bytes", "launch", "median_s", "nrep"]
    got = [(r.variant, r.launch, r.median_s, r.nrep) for r in med.itertuples()]
    assert got == [("x", 0, 2.0, 3), ("x", 1, 6.0, 3), ("x", 2, 5.0, 3), ("y", 0, 1.0, 3), ("y", 1, 3.0, 3)]


def test_summarize_known_mean_min_max(hand_frame):
    s = stats.summarize(hand_frame, ["variant", "msize_bytes"]).set_index("variant")
    assert list(s.columns) == ["msize_bytes", "mean_s", "min_s", "max_s", "launches", "nrep"]
    assert s.loc["x", "mean_s"] == pytest.approx(13 / 3)
    assert (s.loc["x", "min_s"], s.loc["x", "max_s"], s.loc["x", "launches"], s.loc["x", "nrep"]) == (2, 6, 3, 3)
    assert s.loc["y", "mean_s"] == pytest.approx(2.0)
    assert (s.loc["y", "min_s"], s.loc["y", "max_s"], s.loc["y", "launches"], s.loc["y", "nrep"]) == (1, 3, 2, 3)
