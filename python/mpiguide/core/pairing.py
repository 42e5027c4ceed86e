"""Side A against side B: the one loop behind every guideline verdict, winner
and repair check. Two sets of rows are paired on the values of some key
columns; each pair is then compared by the caller (mpiguide.core.stats)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pandas as pd

from mpiguide.core import stats
from mpiguide.core.suite import Guideline


def select(df: pd.DataFrame, sel: dict[str, object]) -> pd.DataFrame:
    """The rows whose columns have the given values (compared as text, as selectors are written)."""
    mask = pd.Series(True, index=df.index)
    for col, val in sel.items():
        mask &= df[col].astype(str) == str(val)
    return df[mask]


def paired(a: pd.DataFrame, b: pd.DataFrame, keys: list[str]) -> Iterator[tuple[tuple, pd.DataFrame, pd.DataFrame]]:
    """(key values, rows of a, rows of b) for every value of `keys` that both sides have, in sorted order;
    values only one side has are left out. With no keys, the whole sides are one pair."""
    if a.empty or b.empty:
        return
    if not keys:
        yield (), a, b
        return
    groups_b = dict(iter(b.groupby(keys, sort=True)))
    for key, part_a in a.groupby(keys, sort=True):
        part_b = groups_b.get(key)
        if part_b is not None:
            yield (key if isinstance(key, tuple) else (key,)), part_a, part_b


def guideline_verdicts(guidelines: list[Guideline], df: pd.DataFrame, keys: list[str], opts: dict) -> pd.DataFrame:
    """Every `A ⪯ B` guideline on every configuration where both sides were measured, judged together as one
    family (stats.decide): the configuration columns the two sides share, then guideline, statement, a, b and
    stats.VERDICT_FIELDS. opts: the run's analysis options (samples, tolerance, alpha, looks)."""
    rows, estimates = [], []
    for g in guidelines:
        selector_cols = set(g.a) | set(g.b)
        if not selector_cols <= set(df.columns):
            continue
        match = [k for k in keys if k not in selector_cols]
        for key, part_a, part_b in paired(select(df, g.a), select(df, g.b), match):
            row = dict(zip(match, key, strict=True))
            row.update(guideline=g.name, statement=g.text, a=",".join(map(str, g.a.values())),
                       b=",".join(map(str, g.b.values())))
            rows.append(row)
            estimates.append(stats.estimate(part_a, part_b, opts["samples"]))
    for row, v in zip(rows, decide(estimates, opts, [row.get("stack") for row in rows]), strict=True):
        row.update(stats.verdict_dict(v))
    return pd.DataFrame(rows)


def decide(estimates: list[stats.Estimate], opts: dict, strata: list | None = None,
           tolerance: float | None = None) -> list[stats.Verdict]:
    """stats.decide with a run's analysis options (tolerance: another than the run's); strata: per estimate,
    the group whose spreads it shares (its stack)."""
    return stats.decide(estimates, opts["tolerance"] if tolerance is None else tolerance, opts["alpha"],
                        opts.get("looks", 1), strata)


@dataclass(frozen=True)
class Gain:
    """What an alternative saves over native (1 - alternative / native) and its interval, from the verdict of
    `native ⪯ alternative` with the tolerance of a gain threshold: VIOLATED where the alternative is shown to
    save more than the threshold."""

    verdict: stats.Verdict

    @property
    def gain(self) -> float:
        return 1 - 1 / self.verdict.ratio

    @property
    def low(self) -> float:
        return 1 - 1 / self.verdict.low

    @property
    def high(self) -> float:
        return 1 - 1 / self.verdict.high

    @property
    def text(self) -> str:
        return f"saves {self.gain:.0%} ({self.low:.0%} to {self.high:.0%})"


def decide_gains(estimates: list[stats.Estimate], threshold: float, opts: dict, strata: list) -> list[Gain]:
    """Native against the best alternative of each candidate (estimates of native / alternative), judged as one
    family: `native ⪯ alternative` with tolerance 1 / (1 - threshold) - 1, so that a tuning profile is written
    from decided gains only (0.1: the alternative takes 10% less time)."""
    return [Gain(v) for v in decide(estimates, opts, strata, 1 / (1 - threshold) - 1)]
