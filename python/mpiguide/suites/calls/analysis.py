"""An application's calls with derived datatypes under each strategy of libmpiguide-tune (mg_callbench):
the time per strategy, the strategy the library should take (mpiguide.core.dtchoice: decided gains only),
and the datatype profiles that say so."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from mpiguide.core import dtchoice, stats
from mpiguide.core.document import Document, fields, host_text, write_csvs
from mpiguide.core.dtchoice import ANY, NATIVE, NO_BLOCK, NORMALIZED, PACK
from mpiguide.core.measurements import Measured, oversubscription, stack_versions, unfinished
from mpiguide.core.runner import RunDir
from mpiguide.suites.calls.plan import POINT_TO_POINT

STRATEGIES = (NATIVE, NORMALIZED, PACK)
CONFIG = ["stack", "template", "nprocs", "call", "pattern", "msize"]
# the library's operations each pattern's measurements stand for
OPERATIONS = {"send": ("send",), "recv": ("recv",), "bcast": ("bcast",), "gather": ("gather",),
              "scatter": ("scatter",), "allgather": ("allgather",), "alltoall": ("alltoall",)}
CALL_RESULT = ["stack", "call", "pattern", "nprocs", "msize", "shape", "block", *[f"{s}_s" for s in STRATEGIES],
               "strategy", "gain", "low", "high", "decision"]


@dataclass
class CallsResult:
    rd: RunDir
    measurements: pd.DataFrame  # one row per repetition
    shapes: pd.DataFrame  # stack, template, call, shape, block
    errors: pd.DataFrame
    skipped: pd.DataFrame  # call, reason
    stacks: list[str] = field(default_factory=list)
    oversubscribed: str | None = None  # oversubscription's sentence


def procs_key(pattern: str, nprocs: int) -> str:
    """Point-to-point profiles hold for any number of processes."""
    return ANY if pattern in POINT_TO_POINT else str(nprocs)


def load(rd: RunDir) -> CallsResult:
    m = Measured.load(rd)
    df, errors = m.tables()
    blocks = {(x.stack, x.template, key): int(v) for x, key, v in m.notes("block")}
    shapes = pd.DataFrame([(x.stack, x.template, key, shape, blocks.get((x.stack, x.template, key), NO_BLOCK))
                           for x, key, shape in m.notes("shape")],
                          columns=["stack", "template", "call", "shape", "block"]).drop_duplicates()
    skipped = pd.DataFrame([(x.stack, key, why) for x, key, why in m.notes("skip")],
                           columns=["stack", "call", "reason"]).drop_duplicates()
    return CallsResult(rd, df, shapes, errors, skipped, list(rd.meta["stacks_order"]), oversubscription(m))


def launch_table(r: CallsResult) -> pd.DataFrame:
    """One row per measured call and launch: its shape and mean block, and per strategy the launch median."""
    cols = [*CONFIG, "procs", "launch", *STRATEGIES, "shape", "block"]
    df = r.measurements
    if df.empty or r.shapes.empty:
        return pd.DataFrame(columns=cols)
    med = stats.launch_medians(df, [*CONFIG, "strategy"])
    wide = med.pivot_table(index=[*CONFIG, "launch"], columns="strategy", values="median_s", aggfunc="first")
    wide = wide.reindex(columns=list(STRATEGIES)).reset_index()
    wide.columns.name = None
    out = wide.merge(r.shapes, on=["stack", "template", "call"])
    out.insert(len(CONFIG), "procs", [procs_key(p, n) for p, n in zip(out["pattern"], out["nprocs"], strict=True)])
    return out[cols]


def choose(r: CallsResult, threshold: float) -> pd.DataFrame:
    """dtchoice.CHOICE_COLUMNS: per (stack, pattern, procs, size, shape, block) the strategy to take."""
    return dtchoice.choose(launch_table(r), CONFIG, threshold, r.rd.meta["analysis"],
                           lambda pattern: pattern in POINT_TO_POINT)


def write_profiles(choices: pd.DataFrame, stacks: list[str], out: Path, origin: str) -> list[Path]:
    return dtchoice.write_profiles(choices, stacks, out, origin, OPERATIONS)


def per_call(r: CallsResult, choices: pd.DataFrame) -> pd.DataFrame:
    """Per stack and measured call: the mean launch median of each strategy and the strategy the profiles give
    it (CALL_RESULT), with the gain of its group's decision (NaN: native, by choice or by default)."""
    t = launch_table(r)
    if t.empty:
        return pd.DataFrame(columns=CALL_RESULT)
    rules = {k: dtchoice.profile_rules(part) for k, part in choices.groupby(["stack", "pattern", "procs"])}
    picks = choices.set_index([*dtchoice.GROUP, "shape", "block"])
    rows = []
    for key, part in t.groupby([*CONFIG, "procs", "shape", "block"], sort=False):
        k = dict(zip([*CONFIG, "procs", "shape", "block"], key, strict=True))
        strategy = dtchoice.rule_for(rules.get((k["stack"], k["pattern"], k["procs"]), []), k["shape"], k["block"],
                                     k["msize"], collective=k["pattern"] not in POINT_TO_POINT)
        pick_key = (k["stack"], k["pattern"], k["procs"], k["msize"], "*" if strategy == PACK and
                    k["pattern"] not in POINT_TO_POINT else k["shape"], NO_BLOCK if strategy == PACK and
                    k["pattern"] not in POINT_TO_POINT else k["block"])
        pick = picks.loc[pick_key] if pick_key in picks.index else None
        rows.append({**{c: k[c] for c in ("stack", "call", "pattern", "nprocs", "msize", "shape", "block")},
                     **{f"{s}_s": float(part[s].mean()) for s in STRATEGIES}, "strategy": strategy,
                     "gain": float(pick["gain"]) if pick is not None and strategy != NATIVE else math.nan,
                     "low": float(pick["low"]) if pick is not None and strategy != NATIVE else math.nan,
                     "high": float(pick["high"]) if pick is not None and strategy != NATIVE else math.nan,
                     "decision": str(pick["decision"]) if pick is not None else ""})
    return pd.DataFrame(rows, columns=CALL_RESULT)


