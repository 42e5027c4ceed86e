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

# libmpiguide-tune's pool defaults (src/tune/defaults.h), as its configuration writes them.
POOL_DEFAULTS = {"msg_pool": "64M", "int_pool": "256k"}


def driver_list(stack: Stack, driver: str) -> dict:
    """The JSON object `DRIVER --list` prints: the driver's catalogs and defaults (the stack is built)."""
    exe = build.driver_path(stack, driver)
    argv = launch.command(launch.LaunchSpec(), stack, 1, str(exe), ["--list"])
    with stack.launch_env() as env:
        res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    if res.returncode != 0:
        raise MpiguideError(f"{driver} --list failed with status {res.returncode}: {res.stderr.strip()[-500:]}")
    try:
        return json.loads(res.stdout)
    except json.JSONDecodeError as exc:
        raise MpiguideError(f"{driver} --list printed no JSON object ({exc}): {res.stdout[:200]!r}") from exc
