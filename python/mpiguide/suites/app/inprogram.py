"""The calls with derived datatypes that no benchmark rebuilds from a record, measured in the program itself
(docs/app-tuning.md, "What is measured").

A record keeps a rank's total bytes of a v or w call or a neighbourhood collective, not its counts, types
and displacements per peer, so mg_callbench cannot make that call again. The program can: it runs round by
round recorded twice, natively and with every derived datatype normalized (the `record` and
`record-normalized` sides), and each such call shape's seconds per call in the two launches of a round are a
pair. The library chooses a v or w call's strategy by its type's shape and its bytes alone (never `pack` by a
profile: the ranks do not all know each block's bytes), so the choice is between native and normalized, per
(operation, processes, bytes, shape, block), from decided gains only (mpiguide.core.dtchoice), and becomes
datatype profiles of those operations. Under forced normalization the other calls change too; what a call
shape costs is still its own calls' time, and where their changes move it, the validation shows it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mpiguide.core import dtchoice
from mpiguide.core.errors import MpiguideError
from mpiguide.core.record import CALL_COLUMNS, NONE
from mpiguide.core.runner import OK, RunDir
from mpiguide.core.suite import AppChoice, AppPlan
from mpiguide.suites.app import analysis, job

NATIVE, NORMALIZED = dtchoice.NATIVE, dtchoice.NORMALIZED
SIDES = {"record": NATIVE, "record-normalized": NORMALIZED}
# the blocking calls a record cannot rebuild, by the datatype profiles' name of their operation
OPERATIONS = dtchoice.VW_OPERATIONS
CONFIG = ["stack", "pattern", "procs", "msize", "call"]


def key_type(row: dict) -> str:
    """The type the library looks the call's profile up by: its send side's derived type, else its receive
    side's (strategy.c's derived_of)."""
    return row["send_type"] if row["send_type"] != NONE else row["recv_type"]


def plan(calls: pd.DataFrame, shapes: dict[str, tuple[str, int]], program: dict) -> AppPlan | None:
    """The run measuring in the program the recorded call shapes of OPERATIONS with a derived type (its
    params: the program's, with the two recording sides), those taken (with `key`) and those left (with
    `reason`); None where the record has none. shapes: the records' types' shapes and blocks, by text."""
    rows = calls[calls["op"].isin(OPERATIONS) & ((calls["send_type"] != NONE) | (calls["recv_type"] != NONE))]
    if rows.empty:
        return None
    taken, left = [], []
    for k, row in enumerate(rows.to_dict("records")):
        why = ("a communicator of one process: nothing to move between processes" if row["comm_size"] < 2 else
               "no bytes to move" if row["bytes"] <= 0 else
               "the library could not describe its type" if "?" in (row["send_type"], row["recv_type"]) else
               "the record does not give its type's shape (a record of an older libmpiguide-tune)"
               if key_type(row) not in shapes else None)
        if why:
            left.append({**row, "reason": why})
        else:
            taken.append({**row, "key": f"w{k}"})
    taken_df = pd.DataFrame(taken, columns=[*CALL_COLUMNS, "key"])
    left_df = pd.DataFrame(left, columns=[*CALL_COLUMNS, "reason"])
    if taken_df.empty:
        return AppPlan("app", {}, taken_df, left_df)
    shape_of = {r["key"]: shapes[key_type(r)] for r in taken}
    params = {**program, "sides": list(SIDES), "profiles": None,
              "in_program": [{"key": r["key"], **{c: int(r[c]) if c in ("comm_size", "bytes") else str(r[c])
                                                  for c in CALL_COLUMNS[:9]},
                              "shape": shape_of[r["key"]][0], "block": int(shape_of[r["key"]][1])} for r in taken]}
    return AppPlan("app", params, taken_df, left_df, [int(program["np"])])


MATCH = ["op", "comm_size", "bytes", "send_type", "recv_type"]  # a call shape, whichever strategy moved it


def launch_table(rd: RunDir) -> pd.DataFrame:
    """One row per measured call shape, stack and round: its seconds per call natively and normalized (the
    ranks' mean, from the two launches' records), with the shape and block it is looked up by."""
    shapes = pd.DataFrame(rd.meta["params"]["in_program"])
    rows = []
    for x in rd.launches:
        side = job.side_of(x.template)
        if x.status != OK or side not in SIDES:
            continue
        calls = analysis.launch_record(rd, x).calls()
        if calls.empty:
            continue
        calls = calls.groupby(MATCH, as_index=False)[["calls", "seconds"]].sum()
        for r in shapes.merge(calls, on=MATCH).to_dict("records"):
            if r["calls"] > 0:
                rows.append({"stack": x.stack, "pattern": OPERATIONS[r["op"]], "procs": str(int(r["comm_size"])),
                             "msize": int(r["bytes"]), "call": r["key"], "shape": r["shape"], "block": int(r["block"]),
                             "launch": x.run_index, "side": SIDES[side], "seconds": r["seconds"] / r["calls"]})
    df = pd.DataFrame(rows, columns=[*CONFIG, "shape", "block", "launch", "side", "seconds"])
    if df.empty:
        return pd.DataFrame(columns=[*CONFIG, "shape", "block", "launch", NATIVE, NORMALIZED, dtchoice.PACK])
    wide = df.pivot_table(index=[*CONFIG, "shape", "block", "launch"], columns="side", values="seconds",
                          aggfunc="first").reset_index()
    wide.columns.name = None
    for s in (NATIVE, NORMALIZED, dtchoice.PACK):
        if s not in wide:
            wide[s] = float("nan")
    return wide


def choose(rds: list[RunDir], threshold: float, out: Path, origin: str) -> AppChoice:
    """From the in-program runs: per stack and call shape the strategy its operation's profiles give it, with
    its decided gain, and those profiles (out/<stack>/dt_<operation>_p<N>.prof)."""
    table = pd.concat([launch_table(rd) for rd in rds], ignore_index=True)
    stacks = sorted({s for rd in rds for s in rd.meta["stacks_order"]})
    if table.empty:
        raise MpiguideError(f"{rds[0].path}: no launch recorded the calls it was to measure")
    choices = dtchoice.choose(table, CONFIG, threshold, rds[0].meta["analysis"], lambda pattern: False,
                              lambda pattern: False)
    files = dtchoice.write_profiles(choices, stacks, out, origin, {p: (p,) for p in OPERATIONS.values()})
    picks = choices.set_index([*dtchoice.GROUP, "shape", "block"])
    rows = []
    for (stack, call), part in table.groupby(["stack", "call"], sort=False):
        first = part.iloc[0]
        pick = picks.loc[(stack, first["pattern"], first["procs"], first["msize"], first["shape"], first["block"])]
        chosen = str(pick["strategy"])
        rows.append({"stack": stack, "key": call, "choice": chosen,
                     **{c: float(pick[c]) if chosen != NATIVE else float("nan") for c in ("gain", "low", "high")},
                     "decision": str(pick["decision"]), "native_s": float("nan")})
    return AppChoice(pd.DataFrame(rows, columns=["stack", "key", "choice", "gain", "low", "high", "decision",
                                                 "native_s"]), files)
