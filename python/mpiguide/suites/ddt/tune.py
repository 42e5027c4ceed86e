"""`mpiguide ddt tune`'s analysis (docs/tuning.md, "Tuning derived datatypes"):
from a ddt run that measured every mode, the strategy libmpiguide-tune should
use per stack, operation, processes, type shape and message size; the datatype
profiles that say so; and, from the validation run, what the tuned library
gained and which guideline violations it repaired.

The driver's modes are the library's strategies: `datatype` is the native call,
`normalized` the call with mpiguide's normalized type, `engine` the engine's
packing around a contiguous transfer (`pack` in the library). MPI_Pack (mode
`pack`) is a reference of the guidelines only.

Choices are made per group of configurations the library cannot tell apart: the
same operation, processes and message bytes, and types of the same normalized
shape and mean block bytes (mg_dt_mean_block; several layouts share them). A strategy is chosen for the
group when, over the group's configurations together, the native call is shown
slower than it by more than the threshold: the per-launch totals' ratio, its
interval clear of the threshold, the run's groups judged as one family
(mpiguide.core.stats), so a profile is written from decided gains only."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from mpiguide.core import stats
from mpiguide.core.pairing import decide, decide_gains
from mpiguide.core.tuning import PROFILE_HEADER, repaired
from mpiguide.suites.ddt.expectations import PRECEDES, TUNED
from mpiguide.suites.ddt.report import NO_BLOCK, DdtResult

NATIVE, NORMALIZED, PACK = "native", "normalized", "pack"
STRATEGY = {"datatype": NATIVE, "normalized": NORMALIZED, "engine": PACK}  # driver mode -> library strategy
MODE = {s: m for m, s in STRATEGY.items()}
# the library's operations a pattern's measurements stand for; point-to-point costs do not depend on the
# communicator's size, so its profiles hold for any number of processes
OPERATIONS = {"pingpong": ("send", "recv"), "bcast": ("bcast",), "allgather": ("allgather",)}
ANY = "any"
MAX_BYTES = 2**63 - 1  # the largest MPI_Count: "every larger size" in a profile's last range
CONFIG = ["stack", "template", "placement", "pattern", "nprocs", "layout", "A", "m", "msize"]
GROUP = ["stack", "pattern", "procs", "msize"]  # what a profile rule sees, besides the shape
CHOICE_COLUMNS = [*GROUP, "shape", "block", "configs", "strategy", "native_s", "best", "best_s", "gain", "low",
                  "high", "p_value", "decision"]
REPAIRABLE = ("DT-GL2/3", "DT-GL2/3-ENG", "DT-GL4", "DT-GL4-NORM")  # guidelines on the call with the type


def procs_key(pattern: str, nprocs: int) -> str:
    return ANY if pattern == "pingpong" else str(nprocs)


def launch_table(r: DdtResult) -> pd.DataFrame:
    """One row per configuration and launch: the shape, and per strategy the launch median (NaN where the
    mode was not measured or failed its data check)."""
    df = r.measurements
    if df.empty or r.shapes.empty:
        return pd.DataFrame(columns=[*CONFIG, "procs", "launch", *STRATEGY.values(), "shape", "block"])
    df = df[df["mode"].isin(list(STRATEGY))]
    med = stats.launch_medians(df, [*CONFIG, "mode"])
    if not r.errors.empty:  # labels "pattern layout A m msize mode"
        bad = {tuple(c.split()) for c in r.errors["config"]}
        keys = zip(med["pattern"], med["layout"], med["A"].astype(str), med["m"].astype(str),
                   med["msize"].astype(str), med["mode"], strict=True)
        med = med[[k not in bad for k in keys]]
    wide = med.pivot_table(index=[*CONFIG, "launch"], columns="mode", values="median_s", aggfunc="first")
    wide = wide.rename(columns=STRATEGY).reindex(columns=list(STRATEGY.values())).reset_index()
    wide.columns.name = None
    out = wide.merge(r.shapes, on=["stack", "template", "layout", "A", "m"])
    out.insert(len(CONFIG), "procs", [procs_key(p, n) for p, n in zip(out["pattern"], out["nprocs"], strict=True)])
    return out


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


def candidate(part: pd.DataFrame, candidates: tuple[str, ...]) -> Candidate:
    """The group's candidate (rows: configuration x launch): the strategy with the least total time over the
    launches that measured all of its configurations. Candidates missing for a configuration of the group
    are not considered."""
    configs = part.groupby(CONFIG, sort=False).ngroups
    usable = [s for s in candidates if s == NATIVE or part.groupby(CONFIG, sort=False)[s].count().gt(0).all()]
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


def star_candidate(group: pd.DataFrame, own: dict[tuple[str, int], Pick]) -> Candidate:
    """A collective's `pack` for every type at one size (shape "*"): every rank must take it alike, from
    values all have, so it packs every type of that size, whatever its shape would take. Its baseline is
    each shape's own choice (native or normalized) rather than native."""
    baseline = [row[own[(row["shape"], row["block"])].strategy] for _, row in group.iterrows()]
    return candidate(group.assign(**{NATIVE: baseline}), (NATIVE, PACK))


def star_decision(p: Pick) -> Pick:
    what = "every shape's own choice"  # the row's native_s is the time of that baseline
    return replace(p, decision=p.decision.replace("native", what, 1) if p.strategy != PACK
                   else f"pack for every shape: {p.decision.split(': ', 1)[-1]} over {what}")


def choose(r: DdtResult, threshold: float) -> pd.DataFrame:
    """One row per (stack, pattern, procs, msize, shape, block): the strategy the profiles give it
    (CHOICE_COLUMNS). In a collective, shapes choose between native and normalized, and one row of shape
    "*" per size says whether every type is packed there (star_candidate), as the library applies it first.
    The shapes' choices of the run are judged as one family, then the sizes' "*" rows as another."""
    opts = r.runs[0].meta["analysis"]
    t = launch_table(r)
    groups = [(key, group, {(shape, block): part for (shape, block), part in group.groupby(["shape", "block"],
                                                                                           sort=True)})
              for key, group in t.groupby(GROUP, sort=True)]
    own_cands = [(key, sb, candidate(part, (NATIVE, NORMALIZED) if key[1] != "pingpong" else
                                     (NATIVE, NORMALIZED, PACK)))
                 for key, _, parts in groups for sb, part in parts.items()]
    own = dict(zip(((k, sb) for k, sb, _ in own_cands),
                   decide_picks([c for _, _, c in own_cands], threshold, opts, [k[0] for k, _, _ in own_cands]),
                   strict=True))
    star_keys = [(key, group) for key, group, _ in groups if key[1] != "pingpong"]
    star_cands = [star_candidate(group, {sb: p for (k, sb), p in own.items() if k == key}) for key, group in star_keys]
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


# ---------------------------------------------------------------- profiles

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


def write_profiles(choices: pd.DataFrame, stacks: list[str], out: Path, origin: str) -> list[Path]:
    """Per stack (every one gets its directory, with no profile where native is best throughout) and
    operation: dt_<operation>_<procs>.prof with the rules of profile_rules."""
    written = []
    for stack in stacks:
        (out / stack).mkdir(parents=True, exist_ok=True)
    for (stack, pattern, procs), part in choices.groupby(["stack", "pattern", "procs"], sort=True):
        rules = profile_rules(part)
        if not rules:
            continue
        for op in OPERATIONS[pattern]:
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


# ---------------------------------------------------------------- validation

GAIN_COLUMNS = [*CONFIG, "shape", "strategy", "native_s", "tuned_s", "speedup", "verdict", "p_value", "best_mode",
                "best_factor", "best_verdict"]
REPAIR_COLUMNS = ["stack", "test", "guideline", "comparison", "pattern", "nprocs", "placement", "A", "m", "msize",
                  "slow", "fast", "fast_mode", "strategy", "measured_factor", "native_factor", "tuned_factor",
                  "tuned_verdict", "repaired"]


class Strategies:
    """What the profiles written from `choices` give each configuration of a run (whose shapes are known)."""

    def __init__(self, choices: pd.DataFrame, shapes: pd.DataFrame):
        self.rules = {key: profile_rules(part) for key, part in choices.groupby(["stack", "pattern", "procs"])}
        keyed = shapes.set_index(["stack", "template", "layout", "A", "m"])
        self.shapes = dict(zip(keyed.index, zip(keyed["shape"], keyed["block"], strict=True), strict=True))

    def shape(self, stack: str, template: str, layout: str, A: int, m: int) -> str:
        return self.shapes.get((stack, template, layout, A, m), ("?", NO_BLOCK))[0]

    def of(self, stack: str, template: str, pattern: str, nprocs: int, layout: str, A: int, m: int,
           msize: int) -> str:
        """The strategy ("?" if the configuration's shape is unknown)."""
        key = self.shapes.get((stack, template, layout, A, m))
        if key is None:
            return "?"
        return rule_for(self.rules.get((stack, pattern, procs_key(pattern, nprocs)), []), *key, msize,
                        collective=pattern != "pingpong")


def gains(v: DdtResult, choices: pd.DataFrame) -> pd.DataFrame:
    """Every configuration of the validation run: the tuned library against the native call (speedup =
    native / tuned; verdict of `tuned ⪯ native`) and against the fastest of the four modes measured beside
    it (`tuned ⪯ best`), each kind judged as one family."""
    opts = v.runs[0].meta["analysis"]
    df = v.measurements
    if df.empty or TUNED not in set(df["mode"]):
        return pd.DataFrame(columns=GAIN_COLUMNS)
    strategies = Strategies(choices, v.shapes)
    rows, to_native, to_best = [], [], []
    for key, part in df.groupby(CONFIG, sort=True):
        by_mode = dict(iter(part.groupby("mode", sort=False)))
        tuned, native = by_mode.get(TUNED), by_mode.get("datatype")
        if tuned is None or native is None:
            continue
        means = {mo: rows_.groupby("launch")["time_s"].median().mean() for mo, rows_ in by_mode.items() if mo != TUNED}
        best_mode = min(means, key=means.get)
        to_native.append(stats.estimate(tuned, native, opts["samples"]))
        to_best.append(stats.estimate(tuned, by_mode[best_mode], opts["samples"]))
        k = dict(zip(CONFIG, key, strict=True))
        rows.append({**k, "shape": strategies.shape(k["stack"], k["template"], k["layout"], k["A"], k["m"]),
                     "strategy": strategies.of(*(k[x] for x in ("stack", "template", "pattern", "nprocs", "layout",
                                                                 "A", "m", "msize"))),
                     "native_s": means["datatype"], "tuned_s": float(tuned.groupby("launch")["time_s"].median().mean()),
                     "best_mode": best_mode})
    strata = [row["stack"] for row in rows]
    for row, c, b in zip(rows, decide(to_native, opts, strata), decide(to_best, opts, strata), strict=True):
        row.update(speedup=1 / c.ratio, verdict=c.verdict, p_value=c.p_value, best_factor=b.ratio,
                   best_verdict=b.verdict)
    return pd.DataFrame(rows, columns=GAIN_COLUMNS)


def repairs(measured: DdtResult, v: DdtResult, choices: pd.DataFrame) -> pd.DataFrame:
    """Every violation of a guideline on the call with the type (REPAIRABLE) in the measurement, checked in
    the validation run: the slow side natively against the fast side (native_factor: does it reproduce?) and
    with the tuned library (`tuned ⪯ fast side`: repaired when it passes; the checks judged together). For ≃
    the slow side is the one the measurement found slower."""
    opts = v.runs[0].meta["analysis"]
    vd = measured.verdicts
    viol = vd[(vd["verdict"] == stats.VIOLATED) & vd["guideline"].isin(REPAIRABLE)
              & (vd["compared_mode"] == "datatype")]
    strategies = Strategies(choices, measured.shapes)
    groups = {} if v.measurements.empty else dict(iter(v.measurements.groupby(
        ["stack", "template", "layout", "mode", "A", "m", "msize"], sort=False)))
    none = pd.DataFrame()

    def rows_of(w, layout: str, mode: str) -> pd.DataFrame:
        return groups.get((w.stack, w.template, layout, mode, w.A, w.m, w.msize), none)

    rows, checks, estimates = [], [], []
    for w in viol.itertuples():
        swap = w.relation != PRECEDES and w.ratio < 1 and w.reference_mode == "datatype"
        slow, fast, fast_mode = (w.reference, w.compared, "datatype") if swap else \
            (w.compared, w.reference, w.reference_mode)
        row = dict(stack=w.stack, test=w.test, guideline=w.guideline, comparison=w.comparison, pattern=w.pattern,
                   nprocs=w.nprocs, placement=w.placement, A=w.A, m=w.m, msize=w.msize, slow=slow, fast=fast,
                   fast_mode=fast_mode,
                   strategy=strategies.of(w.stack, w.template, w.pattern, w.nprocs, slow, w.A, w.m, w.msize),
                   measured_factor=w.factor, native_factor=math.nan, tuned_factor=math.nan,
                   tuned_verdict="not measured", repaired="?")
        ref, native, tuned = rows_of(w, fast, fast_mode), rows_of(w, slow, "datatype"), rows_of(w, slow, TUNED)
        if not ref.empty and not native.empty:
            row["native_factor"] = stats.estimate(native, ref, opts["samples"]).ratio
        if not ref.empty and not tuned.empty:
            checks.append(len(rows))
            estimates.append(stats.estimate(tuned, ref, opts["samples"]))
        rows.append(row)
    for i, c in zip(checks, decide(estimates, opts, [rows[i]["stack"] for i in checks]), strict=True):
        rows[i].update(tuned_factor=c.ratio, tuned_verdict=c.verdict, repaired=repaired(c.verdict))
    return pd.DataFrame(rows, columns=REPAIR_COLUMNS)


@dataclass
class TuneAnalysis:
    measured: DdtResult
    choices: pd.DataFrame
    threshold: float
    validated: DdtResult | None = None
    gains: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=GAIN_COLUMNS))
    repairs: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=REPAIR_COLUMNS))


def analyze(m: DdtResult, v: DdtResult | None, threshold: float) -> TuneAnalysis:
    t = TuneAnalysis(m, choose(m, threshold), threshold, v)
    if v is not None and not v.measurements.empty:
        t.gains, t.repairs = gains(v, t.choices), repairs(m, v, t.choices)
    return t


# ---------------------------------------------------------------- summaries

def geomean(x: np.ndarray) -> float:
    return float(np.exp(np.log(x).mean())) if len(x) else math.nan


def gain_summary(g: pd.DataFrame) -> pd.DataFrame:
    """Per stack and pattern: configurations the profiles tune, their speedups, and the verdicts of
    `tuned ⪯ native` and `tuned ⪯ best mode` over every configuration."""
    rows = []
    for (stack, pattern), part in g.groupby(["stack", "pattern"], sort=False):
        tuned = part[~part["strategy"].isin([NATIVE, "?"])]
        sp = tuned["speedup"].to_numpy()
        rows.append(dict(stack=stack, pattern=pattern, tuned=f"{len(tuned)}/{len(part)}",
                         speedup_geomean=geomean(sp), speedup_min=float(sp.min()) if len(sp) else math.nan,
                         speedup_max=float(sp.max()) if len(sp) else math.nan,
                         slower_than_native=int((part["verdict"] == stats.VIOLATED).sum()),
                         slower_than_best=int((part["best_verdict"] == stats.VIOLATED).sum())))
    return pd.DataFrame(rows).set_index(["stack", "pattern"]) if rows else pd.DataFrame()


def repair_counts(rep: pd.DataFrame) -> pd.DataFrame:
    """Per stack and guideline: the measured violations by outcome with the tuned library, and the worst
    factor before (measurement) and after (tuned, validation)."""
    if rep.empty:
        return pd.DataFrame()
    rows = []
    for (stack, guideline), part in rep.groupby(["stack", "guideline"], sort=False):
        counts = part["repaired"].value_counts()
        rows.append(dict(stack=stack, guideline=guideline, violations=len(part),
                         repaired=int(counts.get("yes", 0)), not_repaired=int(counts.get("no", 0)),
                         unclear=int(len(part) - counts.get("yes", 0) - counts.get("no", 0)),
                         worst_before=float(part["measured_factor"].max()),
                         worst_after=float(part["tuned_factor"].max())))
    return pd.DataFrame(rows).set_index(["stack", "guideline"])


def console_lines(t: TuneAnalysis) -> list[str]:
    lines = []
    ch = t.choices[t.choices["shape"] != "*"]
    for stack, part in ch.groupby("stack", sort=False):
        used = part[part["strategy"] != NATIVE]["strategy"].value_counts()
        lines.append(f"{stack}: {len(part)} (operation, size, shape, block) point(s): "
                     + ", ".join(f"{s} {used.get(s, 0)}" for s in (NORMALIZED, PACK))
                     + f", native {len(part) - used.sum()}")
    counts = repair_counts(t.repairs)
    for c in counts.reset_index().itertuples():
        lines.append(f"{c.stack}: {c.guideline}: {c.repaired} of {c.violations} violation(s) repaired, "
                     f"{c.not_repaired} not, {c.unclear} unclear; worst x{c.worst_before:.2f} before, "
                     f"x{c.worst_after:.2f} tuned")
    for s in gain_summary(t.gains).reset_index().itertuples():
        speedup = "" if math.isnan(s.speedup_geomean) else \
            f", speedup geometric mean x{s.speedup_geomean:.2f} (x{s.speedup_min:.2f} to x{s.speedup_max:.2f})"
        lines.append(f"{s.stack} {s.pattern}: tuned {s.tuned} configuration(s){speedup}; {s.slower_than_native} "
                     f"significantly slower than native, {s.slower_than_best} than the best mode")
    return lines
