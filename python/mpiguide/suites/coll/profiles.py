"""Profiles for libmpiguide-tune (docs/tuning.md): one file per (collective,
communicator size) with the byte ranges that use a mock-up, written from the
choices of a tune measurement, and read back for reports; in mpiguide's format
or in PGMPITuneLib's, and converted between the two."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from mpiguide.core import dtchoice
from mpiguide.core.errors import MpiguideError
from mpiguide.core.tuning import ONLINE_IRREGULAR as IRREGULAR
from mpiguide.core.tuning import PROFILE_HEADER
from mpiguide.suites.coll.analysis import DEFAULT
from mpiguide.suites.coll.catalog import COLLECTIVES, MOCKUPS


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
        # a profile names no placement: the choices of a run's placements agree (analysis.agreed)
        ranges = profile_ranges(part.sort_values("msize").drop_duplicates("msize"))
        if not ranges:
            continue
        path = out / stack / f"{coll}_p{nprocs}.prof"
        path.write_text(profile_text(coll, int(nprocs), ranges, origin))
        written.append(path)
    return written


def read_profile(path: Path) -> tuple[str, int, list[tuple[int, int, str]]]:
    """The (collective, processes, ranges) of a profile in mpiguide's format (for reports, conversion and tests;
    the library has its own reader with warnings); MpiguideError with file:line otherwise."""
    lines = path.read_text().splitlines()
    if not lines or not lines[0].startswith(PROFILE_HEADER):
        raise MpiguideError(f"{path}:1: not an mpiguide tune profile (first line must be '{PROFILE_HEADER}')")
    coll, procs, ranges = "", 0, []
    for no, line in enumerate(lines[1:], 2):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == "collective" and len(words) == 2:
            coll = words[1][4:].lower() if words[1].startswith("MPI_") else words[1]
            if coll not in COLLECTIVES:
                raise MpiguideError(f"{path}:{no}: unknown collective {words[1]!r} (mpiguide has "
                                    f"{', '.join(COLLECTIVES)})")
        elif words[0] == "procs" and len(words) == 2 and words[1].isdigit():
            procs = int(words[1])
        elif len(words) == 3 and words[0].isdigit() and words[1].isdigit() and coll:
            if words[2] != DEFAULT and words[2] not in {m for m, _, _ in MOCKUPS[coll]}:
                raise MpiguideError(f"{path}:{no}: {coll} has no mock-up {words[2]!r} (it has "
                                    f"{', '.join(m for m, _, _ in MOCKUPS[coll])})")
            ranges.append((int(words[0]), int(words[1]), words[2]))
        else:
            raise MpiguideError(f"{path}:{no}: cannot read {line!r}" + (
                "" if coll else " (a range needs a 'collective' line before it)"))
    if not coll or not procs:
        raise MpiguideError(f"{path}:{len(lines)}: ends without a '{'collective' if not coll else 'procs'}' line")
    return coll, procs, ranges


# ---------------------------------------------------------------- PGMPITuneLib's format
# (Hunold and Carpen-Amarie 2018, Listing 1)

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
SUFFIXES = {"mpiguide": ".prof", "pgmpi": ".prf"}  # libmpiguide-tune reads files of either suffix, nothing else


@dataclass
class Conversion:
    """What `convert` did with each file of a profile directory."""

    written: list[Path] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # not for conversion: datatype profiles, the target format
    skipped: list[str] = field(default_factory=list)  # could not be read: FILE:LINE: why


def _read_foreign(path: Path, lines: list[str]) -> tuple[str, int, list[tuple[int, int, str]]]:
    """read_pgmpi of a file whose first line is not mpiguide's header; one in neither format says so."""
    first = next(((no, x.split("#", 1)[0].strip()) for no, x in enumerate(lines, 1) if x.split("#", 1)[0].strip()),
                 None)
    if first is None:
        raise MpiguideError(f"{path}:{len(lines) or 1}: not a profile: the file holds no profile line")
    no, text = first
    if not text.startswith("MPI_"):
        raise MpiguideError(f"{path}:{no}: not a profile: found {text!r} where mpiguide's format has "
                            f"'{PROFILE_HEADER}' and PGMPITuneLib's a collective's MPI name such as MPI_Bcast")
    return read_pgmpi(path)


