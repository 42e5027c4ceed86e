"""mpiguide.core.stats: hand-computed cases, then simulated data with fixed seeds (known distributions, known
effects): the false-alarm rate of A/A families, the power on a real 15% slowdown, launches at another speed,
a run-level shift in compare, and the adaptive loop's error rate over its looks. Deterministic; no timing."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from mpiguide.core import compare, stats
from mpiguide.core.stats import INCONCLUSIVE, PASS, VIOLATED

TOL, ALPHA = 0.05, 0.05


def rows(medians_by_launch: dict, spread=(0.9, 1.0, 1.2), launch_ids: bool = True) -> pd.DataFrame:
    """Raw rows whose launch medians are exactly the given ones (launch -> median)."""
    out = []
    for launch, m in medians_by_launch.items():
        for rep, f in enumerate(spread):
            row = {"launch": launch, "rep": rep, "time_s": m * f}
            if launch_ids:
                row["launch_id"] = f"s-t-r{launch}"
            out.append(row)
    return pd.DataFrame(out)


# ---------------------------------------------------------------- one point, by hand

def test_paired_estimate_known_values():
    # per-launch log ratios log 2, log 2.2, log 1.8 whose repetitions do not vary: the launches' spread counts
    # (they disagree more than their repetitions predict); mean, sd and t by hand
    a, b = rows({0: 2.0, 1: 2.2, 2: 1.8}, spread=(1, 1, 1)), rows({0: 1.0, 1: 1.0, 2: 1.0}, spread=(1, 1, 1))
    e = stats.estimate(a, b)
    d = np.log([2.0, 2.2, 1.8])
    assert e.design == stats.PAIRED_LAUNCH and (e.n_a, e.n_b, e.df) == (3, 3, 2)
    assert e.log_ratio == pytest.approx(d.mean()) and e.se == pytest.approx(d.std(ddof=1) / math.sqrt(3))
    (v,) = stats.decide([e], TOL, ALPHA)
    half = sps.t.ppf(1 - ALPHA, 2) * e.se
    assert v.verdict == VIOLATED
    assert (v.low, v.high) == pytest.approx((math.exp(d.mean() - half), math.exp(d.mean() + half)))
    t = (d.mean() - math.log1p(TOL)) / e.se
    assert v.p_value == pytest.approx(sps.t.sf(t, 2) * (1 + ALPHA))  # a family of one: the two-stage's 1 + alpha


def test_repetitions_noise_is_a_floor():
    # two launches agreeing more closely than their repetitions allow: the standard error is the repetitions'
    # (per side v = pi/2 (1.4826 MAD)^2 / 3 of the log repetitions), on the launches' n - 1 degrees of freedom
    spread = (0.9, 1.0, 1.2)
    a, b = rows({0: 1.3, 1: 1.31}, spread), rows({0: 1.0, 1: 1.0}, spread)
    e = stats.estimate(a, b)
    logs = np.log(spread)
    mad = np.median(np.abs(logs - np.median(logs)))
    v = math.pi / 2 * (1.4826 * mad) ** 2 / 3
    assert e.df == 1 and e.se == pytest.approx(math.sqrt(2 * 2 * v) / 2) and e.floor == e.se
    assert e.s2 == pytest.approx(np.var(np.log([1.3, 1.31]), ddof=1))
    assert e.ratio == pytest.approx(math.sqrt(1.3 * 1.31))


def test_paired_launch_effects_cancel():
    # the launches run at very different speeds, both sides alike: the ratio is 1.5 exactly in each
    a, b = rows({0: 1.5, 1: 15.0, 2: 0.15}), rows({0: 1.0, 1: 10.0, 2: 0.1})
    e = stats.estimate(a, b)
    assert e.ratio == pytest.approx(1.5) and e.design == stats.PAIRED_LAUNCH
    assert stats.decide([e], TOL, ALPHA)[0].verdict == VIOLATED
    # the same medians in separate launches (no launch_id shared): unpaired, and the spread hides it
    u = stats.estimate(rows({0: 1.5, 1: 15.0, 2: 0.15}, launch_ids=False),
                       rows({3: 1.0, 4: 10.0, 5: 0.1}, launch_ids=False))
    assert u.se > 10 * e.se
    assert u.design == stats.UNPAIRED and stats.decide([u], TOL, ALPHA)[0].verdict == INCONCLUSIVE


def test_pass_needs_evidence():
    # a ratio of 1.0 from two launches that disagree by 20% is not a PASS: the interval holds 1.05
    e = stats.paired_estimate(np.log([0.9, 1.1]))
    (v,) = stats.decide([e], TOL, ALPHA)
    assert v.verdict == INCONCLUSIVE and v.low < 1.05 < v.high
    assert "holds 1 + tolerance" in v.reason and v.more is not None and v.more > 0
    # tight launches around 1.0 pass
    assert stats.decide([stats.paired_estimate(np.log([0.99, 1.0, 1.01]))], TOL, ALPHA)[0].verdict == PASS


def test_too_few_launches_says_so():
    (v,) = stats.decide([stats.paired_estimate(np.log([3.0]))], TOL, ALPHA)
    assert v.verdict == INCONCLUSIVE and v.reason.startswith("too few launches (1")
    assert math.isnan(v.low)


def test_more_launches_estimate_is_enough():
    # the promised number of extra launches with the same spread would decide it
    d = np.log([1.10, 1.00, 1.20])
    e = stats.paired_estimate(d)
    (v,) = stats.decide([e], TOL, ALPHA)
    assert v.verdict == INCONCLUSIVE and v.more
    n = 3 + v.more
    sd = d.std(ddof=1)
    assert sps.t.ppf(1 - ALPHA, n - 1) * sd / math.sqrt(n) < abs(d.mean() - math.log1p(TOL))


def test_bimodal_launches_that_disagree_are_inconclusive():
    # six launches, three at x1.0 and three at x1.3, each group within 1%: the gap is far beyond the spread
    # inside the groups, and whichever group is right decides differently
    e = stats.paired_estimate(np.log([1.0, 1.3, 1.0, 1.31, 1.01, 1.3]), [str(i) for i in range(6)])
    assert e.split.startswith("launches 1, 3, 5 at x1.30, launches 0, 2, 4 at x1.00") and e.split_sizes == (3, 3)
    (alone,) = stats.decide([e], TOL, ALPHA)
    assert alone.verdict == INCONCLUSIVE and alone.reason.startswith("bimodal launches that disagree")
    # among points whose launches vary by 30% anyway, such a gap is ordinary noise: the interval decides, and
    # the split is named
    rng = np.random.default_rng(2)
    family = [stats.paired_estimate(rng.normal(0, 0.3, 6)) for _ in range(40)]
    v = stats.decide([e, *family], TOL, ALPHA)[0]
    assert v.reason.startswith("the interval") and "launches at another speed: launches 1, 3, 5" in v.reason
    # groups on the same side of the tolerance: the verdict stands, and the split is named
    e2 = stats.paired_estimate(np.log([2.0, 2.01, 3.0]))
    (v2,) = stats.decide([e2], TOL, ALPHA)
    assert e2.split and v2.verdict == VIOLATED and "launches at another speed" in v2.reason


def test_an_outlying_spread_keeps_its_own():
    # a point whose launches vary by 10% in a family whose launches agree within 1%: not moderated
    rng = np.random.default_rng(3)
    quiet = [stats.paired_estimate(rng.normal(0, 0.01, 3)) for _ in range(100)]
    loud = stats.paired_estimate(np.log([1.0, 1.1, 1.2]))
    out = stats.moderate([loud, *quiet])
    assert (out[0].se, out[0].df) == (loud.se, loud.df) and out[0].prior  # the prior is kept for the split test
    assert out[1].df > quiet[0].df


def test_smooth_spread_is_not_bimodal():
    assert stats.bimodal(np.log([1.0, 1.2, 1.4])) is None
    assert stats.bimodal(np.log([1.0, 1.001, 1.02])) is None  # below 10%
    assert list(stats.bimodal(np.log([1.0, 1.01, 2.0, 2.02]))) == [False, False, True, True]


def test_bh_adjust_by_hand():
    q = stats.bh_adjust(np.array([0.01, 0.04, 0.03, math.nan, 0.5]))
    # m = 4 valid: sorted 0.01, 0.03, 0.04, 0.5 -> 0.04, 0.053.., 0.053.., 0.5
    assert q[0] == pytest.approx(0.04) and q[2] == pytest.approx(0.04 * 4 / 3) and q[1] == pytest.approx(0.04 * 4 / 3)
    assert math.isnan(q[3]) and q[4] == pytest.approx(0.5)


def test_family_controls_what_one_point_alone_would_claim():
    # a point just beyond the tolerance (t = 2.2 on 30 degrees of freedom, p = 0.018) is VIOLATED alone; among
    # 99 points clearly within the tolerance, at the same alpha, the family's control does not accept it
    edge = stats.Estimate(math.log1p(TOL) + 2.2 * 0.01, 0.01, 30, 31, 31, stats.PAIRED_LAUNCH)
    assert stats.decide([edge], TOL, ALPHA)[0].verdict == VIOLATED
    fine = stats.Estimate(0.0, 0.01, 30, 31, 31, stats.PAIRED_LAUNCH)
    family = stats.decide([edge] + [fine] * 99, TOL, ALPHA)
    assert family[0].verdict == INCONCLUSIVE and "not with the 100 points" in family[0].reason
    assert all(v.verdict == PASS for v in family[1:])


def test_two_stage_adjust_by_hand():
    # BH q = 0.001 * 4, 0.02 * 4 / 2, 0.03 * 4 / 3, 0.9; stage one at 0.05 / 1.05 rejects the first three
    # (m0 = 1): adjusted = q * 1.05 * 1 / 4; NaN does not count
    q, m0 = stats.two_stage_adjust(np.array([0.001, 0.02, 0.03, math.nan, 0.9]), 0.05)
    assert m0 == 1
    assert q[[0, 1, 2, 4]] == pytest.approx(np.array([0.004, 0.04, 0.04, 0.9]) * 1.05 / 4)
    assert math.isnan(q[3])
    # nothing rejected at stage one: plain BH times 1 + alpha
    q, m0 = stats.two_stage_adjust(np.array([0.2, 0.5]), 0.05)
    assert m0 == 2 and q == pytest.approx(np.array([0.4, 0.5]) * 1.05)


def test_a_point_judged_both_ways_counts_once_in_the_prior():
    # five A ≃ B points, each in the family as itself and reversed: 5 distinct spreads, too few to moderate
    rng = np.random.default_rng(9)
    points = [stats.paired_estimate(rng.normal(0, 0.05, 3)) for _ in range(5)]
    both = [x for e in points for x in (e, e.reversed())]
    assert stats.moderate(both) == both


def test_no_finite_estimate_and_far_decisions():
    (v,) = stats.decide([stats.Estimate(math.nan, 0.1, 2, 3, 3, stats.PAIRED_LAUNCH)], TOL, ALPHA)
    assert v.verdict == INCONCLUSIVE and v.reason.startswith("no finite estimate")
    # a point with 60 launches (mean 0.037 above the threshold, spread 0.2: t = 1.43) that about 20 more would
    # decide: counted from where it stands, not capped at 50 launches in all
    z = np.random.default_rng(1).normal(0, 1, 60)
    e = stats.paired_estimate(np.log(1.05) + 0.037 + 0.2 * (z - z.mean()) / z.std(ddof=1))
    (w,) = stats.decide([e], TOL, ALPHA)
    assert w.verdict == INCONCLUSIVE and w.more is not None and 10 < w.more < 40


def test_equal_sizes_give_a_flat_trend():
    rng = np.random.default_rng(3)
    s2 = 0.01 * rng.chisquare(2, 400) / 2
    flat = stats.spread_prior(s2, np.full(400, 2.0))
    same = stats.spread_prior(s2, np.full(400, 2.0), np.zeros(400))
    assert flat[0] == same[0] and np.all(flat[1] == pytest.approx(same[1]))


def test_spread_prior_recovers_a_known_distribution():
    # per-point variances drawn from a scaled inverse chi-square (d0 = 8, s0^2 = 0.01), each seen through a
    # sample variance on 2 degrees of freedom (3 launches): the moments fit finds both back
    rng = np.random.default_rng(11)
    true = 8 * 0.01 / rng.chisquare(8, 40000)
    s2 = true * rng.chisquare(2, 40000) / 2
    d0, s0 = stats.spread_prior(s2, np.full(40000, 2.0))
    assert d0 == pytest.approx(8, rel=0.2) and np.all(s0 == pytest.approx(0.01, rel=0.1))
    # one variance for every point: only sampling noise spreads the s2, and the prior is all but known
    same = 0.01 * rng.chisquare(2, 4000) / 2
    d0, s0 = stats.spread_prior(same, np.full(4000, 2.0))
    assert d0 >= 100 and np.all(s0 == pytest.approx(0.01, rel=0.1))
    assert stats.spread_prior(s2[:stats.MIN_PRIOR_POINTS - 1], np.full(stats.MIN_PRIOR_POINTS - 1, 2.0)) is None


def test_moderation_by_hand():
    # 12 paired points of 3 launches: each s2 moves toward the family's s0^2 by d0 / (d0 + 2), on 2 + d0
    # degrees of freedom; an unpaired estimate keeps its own
    rng = np.random.default_rng(4)
    points = [stats.paired_estimate(rng.normal(0, 0.05 * (1 + i % 3), 3)) for i in range(12)]
    unpaired = stats.unpaired_estimate(np.log([1.0, 1.1, 0.9]), np.log([1.0, 1.05, 0.95]))
    d0, s0 = stats.spread_prior(np.array([e.s2 for e in points]), np.full(12, 2.0))
    assert np.all(s0 == s0[0])  # 12 points: too few for a trend over the effect size
    out = stats.moderate([*points, unpaired])
    for e, m in zip(points, out, strict=False):
        s2 = (d0 * s0[0] + 2 * e.s2) / (d0 + 2)
        assert m.df == pytest.approx(2 + d0) and m.se == pytest.approx(math.sqrt(s2 / 3))
        assert m.log_ratio == e.log_ratio
    assert out[-1] == unpaired
    # too small a family, or a stratum of its own that is: unchanged
    assert stats.moderate(points[:stats.MIN_PRIOR_POINTS - 1]) == points[:stats.MIN_PRIOR_POINTS - 1]
    strata = ["big"] * 11 + ["alone"]
    out = stats.moderate(points, strata)
    assert out[-1] == points[-1] and out[0] != points[0]


def test_strata_borrow_only_from_their_own():
    # two stacks, one ten times noisier: per stack, a point is moderated toward its own stack's spread
    rng = np.random.default_rng(12)
    quiet = [stats.paired_estimate(rng.normal(0, 0.01, 3)) for _ in range(40)]
    loud = [stats.paired_estimate(rng.normal(0, 0.1, 3)) for _ in range(40)]
    out = stats.moderate(quiet + loud, ["q"] * 40 + ["l"] * 40)
    se_quiet = np.median([e.se for e in out[:40]]) * math.sqrt(3)
    se_loud = np.median([e.se for e in out[40:]]) * math.sqrt(3)
    assert se_quiet == pytest.approx(0.01, rel=0.3) and se_loud == pytest.approx(0.1, rel=0.3)


def test_similar_takes_the_worse_direction():
    e = stats.paired_estimate(np.log([0.5, 0.51, 0.49]))  # A twice as fast
    ab, ba = stats.decide([e, e.reversed()], TOL, ALPHA)
    assert ab.verdict == PASS and ba.verdict == VIOLATED
    w = stats.worse(ab, ba)
    assert w.verdict == VIOLATED and w.ratio == pytest.approx(0.5, rel=0.02)


def test_reps_mode_and_bad_mode():
    a, b = rows({0: 2.0, 1: 2.0}), rows({0: 1.0, 1: 1.0})
    assert stats.estimate(a, b, samples="reps").design == stats.UNPAIRED
    with pytest.raises(ValueError, match="samples must be one of"):
        stats.estimate(a, b, samples="mean")


# ---------------------------------------------------------------- simulated families

NREP = 20  # repetitions per side and launch in the simulations (the nrep rule's smallest)


def launch_stats(log_times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per launch (rows) of simulated log repetition times (columns): the log median and the variance of it
    that the repetitions show (stats.per_launch's formula)."""
    med = np.median(log_times, axis=1)
    mad = np.median(np.abs(log_times - med[:, None]), axis=1)
    return med, (math.pi / 2) * (1.4826 * mad) ** 2 / log_times.shape[1]


