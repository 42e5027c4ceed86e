"""What the C side defines and the Python side must know before anything is
built: the layouts of the catalog (src/bench/layouts.c), the collectives of
libmpiguide-tune and the library's defaults. The C side is the source of
truth: every driver prints its catalogs and defaults with `--list` (one JSON
object), `driver_list` reads that, and tests/python/test_catalog.py fails when
the copies here drift from it."""

from __future__ import annotations

import json
import subprocess

from mpiguide.core import build, launch
from mpiguide.core.errors import MpiguideError
from mpiguide.core.stacks import Stack

# src/bench/layouts.c, catalog order.
LAYOUT_NAMES = (
    "contiguous", "tiled", "block", "bucket", "alternating", "tiled-heterogeneous", "contiguous-subtype",
    "tiled-struct", "tiled-vector", "vector-tiled", "block-indexed", "alternating-indexed",
    "alternating-repeated", "alternating-struct", "rowcol-fully-indexed", "rowcol-contiguous-and-indexed",
    "rowcol-struct",
)

# libmpiguide-tune's collectives (mpiguide/tune.h: mg_tune_collective_name), in its order.
COLLECTIVES = ("allgather", "allreduce", "alltoall", "bcast", "gather", "reduce", "reduce_scatter_block", "scan",
               "scatter")

# Their mock-ups (src/tune/mockups/*.c): collective -> (name, n of COLL-GLn, formula), in the library's order.
MOCKUPS = {
    "allgather": (("allgather_as_gather_bcast", 1, "MPI_Gather + MPI_Bcast"),
                  ("allgather_as_alltoall", 2, "MPI_Alltoall"), ("allgather_as_allreduce", 3, "MPI_Allreduce"),
                  ("allgather_as_allgatherv", 4, "MPI_Allgatherv")),
    "allreduce": (("allreduce_as_reduce_bcast", 5, "MPI_Reduce + MPI_Bcast"),
                  ("allreduce_as_reducescatterblock_allgather", 6, "MPI_Reduce_scatter_block + MPI_Allgather"),
                  ("allreduce_as_reducescatter_allgatherv", 7, "MPI_Reduce_scatter + MPI_Allgatherv")),
    "alltoall": (("alltoall_as_alltoallv", 8, "MPI_Alltoallv"),),
    "bcast": (("bcast_as_allgatherv", 9, "MPI_Allgatherv"),
              ("bcast_as_scatter_allgather", 10, "MPI_Scatter + MPI_Allgather")),
    "gather": (("gather_as_allgather", 11, "MPI_Allgather"), ("gather_as_gatherv", 12, "MPI_Gatherv"),
               ("gather_as_reduce", 13, "MPI_Reduce (MPI_BOR on zero-filled blocks)")),
    "reduce": (("reduce_as_allreduce", 14, "MPI_Allreduce"),
               ("reduce_as_reducescatterblock_gather", 15, "MPI_Reduce_scatter_block + MPI_Gather"),
               ("reduce_as_reducescatter_gatherv", 16, "MPI_Reduce_scatter + MPI_Gatherv")),
    "reduce_scatter_block": (("reducescatterblock_as_reduce_scatter", 17, "MPI_Reduce + MPI_Scatter"),
                             ("reducescatterblock_as_reducescatter", 18, "MPI_Reduce_scatter"),
                             ("reducescatterblock_as_allreduce", 19, "MPI_Allreduce")),
    "scan": (("scan_as_exscan_reducelocal", 20, "MPI_Exscan + MPI_Reduce_local"),),
    "scatter": (("scatter_as_bcast", 21, "MPI_Bcast"), ("scatter_as_scatterv", 22, "MPI_Scatterv")),
}

# libmpiguide-tune's pool defaults (src/tune/defaults.h), as its configuration writes them.
POOL_DEFAULTS = {"msg_pool": "64M", "int_pool": "256k"}


def driver_list(stack: Stack, driver: str) -> dict:
    """The JSON object `DRIVER --list` prints: the driver's catalogs and defaults (the stack is built)."""
    return driver_json(stack, driver, ["--list"])


def driver_json(stack: Stack, driver: str, args: list[str]) -> dict:
    """The one JSON object a driver prints on standard output with args, launched on one process."""
    exe = build.driver_path(stack, driver)
    argv = launch.command(launch.LaunchSpec(), stack, 1, str(exe), args)
    with stack.launch_env() as env:
        res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    if res.returncode != 0:
        raise MpiguideError(f"{driver} {' '.join(args)} failed with status {res.returncode}: "
                            f"{res.stderr.strip()[-500:]}")
    try:
        return json.loads(res.stdout)
    except json.JSONDecodeError as exc:
        raise MpiguideError(f"{driver} {' '.join(args)} printed no JSON object ({exc}): {res.stdout[:200]!r}") from exc
