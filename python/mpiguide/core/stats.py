"""The statistics behind every verdict mpiguide gives (docs/measurement.md).

The unit of evidence is the launch: within one `mpiexec`, repetitions share the launch's placement,
memory layout and state of the machine, so they are not independent samples of the library's speed.
Per launch and configuration, the median of its repetitions is one observation.

A guideline `A ⪯ B` at one point is judged on the log ratio of A to B:

- paired (both sides in the same launch, or for two stacks of one run in the same round of launches):
  per launch i, d_i = log(median of A_i / median of B_i); what a launch does to both sides cancels. The
  estimate is the mean of the d_i, with Student's t on n - 1 degrees of freedom, the spread moderated toward
  the family's (`moderate`: three launches estimate one point's spread badly, hundreds of points show how
  spreads are distributed);
- unpaired (the sides never share a launch): the difference of the means of the log launch medians, with
  Welch's t.

Either way the standard error is never below what the launches' repetitions allow (the variance of a median
from its repetitions' robust spread).

The ratio is exp(estimate) with a (1 - 2 alpha) confidence interval. The tolerance splits the answer:

    PASS          the interval lies below 1 + tolerance (A is shown no slower than B, within the tolerance);
    VIOLATED      the interval lies above 1 + tolerance (A is shown slower than B by more than it);
    INCONCLUSIVE  the interval holds 1 + tolerance, or the launches cannot tell (with the reason, and an
                  estimate of how many more launches would decide it).

Every point of a family (all the points a run judges, `decide`) is tested one-sidedly both ways, and each
way's p-values go through Benjamini, Krieger and Yekutieli's two-stage step-up at level alpha: among the
VIOLATED verdicts of a run, the expected share of wrong ones is at most alpha, and so among the PASS verdicts.
With K looks at the data (adaptive launches), each look uses alpha / K.

Launches that ran at another speed split a point's per-launch values into groups (`bimodal`); a verdict
that the groups would give differently is INCONCLUSIVE where they lie further apart than the noise explains,
and the split is always named.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy import special
from scipy import stats as sps

PASS, VIOLATED, INCONCLUSIVE = "PASS", "VIOLATED", "INCONCLUSIVE"
RANK = {VIOLATED: 2, INCONCLUSIVE: 1, PASS: 0}  # the worst verdict ranks highest
SAMPLE_MODES = ("medians", "reps")  # per-launch medians (the method), or every repetition a sample (unpaired)
PAIRED_LAUNCH, PAIRED_ROUND, UNPAIRED = "paired by launch", "paired by round", "unpaired"
MAX_MORE = 50  # more launches than this: "more launches would decide it" is not promised
SPLIT_GAP = math.log(1.1)  # launch groups closer than 10% are one speed


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


# ---------------------------------------------------------------- launch groups

def bimodal(values: np.ndarray) -> np.ndarray | None:
    """Where values (logs: per-launch log ratios or log medians) fall into two groups, the mask of the upper
    group; else None. Two groups: the widest gap between sorted values is at least 10% and three times the
    spread inside either group, so one launch at another speed among three counts, a smooth spread does not."""
    x = np.asarray(values, dtype=float)
    if len(x) < 3 or not np.all(np.isfinite(x)):
        return None
    order = np.argsort(x)
    s = x[order]
    gaps = np.diff(s)
    k = int(np.argmax(gaps))
    spread = max(s[k] - s[0], s[-1] - s[k + 1])
    if gaps[k] < SPLIT_GAP or gaps[k] < 3 * spread:
        return None
    upper = np.zeros(len(x), dtype=bool)
    upper[order[k + 1:]] = True
    return upper


def describe_split(labels: list[str], values: np.ndarray, upper: np.ndarray, what: str) -> str:
    """'launch 2 at x1.52, launches 0, 1 at x1.00 (ratio)' for a split of per-launch log values."""
    def group(mask: np.ndarray) -> str:
        names = [labels[i] for i in np.flatnonzero(mask)]
        return (f"launch{'es' if len(names) > 1 else ''} {', '.join(names)} at "
                f"x{math.exp(float(np.mean(values[mask]))):.2f}")
    return f"{group(upper)}, {group(~upper)} ({what})"


# ---------------------------------------------------------------- one point

@dataclass(frozen=True)
class Estimate:
    """Side A against side B at one point: the mean log ratio, its standard error and degrees of freedom (0:
    too few launches to tell), how the sides were paired, and launches at another speed."""

    log_ratio: float
    se: float
    df: float
    n_a: int
    n_b: int
    design: str
    split: str = ""  # "" or describe_split's text
    split_means: tuple[float, ...] = ()  # the mean log ratio of each group of a split that matters for a verdict
    split_sizes: tuple[int, ...] = ()  # paired: the launches in each group (unpaired: empty)
    split_s2: float = math.nan  # paired: the variance inside the groups, pooled (n - 2 degrees of freedom)
    s2: float = math.nan  # paired: the sample variance of the per-launch log ratios (n - 1 degrees of freedom)
    floor: float = math.nan  # the standard error the launches' repetitions alone give (never judged below it)
    prior: tuple[float, ...] = ()  # moderate(): the family's prior (d0, s0^2) at this point, where fitted

    @property
    def ratio(self) -> float:
        return math.exp(self.log_ratio) if math.isfinite(self.log_ratio) else math.nan

    def reversed(self) -> Estimate:
        """B against A."""
        return replace(self, log_ratio=-self.log_ratio, n_a=self.n_b, n_b=self.n_a,
                       split_means=tuple(-m for m in self.split_means))


def paired_estimate(d: np.ndarray, labels: list[str] | None = None, design: str = PAIRED_LAUNCH,
                    within: np.ndarray | None = None) -> Estimate:
    """Mean of per-launch log ratios d with Student's t on n - 1 degrees of freedom (decide() may moderate the
    spread with its family's); within: the variance of each d from its launch's repetitions (NaN or None:
    unknown), a floor under the standard error."""
    d = np.asarray(d, dtype=float)
    n = len(d)
    if n == 0:
        return Estimate(math.nan, math.nan, 0, 0, 0, design)
    mean = float(np.mean(d))
    floor = math.sqrt(float(np.sum(within))) / n if within is not None and np.all(np.isfinite(within)) else math.nan
    if n < 2:  # one launch says nothing of the next: no verdict, whatever its repetitions say
        return Estimate(mean, floor, 0, 1, 1, design, floor=floor)
    s2 = float(np.var(d, ddof=1))
    se = math.sqrt(s2 / n)
    if math.isfinite(floor):
        se = max(se, floor)
    upper = bimodal(d)
    split, means, sizes, inside = "", (), (), math.nan
    if upper is not None:
        split = describe_split(labels or [str(i) for i in range(n)], d, upper, "A/B per launch")
        means = (float(np.mean(d[upper])), float(np.mean(d[~upper])))
        sizes = (int(upper.sum()), int((~upper).sum()))
        if n > 2:
            inside = float(sum(np.sum((d[g] - np.mean(d[g])) ** 2) for g in (upper, ~upper)) / (n - 2))
    return Estimate(mean, se, n - 1, n, n, design, split, means, sizes, inside, s2, floor)


def unpaired_estimate(la: np.ndarray, lb: np.ndarray, labels_a: list[str] | None = None,
                      labels_b: list[str] | None = None, within: tuple[np.ndarray, np.ndarray] | None = None
                      ) -> Estimate:
    """Difference of the mean log launch medians with Welch's t (Welch-Satterthwaite degrees of freedom);
    within: per side, the variance of each launch's log median from its repetitions."""
    la, lb = np.asarray(la, dtype=float), np.asarray(lb, dtype=float)
    na, nb = len(la), len(lb)
    if na == 0 or nb == 0:
        return Estimate(math.nan, math.nan, 0, na, nb, UNPAIRED)
    mean = float(np.mean(la) - np.mean(lb))
    floor = math.nan
    if within is not None and all(np.all(np.isfinite(w)) for w in within):
        floor = math.sqrt(float(np.sum(within[0])) / na ** 2 + float(np.sum(within[1])) / nb ** 2)
    if na < 2 or nb < 2:
        return Estimate(mean, floor, 0, na, nb, UNPAIRED, floor=floor)
    va, vb = float(np.var(la, ddof=1)) / na, float(np.var(lb, ddof=1)) / nb
    df = (va + vb) ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1)) if va + vb > 0 else float(na + nb - 2)
    se = math.sqrt(va + vb)
    if math.isfinite(floor):
        se = max(se, floor)
    notes = []
    for side, x, labels in (("A", la, labels_a), ("B", lb, labels_b)):
        upper = bimodal(x)
        if upper is not None:
            notes.append(describe_split(labels or [str(i) for i in range(len(x))], x - np.mean(x), upper,
                                        f"{side}, relative to its mean"))
    # a side split in two could move the ratio either way by its gap: the verdict must hold for both groups
    means = ()
    if notes:
        spread = [(np.mean(x[u]) - np.mean(x[~u])) for x in (la, lb) if (u := bimodal(x)) is not None]
        half = max(abs(float(g)) for g in spread) / 2
        means = (mean + half, mean - half)
    return Estimate(mean, se, df, na, nb, UNPAIRED, "; ".join(notes), means, floor=floor)


