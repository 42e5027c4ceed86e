"""`mpiguide import reprompi FILE...`: ReproMPI measurements as an mpiguide run.

ReproMPI's mpibenchmark writes `#@key=value` header lines (nprocs, sync, nrep,
datatype_size_bytes, ...), `#` comments, a column line and one row per
repetition: `test nrep count|msize_bytes [errorcode] runtime_sec` (the
repetition's time, the maximum over processes), or with -v one row per process
and repetition with its local (and global) start and end times. Each FILE is
one mpirun, so one launch; the files of one experiment are its launches.
ReproMPI's count of Reduce_scatter_block is the block each process receives;
mpiguide's size of it is the whole vector (docs/tuning.md), p blocks.

This module reads the format; which calls become which measurement is each
suite's business: a suite that can take ReproMPI rows has a `reprompi`
importer (a ReproImporter), e.g. the collectives and their mock-ups
(GL_Bcast_as_ScatterAllgather, ...) become a `coll` run, the ping-pongs a
`pingpong` run. Calls no suite takes are listed as not imported. The run gets
the suite's verdicts and report like a measured one (`mpiguide analyze`,
`mpiguide compare` work on it)."""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mpiguide import __version__
from mpiguide.core import launch
from mpiguide.core.catalog import ESTIMATE_DEFAULTS
from mpiguide.core.errors import MpiguideError
from mpiguide.core.runner import MEASURE, OK, PENDING, Launch, RunDir, git_info

if TYPE_CHECKING:
    from mpiguide.core.suite import Registry

TYPES = {"MPI_CHAR": "char", "MPI_BYTE": "byte", "MPI_INT": "int", "MPI_SHORT": "short", "MPI_DOUBLE": "double"}
SYNCS = {"MPI_Barrier": "barrier", "Dissemination_Barrier": "dissem", "dissemination": "dissem"}


@dataclass
class ReproFile:
    """One ReproMPI output: its header and, per (test, msize in bytes), the time of each repetition."""

    path: Path
    header: dict[str, str]
    times: dict[tuple[str, int], list[float]] = field(default_factory=dict)
    nprocs: int = 0
    dropped: int = 0  # repetitions with a window-synchronization error code on some process


def _bad(path: Path, line: int, what: str) -> MpiguideError:
    return MpiguideError(f"{path}:{line}: {what}")


def _header_int(path: Path, header: dict[str, str], key: str, default: int | None = None) -> int:
    if key not in header and default is not None:
        return default
    try:
        return int(header[key])
    except KeyError:
        raise MpiguideError(f"{path}: no #@{key}= header line: is it mpibenchmark output?") from None
    except ValueError:
        raise MpiguideError(f"{path}: #@{key}={header[key]} is not a whole number") from None