def convert(src: Path, to: str, out: Path) -> Conversion:
    """Every collective profile of src written in the other format into out (created for the first one). A file
    that cannot be read is skipped with its line and why, and the others are still converted; files that are not
    for conversion are left out with a note (datatype profiles have no PGMPITuneLib form). Two profiles of one
    (collective, processes) or a file already at the target stop it."""
    if to not in FORMATS:
        raise MpiguideError(f"--to {to}: choose pgmpi or mpiguide")
    if not src.is_dir():
        raise MpiguideError(f"profile directory {src} does not exist")
    if out.resolve() == src.resolve():
        raise MpiguideError(f"--output {out} is the profile directory itself: write the conversion elsewhere")
    done = Conversion()
    for path in sorted(src.iterdir()):
        if path.is_dir():
            done.left_out.append(f"{path.name}/: a directory (convert each profile directory on its own)")
            continue
        if path.suffix not in SUFFIXES.values():
            done.left_out.append(f"{path.name}: not named like a profile (the library reads only *.prof and *.prf)")
            continue
        try:
            lines = path.read_text().splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            done.skipped.append(f"{path}: cannot read it: {exc}")
            continue
        mine = bool(lines) and lines[0].startswith(PROFILE_HEADER)
        words = next((w for w in (x.split("#", 1)[0].split() for x in lines[1:]) if w), [])
        if mine and words[:1] == ["datatypes"]:
            done.left_out.append(f"{path.name}: a datatype profile (mpiguide's format only)")
            continue
        if mine and to == "mpiguide":
            done.left_out.append(f"{path.name}: already in {to}'s format")
            continue
        try:
            coll, nprocs, ranges = read_profile(path) if mine else _read_foreign(path, lines)
        except MpiguideError as exc:
            done.skipped.append(str(exc))
            continue
        if not mine and to == "pgmpi":
            done.left_out.append(f"{path.name}: already in {to}'s format")
            continue
        target = out / f"{coll}_p{nprocs}{SUFFIXES[to]}"
        if target in done.written:  # one (collective, processes) has one profile; the library would take either
            raise MpiguideError(f"{path} and another profile of {src} are both for {coll} on {nprocs} processes")
        if target.exists():
            raise MpiguideError(f"{target} exists: convert into an empty directory (--output)")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MpiguideError(f"cannot create {out}: {exc.strerror}") from None
        try:
            target.write_text(pgmpi_text(coll, nprocs, ranges) if to == "pgmpi"
                              else profile_text(coll, nprocs, ranges, f"converted from {path}"))
        except OSError as exc:
            raise MpiguideError(f"cannot write {target}: {exc.strerror}") from None
        done.written.append(target)
    return done


# ---------------------------------------------------------------- from online mode's report

# `#@tune_online[MPI_Allreduce 4 64 int sum]=chosen=allreduce_as_reduce_bcast calls=900 ...` and
# `#@tune_online_dt[MPI_Irecv 1024 vector 8 0]=chosen=pack calls=400 ...` (docs/formats.md)
_ONLINE = re.compile(r"^#@tune_online\[(?P<key>[^\]]*)\]=(?P<value>.*)$")
_ONLINE_DT = re.compile(r"^#@tune_online_dt\[(?P<key>[^\]]*)\]=(?P<value>.*)$")
# the operations online mode learns a datatype strategy for, by the datatype profile that keys them (a
# sendrecv's key is its send side's, which chose for both sides: a send rule; its receive side's where the
# send side had no key; a blocking v, w or neighbourhood collective's, native or normalized: its own)
_DT_CLASS = {"MPI_Send": "send", "MPI_Ssend": "send", "MPI_Rsend": "send", "MPI_Isend": "send",
             "MPI_Issend": "send", "MPI_Recv": "recv", "MPI_Irecv": "recv",
             "MPI_Sendrecv:send": "send", "MPI_Sendrecv:recv": "recv",
             "MPI_Sendrecv_replace:send": "send", "MPI_Sendrecv_replace:recv": "recv", **dtchoice.VW_OPERATIONS}


@dataclass
class OnlineKey:
    """One key of online mode's report: a collective on `nprocs` processes at `nbytes`, with the reduction's
    datatype and operation where it has them, and what the run chose (None: not settled)."""

    collective: str
    nprocs: int
    nbytes: int
    reduction: str
    chosen: str | None
    calls: int


