"""`mpiguide compare BASE NEW`: two runs of one job (two versions of an MPI
library, before and after a change) side by side, for a maintainer's CI.

Two views, both from the runs' own data and the statistics of mpiguide.core.stats:

- guideline points: every verdict the suite computes (Suite.verdict_points),
  matched by stack pair, guideline and point. A point changed only where both
  runs decided it: newly violated (PASS in BASE, or not measured there; VIOLATED
  in NEW), fixed (VIOLATED, then PASS), still violated, passing; a point either
  run left INCONCLUSIVE is undecided, never a change;
- configurations: every configuration measured in both runs, NEW against BASE.
  A whole run that is faster or slower is one fact: the run-level shift (the
  mean log ratio over the configurations, per round of launches) is estimated
  once, with its interval, and judged against the tolerance; each
  configuration is judged on its change beyond that shift, all configurations
  of the comparison as one family (the two-stage step-up of Benjamini, Krieger
  and Yekutieli): slower, faster, same (shown within the tolerance both ways)
  or unclear.

Runs measured apart are compared unpaired (launches of one run against the
other's). The robust path for CI is one run holding both stacks (BASE and NEW
registered as two stacks, interleaved round by round in a random order): then
round i of one stack is paired with round i of the other, so that what the
machine does in a round cancels.

Stacks are paired by name, or the single stack of each run with each other
(an MPICH 4 run against an MPICH 5 run), or as `--stacks BASE:NEW,...` says;
BASE and NEW may be one run holding both stacks."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree as ET

import numpy as np
import pandas as pd

from mpiguide.core import stats
from mpiguide.core.document import Document, Heatmap, fields, write_csvs
from mpiguide.core.errors import MpiguideError
from mpiguide.core.measurements import NOT_MEASURED, Measured, stack_versions
from mpiguide.core.runner import RunDir
from mpiguide.core.suite import Suite

FIXED, STILL, NEW, PASSING, UNDECIDED, BASE_ONLY, NEW_ONLY = (
    "fixed", "still violated", "newly violated", "passing", "undecided", "only in base", "only in new")
VIOLATED_UNCHANGED, PASSES_UNCHANGED = "violated in new, no change shown", "passes in new, no change shown"
STATUSES = (NEW, STILL, VIOLATED_UNCHANGED, FIXED, PASSES_UNCHANGED, PASSING, UNDECIDED, BASE_ONLY, NEW_ONLY)
SLOWER, FASTER, SAME, UNCLEAR = "slower", "faster", "same", "unclear"
UP, DOWN = "up", "down"  # a point's ratio A / B, NEW against BASE (or SAME, UNCLEAR)
FAIL_ON = {"regression": "NEW significantly slower: the whole run, or a configuration beyond the run's shift",
           "violation": "a guideline point newly violated in NEW: VIOLATED there, and its ratio shown changed"}
POINT_RESULT = ["base_stack", "new_stack", "guideline", "point", "base_verdict", "new_verdict", "base_factor",
                "new_factor", "new_p_value", "change_ratio", "change_low", "change_high", "change_p_value",
                "change", "detectable", "status"]
CONFIG_RESULT = ["base_stack", "new_stack", "config", "base_s", "new_s", "ratio", "beyond_shift", "low", "high",
                 "p_value", "design", "change", "detectable", "rounds", "se_log", "df"]
SHIFT_RESULT = ["base_stack", "new_stack", "configurations", "rounds", "shift", "low", "high", "p_value", "design",
                "change", "reason"]


@dataclass
class Comparison:
    job: str
    pairs: list[tuple[str, str]]
    points: pd.DataFrame  # POINT_RESULT
    configs: pd.DataFrame  # CONFIG_RESULT
    shifts: pd.DataFrame  # SHIFT_RESULT: one row per stack pair
    tolerance: float
    alpha: float
    notes: list[str] = field(default_factory=list)
    looks: int = 1
    detect: float = math.nan  # the change the summary says how many launches would show (default_detect)

    @property
    def level(self) -> float:
        """Each one-sided test's level: the intervals are (1 - 2 level)."""
        return self.alpha / max(1, self.looks)

    def newly_violated(self) -> pd.Series:
        """Points VIOLATED in NEW whose ratio is shown changed since BASE (or that BASE did not measure)."""
        return self.points["status"] == NEW

    def failures(self, fail_on: list[str]) -> list[str]:
        """What makes `--fail-on` fail, one line per kind."""
        out = []
        if "regression" in fail_on:
            for s in self.shifts[self.shifts["change"] == SLOWER].itertuples():
                out.append(f"{s.new_stack} is slower than {s.base_stack} as a whole: x{s.shift:.3f} "
                           f"(x{s.low:.3f} to x{s.high:.3f})")
            if n := int((self.configs["change"] == SLOWER).sum()):
                out.append(f"{n} configuration(s) significantly slower in NEW beyond the run's shift")
        if "violation" in fail_on and (n := int(self.newly_violated().sum())):
            out.append(f"{n} guideline point(s) newly violated in NEW")
        return out


