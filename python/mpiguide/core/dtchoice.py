"""The datatype strategies libmpiguide-tune should take, from measurements of each strategy (`mpiguide ddt tune`
on the expectation tests' layouts, `mpiguide app tune` on an application's own calls), and the datatype
profiles that say so (docs/tuning.md, "Datatype profiles").

Choices are made per group of configurations the library cannot tell apart: the same operation, processes
and message bytes, and types of the same normalized shape and mean block bytes (mg_dt_mean_block; several
types share them). A strategy is chosen for the group when, over the group's configurations together, the
native call is shown slower than it by more than the threshold: the per-launch totals' ratio, its interval
clear of the threshold, the run's groups judged as one family (mpiguide.core.stats), so a profile is written
from decided gains only."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import pandas as pd

from mpiguide.core import stats
from mpiguide.core.pairing import decide_gains
from mpiguide.core.tuning import PROFILE_HEADER

NATIVE, NORMALIZED, PACK = "native", "normalized", "pack"
ANY = "any"
# the blocking v and w forms and neighbourhood collectives, whose datatype sides a record cannot rebuild
# (their counts and types per process), by the datatype profiles' name of their operation
VW_OPERATIONS = {op: op[4:].lower() for op in (
    "MPI_Gatherv", "MPI_Scatterv", "MPI_Allgatherv", "MPI_Alltoallv", "MPI_Alltoallw", "MPI_Neighbor_allgather",
    "MPI_Neighbor_allgatherv", "MPI_Neighbor_alltoall", "MPI_Neighbor_alltoallv", "MPI_Neighbor_alltoallw")}
MAX_BYTES = 2**63 - 1  # the largest MPI_Count: "every larger size" in a profile's last range
NO_BLOCK = -1  # the block of a configuration whose mean block is not known (a run older than the note)
GROUP = ["stack", "pattern", "procs", "msize"]  # what a profile rule sees, besides the shape
CHOICE_COLUMNS = [*GROUP, "shape", "block", "configs", "strategy", "native_s", "best", "best_s", "gain", "low",
                  "high", "p_value", "decision"]


@dataclass(frozen=True)
class Pick:
    strategy: str
    configs: int
    native_s: float  # mean over launches of the group's total time, natively
    best: str  # the fastest candidate
    best_s: float
    gain: float  # 1 - best / native
    low: float  # the gain's confidence interval
    high: float
    p_value: float
    decision: str


@dataclass(frozen=True)
class Candidate:
    """A group of configurations before its family is judged: its fastest strategy and, where that is not
    native, the per-launch totals of native against it (paired: the strategies share every launch)."""

    configs: int
    native_s: float
    best: str
    best_s: float
    estimate: stats.Estimate | None  # None: nothing to judge (native is fastest, or not measured in full)
    note: str = ""


def candidate(part: pd.DataFrame, candidates: tuple[str, ...], config: list[str]) -> Candidate:
    """The group's candidate (rows: configuration x launch, a configuration keyed by the columns `config`):
    the strategy with the least total time over the launches that measured all of its configurations.
    Candidates missing for a configuration of the group are not considered."""
    configs = part.groupby(config, sort=False).ngroups
    usable = [s for s in candidates if s == NATIVE or part.groupby(config, sort=False)[s].count().gt(0).all()]
    rows = part.dropna(subset=usable)
    complete = rows.groupby("launch")["launch"].transform("size") == configs  # launches measuring all of it
    totals = rows[complete].groupby("launch")[usable].sum()
    if totals.empty:
        return Candidate(configs, math.nan, NATIVE, math.nan, None, "not measured in full")
    means = totals.mean()
    best = str(means.idxmin())
    native_s, best_s = float(means[NATIVE]), float(means[best])
    if best == NATIVE:
        return Candidate(configs, native_s, NATIVE, best_s, None, "native is fastest")
    return Candidate(configs, native_s, best, best_s, stats.from_medians(totals[NATIVE], totals[best]))


def decide_picks(cands: list[Candidate], threshold: float, opts: dict, stacks: list[str]) -> list[Pick]:
    """The candidates (of the given stacks) judged as one family: a strategy is taken where native is shown
    slower than it by more than the threshold (`native ⪯ best` VIOLATED with tolerance 1 / (1 - threshold) - 1),
    so that profiles are written from decided gains only."""
    judged = [(c, s) for c, s in zip(cands, stacks, strict=True) if c.estimate is not None]
    gains = iter(decide_gains([c.estimate for c, _ in judged], threshold, opts, [s for _, s in judged]))
    out = []
    for c in cands:
        base = dict(configs=c.configs, native_s=c.native_s, best=c.best, best_s=c.best_s)
        if c.estimate is None:
            out.append(Pick(NATIVE, **base, gain=0.0 if c.best == NATIVE and c.note != "not measured in full"
                            else math.nan, low=math.nan, high=math.nan, p_value=math.nan, decision=c.note))
            continue
        g = next(gains)
        shown = dict(gain=g.gain, low=g.low, high=g.high, p_value=g.verdict.p_value)
        if g.verdict.verdict == stats.VIOLATED:
            out.append(Pick(c.best, **base, **shown, decision=f"{c.best}: {g.text}"))
        else:
            why = "below" if g.verdict.verdict == stats.PASS else "not shown above"
            out.append(Pick(NATIVE, **base, **shown, decision=f"native: {c.best} {g.text}, {why} {threshold:.0%}"))
    return out


def star_candidate(group: pd.DataFrame, own: dict[tuple[str, int], Pick], config: list[str]) -> Candidate:
    """A collective's `pack` for every type at one size (shape "*"): every rank must take it alike, from
    values all have, so it packs every type of that size, whatever its shape would take. Its baseline is
    each shape's own choice (native or normalized) rather than native."""
    baseline = [row[own[(row["shape"], row["block"])].strategy] for _, row in group.iterrows()]
    return candidate(group.assign(**{NATIVE: baseline}), (NATIVE, PACK), config)