@dataclass
class OnlineDtKey:
    """One key of online mode's datatype strategies: a side of `operation` (the datatype profile's: send or
    recv) of `nbytes` with a type of this shape and mean block, and what the run chose (None: not settled)."""

    operation: str
    nbytes: int
    shape: str
    block: int
    chosen: str | None
    calls: int


def _keyed_lines(path: Path, pattern: re.Pattern) -> Iterator[tuple[int, str, list[str], dict[str, str]]]:
    """The lines of a report that pattern matches: line number, line, the key's words and the value's
    name=value fields."""
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise MpiguideError(f"cannot read {path}: {exc}") from None
    for no, line in enumerate(lines, 1):
        m = pattern.match(line)
        if m:
            yield no, line, m["key"].split(), dict(f.split("=", 1) for f in m["value"].split() if "=" in f)


def read_online_dt(path: Path) -> list[OnlineDtKey]:
    """The `#@tune_online_dt` lines of a report; MpiguideError with file:line for a line that does not read."""
    keys = []
    for no, line, words, fields in _keyed_lines(path, _ONLINE_DT):
        chosen = fields.get("chosen", "")
        numbers = len(words) == 5 and all(w.isdigit() for w in (words[1], words[3], words[4]))
        if (not numbers or words[0] not in _DT_CLASS or not fields.get("calls", "").isdigit()
                or chosen not in ("-", dtchoice.NATIVE, dtchoice.NORMALIZED, dtchoice.PACK)):
            raise MpiguideError(f"{path}:{no}: not a #@tune_online_dt line of libmpiguide-tune: {line!r}")
        keys.append(OnlineDtKey(_DT_CLASS[words[0]], int(words[1]), words[2], int(words[3]),
                                None if chosen == "-" else chosen, int(fields["calls"])))
    return keys


def read_online(path: Path) -> list[OnlineKey]:
    """The `#@tune_online` lines of a report (MPIGUIDE_TUNE_REPORT's file; other lines are ignored);
    MpiguideError with file:line for a line that does not read."""
    keys = []
    for no, line, words, fields in _keyed_lines(path, _ONLINE):
        name = words[0][4:].lower() if words and words[0].startswith("MPI_") else ""
        if (len(words) not in (3, 5) or name not in (*COLLECTIVES, *IRREGULAR) or not words[1].isdigit()
                or not words[2].isdigit() or "chosen" not in fields or not fields.get("calls", "").isdigit()):
            raise MpiguideError(f"{path}:{no}: not a #@tune_online line of libmpiguide-tune: {line!r}")
        chosen = fields["chosen"]
        if name in COLLECTIVES and chosen not in ("-", DEFAULT) and chosen not in {mk for mk, _, _ in MOCKUPS[name]}:
            raise MpiguideError(f"{path}:{no}: {name} has no implementation {chosen!r}")
        keys.append(OnlineKey(name, int(words[1]), int(words[2]), " ".join(words[3:]),
                              None if chosen == "-" else chosen, int(fields["calls"])))
    return keys