def parse(path: Path) -> ReproFile:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise MpiguideError(f"cannot read {path}: {exc.strerror}") from exc
    header: dict[str, str] = {}
    cols: list[str] | None = None
    rows: list[tuple[int, list[str]]] = []
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s:
            continue
        if s.startswith("#@"):
            key, sep, value = s[2:].partition("=")
            if sep:
                header[key.strip()] = value.strip()
            continue
        if s.startswith("#"):
            continue
        tokens = s.split()
        if "test" in tokens:
            cols = tokens
            if "total_nrep" in cols:
                raise _bad(path, n, "this is ReproMPI's summary (--summary): mpiguide needs the time of every "
                                    "repetition; import the output of a run without --summary, or its --output-file")
            continue
        if cols is None:
            raise _bad(path, n, f"a data row before ReproMPI's column line (test nrep count runtime_sec): '{s[:80]}'")
        if len(tokens) != len(cols):
            raise _bad(path, n, f"{len(tokens)} values for the {len(cols)} columns {' '.join(cols)}")
        rows.append((n, tokens))
    if cols is None:
        raise MpiguideError(f"{path}: no ReproMPI column line (test nrep count runtime_sec): is it mpibenchmark "
                            "output?")
    f = ReproFile(path, header, nprocs=_header_int(path, header, "nprocs"))
    if f.nprocs < 1:
        raise MpiguideError(f"{path}: #@nprocs={f.nprocs} is not a number of processes")
    size_col = "msize_bytes" if "msize_bytes" in cols else "count"
    if size_col not in cols or "nrep" not in cols:
        raise MpiguideError(f"{path}: the column line {' '.join(cols)} has no nrep and count (or msize_bytes)")
    at = {c: i for i, c in enumerate(cols)}
    global_times = "gl_tstart_sec" in at and "gl_tend_sec" in at
    if "runtime_sec" not in at and not global_times and not ("loc_tstart_sec" in at and "loc_tend_sec" in at):
        raise MpiguideError(f"{path}: the column line {' '.join(cols)} has no times (runtime_sec, or the start and "
                            "end columns of -v)")
    unit = 1
    if size_col == "count":
        try:
            unit = int(header["datatype_size_bytes"])
        except (KeyError, ValueError):
            raise MpiguideError(f"{path}: sizes are counts, but no #@datatype_size_bytes= header line tells the "
                                "bytes of an element") from None
    per_rep: dict[tuple[str, int, int], list[tuple[float, float]]] = defaultdict(list)
    failed: set[tuple[str, int, int]] = set()  # (test, msize, rep) some process flagged
    for n, t in rows:
        try:
            key = (t[at["test"]], int(t[at[size_col]]) * unit)
            rep = int(t[at["nrep"]])
            if "errorcode" in at and int(t[at["errorcode"]]) != 0:
                failed.add((*key, rep))
                continue
            if "runtime_sec" in at:
                f.times.setdefault(key, []).append(float(t[at["runtime_sec"]]))
            elif global_times:
                per_rep[(*key, rep)].append((float(t[at["gl_tstart_sec"]]), float(t[at["gl_tend_sec"]])))
            else:
                per_rep[(*key, rep)].append((float(t[at["loc_tstart_sec"]]), float(t[at["loc_tend_sec"]])))
        except (KeyError, ValueError) as exc:
            raise _bad(path, n, f"not a number where one belongs ({exc})") from None
    # -v: the repetition's time is the slowest process's (local clocks: barrier synchronization) or the
    # span from the first start to the last end (global clocks), as ReproMPI computes it
    f.dropped = len(failed)
    for (test, msize, rep), spans in sorted(per_rep.items()):
        if (test, msize, rep) in failed:  # the whole repetition: its other processes' times mean nothing alone
            continue
        t = max(e for _, e in spans) - min(s for s, _ in spans) if global_times else max(e - s for s, e in spans)
        f.times.setdefault((test, msize), []).append(t)
    bad = [k for k, v in f.times.items() if any(not math.isfinite(x) or x < 0 for x in v)]
    if bad:
        raise MpiguideError(f"{path}: negative or non-finite times for {bad[0][0]} at {bad[0][1]} bytes")
    return f


# ---------------------------------------------------------------- the run directory



# ---------------------------------------------------------------- what a suite takes

@dataclass(frozen=True)
class Row:
    """The repetitions of one call at one size in one file, as a suite names them."""

    file: ReproFile
    what: str  # the measurement within the suite: a collective, a ping-pong variant
    impl: str  # its implementation ("default", a mock-up's name); "" where a measurement has one
    msize: int  # bytes, as the suite counts them
    times: list[float]


class ReproImporter(ABC):
    """How one suite takes ReproMPI rows: which calls are its measurements, and the raw files, templates and
    parameters of the run they become (the suite's `reprompi` attribute)."""

    driver: str  # the driver whose raw files the rows become, e.g. "mg_collbench"

    @abstractmethod
    def call(self, test: str) -> tuple[str, str] | None:
        """(what, impl) of a ReproMPI call name; None if the suite has no such measurement."""

    def msize(self, what: str, msize: int, nprocs: int) -> int:
        """The suite's size of a row ReproMPI counts msize bytes for."""
        return msize

    @abstractmethod
    def template(self, what: str, nprocs: int) -> tuple[str, int]:
        """The launch template of a row's launch and its number of processes."""

    @abstractmethod
    def raw_rows(self, rows: list[Row], esize: int) -> tuple[list[str], str, list[str]]:
        """One launch's rows as the driver writes them: its header lines, the column line and the data lines."""

    @abstractmethod
    def params(self, rows: list[Row], header: dict[str, str], dtype: str, root: int) -> dict:
        """The run's parameters (meta.json "params") as the suite's own job would have stored them."""


# ---------------------------------------------------------------- the run directory

def _raw(f: ReproFile, driver: str, nprocs: int, library: str, lines: tuple[list[str], str, list[str]]) -> str:
    """An mpiguide raw file (docs/formats.md) holding one ReproMPI file's rows for one launch."""
    extra, columns, rows = lines
    text = ["#@mpiguide_raw=1", f"#@driver={driver.removeprefix('mg_')}", f"#@library_version={library}",
            f"#@nprocs={nprocs}", f"#@sync={SYNCS.get(f.header.get('sync', ''), 'barrier')}", "#@nrep_method=fixed",
            f"#@imported_from=reprompi {f.path}", *extra, columns, *rows, "#@end=ok"]
    return "\n".join(text) + "\n"