def parse_fail_on(text: str | None) -> list[str]:
    kinds = [k.strip() for k in (text or "").split(",") if k.strip()]
    bad = [k for k in kinds if k not in FAIL_ON]
    if bad:
        raise MpiguideError(f"--fail-on {text}: unknown {', '.join(bad)} (choose from {', '.join(FAIL_ON)}, "
                            "comma-separated)")
    return kinds


def stack_pairs(base: RunDir, new: RunDir, spec: str | None) -> list[tuple[str, str]]:
    """(base stack, new stack) pairs: from spec "A:B,C:D", else the stacks both runs have, else the one stack
    of each run."""
    b_stacks, n_stacks = base.meta["stacks_order"], new.meta["stacks_order"]
    if spec:
        pairs = []
        for item in spec.split(","):
            a, sep, b = item.strip().partition(":")
            if not sep or not a or not b:
                raise MpiguideError(f"--stacks {spec}: '{item}' is not BASE_STACK:NEW_STACK")
            if a not in b_stacks:
                raise MpiguideError(f"--stacks {spec}: BASE ({base.path}) has no stack '{a}' (it has "
                                    f"{', '.join(b_stacks)})")
            if b not in n_stacks:
                raise MpiguideError(f"--stacks {spec}: NEW ({new.path}) has no stack '{b}' (it has "
                                    f"{', '.join(n_stacks)})")
            pairs.append((a, b))
        return pairs
    common = [s for s in b_stacks if s in n_stacks]
    if common and base.path.resolve() != new.path.resolve():
        return [(s, s) for s in common]
    if len(b_stacks) == 1 and len(n_stacks) == 1 and base.path.resolve() != new.path.resolve():
        return [(b_stacks[0], n_stacks[0])]
    raise MpiguideError(f"say which stacks to compare: --stacks BASE_STACK:NEW_STACK (BASE has "
                        f"{', '.join(b_stacks)}; NEW has {', '.join(n_stacks)})")


def _status(bv: str | None, nv: str | None, change: str) -> str:
    """A point's status from its BASE and NEW verdicts (None: not measured there) and whether its ratio changed
    (UP or DOWN: shown beyond the tolerance; a verdict that flips while the ratio is not shown to change is no
    change)."""
    if nv is None:
        return BASE_ONLY
    if bv is None:
        return NEW if nv == stats.VIOLATED else NEW_ONLY
    changed = change in (UP, DOWN)
    if nv == stats.VIOLATED:
        if bv == stats.VIOLATED:
            return STILL
        return NEW if changed else VIOLATED_UNCHANGED
    if stats.INCONCLUSIVE in (bv, nv):
        return UNDECIDED
    if bv == stats.VIOLATED:
        return FIXED if changed else PASSES_UNCHANGED
    return PASSING