def document(r: CallsResult, threshold: float, out: Path) -> tuple[Document, list[str]]:
    """The report of a calls run (its tables written beside it) and its console lines."""
    choices = choose(r, threshold)
    calls = per_call(r, choices)
    shapes = pd.DataFrame(r.rd.meta["params"].get("shapes", []))
    write_csvs(out, {"calls": calls, "choices": choices, "skipped": r.skipped, "config_errors": r.errors},
               drop_empty=("skipped", "config_errors"))
    doc = Document("mpiguide calls: an application's derived-datatype calls under each strategy")
    meta = r.rd.meta
    doc.section("Run", fields({
        "run": f"{r.rd.path} ({meta['run_id']})", "record": meta["params"].get("record", "?"),
        **({"recorded with": f"{meta['params']['recorded_with']} on {meta['params']['recorded_nprocs']} "
                             "process(es): the calls are measured on this run's libraries (a port's question)"}
           if meta["params"].get("recorded_with") else {}),
        "libraries": "; ".join(f"{s}: {v}" for s, v in stack_versions(r.rd).items()),
        "host": host_text(meta["host"]), "launches": f"{meta['runs']} per stack",
        "threshold": f"a strategy is taken where it is shown to save at least {threshold:.0%} over native",
        **({"oversubscribed": r.oversubscribed} if r.oversubscribed else {}),
        **({"unfinished launches": ", ".join(x.id for x in unfinished(r.rd))} if unfinished(r.rd) else {})}))
    doc.section("Calls: seconds per call under each strategy and the strategy taken",
                calls.set_index(["stack", "call"]),
                note="native_s, normalized_s, pack_s: the mean over launches of each launch's median; gain = 1 - "
                     "chosen / native with its interval (decided gains only: dtchoice)")
    if not shapes.empty:
        doc.section("The calls measured", shapes.set_index("key"))
    if not r.skipped.empty:
        doc.section("Calls that could not be built", r.skipped.set_index(["stack", "call"]))
    if not r.errors.empty:
        doc.section("Calls whose data differed from the native call's (not timed)", r.errors)
    lines = []
    for stack, part in calls.groupby("stack", sort=False):
        used = part["strategy"].value_counts()
        lines.append(f"{stack}: {len(part)} call(s) measured: " + ", ".join(
            f"{s} {int(used.get(s, 0))}" for s in STRATEGIES))
    return doc, lines
