"""`mpiguide import reprompi FILE...`: ReproMPI measurements as an mpiguide run.

ReproMPI's mpibenchmark writes `#@key=value` header lines (nprocs, sync, nrep,
datatype_size_bytes, ...), `#` comments, a column line and one row per
repetition: `test nrep count|msize_bytes [errorcode] runtime_sec` (the
repetition's time, the maximum over processes), or with -v one row per process
and repetition with its local (and global) start and end times. Each FILE is
one mpirun, so one launch; the files of one experiment are its launches.
ReproMPI's count of Reduce_scatter_block is the block each process receives;
mpiguide's size of it is the whole vector (docs/tuning.md), p blocks.

Collectives (MPI_Bcast, ...) and their mock-ups (GL_Bcast_as_ScatterAllgather,
...) become a `coll` run, the ping-pongs Send_Recv, Sendrecv and Isend_Irecv a
`pingpong` run; everything else is listed as not imported. The run gets the
suite's verdicts and report like a measured one (`mpiguide analyze`, `mpiguide
compare` work on it)."""

from __future__ import annotations

import math
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from mpiguide import __version__
from mpiguide.core import launch
from mpiguide.core.catalog import COLLECTIVES, MOCKUPS
from mpiguide.core.errors import MpiguideError
from mpiguide.core.runner import MEASURE, OK, PENDING, Launch, RunDir, git_info

MOCKUP_NAMES = {name: coll for coll, ms in MOCKUPS.items() for name, _, _ in ms}
PINGPONGS = {"Send_Recv": "send_recv", "Sendrecv": "sendrecv", "Isend_Irecv": "isend_irecv"}
TYPES = {"MPI_CHAR": "char", "MPI_BYTE": "byte", "MPI_INT": "int", "MPI_SHORT": "short", "MPI_DOUBLE": "double"}
OPS = {"MPI_BOR": "bor", "MPI_SUM": "sum", "MPI_MAX": "max"}
SYNCS = {"MPI_Barrier": "barrier", "Dissemination_Barrier": "dissem", "dissemination": "dissem"}


def mpiguide_call(test: str) -> tuple[str, str, str] | None:
    """('coll', collective, implementation) or ('pingpong', variant, '') of a ReproMPI call name; None if
    mpiguide has no such measurement."""
    if test in PINGPONGS:
        return "pingpong", PINGPONGS[test], ""
    if test.startswith("MPI_") and test[4:].lower() in COLLECTIVES:
        return "coll", test[4:].lower(), "default"
    m = re.fullmatch(r"GL_([A-Za-z_]+?)_as_([A-Za-z]+)", test)
    if m:  # GL_Reduce_scatter_block_as_ReduceScatter -> reducescatterblock_as_reduce_scatter
        what = m.group(1).replace("_", "").lower()
        how = "_".join(p.lower() for p in re.findall(r"[A-Z][a-z]*", m.group(2)))
        name = f"{what}_as_{how}"
        if name in MOCKUP_NAMES:
            return "coll", MOCKUP_NAMES[name], name
    return None


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

def _raw(f: ReproFile, driver: str, nprocs: int, library: str, extra: list[str], columns: str,
         rows: list[str]) -> str:
    """An mpiguide raw file (docs/formats.md) holding one ReproMPI file's rows for one launch."""
    lines = ["#@mpiguide_raw=1", f"#@driver={driver}", f"#@library_version={library}", f"#@nprocs={nprocs}",
             f"#@sync={SYNCS.get(f.header.get('sync', ''), 'barrier')}", "#@nrep_method=fixed",
             f"#@imported_from=reprompi {f.path}", *extra, columns, *rows, "#@end=ok"]
    return "\n".join(lines) + "\n"


def _coll_raw(f: ReproFile, coll: str, rows: list[tuple[str, int, list[float]]], library: str) -> str:
    mockups = [f"#@mockup[default]=0 MPI_{coll.capitalize()}"]
    mockups += [f"#@mockup[{name}]={gl} {formula}" for name, gl, formula in MOCKUPS[coll]]
    data = [f"{coll} {impl} {msize} {i} {t:.9e}" for impl, msize, times in rows for i, t in enumerate(times)]
    return _raw(f, "collbench", f.nprocs, library, [f"#@collectives={coll}", *mockups],
                "collective impl msize rep time_s", data)


def _pingpong_raw(f: ReproFile, rows: list[tuple[str, int, list[float]]], library: str, esize: int) -> str:
    data = [f"{v} {msize} {msize // esize} {i} {t:.9e}" for v, msize, times in rows for i, t in enumerate(times)]
    return _raw(f, "pingpong", 2, library, [], "variant msize_bytes count rep time_s", data)