def per_launch(rows: pd.DataFrame, key: str = "launch_id") -> pd.DataFrame:
    """Per launch (by `key`: the launch's id, or its round `launch`): the median time, the variance of the log
    of that median as its repetitions show it, and their count. The variance is that of a median of n values
    of robust spread s (1.4826 x the median absolute deviation of the log times): (pi / 2) s^2 / n."""
    if key not in rows.columns:
        key = "launch"
    logs = np.log(rows["time_s"].to_numpy(float))
    frame = pd.DataFrame({key: rows[key].to_numpy(), "log": logs})
    g = frame.groupby(key, sort=True)["log"]
    center = g.transform("median")
    mad = (frame["log"] - center).abs().groupby(frame[key], sort=True).median()
    out = pd.DataFrame({"median_s": np.exp(g.median()), "nrep": g.size()})
    out["var_log"] = (math.pi / 2) * (1.4826 * mad) ** 2 / out["nrep"]
    return out


def from_medians(ma: pd.DataFrame | pd.Series, mb: pd.DataFrame | pd.Series, design: str = PAIRED_LAUNCH,
                 scale_b: float = 1.0) -> Estimate:
    """A against scale_b x B from their per-launch statistics (per_launch, or bare medians indexed by launch,
    whose within-launch noise is then unknown): paired on the launches both have (design says how they are
    paired), unpaired when they share none."""
    ma, mb = _framed(ma), _framed(mb)
    common = ma.index.intersection(mb.index)
    if len(common):
        a, b = ma.loc[common], mb.loc[common]
        d = np.log(a["median_s"].to_numpy(float)) - np.log(scale_b * b["median_s"].to_numpy(float))
        return paired_estimate(d, [_name(x) for x in common], design, (a["var_log"] + b["var_log"]).to_numpy(float))
    return unpaired_estimate(np.log(ma["median_s"].to_numpy(float)), np.log(scale_b * mb["median_s"].to_numpy(float)),
                             [_name(x) for x in ma.index], [_name(x) for x in mb.index],
                             (ma["var_log"].to_numpy(float), mb["var_log"].to_numpy(float)))