def simulate_point(rng, ratio: float, n: int, sigma: float = 0.05, tails: bool = False, slow_share: float = 0.0,
                   slow: float = 1.5, interaction: float = 0.0) -> stats.Estimate:
    """One paired point: n launches of NREP repetitions per side. Each repetition's log time has noise of
    spread sigma (normal, or Student t with 3 degrees of freedom); a launch at another speed (probability
    slow_share) slows both sides alike, which cancels in the ratio; `interaction` adds launch-to-launch noise
    of the ratio itself (what pairing cannot cancel)."""
    def noise(shape):
        return (rng.standard_t(3, shape) / math.sqrt(3) if tails else rng.standard_normal(shape)) * sigma
    speed = np.where(rng.random(n) < slow_share, math.log(slow), 0.0)[:, None]
    extra = rng.standard_normal(n)[:, None] * interaction
    ma, va = launch_stats(math.log(ratio) + speed + extra + noise((n, NREP)))
    mb, vb = launch_stats(speed + noise((n, NREP)))
    return stats.paired_estimate(ma - mb, None, stats.PAIRED_LAUNCH, va + vb)


def machine_noise(rng) -> float:
    """A point's launch-to-launch noise of the ratio that pairing does not cancel, as the test machine shows it:
    log-normal across points, median 5% (per-launch log ratios of interleaved sides varied by 3-12% there)."""
    return 0.05 * math.exp(0.5 * rng.standard_normal())