def import_files(paths: list[Path], out: Path, stack: str, library: str | None,
                 suites: Registry) -> tuple[RunDir, list[str]]:
    """A finished run in `out` from ReproMPI outputs (one launch each); returns it and what was left out."""
    files = [parse(p) for p in paths]
    notes = [f"{f.path}: {f.dropped} repetition(s) with a window-synchronization error code left out"
             for f in files if f.dropped]
    importers = [(s.name, s.reprompi) for s in suites if s.reprompi is not None]
    kinds: dict[str, list[Row]] = defaultdict(list)  # job -> its rows
    for f in files:
        for (test, msize), times in sorted(f.times.items()):
            found = next(((job, imp, c) for job, imp in importers if (c := imp.call(test)) is not None), None)
            if found is None:
                notes.append(f"{f.path}: {test} left out: mpiguide has no such measurement")
                continue
            job, imp, (what, impl) = found
            kinds[job].append(Row(f, what, impl, imp.msize(what, msize, f.nprocs), times))
    if not kinds:
        raise MpiguideError("nothing to import: " + ("; ".join(notes) if notes else "the files hold no rows"))
    if len(kinds) > 1:
        raise MpiguideError(f"the files mix measurements of {' and '.join(sorted(kinds))} runs: import each kind "
                            "into a run of its own")
    ((job, entries),) = kinds.items()
    imp = suites.get(job).reprompi
    sha = files[0].header.get("reproMPIcommitSHA1", "")
    library = library or f"unknown (imported from ReproMPI{' ' + sha if sha else ''})"
    dtype = TYPES.get(files[0].header.get("datatype", "MPI_INT"), "int")
    esize = _header_int(files[0].path, files[0].header, "datatype_size_bytes", 4) or 4
    root = _header_int(files[0].path, files[0].header, "root_proc", 0)
    index = {id(f): i for i, f in enumerate(files)}  # a file given twice is two launches, as it was read twice
    by_launch: dict[tuple[str, int], list[Row]] = defaultdict(list)  # (template, file index) -> rows
    nprocs: dict[str, int] = {}
    for r in entries:
        template, nprocs[template] = imp.template(r.what, r.file.nprocs)
        by_launch[(template, index[id(r.file)])].append(r)
    launches, raws = [], {}
    rounds: dict[str, int] = defaultdict(int)
    for (template, _), rows in sorted(by_launch.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        run_index = rounds[template]
        rounds[template] += 1
        lid = f"{stack}-{template}-r{run_index}"
        launches.append(Launch(id=lid, stack=stack, template=template, phase=MEASURE, run_index=run_index,
                               nprocs=nprocs[template], driver=imp.driver, args=[], raw=f"raw/{stack}/{lid}.txt",
                               status=PENDING, returncode=0, attempts=1, seconds=0.0))
        raws[lid] = _raw(rows[0].file, imp.driver, nprocs[template], library, imp.raw_rows(rows, esize))
    if max(rounds.values()) == 1:
        notes.append("one launch per configuration: verdicts compare launches, so they stay INCONCLUSIVE; import "
                     "the outputs of several mpiruns of the experiment")
    nrep = max(len(r.times) for r in entries)
    meta = {
        "run_id": out.name, "job": job, "title": f"imported from ReproMPI ({job})",
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "mpiguide_version": __version__,
        "command": ["mpiguide", "import", "reprompi", *map(str, paths)], "stacks_order": [stack],
        "runs": max(rounds.values()), "params": imp.params(entries, files[0].header, dtype, root),
        "measurement": {"sync": SYNCS.get(files[0].header.get("sync", ""), "barrier"), "nrep": nrep,
                        **ESTIMATE_DEFAULTS},
        "analysis": {"samples": "medians", "tolerance": 0.05, "alpha": 0.05},
        "launch": launch.LaunchSpec().to_dict(),
        "stacks": {stack: {"name": stack, "family": "other", "prefix": "", "source": "reprompi",
                           "library_version": library, "compiler": "", "extra": {}}},
        "host": {"hostname": "not recorded (imported from ReproMPI)", "cpu_model": "", "cores": 0, "os": "",
                 "python": ""},
        "git": git_info(),
        "imported": {"from": "reprompi", "files": [str(p) for p in paths], "notes": notes,
                     "reprompi_commit": files[0].header.get("reproMPIcommitSHA1", "")},
    }
    rd = RunDir.create(out, meta, launches)  # pending until their raw files are written
    for lid, text in raws.items():
        p = out / f"raw/{stack}/{lid}.txt"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    for x in launches:
        x.status = OK
    rd.save()
    return rd, notes
