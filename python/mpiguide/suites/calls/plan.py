"""Which of an application's recorded calls with derived datatypes mg_callbench can rebuild, as what pattern,
and why the others cannot (docs/app-tuning.md, "What is measured").

A point-to-point call is measured side by side: its send side as `send` (rank 0 sends with the type, rank 1
receives packed bytes), its receive side as `recv`, since the library's datatype profiles key all sends and
all receives alike, whatever the peer does (so on 2 processes: point-to-point costs do not depend on the
communicator's size). A regular collective is measured on as many processes as its communicator had, every
rank with the types the record names for its side (a side the record names none for moves packed bytes)."""

from __future__ import annotations

import pandas as pd

from mpiguide.core.record import CALL_COLUMNS, NONE

SEND_OPS = ("MPI_Send", "MPI_Ssend", "MPI_Rsend", "MPI_Isend", "MPI_Issend", "MPI_Send_init")
RECV_OPS = ("MPI_Recv", "MPI_Irecv", "MPI_Recv_init", "MPI_Mrecv", "MPI_Imrecv")
BOTH_OPS = ("MPI_Sendrecv", "MPI_Sendrecv_replace")
COLLECTIVES = {"MPI_Bcast": "bcast", "MPI_Gather": "gather", "MPI_Scatter": "scatter",
               "MPI_Allgather": "allgather", "MPI_Alltoall": "alltoall"}
POINT_TO_POINT = ("send", "recv")
# the record keeps a call's own bytes, not its counts per rank or neighbour
NOT_REBUILT = ("MPI_Gatherv", "MPI_Scatterv", "MPI_Allgatherv", "MPI_Alltoallv", "MPI_Alltoallw",
               "MPI_Neighbor_alltoallw", "MPI_Neighbor_allgather", "MPI_Neighbor_allgatherv",
               "MPI_Neighbor_alltoall", "MPI_Neighbor_alltoallv")
SHAPE_COLUMNS = ["key", "pattern", "nprocs", "bytes", "send_type", "recv_type"]
DEFAULT_MAX_SHAPES = 48


def derived(calls: pd.DataFrame) -> pd.DataFrame:
    """The call shapes that carry a derived datatype."""
    return calls[(calls["send_type"] != NONE) | (calls["recv_type"] != NONE)]


def plan(calls: pd.DataFrame, max_shapes: int = DEFAULT_MAX_SHAPES) -> tuple[pd.DataFrame, pd.DataFrame,
                                                                            pd.DataFrame]:
    """(shapes to measure: SHAPE_COLUMNS with the calls and seconds they stand for, the recorded call shapes
    taken: CALL_COLUMNS with `key`, those left: CALL_COLUMNS with `reason`). Alike shapes measure once; at
    most max_shapes, those the application spent most time in."""
    shapes: dict[tuple, dict] = {}
    taken, left = [], []
    for row in derived(calls).to_dict("records"):
        wanted = []  # (pattern, nprocs, send_type, recv_type)
        op = row["op"]
        if op in SEND_OPS or op in BOTH_OPS:
            if row["send_type"] != NONE:
                wanted.append(("send", 2, row["send_type"], NONE))
        if op in RECV_OPS or op in BOTH_OPS:
            if row["recv_type"] != NONE:
                wanted.append(("recv", 2, NONE, row["recv_type"]))
        if op in COLLECTIVES:
            if row["comm_size"] < 2:
                left.append({**row, "reason": "a communicator of one process: nothing to move between processes"})
                continue
            wanted.append((COLLECTIVES[op], int(row["comm_size"]), row["send_type"], row["recv_type"]))
        if not wanted:
            why = ("its counts per rank or neighbour are not in the record (its bytes are this rank's total)"
                   if op in NOT_REBUILT else "mg_callbench does not rebuild this call")
            left.append({**row, "reason": why})
            continue
        if row["bytes"] <= 0:
            left.append({**row, "reason": "no bytes to move"})
            continue
        if any("?" in (s, r) for _, _, s, r in wanted):
            left.append({**row, "reason": "the library could not describe its type"})
            continue
        for pattern, nprocs, s, r in wanted:
            k = (pattern, nprocs, int(row["bytes"]), s, r)
            shape = shapes.setdefault(k, {"calls": 0, "seconds": 0.0})
            shape["calls"] += int(row["calls"])
            shape["seconds"] += float(row["seconds"])
            taken.append({**row, "shape": k})
    ordered = sorted(shapes, key=lambda k: -shapes[k]["seconds"])
    kept = {k: f"s{i}" for i, k in enumerate(ordered[:max_shapes])}
    rows = [dict(zip(SHAPE_COLUMNS, (kept[k], *k[:2], k[2], *k[3:]), strict=True), **shapes[k]) for k in kept]
    out_taken = []
    for t in taken:
        k = t.pop("shape")
        if k in kept:
            out_taken.append({**t, "key": kept[k]})
        else:
            left.append({**t, "reason": f"below the {max_shapes} shapes the application spent most time in "
                                        "(--max-shapes)"})
    return (pd.DataFrame(rows, columns=[*SHAPE_COLUMNS, "calls", "seconds"]),
            pd.DataFrame(out_taken, columns=[*CALL_COLUMNS, "key"]).drop_duplicates(),
            pd.DataFrame(left, columns=[*CALL_COLUMNS, "reason"]).drop_duplicates(subset=CALL_COLUMNS[:9]))


def shapes_text(shapes: pd.DataFrame) -> str:
    """mg_callbench's --shapes file: KEY, PATTERN, BYTES, SEND_TYPE, RECV_TYPE, tab-separated."""
    lines = ["# key\tpattern\tbytes\tsend_type\trecv_type (mpiguide app tune: the application's recorded calls)"]
    lines += [f"{s.key}\t{s.pattern}\t{s.bytes}\t{s.send_type}\t{s.recv_type}" for s in shapes.itertuples()]
    return "\n".join(lines) + "\n"
