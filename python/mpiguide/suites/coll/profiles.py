"""Profiles for libmpiguide-tune (docs/tuning.md): one file per (collective,
communicator size) with the byte ranges that use a mock-up, written from the
choices of a tune measurement, and read back for reports; in mpiguide's format
or in PGMPITuneLib's, and converted between the two."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mpiguide.core.catalog import COLLECTIVES, MOCKUPS
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


# ---------------------------------------------------------------- PGMPITuneLib's format (002 Listing 1)

PGMPI_HEADER = "# pgtune profile (written by mpiguide)"


def pgmpi_text(collective: str, nprocs: int, ranges: list[tuple[int, int, str]]) -> str:
    """A profile in PGMPITuneLib's format: the mock-ups get alg ids 1, 2, ... in order of appearance."""
    ids: dict[str, int] = {}
    for _, _, impl in ranges:
        ids.setdefault(impl, len(ids) + 1)
    lines = [PGMPI_HEADER, "MPI_" + collective.capitalize(), f"{nprocs} # nb. of processes",
             f"{len(ids)} # nb. of mock-up impl."]
    lines += [f"{i} {impl}" for impl, i in ids.items()]
    lines.append(f"{len(ranges)} # nb. of ranges")
    lines += [f"{lo} {hi} {ids[impl]}" + (" # byte_range_start byte_range_end alg_id" if k == 0 else "")
              for k, (lo, hi, impl) in enumerate(ranges)]
    return "\n".join(lines) + "\n"


def read_pgmpi(path: Path) -> tuple[str, int, list[tuple[int, int, str]]]:
    """(collective, processes, ranges) of a PGMPITuneLib profile; MpiguideError with file:line otherwise."""
    items = []
    for no, line in enumerate(path.read_text().splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if words:
            items.append((no, words))

    def take(what: str, n: int) -> tuple[int, list[str]]:
        if not items:
            raise MpiguideError(f"{path}: ends before {what}")
        no, words = items.pop(0)
        if len(words) != n:
            raise MpiguideError(f"{path}:{no}: expected {what}, found {' '.join(words)!r}")
        return no, words

    def number(what: str) -> int:
        no, (w,) = take(what, 1)
        if not w.isdigit():
            raise MpiguideError(f"{path}:{no}: expected {what}, found {w!r}")
        return int(w)

    no, (name,) = take("the collective's MPI name", 1)
    coll = name[4:].lower() if name.startswith("MPI_") else ""
    if coll not in COLLECTIVES:
        raise MpiguideError(f"{path}:{no}: unknown collective {name!r} (mpiguide has "
                            f"{', '.join('MPI_' + c.capitalize() for c in COLLECTIVES)})")
    nprocs = number("the number of processes")
    algs = {}
    for _ in range(number("the number of mock-ups")):
        no, (alg, impl) = take("'alg_id name'", 2)
        if impl != DEFAULT and impl not in {m for m, _, _ in MOCKUPS[coll]}:
            raise MpiguideError(f"{path}:{no}: {coll} has no mock-up {impl!r} (it has "
                                f"{', '.join(m for m, _, _ in MOCKUPS[coll])})")
        algs[alg] = impl
    ranges = []
    for _ in range(number("the number of ranges")):
        no, (lo, hi, alg) = take("'start end alg_id'", 3)
        if not (lo.isdigit() and hi.isdigit()) or alg not in algs:
            raise MpiguideError(f"{path}:{no}: expected 'start end alg_id' with a declared alg id, found "
                                f"'{lo} {hi} {alg}'")
        ranges.append((int(lo), int(hi), algs[alg]))
    return coll, nprocs, [r for r in ranges if r[2] != DEFAULT]


FORMATS = ("pgmpi", "mpiguide")


def convert(src: Path, to: str, out: Path) -> tuple[list[Path], list[str]]:
    """Every collective profile of src written in the other format into out; returns the files written and
    what was left as it is (datatype profiles have no PGMPITuneLib form)."""
    if to not in FORMATS:
        raise MpiguideError(f"--to {to}: choose pgmpi or mpiguide")
    if not src.is_dir():
        raise MpiguideError(f"profile directory {src} does not exist")
    if out.resolve() == src.resolve():
        raise MpiguideError(f"--output {out} is the profile directory itself: write the conversion elsewhere")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MpiguideError(f"cannot create {out}: {exc.strerror}") from None
    written, skipped = [], []
    for path in sorted(p for p in src.iterdir() if p.suffix in (".prof", ".prf")):
        try:
            lines = path.read_text().splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise MpiguideError(f"cannot read the profile {path}: {exc}") from None
        mine = bool(lines) and lines[0].startswith(PROFILE_HEADER)
        words = next((w for w in (x.split("#", 1)[0].split() for x in lines[1:]) if w), [])
        if mine and words[:1] == ["datatypes"]:
            skipped.append(f"{path.name}: a datatype profile (mpiguide's format only)")
            continue
        if mine == (to == "mpiguide"):
            skipped.append(f"{path.name}: already in {to}'s format")
            continue
        coll, nprocs, ranges = read_profile(path) if mine else read_pgmpi(path)
        target = out / f"{coll}_p{nprocs}.{'prf' if to == 'pgmpi' else 'prof'}"
        if target in written:  # one (collective, processes) has one profile; the library would take either
            raise MpiguideError(f"{path} and another profile of {src} are both for {coll} on {nprocs} processes")
        if target.exists():
            raise MpiguideError(f"{target} exists: convert into an empty directory (--output)")
        try:
            target.write_text(pgmpi_text(coll, nprocs, ranges) if to == "pgmpi"
                              else profile_text(coll, nprocs, ranges, f"converted from {path}"))
        except OSError as exc:
            raise MpiguideError(f"cannot write {target}: {exc.strerror}") from None
        written.append(target)
    return written, skipped