CASES = {  # name: (t(3) tails, share of launches 1.5x slower, interaction: a number or machine_noise)
    "normal": (False, 0.0, 0.0), "t3": (True, 0.0, 0.0), "slow launches": (False, 0.3, 0.0),
    "t3 and slow launches": (True, 0.3, 0.0), "interaction 2%": (False, 0.0, 0.02),
    "machine noise": (False, 0.3, machine_noise),
}


def simulate_run(rng, truth: list[float], case: str, n: int = 3) -> list[stats.Estimate]:
    tails, slow_share, interaction = CASES[case]
    return [simulate_point(rng, r, n, tails=tails, slow_share=slow_share,
                           interaction=interaction(rng) if callable(interaction) else interaction) for r in truth]


@pytest.mark.parametrize("case", list(CASES))
def test_aa_false_alarms_stay_within_alpha(case):
    """40 simulated runs of 150 points each, A and B identical (ratio 1; 5% noise per repetition; 3 launches):
    the share of runs with any VIOLATED point stays within alpha (BH, all nulls true). Heavy tails, launches
    at another speed (30% of them 1.5x slower), a launch-to-launch interaction of the ratio (2%) and the test
    machine's noise (machine_noise) included."""
    rng = np.random.default_rng(20261126)
    runs_with_alarm = 0
    for _ in range(40):
        runs_with_alarm += any(v.verdict == VIOLATED for v in stats.decide(simulate_run(rng, [1.0] * 150, case),
                                                                           TOL, ALPHA))
    assert runs_with_alarm / 40 <= ALPHA


