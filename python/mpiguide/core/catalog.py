"""What the C side defines and the Python side must know before anything is
built, shared by the suites: the layouts of the catalog (src/bench/layouts.c)
and the drivers' measurement defaults (a suite's own catalog lives in the suite:
suites/coll/catalog.py). The C side is the source of truth: the catalogs are
read from its sources (which ship with the package), `driver_list` reads what a
built driver prints with `--list` (one JSON object), and
tests/python/test_catalog.py checks that the two agree."""

from __future__ import annotations

import json
import re
import subprocess

from mpiguide.core import build, launch
from mpiguide.core.errors import MpiguideError
from mpiguide.core.paths import source_root
from mpiguide.core.stacks import Stack


def c_table(path: str, pattern: str, what: str, text: str | None = None) -> list:
    """Every match of pattern (its groups) in the C source path, in source order; MpiguideError naming the file
    if there is none (the table changed shape, or the sources are incomplete). text: the source itself, for
    tests."""
    if text is None:
        try:
            text = (source_root() / path).read_text()
        except OSError as exc:
            raise MpiguideError(f"cannot read {what} from {source_root() / path}: {exc.strerror}") from exc
    found = re.findall(pattern, text)
    if not found:
        raise MpiguideError(f"found no {what} in {path}: its table no longer has the form {pattern!r}")
    return found


# src/bench/layouts.c, catalog order: the `.d = {.name = "..."` of each row.
LAYOUT_NAMES = tuple(c_table("src/bench/layouts.c", r'\.d = \{\.name = "([a-z-]+)"', "layout names"))

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
        # a library's texts need not be UTF-8 (Intel MPI's descriptions say "Intel\xae" in Latin-1)
        res = subprocess.run(argv, env=env, capture_output=True, text=True, errors="replace", timeout=120)
    if res.returncode != 0:
        raise MpiguideError(f"{driver} {' '.join(args)} failed with status {res.returncode}: "
                            f"{res.stderr.strip()[-500:]}")
    try:
        return json.loads(res.stdout)
    except json.JSONDecodeError as exc:
        raise MpiguideError(f"{driver} {' '.join(args)} printed no JSON object ({exc}): {res.stdout[:200]!r}") from exc