def _framed(m: pd.DataFrame | pd.Series) -> pd.DataFrame:
    """per_launch's frame; bare medians get an unknown within-launch variance."""
    if isinstance(m, pd.DataFrame):
        return m
    return pd.DataFrame({"median_s": m.astype(float), "nrep": 1, "var_log": math.nan}, index=m.index)


def _name(launch: object) -> str:
    """A launch's name in texts: the round of a launch id (`mpich-t3-pingpong-np2-r1` -> 1), else as it is."""
    text = str(launch)
    head, sep, tail = text.rpartition("-r")
    return tail if sep and tail.isdigit() else text


def estimate(a: pd.DataFrame, b: pd.DataFrame, samples: str = "medians", pair_on: str | None = None) -> Estimate:
    """A against B from their raw rows (each with `launch`, `time_s`, and `launch_id` where the data has it).
    Paired on `launch_id` where the sides share launches, else on `pair_on` (a column such as the round of
    launches `launch`, for two stacks of one run) where given, else unpaired. samples="reps": every
    repetition a sample, unpaired (launch effects then count as noise of the sides)."""
    if samples not in SAMPLE_MODES:
        raise ValueError(f"samples must be one of {SAMPLE_MODES}")
    if samples == "reps":
        return unpaired_estimate(np.log(a["time_s"].to_numpy(float)), np.log(b["time_s"].to_numpy(float)))
    ma, mb = per_launch(a), per_launch(b)
    if ma.index.intersection(mb.index).empty and pair_on:
        return from_medians(per_launch(a, pair_on), per_launch(b, pair_on), PAIRED_ROUND)
    return from_medians(ma, mb)