@pytest.mark.parametrize("case", ["normal", "machine noise"])
def test_boundary_ratio_errors_stay_within_alpha(case):
    """At a true ratio of exactly 1 + tolerance both verdicts are wrong claims: the share of points decided
    either way stays within alpha, with moderated spreads too."""
    rng = np.random.default_rng(7)
    wrong = total = 0
    for _ in range(20):
        verdicts = stats.decide(simulate_run(rng, [1 + TOL] * 100, case), TOL, ALPHA)
        wrong += sum(v.verdict != INCONCLUSIVE for v in verdicts)
        total += len(verdicts)
    assert wrong / total <= ALPHA


POWER_15 = {"normal": (3, 0.95), "machine noise": (10, 0.85)}  # launches; docs/measurement.md's rate, rounded down


@pytest.mark.parametrize("case", list(POWER_15))
def test_power_on_a_real_15_percent_slowdown(case):
    """Runs of 200 points of which 30 are truly 15% slower (20 repetitions per side, 5% noise per repetition):
    at least the documented share of them is VIOLATED, no point of ratio 1 is, and without launch-to-launch
    noise the points of ratio 1 are mostly PASS (decided, not left INCONCLUSIVE). The machine's noise needs
    10 launches for that power (3 find only large effects there: docs/measurement.md)."""
    launches, power = POWER_15[case]
    rng = np.random.default_rng(15)
    found = wrong = passed = 0
    for _ in range(20):
        verdicts = stats.decide(simulate_run(rng, [1.15] * 30 + [1.0] * 170, case, launches), TOL, ALPHA)
        found += sum(v.verdict == VIOLATED for v in verdicts[:30])
        wrong += sum(v.verdict == VIOLATED for v in verdicts[30:])
        passed += sum(v.verdict == PASS for v in verdicts[30:])
    assert found / (20 * 30) >= power
    assert wrong == 0
    if case == "normal":
        assert passed / (20 * 170) >= 0.85