def import_files(paths: list[Path], out: Path, stack: str, library: str | None) -> tuple[RunDir, list[str]]:
    """A finished run in `out` from ReproMPI outputs (one launch each); returns it and what was left out."""
    files = [parse(p) for p in paths]
    notes = [f"{f.path}: {f.dropped} repetition(s) with a window-synchronization error code left out"
             for f in files if f.dropped]
    kinds: dict[str, list] = defaultdict(list)  # job -> (file, test, what, impl, msize, times)
    for f in files:
        for (test, msize), times in sorted(f.times.items()):
            call = mpiguide_call(test)
            if call is None:
                notes.append(f"{f.path}: {test} left out: mpiguide has no such measurement")
                continue
            if call[1] == "reduce_scatter_block":
                msize *= f.nprocs
            kinds[call[0]].append((f, call[1], call[2], msize, times))
    if not kinds:
        raise MpiguideError("nothing to import: " + ("; ".join(notes) if notes else "the files hold no rows"))
    if len(kinds) > 1:
        raise MpiguideError("the files mix collectives and ping-pongs: import each kind into a run of its own")
    ((job, entries),) = kinds.items()
    sha = files[0].header.get("reproMPIcommitSHA1", "")
    library = library or f"unknown (imported from ReproMPI{' ' + sha if sha else ''})"
    dtype = TYPES.get(files[0].header.get("datatype", "MPI_INT"), "int")
    esize = _header_int(files[0].path, files[0].header, "datatype_size_bytes", 4) or 4
    root = _header_int(files[0].path, files[0].header, "root_proc", 0)
    index = {id(f): i for i, f in enumerate(files)}  # a file given twice is two launches, as it was read twice
    by_launch: dict[tuple[str, int], list] = defaultdict(list)  # (template, file index) -> rows
    nprocs: dict[str, int] = {}
    for f, what, impl, msize, times in entries:
        template = f"{what}-p{f.nprocs}" if job == "coll" else "pp"
        nprocs[template] = f.nprocs if job == "coll" else 2
        by_launch[(template, index[id(f)])].append((f, what, impl, msize, times))
    launches, raws = [], {}
    rounds: dict[str, int] = defaultdict(int)
    for (template, _), rows in sorted(by_launch.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        run_index = rounds[template]
        rounds[template] += 1
        lid = f"{stack}-{template}-r{run_index}"
        x = Launch(id=lid, stack=stack, template=template, phase=MEASURE, run_index=run_index,
                   nprocs=nprocs[template], driver="mg_collbench" if job == "coll" else "mg_pingpong", args=[],
                   raw=f"raw/{stack}/{lid}.txt", status=PENDING, returncode=0, attempts=1, seconds=0.0)
        f = rows[0][0]
        raws[lid] = _coll_raw(f, rows[0][1], [(i, m, t) for _, _, i, m, t in rows], library) if job == "coll" \
            else _pingpong_raw(f, [(v, m, t) for _, v, _, m, t in rows], library, esize)
        launches.append(x)
    if max(rounds.values()) == 1:
        notes.append("one launch per configuration: verdicts compare launches, so they stay INCONCLUSIVE; import "
                     "the outputs of several mpiruns of the experiment")
    sizes = sorted({m for *_, m, _ in entries})
    if job == "coll":
        params = {"collectives": [c for c in COLLECTIVES if any(e[1] == c for e in entries)], "sizes": sizes,
                  "np": sorted({f.nprocs for f, *_ in entries}), "datatype": dtype if dtype in ("byte", "int",
                                                                                                  "double") else "int",
                  "op": OPS.get(files[0].header.get("operation", ""), "sum"),
                  "root": root, "msg_pool": "64M", "int_pool": "256k",
                  "profiles": None}
    else:
        params = {"sizes": sizes, "variants": sorted({e[1] for e in entries}), "datatype": dtype}
    nrep = max(len(t) for *_, t in entries)
    meta = {
        "run_id": out.name, "job": job, "title": f"imported from ReproMPI ({job})",
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "mpiguide_version": __version__,
        "command": ["mpiguide", "import", "reprompi", *map(str, paths)], "stacks_order": [stack],
        "runs": max(rounds.values()), "params": params,
        "measurement": {"sync": SYNCS.get(files[0].header.get("sync", ""), "barrier"), "nrep": nrep,
                        "rse_calib": 0.01, "rse_batch": 0.05, "b1": 5, "b2": 5, "nrep_min": 10, "nrep_max": 10000,
                        "calib_max": 10.0},
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


def command(args, suites, write_report) -> int:
    """mpiguide import reprompi FILE...: the run, then its report."""
    out = Path(args.output) if args.output else Path("results") / (time.strftime("%Y%m%d-%H%M%S") + "-reprompi")
    rd, notes = import_files([Path(p) for p in args.files], out, args.stack, args.library_version)
    for n in notes:
        print(f"note: {n}")
    kinds = sorted({x.template for x in rd.launches})
    print(f"imported {len(rd.launches)} launch(es) of {', '.join(kinds)} into {rd.path} (a {rd.job} run, stack "
          f"'{args.stack}')")
    write_report(suites.get(rd.job), [rd], rd.path)
    return 0