def star_decision(p: Pick) -> Pick:
    what = "every shape's own choice"  # the row's native_s is the time of that baseline
    return replace(p, decision=p.decision.replace("native", what, 1) if p.strategy != PACK
                   else f"pack for every shape: {p.decision.split(': ', 1)[-1]} over {what}")


def choose(table: pd.DataFrame, config: list[str], threshold: float, opts: dict,
           point_to_point: Callable[[str], bool], packs_by_size: Callable[[str], bool] | None = None) -> pd.DataFrame:
    """One row per (stack, pattern, procs, msize, shape, block) of a launch table (one row per configuration,
    keyed by `config`, and launch: GROUP, shape, block and per strategy the launch median): the strategy the
    profiles give it (CHOICE_COLUMNS). A point-to-point pattern chooses among every strategy per shape; in a
    collective, shapes choose between native and normalized, and one row of shape "*" per size says whether
    every type is packed there (star_candidate), as the library applies it first. packs_by_size: the
    collective patterns that have that row (default: all); the library packs no other collective by profile
    (the v and w calls, whose ranks do not all know each block's bytes). The shapes' choices are judged as one
    family, then the sizes' "*" rows as another (opts: the run's analysis options)."""
    groups = [(key, group, {(shape, block): part for (shape, block), part in group.groupby(["shape", "block"],
                                                                                           sort=True)})
              for key, group in table.groupby(GROUP, sort=True)]
    own_cands = [(key, sb, candidate(part, (NATIVE, NORMALIZED, PACK) if point_to_point(key[1]) else
                                     (NATIVE, NORMALIZED), config))
                 for key, _, parts in groups for sb, part in parts.items()]
    own = dict(zip(((k, sb) for k, sb, _ in own_cands),
                   decide_picks([c for _, _, c in own_cands], threshold, opts, [k[0] for k, _, _ in own_cands]),
                   strict=True))
    star_keys = [(key, group) for key, group, _ in groups
                 if not point_to_point(key[1]) and (packs_by_size is None or packs_by_size(key[1]))]
    star_cands = [star_candidate(group, {sb: p for (k, sb), p in own.items() if k == key}, config)
                  for key, group in star_keys]
    star = dict(zip((k for k, _ in star_keys),
                    map(star_decision, decide_picks(star_cands, threshold, opts, [k[0] for k, _ in star_keys])),
                    strict=True))
    rows = []
    for key, _, parts in groups:
        where = dict(zip(GROUP, key, strict=True))
        if key in star:
            rows.append({**where, "shape": "*", "block": NO_BLOCK, **asdict(star[key])})
        for shape, block in parts:
            rows.append({**where, "shape": shape, "block": block, **asdict(own[(key, (shape, block))])})
    return pd.DataFrame(rows, columns=CHOICE_COLUMNS)