def test_unpaired_aa_with_launch_effects():
    """Two stacks in separate launches (unpaired): launch effects (30% of launches 1.5x slower) do not cancel;
    false alarms still stay within alpha."""
    rng = np.random.default_rng(3)
    alarms = 0
    for _ in range(20):
        est = []
        for _ in range(100):
            sides = []
            for _side in range(2):
                speed = np.where(rng.random(5) < 0.3, math.log(1.5), 0.0)[:, None]
                sides.append(launch_stats(speed + rng.standard_normal((5, NREP)) * 0.05))
            (ma, va), (mb, vb) = sides
            est.append(stats.unpaired_estimate(ma, mb, within=(va, vb)))
        alarms += any(v.verdict == VIOLATED for v in stats.decide(est, TOL, ALPHA))
    assert alarms / 20 <= ALPHA


@pytest.mark.parametrize("noise", ["1%", "machine"])
def test_adaptive_looks_keep_the_error_rate(noise):
    """Sequential looks at alpha / K (K = 4: 3 planned launches, up to 3 more one at a time): A/A families of
    50 points with a launch-to-launch interaction (1%, or the machine's per point) are launched again while
    undecided; over 60 runs the share with any VIOLATED point stays within alpha, and the loop decides more
    points than the first look (with 1%: most of them in the end)."""
    rng = np.random.default_rng(99)
    looks, alarms, first, decided = 4, 0, 0, 0
    for _ in range(60):
        spread = [0.01 if noise == "1%" else machine_noise(rng) for _ in range(50)]
        launches = [[simulate_point(rng, 1.0, 1, interaction=t) for _ in range(3)] for t in spread]
        alarm = False
        for look in range(looks):
            est = [stats.paired_estimate(np.array([e.log_ratio for e in p]), None, stats.PAIRED_LAUNCH,
                                         np.array([e.se ** 2 for e in p])) for p in launches]
            verdicts = stats.decide(est, TOL, ALPHA, looks)
            alarm |= any(v.verdict == VIOLATED for v in verdicts)
            open_ = [i for i, v in enumerate(verdicts) if v.verdict == INCONCLUSIVE]
            if look == 0:
                first += 50 - len(open_)
            if not open_:
                break
            for i in open_:
                launches[i].append(simulate_point(rng, 1.0, 1, interaction=spread[i]))
        alarms += alarm
        decided += sum(v.verdict != INCONCLUSIVE for v in verdicts)
    assert alarms / 60 <= ALPHA
    assert decided > first
    if noise == "1%":
        assert decided / (60 * 50) >= 0.85