# ---------------------------------------------------------------- a family of points

@dataclass(frozen=True)
class Verdict:
    verdict: str
    ratio: float  # A / B: exp of the estimate; above 1 A is slower
    low: float  # the (1 - 2 alpha / looks) confidence interval of the ratio
    high: float
    p_value: float  # the family-adjusted (two_stage_adjust) one-sided p of "A slower by more than the tolerance"
    n_a: int  # launches (or samples) per side
    n_b: int
    design: str
    reason: str  # why INCONCLUSIVE; for the others, launches at another speed if any
    more: int | None  # INCONCLUSIVE: about how many more launches would decide it (None: not within reach)
    se_log: float = math.nan  # the standard error of the log ratio the verdict was judged on (moderated)
    df: float = 0.0  # and its degrees of freedom (0: too few launches)


def bh_adjust(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values); NaN stays NaN and does not count."""
    p = np.asarray(p, dtype=float)
    q = np.full(len(p), math.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = len(ok)
    if m == 0:
        return q
    order = ok[np.argsort(p[ok])]
    ranked = p[order] * m / np.arange(1, m + 1)
    q[order] = np.minimum(1.0, np.minimum.accumulate(ranked[::-1])[::-1])
    return q


def two_stage_adjust(p: np.ndarray, level: float) -> tuple[np.ndarray, int]:
    """Adjusted p-values of Benjamini, Krieger and Yekutieli's two-stage step-up at `level` (reject where the
    value is at most `level`), and the estimated number of true null hypotheses m0. Stage one rejects by
    Benjamini-Hochberg at level / (1 + level); stage two runs it again at level / (1 + level) x m / m0 with
    m0 = m - (stage one's rejections). Where many hypotheses are false (a run whose points are mostly clearly
    on one side), plain Benjamini-Hochberg is conservative by the share m0 / m; this recovers that margin and
    keeps the false discovery rate at `level`."""
    q = bh_adjust(p)
    m = int(np.isfinite(q).sum())
    if m == 0:
        return q, 0
    m0 = max(1, m - int((q <= level / (1 + level)).sum()))
    return np.minimum(1.0, q * (1 + level) * m0 / m), m0


def _one_sided(estimates: list[Estimate], threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Per estimate: (p of "the log ratio is above the threshold", p of "below it"); NaN where the launches
    cannot tell. Vectorized: a run judges thousands of points."""
    lr = np.array([e.log_ratio for e in estimates], dtype=float)
    se = np.array([e.se for e in estimates], dtype=float)
    df = np.array([e.df for e in estimates], dtype=float)
    over, under = np.full(len(lr), math.nan), np.full(len(lr), math.nan)
    ok = (df > 0) & np.isfinite(se) & np.isfinite(lr)
    exact = ok & (se == 0)
    over[exact] = np.where(lr[exact] > threshold, 0.0, 1.0)
    under[exact] = np.where(lr[exact] < threshold, 0.0, 1.0)
    t_ok = ok & (se > 0)
    t = (lr[t_ok] - threshold) / se[t_ok]
    over[t_ok], under[t_ok] = sps.t.sf(t, df[t_ok]), sps.t.cdf(t, df[t_ok])
    return over, under