def size_ranges(points: list[tuple[int, str]]) -> list[tuple[int, int, str]]:
    """Inclusive byte ranges covering 0..MAX_BYTES from measured (size, strategy) points: each size stands
    for the sizes nearer to it than to its neighbours on a log scale; neighbours with the same strategy
    merge."""
    points = sorted(points)
    out: list[tuple[int, int, str]] = []
    for i, (m, s) in enumerate(points):
        lo = 0 if i == 0 else out[-1][1] + 1
        hi = MAX_BYTES if i == len(points) - 1 else max(m, math.isqrt(m * points[i + 1][0]))
        if out and out[-1][2] == s:
            out[-1] = (out[-1][0], hi, s)
        else:
            out.append((lo, hi, s))
    return out


Rule = tuple[str, int, int, str, tuple[int, int] | None]  # shape, from, to, strategy, block range or any


def profile_rules(choices: pd.DataFrame) -> list[Rule]:
    """The rules of one (stack, pattern, procs); native needs none. A shape measured with one mean block
    (or without block notes: a run older than them, whose choices then stand for every block) gets rules for
    any block; with several, each block stands for the blocks nearest to it on a log scale, and neighbouring
    blocks with the same size ranges share their rules. A collective's "*" rows become "*" pack rules over
    their sizes."""
    rules: list[Rule] = []
    # a predefined type has no shape (""): the library never looks it up by one
    for shape, part in choices[~choices["shape"].isin(["*", ""])].groupby("shape", sort=True):
        by_block = {int(b): size_ranges(list(zip(p["msize"].astype(int), p["strategy"], strict=True)))
                    for b, p in part.groupby("block", sort=True)}
        if NO_BLOCK in by_block:
            spans = [(None, by_block[NO_BLOCK])]
        else:
            spans = [((lo, hi), ranges) for lo, hi, ranges in size_ranges(list(by_block.items()))]
            if len(spans) == 1:
                spans = [(None, spans[0][1])]  # every block alike
        rules += [(shape, lo, hi, s, blocks) for blocks, ranges in spans for lo, hi, s in ranges if s != NATIVE]
    star = choices[choices["shape"] == "*"]
    if not star.empty:
        points = list(zip(star["msize"].astype(int), star["strategy"], strict=True))
        rules += [("*", lo, hi, s, None) for lo, hi, s in size_ranges(points) if s == PACK]
    return rules


def profile_text(operation: str, procs: str, rules: list[Rule], origin: str) -> str:
    lines = [PROFILE_HEADER, f"# {origin}", f"datatypes {operation}", f"procs {procs}",
             "# shape from_bytes to_bytes strategy [block from_bytes to_bytes]"]
    lines += [f"{shape} {lo} {hi} {s}" + ("" if b is None else f" block {b[0]} {b[1]}")
              for shape, lo, hi, s, b in rules]
    return "\n".join(lines) + "\n"


def write_profiles(choices: pd.DataFrame, stacks: list[str], out: Path, origin: str,
                   operations: dict[str, tuple[str, ...]]) -> list[Path]:
    """Per stack (every one gets its directory, with no profile where native is best throughout) and
    operation: dt_<operation>_<procs>.prof with the rules of profile_rules; operations: the library's
    operations each pattern's measurements stand for."""
    written = []
    for stack in stacks:
        (out / stack).mkdir(parents=True, exist_ok=True)
    for (stack, pattern, procs), part in choices.groupby(["stack", "pattern", "procs"], sort=True):
        rules = profile_rules(part)
        if not rules:
            continue
        for op in operations[pattern]:
            path = out / stack / f"dt_{op}_{'any' if procs == ANY else 'p' + procs}.prof"
            path.write_text(profile_text(op, procs, rules, origin))
            written.append(path)
    return written


def rule_for(rules: list[Rule], shape: str, block: int, msize: int, collective: bool = False) -> str:
    """The strategy the library takes for a call of this shape, mean block and size under these rules
    (dt_profile.c; datatypes/strategy.c: a collective's "*" pack comes first, for every type)."""
    if collective and any(s == "*" and lo <= msize <= hi and strategy == PACK for s, lo, hi, strategy, _ in rules):
        return PACK
    for want in (shape, "*"):
        for s, lo, hi, strategy, b in rules:
            if s == want and lo <= msize <= hi and (b is None or b[0] <= block <= b[1]):
                return strategy
    return NATIVE