# ---------------------------------------------------------------- compare: the run-level shift

def _run_frame(rng, stack: str, configs: int, rounds: int, shift: float, slow: dict[int, float]) -> pd.DataFrame:
    """Launch medians of one stack as raw rows (one repetition each): config k's base time, times the run's
    shift, a round effect shared by every configuration of the round, and 2% noise."""
    out = []
    base = np.exp(rng.normal(-9, 1, configs))
    for r in range(rounds):
        round_effect = math.exp(rng.normal(0, 0.05))
        for k in range(configs):
            t = base[k] * shift * slow.get(k, 1.0) * round_effect * math.exp(rng.normal(0, 0.02))
            out.append({"stack": stack, "config": k, "launch": r, "launch_id": f"{stack}-r{r}", "rep": 0,
                        "time_s": t})
    return pd.DataFrame(out)


def test_compare_reports_a_run_level_shift_once():
    """NEW 3% faster everywhere (and another 5% per round noise): one shift, no configuration flagged."""
    rng = np.random.default_rng(31)
    base = _run_frame(rng, "x", 200, 3, 1.0, {})
    rng2 = np.random.default_rng(31)  # the same configurations' base times
    new = _run_frame(rng2, "x", 200, 3, 0.97, {})
    opts = {"tolerance": TOL, "alpha": ALPHA}
    configs, shifts = compare.compare_configs(base, new, [("x", "x")], opts, same_run=False)
    assert len(configs) == 200 and configs["change"].isin([compare.SLOWER, compare.FASTER]).sum() <= 2
    assert shifts.iloc[0]["shift"] == pytest.approx(0.97, abs=0.04)