def _point_changes(both: pd.DataFrame) -> list[stats.Estimate]:
    """Per point measured in both runs (columns ratio, se_log and df of each, suffixed _b and _n): NEW's log ratio
    against BASE's, two independent estimates, their variances added, with Welch-Satterthwaite degrees of
    freedom."""
    vb, vn = both["se_log_b"].to_numpy(float) ** 2, both["se_log_n"].to_numpy(float) ** 2
    dfb, dfn = both["df_b"].to_numpy(float), both["df_n"].to_numpy(float)
    d = np.log(both["ratio_n"].to_numpy(float)) - np.log(both["ratio_b"].to_numpy(float))
    with np.errstate(divide="ignore", invalid="ignore"):
        parts = vb ** 2 / dfb + vn ** 2 / dfn
        df = np.where(parts > 0, (vb + vn) ** 2 / parts, stats.MAX_PRIOR_DF)
    df = np.where((dfb > 0) & (dfn > 0), np.minimum(df, stats.MAX_PRIOR_DF), 0.0)
    return [stats.Estimate(float(x), math.sqrt(v), float(f), 1, 1, stats.UNPAIRED) for x, v, f in zip(d, vb + vn, df,
                                                                                                   strict=True)]


def compare_points(base: pd.DataFrame, new: pd.DataFrame, pairs: list[tuple[str, str]], opts: dict) -> pd.DataFrame:
    """Every guideline point of either side, by stack pair (POINT_RESULT). A point measured in both runs is
    tested for a change of its ratio: NEW's against BASE's, beyond the tolerance both ways, with the variance of
    both estimates, all points of the comparison as one family (the false discovery rate controlled as for
    every verdict). Two runs of one library share no change, so there the family is all null and the step-up
    asks each point for a p-value below alpha / (points): the few points per run that the false discovery
    control of a run's verdicts lets flip between PASS and VIOLATED are no change."""
    key = ["guideline", "point"]
    tol, alpha, looks = opts["tolerance"], opts["alpha"], opts.get("looks", 1)
    cols = [*key, "verdict", "factor", "p_value", "ratio", "se_log", "df"]
    parts = []
    for b_stack, n_stack in pairs:
        b = base[base["stack"] == b_stack].drop_duplicates(key)[cols]
        n = new[new["stack"] == n_stack].drop_duplicates(key)[cols]
        parts.append(b.merge(n, on=key, how="outer", suffixes=("_b", "_n"), indicator=True, sort=False)
                     .assign(base_stack=b_stack, new_stack=n_stack))
    if not parts:
        return pd.DataFrame(columns=POINT_RESULT)
    m = pd.concat(parts, ignore_index=True)
    m = m.assign(base_verdict=m["verdict_b"].fillna(""), new_verdict=m["verdict_n"].fillna(""),
                 base_factor=m["factor_b"], new_factor=m["factor_n"], new_p_value=m["p_value_n"],
                 change_ratio=math.nan, change_low=math.nan, change_high=math.nan, change_p_value=math.nan,
                 change="", detectable=math.nan)
    both = (m["_merge"] == "both").to_numpy()
    estimates = _point_changes(m[both])
    level = alpha / max(1, looks)
    found = []
    for _, up, down in _both_ways(estimates, tol, alpha, looks):
        change = _change(up, down, UP, DOWN)
        found.append((up.ratio, up.low, up.high, down.p_value if change == DOWN else up.p_value, change))
    if found:
        cols = ["change_ratio", "change_low", "change_high", "change_p_value", "change"]
        m.loc[both, cols] = pd.DataFrame(found, columns=cols, index=m.index[both])
        m.loc[both, "detectable"] = stats.detectable(np.array([e.se for e in estimates]),
                                                     np.array([e.df for e in estimates]), tol, level)
    m["status"] = [_status(bv or None, nv or None, ch) for bv, nv, ch in
                   zip(m["base_verdict"], m["new_verdict"], m["change"], strict=True)]
    return m[POINT_RESULT]


def _config_label(keys: list[str], values: tuple | object) -> str:
    values = values if isinstance(values, tuple) else (values,)  # one key: pandas gives the bare value
    return " ".join(f"{k}={v}" for k, v in zip(keys, values, strict=True))


