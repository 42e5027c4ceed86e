"""Profiles for libmpiguide-tune in mpiguide's format (docs/tuning.md): one file
per (collective, communicator size) with the byte ranges that use a mock-up,
written from the choices of a tune measurement, and read back for reports."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mpiguide.core.errors import MpiguideError
from mpiguide.suites.coll.analysis import DEFAULT

PROFILE_HEADER = "# mpiguide tune profile 1"


def profile_ranges(choices: pd.DataFrame) -> list[tuple[int, int, str]]:
    """Inclusive byte ranges of one (stack, processes, collective): consecutive measured sizes with the same
    mock-up become one range; sizes with no mock-up chosen, and the sizes between two different choices,
    stay native (no range)."""
    out: list[tuple[int, int, str]] = []
    prev = None
    for m, impl in zip(choices["msize"], choices["impl"], strict=True):
        if impl != DEFAULT and out and prev == impl and out[-1][2] == impl:
            out[-1] = (out[-1][0], int(m), impl)
        elif impl != DEFAULT:
            out.append((int(m), int(m), impl))
        prev = impl
    return out


def profile_text(collective: str, nprocs: int, ranges: list[tuple[int, int, str]], origin: str) -> str:
    lines = [PROFILE_HEADER, f"# {origin}", f"collective {collective}", f"procs {nprocs}",
             "# from_bytes to_bytes implementation"]
    lines += [f"{lo} {hi} {impl}" for lo, hi, impl in ranges]
    return "\n".join(lines) + "\n"


def write_profiles(choices: pd.DataFrame, out: Path, origin: str) -> list[Path]:
    """One profile per (stack, processes, collective) that uses a mock-up somewhere, in out/<stack>/; every
    stack gets its directory even when it needs no profile (the tuned library then runs natively)."""
    written = []
    for stack in sorted(set(choices["stack"])):
        (out / stack).mkdir(parents=True, exist_ok=True)
    for (stack, nprocs, coll), part in choices.groupby(["stack", "nprocs", "collective"], sort=True):
        ranges = profile_ranges(part.sort_values("msize"))
        if not ranges:
            continue
        path = out / stack / f"{coll}_p{nprocs}.prof"
        path.write_text(profile_text(coll, int(nprocs), ranges, origin))
        written.append(path)
    return written


def read_profile(path: Path) -> tuple[str, int, list[tuple[int, int, str]]]:
    """The (collective, processes, ranges) of a profile in mpiguide's format (for reports and tests; the
    library has its own reader with warnings)."""
    lines = path.read_text().splitlines()
    if not lines or not lines[0].startswith(PROFILE_HEADER):
        raise MpiguideError(f"{path}:1: not an mpiguide tune profile (first line must be '{PROFILE_HEADER}')")
    coll, procs, ranges = "", 0, []
    for no, line in enumerate(lines[1:], 2):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == "collective" and len(words) == 2:
            coll = words[1]
        elif words[0] == "procs" and len(words) == 2 and words[1].isdigit():
            procs = int(words[1])
        elif len(words) == 3 and words[0].isdigit() and words[1].isdigit():
            ranges.append((int(words[0]), int(words[1]), words[2]))
        else:
            raise MpiguideError(f"{path}:{no}: cannot read {line!r}")
    return coll, procs, ranges