@dataclass
class FromOnline:
    """What `from_online` wrote, and the keys it could not take as they are."""

    written: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def from_online(reports: list[Path], out: Path) -> FromOnline:
    """Profiles of the settled keys of online mode's reports (rank 0's, or every rank's: MPIGUIDE_TUNE_REPORT
    with %r): each (collective, processes) gets the message sizes its run settled on, each as a one-size range
    (sizes between them stay native: the run measured no other). Where keys of one size settled differently
    (reductions of other datatypes or operations), the key with the most calls decides, with a note; keys
    that never settled are left out, with a note. The datatype strategies' keys, each rank's own, become
    datatype profiles the same way (dt_send_any.prof, dt_recv_any.prof)."""
    keys, dt_keys = [], []
    for report in reports:
        keys += read_online(report)
        dt_keys += read_online_dt(report)
    if not keys and not dt_keys:
        names = ", ".join(str(r) for r in reports)
        raise MpiguideError(f"no #@tune_online line in {names}: run the program with MPIGUIDE_TUNE_MODE=online "
                            "and MPIGUIDE_TUNE_REPORT=FILE (a report of another mode has none)")
    source = f"from online mode's report{'s' if len(reports) > 1 else ''} {', '.join(r.name for r in reports)}"
    done = FromOnline()
    _dt_from_online(dt_keys, source, out, done)
    irregular = [k for k in keys if k.collective in IRREGULAR]
    if irregular:
        which = ", ".join(sorted({k.collective for k in irregular}))
        done.notes.append(f"{len(irregular)} key(s) of irregular collectives ({which}): tuned mode has no profiles "
                          "for them, online mode learns them in each run")
        keys = [k for k in keys if k.collective not in IRREGULAR]
    unsettled = [k for k in keys if k.chosen is None]
    if unsettled:
        done.notes.append(f"{len(unsettled)} key(s) never settled (too few calls to explore): they stay native")
    by_size: dict[tuple[str, int, int], list[OnlineKey]] = {}
    for k in keys:
        if k.chosen is not None:
            by_size.setdefault((k.collective, k.nprocs, k.nbytes), []).append(k)
    chosen: dict[tuple[str, int], list[tuple[int, str]]] = {}
    for (coll, nprocs, nbytes), ks in sorted(by_size.items()):
        best = max(ks, key=lambda k: k.calls)
        if len({k.chosen for k in ks}) > 1:
            done.notes.append(f"{coll} on {nprocs} processes at {nbytes} bytes: keys chose "
                              + ", ".join(f"{k.chosen} ({k.reduction or 'no reduction'}, {k.calls} calls)"
                                          for k in ks)
                              + f"; the profile takes {best.chosen}, of the most calls")
        chosen.setdefault((coll, nprocs), []).append((nbytes, best.chosen))
    for (coll, nprocs), sizes in sorted(chosen.items()):
        ranges = [(n, n, impl) for n, impl in sizes if impl != DEFAULT]
        if not ranges:
            continue
        target = out / f"{coll}_p{nprocs}{SUFFIXES['mpiguide']}"
        if target.exists():
            raise MpiguideError(f"{target} exists: write the profiles into an empty directory (--output)")
        try:
            out.mkdir(parents=True, exist_ok=True)
            target.write_text(profile_text(coll, nprocs, ranges, source))
        except OSError as exc:
            raise MpiguideError(f"cannot write {target}: {exc.strerror}") from None
        done.written.append(target)
    return done


def _dt_from_online(keys: list[OnlineDtKey], source: str, out: Path, done: FromOnline) -> None:
    """The datatype profiles of the settled datatype keys: per operation, a one-size rule for each (shape,
    mean block, bytes) that settled on normalized or pack; where keys of one such point settled differently
    (threads, ranks, or operations of one profile), the key with the most calls decides, with a note."""
    unsettled = [k for k in keys if k.chosen is None]
    if unsettled:
        done.notes.append(f"{len(unsettled)} datatype key(s) never settled (too few calls to explore): they stay "
                          "native")
    points: dict[tuple[str, str, int, int], list[OnlineDtKey]] = {}
    for k in keys:
        if k.chosen is not None:
            points.setdefault((k.operation, k.shape, k.block, k.nbytes), []).append(k)
    rules: dict[str, list[dtchoice.Rule]] = {}
    for (operation, shape, block, nbytes), ks in sorted(points.items()):
        best = max(ks, key=lambda k: k.calls)
        if len({k.chosen for k in ks}) > 1:
            done.notes.append(f"{operation} of {shape} (block {block}) at {nbytes} bytes: keys chose "
                              + ", ".join(f"{k.chosen} ({k.calls} calls)" for k in ks)
                              + f"; the profile takes {best.chosen}, of the most calls")
        if best.chosen != dtchoice.NATIVE:
            rules.setdefault(operation, []).append((shape, nbytes, nbytes, best.chosen, (block, block)))
    for operation, rs in sorted(rules.items()):
        target = out / f"dt_{operation}_{dtchoice.ANY}{SUFFIXES['mpiguide']}"
        if target.exists():
            raise MpiguideError(f"{target} exists: write the profiles into an empty directory (--output)")
        try:
            out.mkdir(parents=True, exist_ok=True)
            target.write_text(dtchoice.profile_text(operation, dtchoice.ANY, rs, source))
        except OSError as exc:
            raise MpiguideError(f"cannot write {target}: {exc.strerror}") from None
        done.written.append(target)