MIN_PRIOR_POINTS = 10  # fewer paired points than this do not show how their spreads vary: no moderation
MAX_PRIOR_DF = 1000.0  # spreads that agree beyond sampling noise: the family's spread, as good as known
OWN_SPREAD = 0.99  # a spread above this quantile of what the family's prior predicts is the point's own


def _trigamma_inverse(x: float) -> float:
    """y with trigamma(y) = x (Newton's method on 1 / trigamma, as in Smyth 2004)."""
    if x > 1e7:
        return 1 / math.sqrt(x)
    if x < 1e-6:
        return 1 / x
    y = 0.5 + 1 / x
    for _ in range(50):
        tri = float(special.polygamma(1, y))
        step = tri * (1 - tri / x) / float(special.polygamma(2, y))
        y += step
        if -step / y < 1e-8:
            break
    return y


TREND_BIN = 50  # points per bin of the spread's trend over the effect size (at most TREND_BINS bins)
TREND_BINS = 8


def _trend(e: np.ndarray, size: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mean of e as a function of size (bins of TREND_BIN points by quantile, linear between their centres,
    flat beyond), at the fitted points and at the sizes `at`."""
    bins = min(TREND_BINS, len(e) // TREND_BIN)
    parts = np.array_split(np.argsort(size, kind="stable"), max(1, bins))
    # bins whose centres coincide (many equal sizes) are one bin: interpolation needs increasing centres
    by_centre = pd.DataFrame({"centre": [np.median(size[p]) for p in parts], "sum": [np.sum(e[p]) for p in parts],
                              "n": [len(p) for p in parts]}).groupby("centre", sort=True)[["sum", "n"]].sum()
    if len(by_centre) <= 1:
        return np.full(len(e), np.mean(e)), np.full(len(at), np.mean(e))
    centres, means = by_centre.index.to_numpy(float), (by_centre["sum"] / by_centre["n"]).to_numpy(float)
    return np.interp(size, centres, means), np.interp(at, centres, means)


def spread_prior(s2: np.ndarray, df: np.ndarray, size: np.ndarray | None = None) -> tuple[float, np.ndarray] | None:
    """The distribution the per-point variances s2 (with df degrees of freedom each) are drawn from, as a
    scaled inverse chi-square: prior degrees of freedom d0 and, per point, prior variance s0^2, fitted by
    moments of log s2 (Smyth 2004). With `size` (each point's effect, |mean log ratio|), s0^2 follows a trend
    over it, as limma's trend option does over intensity: large effects vary more from launch to launch than
    small ones. None for fewer than MIN_PRIOR_POINTS usable points."""
    ok = np.isfinite(s2) & (s2 > 0) & (df > 0)
    if ok.sum() < MIN_PRIOR_POINTS:
        return None
    size = np.zeros(len(s2)) if size is None else np.asarray(size, dtype=float)
    d = df[ok]
    e = np.log(s2[ok]) - special.digamma(d / 2) + np.log(d / 2)
    fitted, trend = _trend(e, size[ok], size)
    excess = float(np.var(e - fitted, ddof=1) - np.mean(special.polygamma(1, d / 2)))
    if excess <= 0:
        return MAX_PRIOR_DF, np.exp(trend)
    d0 = min(MAX_PRIOR_DF, 2 * _trigamma_inverse(excess))
    return d0, np.exp(trend + special.digamma(d0 / 2) - np.log(d0 / 2))


def moderate(estimates: list[Estimate], strata: list | None = None) -> list[Estimate]:
    """Paired estimates with their launch-to-launch variance shrunk toward their stratum's (Smyth's empirical
    Bayes moderation, with a trend over the effect size): s2 -> (d0 s0^2 + (n - 1) s2) / (d0 + n - 1) on
    n - 1 + d0 degrees of freedom. Three launches estimate one point's spread badly; hundreds of points of one
    run show how spreads are distributed, and each point borrows that knowledge in proportion to how alike the
    points' spreads are (d0). A point whose spread the prior does not explain (s2 / s0^2 above the OWN_SPREAD
    quantile of F(n - 1, d0)) keeps its own: moderating an outlier toward a quiet family would make it look as
    quiet as the family."""
    keys = strata if strata is not None else [None] * len(estimates)
    out = list(estimates)
    paired = [i for i, e in enumerate(estimates) if e.design != UNPAIRED and e.df > 0 and math.isfinite(e.s2)
              and math.isfinite(e.log_ratio)]
    for key in dict.fromkeys(keys[i] for i in paired):
        members = [i for i in paired if keys[i] == key]
        # a point judged both ways (A ≃ B) is in the family twice, as itself and reversed: fit each once
        unique = list({_spread_key(estimates[i]): i for i in members}.values())
        prior = spread_prior(np.array([estimates[i].s2 for i in unique]),
                             np.array([estimates[i].df for i in unique], dtype=float),
                             np.array([abs(estimates[i].log_ratio) for i in unique]))
        if prior is None:
            continue
        d0, s0 = prior
        at = dict(zip((_spread_key(estimates[i]) for i in unique), s0, strict=True))
        for i in members:
            e = estimates[i]
            s0_i = float(at[_spread_key(e)])
            if e.s2 / s0_i > sps.f.ppf(OWN_SPREAD, e.df, d0):
                out[i] = replace(e, prior=(d0, s0_i))
                continue
            s2 = (d0 * s0_i + e.df * e.s2) / (d0 + e.df)
            se = math.sqrt(s2 / min(e.n_a, e.n_b))
            out[i] = replace(e, se=max(se, e.floor) if math.isfinite(e.floor) else se, df=e.df + d0,
                             prior=(d0, s0_i))
    return out


def _spread_key(e: Estimate) -> tuple:
    """What an estimate and its reverse share."""
    return e.s2, e.df, min(e.n_a, e.n_b), abs(e.log_ratio)


def _launches_to_decide(e: Estimate, threshold: float, alpha: float) -> int | None:
    """About how many more launches (per side) would bring the interval clear of the threshold, with the
    spread seen so far; None beyond MAX_MORE or when the ratio sits on the threshold."""
    n = min(e.n_a, e.n_b)
    distance = abs(e.log_ratio - threshold)
    if n < 2 or not math.isfinite(e.se) or distance == 0:
        return None
    sd = e.se * math.sqrt(n)  # per launch (unpaired: roughly, per side)
    borrowed = max(0.0, e.df - (n - 1)) if e.design != UNPAIRED else 0.0  # moderate()'s prior degrees of freedom
    for k in range(n + 1, n + MAX_MORE + 1):
        if sps.t.ppf(1 - alpha, k - 1 + borrowed) * sd / math.sqrt(k) < distance:
            return k - n
    return None


def _speeds_apart(e: Estimate, level: float) -> bool:
    """Whether the two launch groups of a paired point lie further apart than launch-to-launch noise explains:
    a t test of the gap against the spread inside the groups (moderated with the family's prior where there is
    one), at level / (n - 1) for the widest of the n - 1 gaps having been picked. An unpaired split, or one too
    small to measure the spread inside its groups, always counts."""
    if len(e.split_sizes) != 2:
        return True
    n = sum(e.split_sizes)
    inside = e.split_s2 if math.isfinite(e.split_s2) else 0.0
    df = n - 2
    if e.prior:
        d0, s0 = e.prior
        inside, df = (d0 * s0 + df * inside) / (d0 + df), df + d0
    if df <= 0:
        return True
    gap = abs(e.split_means[0] - e.split_means[1])
    if inside <= 0:
        return gap > 0
    t = gap / math.sqrt(inside * (1 / e.split_sizes[0] + 1 / e.split_sizes[1]))
    return bool(t > sps.t.ppf(1 - level / (2 * (n - 1)), df))


def decide(estimates: list[Estimate], tolerance: float = 0.05, alpha: float = 0.05, looks: int = 1,
           strata: list | None = None) -> list[Verdict]:
    """The verdicts of a family of points judged together (a run): paired spreads moderated per stratum (for
    example per stack: `moderate`), then both one-sided tests of every point against 1 + tolerance, each way
    the two-stage step-up at alpha / looks (`two_stage_adjust`). A verdict needs both: the family's adjusted
    p-value and the point's own interval clear of 1 + tolerance (where most of a family is decided, the
    step-up alone would accept a point whose interval holds the tolerance)."""
    estimates = moderate(estimates, strata)
    threshold = math.log1p(tolerance)
    level = alpha / max(1, looks)
    p_over, p_under = _one_sided(estimates, threshold)
    (q_over, m0_over), (q_under, m0_under) = two_stage_adjust(p_over, level), two_stage_adjust(p_under, level)
    m = int(np.isfinite(p_over).sum())
    over, under = (q_over <= level) & (p_over <= level), (q_under <= level) & (p_under <= level)
    # the level one more decision must reach each way: the step-up's next step, never above the point's own
    next_over = min(level, level / (1 + level) * (int(over.sum()) + 1) / max(1, m0_over))
    next_under = min(level, level / (1 + level) * (int(under.sum()) + 1) / max(1, m0_under))
    out = []
    for e, qo, qu, is_over, is_under in zip(estimates, q_over, q_under, over, under, strict=True):
        low = high = math.nan
        if e.df > 0 and math.isfinite(e.se):
            half = float(sps.t.ppf(1 - level, e.df)) * e.se
            low, high = math.exp(e.log_ratio - half), math.exp(e.log_ratio + half)
        verdict, reason, more = INCONCLUSIVE, "", None
        if e.df <= 0:
            reason = f"too few launches ({min(e.n_a, e.n_b)}: at least 2 per side)"
        elif not (math.isfinite(e.log_ratio) and math.isfinite(e.se)):
            reason = "no finite estimate: a side has no usable time"
        elif is_over:
            verdict = VIOLATED
        elif is_under:
            verdict = PASS
        else:
            more = _launches_to_decide(e, threshold, next_over if e.log_ratio > threshold else next_under)
            if low <= 1 + tolerance <= high:
                reason = f"the interval x{low:.3g} to x{high:.3g} holds 1 + tolerance (x{1 + tolerance:.3g})"
            else:
                reason = (f"the interval x{low:.3g} to x{high:.3g} clears 1 + tolerance, but not with the {m} points "
                          f"of the run judged together (q = {min(qo, qu):.2g})")
            reason += (f": about {more} more launch(es) would decide it" if more else
                       ": too close to the tolerance to decide with more launches")
        if e.split:
            if len({mean > threshold for mean in e.split_means}) > 1 and _speeds_apart(e, level):
                verdict, more = INCONCLUSIVE, None  # each group alone would decide otherwise
                reason = f"bimodal launches that disagree: {e.split}"
            else:
                reason = f"{reason}; launches at another speed: {e.split}" if reason else \
                    f"launches at another speed: {e.split}"
        out.append(Verdict(verdict, e.ratio, low, high, float(qo), e.n_a, e.n_b, e.design, reason, more, e.se,
                           float(e.df)))
    return out


def judge(a: pd.DataFrame, b: pd.DataFrame, samples: str = "medians", tolerance: float = 0.05, alpha: float = 0.05,
          pair_on: str | None = None) -> Verdict:
    """One point judged alone (a family of one)."""
    return decide([estimate(a, b, samples, pair_on)], tolerance, alpha)[0]


def worse(ab: Verdict, ba: Verdict) -> Verdict:
    """`A ≃ B` (each no slower than the other) from its two directions: the worse verdict counts, with the
    ratio A / B."""
    w = ab if RANK[ab.verdict] > RANK[ba.verdict] or (ab.verdict == ba.verdict and ab.ratio >= 1) else ba
    return replace(ab, verdict=w.verdict, p_value=w.p_value, reason=w.reason, more=w.more)


VERDICT_FIELDS = ["verdict", "ratio", "low", "high", "p_value", "n_a", "n_b", "design", "reason", "more", "se_log",
                  "df"]


def verdict_dict(v: Verdict) -> dict:
    """The verdict as table columns (VERDICT_FIELDS)."""
    return {f: getattr(v, f) for f in VERDICT_FIELDS}


def error_rate_text(tolerance: float, alpha: float, looks: int = 1) -> str:
    """What a run's verdicts carry, for reports."""
    per_look = f" (alpha / {looks} at each of {looks} looks)" if looks > 1 else ""
    return (f"PASS and VIOLATED each need a {100 * (1 - 2 * alpha / looks):.4g}% confidence interval of the "
            f"ratio clear of 1 + tolerance (x{1 + tolerance:.3g}); among the run's VIOLATED verdicts, and among "
            f"its PASS verdicts, the expected share of wrong ones is at most {alpha:g}{per_look} "
            "(the two-stage step-up of Benjamini, Krieger and Yekutieli)")


