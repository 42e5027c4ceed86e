"""The collectives of an application's record (`mpiguide app tune`; docs/app-tuning.md): the calls of the
nine collectives with predefined datatypes measured as mg_collbench measures them, natively, with every
mock-up (and, with --algorithms, each of the library's own algorithms), at the application's message sizes
and communicator sizes; then the profiles (and each library's own tuning file) chosen from decided gains.

Which reduction mock-ups apply depends on the datatype and the operation, so reductions are measured with
the application's own where mg_collbench has them (byte, int, double; bor, sum, max), one run per such pair;
the other collectives move bytes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mpiguide.core import stacks as stackmod
from mpiguide.core.record import CALL_COLUMNS, NONE
from mpiguide.core.runner import RunDir
from mpiguide.core.suite import AppChoice, AppPlan
from mpiguide.suites.coll import analysis, native, selection
from mpiguide.suites.coll.catalog import COLLECTIVES, POOL_DEFAULTS
from mpiguide.suites.coll.profiles import write_profiles

REDUCTIONS = ("allreduce", "reduce", "scan", "reduce_scatter_block")
# the record's names (the notation's) of the datatypes and operations mg_collbench takes
DATATYPE_OF = {"double": "double", "int": "int", "byte": "byte", "char": "byte", "signed_char": "byte",
               "unsigned_char": "byte", "int8_t": "byte", "uint8_t": "byte"}
OPS = ("bor", "sum", "max")


def key(collective: str, nprocs: int, msize: int) -> str:
    return f"{collective} np{nprocs} m={msize}"


def plan(calls: pd.DataFrame, options: dict, suite_name: str) -> list[AppPlan]:
    """One coll run per (datatype, operation) of the application's reductions (the other collectives join
    the byte/bor run), each at the sizes and communicator sizes its calls have."""
    names = {analysis.mpi_name(c): c for c in COLLECTIVES}
    mine = calls[calls["op"].isin(names) & (calls["send_type"] == NONE) & (calls["recv_type"] == NONE)]
    if mine.empty:
        return []
    groups: dict[tuple[str, str], list[dict]] = {}
    left = []
    for row in mine.to_dict("records"):
        coll = names[row["op"]]
        why = ""
        if row["comm_size"] < 2:
            why = "a communicator of one process: nothing to choose"
        elif row["bytes"] <= 0:
            why = "no bytes to move"
        datatype, op = "byte", "bor"
        if not why and coll in REDUCTIONS:
            datatype, op = DATATYPE_OF.get(row["datatype"], ""), row["reduce_op"]
            if not datatype:
                why = (f"it reduces {row['datatype']}, and mg_collbench measures reductions of byte, int and double "
                       "only (which mock-ups apply depends on the datatype)")
            elif op not in OPS:
                why = f"its operation is {op}, and mg_collbench measures bor, sum and max only"
            elif op == "bor" and datatype == "double":
                why = "bor of double is not an MPI reduction"
        if why:
            left.append({**row, "reason": why})
            continue
        groups.setdefault((datatype, op), []).append({**row, "key": key(coll, int(row["comm_size"]),
                                                                        int(row["bytes"]))})
    algorithms = selection.parse_choice(options.get("algorithms", "none"))
    stacks = options.get("stacks", [])
    out = []
    for (datatype, op), rows in sorted(groups.items()):
        taken = pd.DataFrame(rows, columns=[*CALL_COLUMNS, "key"])
        colls = sorted({names[o] for o in taken["op"]}, key=COLLECTIVES.index)
        nps = sorted({int(n) for n in taken["comm_size"]})
        params = {"collectives": colls, "sizes": sorted({int(b) for b in taken["bytes"]}), "np": nps,
                  "datatype": datatype, "op": op, "root": 0, "msg_pool": POOL_DEFAULTS["msg_pool"],
                  "int_pool": POOL_DEFAULTS["int_pool"], "placements": [], "profiles": None,
                  "algorithms": selection.read(stacks, colls, algorithms) if algorithms is not None else {},
                  "thread_level": options.get("thread_level")}
        out.append(AppPlan(suite_name, params, taken, pd.DataFrame(columns=[*CALL_COLUMNS, "reason"]), nps))
    if left:
        if out:
            out[0].left = pd.DataFrame(left, columns=[*CALL_COLUMNS, "reason"])
        else:
            out.append(AppPlan(suite_name, {}, pd.DataFrame(columns=[*CALL_COLUMNS, "key"]),
                               pd.DataFrame(left, columns=[*CALL_COLUMNS, "reason"])))
    return out


def choose(rds: list[RunDir], threshold: float, out: Path, origin: str) -> AppChoice:
    """Profiles from decided gains into out/<stack>/, the choices of every run (one per datatype and
    operation of the reductions) together: the library keys a profile by collective and processes alone;
    with the library's own algorithms measured, its tuning file into the run's native/<stack>/ and the
    environment that reads it."""
    results = [analysis.load(rd) for rd in rds]
    chosen = pd.concat([analysis.choose(r, threshold) for r in results], ignore_index=True)
    # a size two runs measured (a reduction of two datatypes): the mock-up only where both chose it
    chosen = chosen.sort_values("impl", key=lambda s: s != analysis.DEFAULT, kind="stable") \
        .drop_duplicates(["stack", "nprocs", "collective", "msize"])
    files = write_profiles(chosen, out, origin)
    env: dict[str, dict[str, str]] = {}
    for r in results:
        if not selection.labels(r.rd.meta["params"]):
            continue
        for path in native.write(r, threshold, r.rd, origin):
            stack = path.parent.name
            env[stack] = stackmod.get(stack).adapter.tuning_env(str(path.resolve()))
            files.append(path)
    decisions = pd.DataFrame(
        [dict(stack=c.stack, key=key(c.collective, int(c.nprocs), int(c.msize)),
              choice="native" if c.impl == analysis.DEFAULT else c.impl, gain=c.gain, low=c.low, high=c.high,
              decision=c.decision) for c in chosen.itertuples()],
        columns=["stack", "key", "choice", "gain", "low", "high", "decision"])
    return AppChoice(decisions, files, env)