@dataclass
class _Side:
    """One stack's configurations in one run, per round of launches: the log medians (configurations x rounds)
    and their variances from the repetitions."""

    logs: pd.DataFrame
    var: pd.DataFrame

    @classmethod
    def of(cls, rows: pd.DataFrame, keys: list[str]) -> _Side:
        stats_ = {k: stats.per_launch(part, "launch") for k, part in rows.groupby(keys, sort=True)}
        frame = pd.concat(stats_, names=[*keys, "launch"]) if stats_ else pd.DataFrame()
        if frame.empty:
            return cls(pd.DataFrame(), pd.DataFrame())
        return cls(np.log(frame["median_s"]).unstack("launch"), frame["var_log"].unstack("launch"))

    def centered(self, common: list) -> tuple[pd.DataFrame, pd.Series]:
        """The log medians of the configurations both runs have, less what their round of launches did to every
        configuration alike, and those round levels. A round's level is the mean over its configurations of
        their deviation from their own mean, plus the mean of all: a round that lacks some configurations (an
        extra adaptive round, a failed launch) is not mistaken for a slow or fast one."""
        logs = self.logs.loc[common]
        own = logs.mean(axis=1)
        rounds = logs.sub(own, axis=0).mean(axis=0) + own.mean()
        return logs - rounds, rounds


