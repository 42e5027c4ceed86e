"""What the C side defines and the Python side must know before anything is
built, shared by the suites: the layouts of the catalog (src/bench/layouts.c)
and the drivers' measurement defaults (a suite's own catalog lives in the suite:
suites/coll/catalog.py). The C side is the source of
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

# The NREP estimation settings of Hunold and Carpen-Amarie (2018), Section 4.2, as the drivers default them.
ESTIMATE_DEFAULTS = {"rse_calib": 0.01, "rse_batch": 0.05, "b1": 5, "b2": 5, "nrep_min": 10, "nrep_max": 10000,
                     "calib_max": 10.0}


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