def test_compare_finds_a_real_regression_beyond_the_shift():
    rng = np.random.default_rng(5)
    base = _run_frame(rng, "x", 100, 3, 1.0, {})
    rng2 = np.random.default_rng(5)
    new = _run_frame(rng2, "x", 100, 3, 1.0, {7: 1.4})
    configs, _ = compare.compare_configs(base, new, [("x", "x")], {"tolerance": TOL, "alpha": ALPHA},
                                         same_run=False)
    slower = configs[configs["change"] == compare.SLOWER]["config"].tolist()
    assert slower == ["config=7"]


def test_compare_two_stacks_of_one_run_pair_by_round():
    """The same library as two stacks of one run: rounds shared, so round effects cancel; nothing is flagged
    and the shift is decided `same`."""
    rng = np.random.default_rng(8)
    frames = []
    base = np.exp(rng.normal(-9, 1, 150))
    for r in range(3):
        round_effect = math.exp(rng.normal(0, 0.1))  # a round much faster or slower than another
        for stack in ("a", "b"):
            for k in range(150):
                frames.append({"stack": stack, "config": k, "launch": r, "launch_id": f"{stack}-r{r}", "rep": 0,
                               "time_s": base[k] * round_effect * math.exp(rng.normal(0, 0.01))})
    df = pd.DataFrame(frames)
    configs, shifts = compare.compare_configs(df, df, [("a", "b")], {"tolerance": TOL, "alpha": ALPHA},
                                              same_run=True)
    assert (configs["design"] == stats.PAIRED_ROUND).all()
    assert not configs["change"].isin([compare.SLOWER, compare.FASTER]).any()
    assert shifts.iloc[0]["change"] == compare.SAME


# ---------------------------------------------------------------- launch_medians / summarize

@pytest.fixture
def hand_frame() -> pd.DataFrame:
    out = []
    data = {
        ("x", 4): {0: [3, 1, 2], 1: [10, 4, 6], 2: [5, 5, 9]},  # launch medians 2, 6, 5
        ("y", 4): {0: [1, 1, 1], 1: [2, 4, 3]},  # launch medians 1, 3
    }
    for (variant, size), launches in data.items():
        for launch, times in launches.items():
            for rep, t in enumerate(times):
                out.append({"variant": variant, "msize_bytes": size, "launch": launch, "rep": rep,
                            "time_s": float(t)})
    return pd.DataFrame(out)


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


# ---------------------------------------------------------------- the rates docs/measurement.md documents

def documented_rates(runs: int = 100, points: int = 200) -> None:
    """Prints the simulated rates of docs/measurement.md's table (`python tests/python/test_stats.py`; a few
    minutes): per case, A/A runs with any VIOLATED point and the share of PASS; the power on real slowdowns."""
    rng = np.random.default_rng(1)
    for case in CASES:
        alarms = passed = inconclusive = 0
        for _ in range(runs):
            verdicts = [v.verdict for v in stats.decide(simulate_run(rng, [1.0] * points, case), TOL, ALPHA)]
            alarms += VIOLATED in verdicts
            passed += verdicts.count(PASS)
            inconclusive += verdicts.count(INCONCLUSIVE)
        print(f"A/A {case}: {alarms} of {runs} runs with a VIOLATED point; PASS {passed / (runs * points):.3f}, "
              f"INCONCLUSIVE {inconclusive / (runs * points):.3f}")
    for case in ("normal", "machine noise"):
        for n in (3, 5, 10):
            found = {}
            for ratio in (1.10, 1.15, 1.30):
                hits = 0
                for _ in range(runs // 4):
                    verdicts = stats.decide(simulate_run(rng, [ratio] * 30 + [1.0] * (points - 30), case, n), TOL,
                                            ALPHA)
                    hits += sum(v.verdict == VIOLATED for v in verdicts[:30])
                found[ratio] = hits / (runs // 4 * 30)
            print(f"power, {case}, {n} launches: " + ", ".join(f"x{r:.2f} {p:.3f}" for r, p in found.items()))


if __name__ == "__main__":
    documented_rates()