def compare_configs(base: pd.DataFrame, new: pd.DataFrame, pairs: list[tuple[str, str]], opts: dict,
                    same_run: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every configuration measured in both runs, NEW against BASE beyond the run-level shift (CONFIG_RESULT),
    and the shift of each stack pair (SHIFT_RESULT). A round of launches moves every configuration of a stack
    alike (the machine's state): the shift is judged on the rounds' means (NEW's rounds against BASE's, paired
    round by round when both stacks are of one run), and each configuration on its deviations from its round's
    mean, where round effects and the shift have cancelled."""
    if base.empty or new.empty:
        return pd.DataFrame(columns=CONFIG_RESULT), pd.DataFrame(columns=SHIFT_RESULT)
    keys = [c for c in base.columns if c in new.columns and c not in (*NOT_MEASURED, "stack")]
    tol, alpha, looks = opts["tolerance"], opts["alpha"], opts.get("looks", 1)
    rows, estimates, strata, shift_rows, shift_estimates = [], [], [], [], []
    design = stats.PAIRED_ROUND if same_run else stats.UNPAIRED
    for b_stack, n_stack in pairs:
        b = _Side.of(base[base["stack"] == b_stack], keys)
        n = _Side.of(new[new["stack"] == n_stack], keys)
        if b.logs.empty or n.logs.empty:
            continue
        common = [k for k in b.logs.index if k in n.logs.index]
        if not common:
            continue
        cb, rb = b.centered(common)
        cn, rn = n.centered(common)
        shift = stats.from_medians(np.exp(rn), np.exp(rb), stats.PAIRED_ROUND) if same_run else \
            stats.unpaired_estimate(rn.to_numpy(float), rb.to_numpy(float), [str(i) for i in rn.index],
                                    [str(i) for i in rb.index])
        shift_estimates.append(shift)
        shift_rows.append(dict(base_stack=b_stack, new_stack=n_stack, configurations=len(common),
                               rounds=min(shift.n_a, shift.n_b)))
        for k in common:
            xn, xb = cn.loc[k].dropna(), cb.loc[k].dropna()
            vn, vb = n.var.loc[k, xn.index].to_numpy(float), b.var.loc[k, xb.index].to_numpy(float)
            if same_run:
                both = xn.index.intersection(xb.index)
                e = stats.paired_estimate((xn[both] - xb[both]).to_numpy(float), [str(i) for i in both], design,
                                          vn[xn.index.get_indexer(both)] + vb[xb.index.get_indexer(both)])
            else:
                e = stats.unpaired_estimate(xn.to_numpy(float), xb.to_numpy(float), [str(i) for i in xn.index],
                                            [str(i) for i in xb.index], (vn, vb))
            estimates.append(e)
            strata.append((b_stack, n_stack))
            raw = float(np.exp(n.logs.loc[k].mean() - b.logs.loc[k].mean()))
            rows.append(dict(base_stack=b_stack, new_stack=n_stack, config=_config_label(keys, k),
                             base_s=float(np.exp(b.logs.loc[k].mean())), new_s=float(np.exp(n.logs.loc[k].mean())),
                             ratio=raw, design=design))
    level = alpha / max(1, looks)
    for i, up, down in _both_ways(estimates, tol, alpha, looks, strata):
        change = _change(up, down)
        rows[i].update(beyond_shift=up.ratio, low=up.low, high=up.high, change=change,
                       p_value=down.p_value if change == FASTER else up.p_value,
                       detectable=stats.detectable(up.se_log, up.df, tol, level), rounds=min(up.n_a, up.n_b),
                       se_log=up.se_log, df=up.df)
    for i, up, down in _both_ways(shift_estimates, tol, alpha, looks):
        change = _change(up, down)
        shift_rows[i].update(shift=up.ratio, low=up.low, high=up.high, design=up.design, change=change,
                             p_value=down.p_value if change == FASTER else up.p_value,
                             reason=up.reason if change == UNCLEAR else "")
    return pd.DataFrame(rows, columns=CONFIG_RESULT), pd.DataFrame(shift_rows, columns=SHIFT_RESULT)


def _both_ways(estimates: list[stats.Estimate], tol: float, alpha: float, looks: int, strata: list | None = None):
    """(index, NEW ⪯ BASE verdict, BASE ⪯ NEW verdict) of every estimate, the family judged together (strata:
    per estimate, the stack pair whose spreads it shares)."""
    verdicts = stats.decide([x for e in estimates for x in (e, e.reversed())], tol, alpha, looks,
                            None if strata is None else [s for s in strata for _ in (0, 1)])
    for i in range(len(estimates)):
        yield i, verdicts[2 * i], verdicts[2 * i + 1]


def _change(slower: stats.Verdict, faster: stats.Verdict, up: str = SLOWER, down: str = FASTER) -> str:
    """NEW against BASE from `NEW ⪯ BASE` (VIOLATED: slower, or a ratio up) and `BASE ⪯ NEW` (VIOLATED: faster,
    or down)."""
    if slower.verdict == stats.VIOLATED:
        return up
    if faster.verdict == stats.VIOLATED:
        return down
    return SAME if slower.verdict == faster.verdict == stats.PASS else UNCLEAR


def point_summary(points: pd.DataFrame) -> pd.DataFrame:
    """Per stack pair and guideline: how many points have each status."""
    if points.empty:
        return pd.DataFrame(columns=["pair", "guideline", *STATUSES]).set_index(["pair", "guideline"])
    pair = points["base_stack"] + " -> " + points["new_stack"]
    counts = points.assign(pair=pair).groupby(["pair", "guideline", "status"], sort=False).size()
    out = counts.unstack("status", fill_value=0)
    return out.reindex(columns=[s for s in STATUSES if s in out.columns])


def default_detect(tolerance: float) -> float:
    """The change a comparison's advice aims at unless --detect says: twice the tolerance (x1.1 at 5%)."""
    return 1 + 2 * tolerance


def _typical(part: pd.DataFrame) -> pd.Series | None:
    """The configuration whose detectable change is the median of its stack pair's (None: none has one)."""
    ok = part[np.isfinite(part["detectable"].to_numpy(float))]
    if ok.empty:
        return None
    return ok.sort_values("detectable", kind="stable").iloc[(len(ok) - 1) // 2]


def config_summary(c: Comparison) -> pd.DataFrame:
    """Per stack pair: the run-level shift, then the configurations by change beyond it, the NEW/BASE ratios
    (geometric mean, range), and what the comparison could have seen: the median over the configurations of the
    smallest change it would have shown (`detectable`), and for that typical configuration about how many
    launches per run would show a change of c.detect, and show no change "same"."""
    rows = []
    shifts = c.shifts
    shift = shifts.set_index(["base_stack", "new_stack"]) if not shifts.empty else pd.DataFrame()
    for (b, n), part in c.configs.groupby(["base_stack", "new_stack"], sort=False):
        counts = part["change"].value_counts()
        r = part["ratio"].to_numpy(dtype=float)
        s = shift.loc[(b, n)] if (b, n) in shift.index else None
        typical = _typical(part)
        advice = {"detectable_median": math.nan, "rounds": math.nan, "launches_to_detect": None,
                  "launches_for_same": None}
        if typical is not None:
            rounds = int(typical["rounds"])
            per = 1.0 if typical["design"] == stats.PAIRED_ROUND else 2.0  # Welch: about 2 per launch of each
            need = [stats.launches_for(float(typical["se_log"]), float(typical["df"]), rounds, room, c.level, per)
                    for room in (math.log(c.detect / (1 + c.tolerance)), math.log1p(c.tolerance))]
            advice = {"detectable_median": float(typical["detectable"]), "rounds": rounds,
                      "launches_to_detect": need[0], "launches_for_same": need[1]}
        rows.append({"pair": f"{b} -> {n}", "configurations": len(part),
                     "shift": s["shift"] if s is not None else math.nan,
                     "shift_low": s["low"] if s is not None else math.nan,
                     "shift_high": s["high"] if s is not None else math.nan,
                     "shift_change": s["change"] if s is not None else "",
                     **{k: int(counts.get(k, 0)) for k in (SLOWER, FASTER, SAME, UNCLEAR)},
                     "ratio_geomean": float(np.exp(np.log(r).mean())) if len(r) else math.nan,
                     "ratio_min": float(r.min()) if len(r) else math.nan,
                     "ratio_max": float(r.max()) if len(r) else math.nan, **advice})
    return pd.DataFrame(rows).set_index("pair") if rows else pd.DataFrame()


def advice_line(c: Comparison, pair: str, row: pd.Series) -> str:
    """What the comparison of a stack pair could have seen, and how many launches would see more."""
    if not math.isfinite(row["detectable_median"]):
        return f"{pair}: no configuration has launches enough to show a change (at least 2 per run)"

    def launches(k: object) -> str:
        return f"about {int(k)} launches per run" if k is not None and not pd.isna(k) else \
            f"more than {stats.MAX_ADVISED} launches per run"

    return (f"{pair}: changes below x{row['detectable_median']:.3g} could not be shown at half of the "
            f"configurations with {int(row['rounds'])} launch(es) per run; {launches(row['launches_to_detect'])} "
            f"would show x{c.detect:.3g}, {launches(row['launches_for_same'])} would show no change as the same "
            f"(within x{1 + c.tolerance:.3g}): --runs N, or --until-decided --max-runs N")


def compare(suite: Suite, base: RunDir, new: RunDir, pairs_spec: str | None, tolerance: float | None,
            alpha: float | None, detect: float | None = None) -> Comparison:
    if base.job != new.job:
        raise MpiguideError(f"BASE ({base.path}) is a '{base.job}' run and NEW ({new.path}) a '{new.job}' run: "
                            "compare runs of one job")
    pairs = stack_pairs(base, new, pairs_spec)
    opts = dict(new.meta["analysis"])
    opts.update({k: v for k, v in (("tolerance", tolerance), ("alpha", alpha)) if v is not None})
    detect = default_detect(opts["tolerance"]) if detect is None else detect
    if not detect > 1 + opts["tolerance"]:
        raise MpiguideError(f"bad --detect {detect}: a change to aim at, such as 1.1, above 1 + the tolerance "
                            f"(x{1 + opts['tolerance']:.3g}): smaller changes are never shown")
    notes = []
    b_pts, n_pts = suite.verdict_points(base), suite.verdict_points(new)
    if b_pts is None:
        notes.append(f"the {base.job} suite computes no guideline verdicts: configurations only")
        points = pd.DataFrame(columns=POINT_RESULT)
    else:
        points = compare_points(b_pts, n_pts, pairs, opts)
    same_run = base.path.resolve() == new.path.resolve()
    if not same_run:
        notes.append("BASE and NEW are separate runs: their launches are compared unpaired, and a change of the "
                     "machine between the runs counts as a change of the library; measure both as two stacks of "
                     "one run to pair them round by round (docs/compare.md)")
    b_df, _ = Measured.load(base).tables()
    n_df, _ = Measured.load(new).tables()
    configs, shifts = compare_configs(b_df, n_df, pairs, opts, same_run)
    return Comparison(base.job, pairs, points, configs, shifts, opts["tolerance"], opts["alpha"], notes,
                      opts.get("looks", 1), detect)


def write_junit(c: Comparison, path: Path) -> None:
    """One test case per guideline point; a point violated in NEW fails (type newly-violated, still-violated,
    violated-no-change where its ratio is not shown changed since BASE, or violated where BASE could not tell,
    with its factor and adjusted p-value); one measured in BASE only is skipped."""
    root = ET.Element("testsuites", name=f"mpiguide compare {c.job}")
    for (b, n, guideline), part in c.points.groupby(["base_stack", "new_stack", "guideline"], sort=False):
        suite = ET.SubElement(root, "testsuite", name=f"{c.job} {n} {guideline}", tests=str(len(part)),
                              failures=str(int(part["new_verdict"].eq(stats.VIOLATED).sum())),
                              skipped=str(int((part["status"] == BASE_ONLY).sum())))
        for p in part.itertuples():
            case = ET.SubElement(suite, "testcase", classname=f"mpiguide.{c.job}.{n}.{guideline}", name=p.point)
            if p.status == BASE_ONLY:
                ET.SubElement(case, "skipped", message=f"measured in BASE ({b}) only")
            elif p.new_verdict == stats.VIOLATED:
                kind = {STILL: "still-violated", NEW: "newly-violated",
                        VIOLATED_UNCHANGED: "violated-no-change"}.get(p.status, "violated")
                msg = (f"{p.status}: factor x{p.new_factor:.3g}, q={p.new_p_value:.3g} (BASE {b}: "
                       f"{p.base_verdict or 'not measured'}"
                       + (f", x{p.base_factor:.3g})" if not math.isnan(p.base_factor) else ")"))
                ET.SubElement(case, "failure", type=kind, message=msg).text = msg
    ET.indent(root)
    try:
        ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    except OSError as exc:
        raise MpiguideError(f"cannot write the JUnit file {path}: {exc.strerror}") from exc


STATUS_COLORS = ((NEW, "#f4b6b6"), (STILL, "#f6cf9a"), (VIOLATED_UNCHANGED, "#f8e0c4"), (FIXED, "#9fdc9f"),
                 (PASSES_UNCHANGED, "#cdeccd"), (PASSING, "#dff3df"), (UNDECIDED, "#f6e7a8"), (NEW_ONLY, "#e6e6e6"),
                 (BASE_ONLY, "#f2f2f2"))
SHOWN = (NEW, STILL, VIOLATED_UNCHANGED, FIXED, PASSES_UNCHANGED, UNDECIDED)  # counted in a heat map cell


def status_heatmap(c: Comparison) -> Heatmap:
    """Guideline x stack pair: the most pressing status (newly violated first), how many points have it."""
    p = c.points.assign(pair=c.points["base_stack"] + " -> " + c.points["new_stack"])
    rank = {s: len(STATUSES) - i for i, s in enumerate(STATUSES)}
    cells = []
    for (guideline, pair), part in p.groupby(["guideline", "pair"], sort=True):
        worst = max(part["status"], key=rank.get)
        hit = part[part["status"] == worst]
        n = part["status"].value_counts()
        cells.append(dict(guideline=guideline, pair=pair, verdict=worst, count=len(hit), points=len(part),
                          factor=hit["new_factor"].max(),
                          counts=", ".join(f"{int(n[s])} {s}" for s in SHOWN if n.get(s))))
    return Heatmap(pd.DataFrame(cells, columns=["guideline", "pair", "verdict", "count", "points", "factor", "counts"]),
                   ["guideline"], ["pair"],
                   "Per guideline and stack pair, coloured by the most pressing status of its points (newly "
                   "violated, still violated, violated with no change shown, fixed, ...); the text counts the "
                   "points that changed, are violated or are undecided (INCONCLUSIVE in a run), of all.",
                   colors=STATUS_COLORS, text=lambda x: f"{x.counts or 'all passing'} (of {x.points})")


def write_report(c: Comparison, base: RunDir, new: RunDir, fail_on: list[str], out: Path) -> Path:
    summary = config_summary(c)
    write_csvs(out, {"points": c.points, "configurations": c.configs, "shifts": c.shifts,
                     "point_summary": point_summary(c.points), "configuration_summary": summary},
               keep_index=("point_summary", "configuration_summary"))
    doc = Document(f"mpiguide compare: {c.job}")
    doc.heatmap(status_heatmap(c))
    doc.section("Runs", fields({
        "BASE": f"{base.path} ({base.meta['run_id']})", "NEW": f"{new.path} ({new.meta['run_id']})",
        "stack pairs": ", ".join(f"{b} -> {n}" for b, n in c.pairs),
        "BASE libraries": "; ".join(f"{b}: {stack_versions(base).get(b, '?')}" for b, _ in c.pairs),
        "NEW libraries": "; ".join(f"{n}: {stack_versions(new).get(n, '?')}" for _, n in c.pairs),
        "configurations": "NEW against BASE per round of launches, beyond the run-level shift, both ways, all "
                          "configurations as one family: " + stats.error_rate_text(c.tolerance, c.alpha, c.looks),
        "points": "a point's ratio changed where NEW's is shown beyond the tolerance from BASE's, with the noise of "
                  "both runs and the run-to-run spread, all points as one family; newly violated: VIOLATED in NEW "
                  "and changed; fixed: VIOLATED in BASE, PASS in NEW and changed; a verdict that flips without a "
                  "change shown is no change; INCONCLUSIVE on either side: undecided",
        "what it could see": "; ".join(advice_line(c, pair, row) for pair, row in summary.iterrows()) or "-",
        "fail on": ", ".join(fail_on) or "nothing (exit 0)", **({"notes": "; ".join(c.notes)} if c.notes else {})}))
    doc.section("Guideline points per stack pair and guideline", point_summary(c.points))
    doc.section("Run-level shift and configurations per stack pair", summary,
                note="shift: NEW / BASE over the whole run (the mean over configurations, per round), with its "
                     "interval and its change; slower / faster: a configuration's change beyond the shift, shown "
                     "larger than the tolerance; same: shown within it both ways; ratio = NEW / BASE time; "
                     "detectable_median: the smallest change the comparison could have shown, the median over the "
                     "configurations; launches_to_detect, launches_for_same: about how many launches per run "
                     f"would show a change of x{c.detect:.3g}, and no change as the same, at the median "
                     "configuration.")
    for title, status in (("Newly violated", NEW), ("Violated in NEW, no change shown", VIOLATED_UNCHANGED),
                          ("Fixed", FIXED), ("Still violated", STILL)):
        part = c.points[c.points["status"] == status]
        doc.section(f"{title} guideline points ({len(part)})", part.set_index(["base_stack", "new_stack"]))
    for title, change in (("slower", SLOWER), ("faster", FASTER)):
        part = c.configs[c.configs["change"] == change].sort_values("beyond_shift", ascending=change == FASTER)
        doc.section(f"Configurations {title} in NEW beyond the run's shift ({len(part)})",
                    part.set_index(["base_stack", "new_stack"]))
    return doc.write(out)


def console_lines(c: Comparison) -> list[str]:
    lines = []
    for (b, n), part in c.points.groupby(["base_stack", "new_stack"], sort=False):
        counts = part["status"].value_counts()
        lines.append(f"{b} -> {n}: guideline points: " + ", ".join(f"{s} {int(counts.get(s, 0))}" for s in
                                                                    (NEW, STILL, FIXED, PASSING, UNDECIDED))
                     + "".join(f", {s} {int(counts[s])}" for s in
                               (VIOLATED_UNCHANGED, PASSES_UNCHANGED, BASE_ONLY, NEW_ONLY) if counts.get(s)))
    for pair, row in config_summary(c).iterrows():
        n = {k: int(row[k]) for k in ("configurations", SLOWER, FASTER, SAME, UNCLEAR)}
        lines.append(f"{pair}: run-level shift NEW/BASE x{row['shift']:.3f} (x{row['shift_low']:.3f} to "
                     f"x{row['shift_high']:.3f}): {row['shift_change']}; {n['configurations']} configuration(s) "
                     f"beyond it: slower {n[SLOWER]}, faster {n[FASTER]}, same {n[SAME]}, unclear {n[UNCLEAR]}; "
                     f"NEW/BASE x{row['ratio_min']:.3f} to x{row['ratio_max']:.3f}")
        lines.append(advice_line(c, pair, row))
    worst = c.points[c.newly_violated()].sort_values("new_factor", ascending=False).head(5)
    for p in worst.itertuples():
        lines.append(f"  newly violated: {p.new_stack} {p.guideline} {p.point}: x{p.new_factor:.2f} "
                     f"(q={p.new_p_value:.2g}; BASE {p.base_verdict or 'not measured'}"
                     + (f", ratio x{p.change_ratio:.2f} of BASE's)" if not pd.isna(p.change_ratio) else ")"))
    return lines