# ---------------------------------------------------------------- what a comparison could have seen

MAX_ADVISED = 1000  # launches per side: beyond this, "more launches would show it" is not promised


def detectable(se, df, tolerance: float, level: float):
    """The smallest ratio whose (1 - 2 level) interval, with this standard error of the log ratio, would lie
    above 1 + tolerance: a change below it could not have been shown (NaN where the launches cannot tell).
    Numbers or arrays alike."""
    se, df = np.asarray(se, dtype=float), np.asarray(df, dtype=float)
    ok = (df > 0) & np.isfinite(se)
    with np.errstate(invalid="ignore"):
        out = np.where(ok, (1 + tolerance) * np.exp(sps.t.ppf(1 - level, np.where(ok, df, 1.0)) * se), math.nan)
    return float(out) if out.ndim == 0 else out


def launches_for(se: float, df: float, n: int, room: float, level: float, df_per_launch: float = 1.0) -> int | None:
    """About how many launches per side would bring the half-width of the (1 - 2 level) interval of a log ratio
    down to `room`, the spread per launch being what n launches showed (the standard error shrinks as
    1 / sqrt(launches), each launch adds df_per_launch degrees of freedom): `room` = log(target / (1 +
    tolerance)) for a change of `target` to be shown, log(1 + tolerance) for no change to be shown the same.
    None where n < 2, room <= 0, or more than MAX_ADVISED launches would be needed."""
    if n < 2 or df <= 0 or not math.isfinite(se) or room <= 0:
        return None
    if se == 0:
        return n

    def enough(k: int) -> bool:  # the half-width shrinks as k grows: bisect
        return float(sps.t.ppf(1 - level, max(1.0, df + (k - n) * df_per_launch))) * se * math.sqrt(n / k) <= room

    if not enough(MAX_ADVISED):
        return None
    lo, hi = 1, MAX_ADVISED  # enough(hi); not known of lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi
