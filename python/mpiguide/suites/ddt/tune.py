"""`mpiguide ddt tune`'s analysis (docs/tuning.md, "Tuning derived datatypes"):
from a ddt run that measured every mode, the strategy libmpiguide-tune should
use per stack, operation, processes, type shape and message size; the datatype
profiles that say so; and, from the validation run, what the tuned library
gained and which guideline violations it repaired.

The driver's modes are the library's strategies: `datatype` is the native call,
`normalized` the call with mpiguide's normalized type, `engine` the engine's
packing around a contiguous transfer (`pack` in the library). MPI_Pack (mode
`pack`) is a reference of the guidelines only.

How a strategy is chosen and written into profiles is mpiguide.core.dtchoice's, shared with `mpiguide app
tune`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from mpiguide.core import dtchoice, stats
from mpiguide.core.dtchoice import ANY, NATIVE, NO_BLOCK, NORMALIZED, PACK, profile_rules, rule_for
from mpiguide.core.pairing import decide
from mpiguide.core.tuning import repaired
from mpiguide.suites.ddt.expectations import EXCHANGE_PATTERNS, PRECEDES, TUNED
from mpiguide.suites.ddt.report import DdtResult

STRATEGY = {"datatype": NATIVE, "normalized": NORMALIZED, "engine": PACK}  # driver mode -> library strategy
MODE = {s: m for m, s in STRATEGY.items()}
# the library's operations a pattern's measurements stand for; point-to-point costs do not depend on the
# communicator's size, so its profiles hold for any number of processes
OPERATIONS = {"pingpong": ("send", "recv"), "bcast": ("bcast",), "allgather": ("allgather",),
              "transpose": ("alltoallw",), "halo": ("neighbor_alltoallw",)}
CONFIG = ["stack", "template", "placement", "pattern", "nprocs", "layout", "A", "m", "msize"]
# guidelines on the call with the type
REPAIRABLE = ("DT-GL2/3", "DT-GL2/3-ENG", "DT-GL2/3-MAN", "DT-GL4", "DT-GL4-NORM")


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


def choose(r: DdtResult, threshold: float) -> pd.DataFrame:
    """One row per (stack, pattern, procs, msize, shape, block): the strategy the profiles give it
    (dtchoice.CHOICE_COLUMNS; the ping-pong is the point-to-point pattern)."""
    return dtchoice.choose(launch_table(r), CONFIG, threshold, r.runs[0].meta["analysis"],
                           lambda pattern: pattern == "pingpong", lambda pattern: pattern not in EXCHANGE_PATTERNS)


def write_profiles(choices: pd.DataFrame, stacks: list[str], out: Path, origin: str) -> list[Path]:
    """The datatype profiles of the choices (dtchoice.write_profiles), for the operations of each pattern."""
    return dtchoice.write_profiles(choices, stacks, out, origin, OPERATIONS)


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
