"""`mpiguide sim coll`: the collective guidelines (COLL-GLn) and the mock-ups of libmpiguide-tune predicted
at 16 to 1024 ranks on a modelled cluster, with SimGrid SMPI (mpiguide.core.smpi) and the collective selection
logic SMPI reproduces of MPICH, Open MPI, Intel MPI or MVAPICH2.

Every number here is a prediction of the model, named with it (SimGrid's version, the selector, the platform),
and never a measurement: the tables say so, and nothing here mixes with measured runs (`mpiguide compare`
takes measured runs only).

How a predicted verdict is formed. Simulated time has no run-to-run noise: the same program on the same
platform takes the same simulated time (up to the order the driver draws for the sides), so there is no
sample to test. Each side's time is the median of its few repetitions, and a point is one ratio, the
default's time over the mock-up's: COLL-GLn is predicted violated where that factor exceeds 1 + tolerance
(default 5 %), kept otherwise. The tuned library is then simulated too: where the fastest mock-up takes at
least the threshold (default 10 %) less time than the default, a profile picks it, as `mpiguide tune` writes
them, and one more launch per selector and scale runs the default and the library with those profiles side by
side; the tuned library's predicted gain is the default's time over the tuned library's in that launch.

What the model leaves out: no local computation is charged (core.smpi runs SMPI so, which makes the
predictions repeatable), nor SMPI's own datatype handling, and every rank runs in one process (memory for
p ranks' buffers is real); the results of every configuration are still checked against the native call by
the driver, and one that differs is left out and listed (docs/simulation.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd

from mpiguide.core import children, families, options, rawfile, smpi
from mpiguide.core.compare import BASE_ONLY, FIXED, NEW_ONLY, STILL
from mpiguide.core.compare import NEW as NEWLY
from mpiguide.core.document import Document, Heatmap, worst_cells
from mpiguide.core.errors import MpiguideError
from mpiguide.core.measurements import stack_versions
from mpiguide.core.runner import RunDir, resolve_run
from mpiguide.core.suite import Report
from mpiguide.front.commands import console, out
from mpiguide.suites.coll import analysis
from mpiguide.suites.coll.catalog import COLLECTIVES, MOCKUPS
from mpiguide.suites.coll.profiles import write_profiles

VIOLATED = "predicted violation"
KEPT = "predicted kept"
COLORS = ((VIOLATED, "#f4a6a6"), (KEPT, "#b8e0b8"))
PLATFORMS = ("fattree", "flat", "torus", "dragonfly", "calibrated")
DEFAULT_SIZES = "8,1024"
DEFAULT_NP = "16,64"
# all ranks' buffers live in the one simulating process: refuse a grid that needs more than this share of RAM
MEMORY_SHARE = 0.5
# SMPI 3.32's Scan at 256 ranks, two sizes, 2 repetitions: still running after 5 minutes of wall time
SLOW_SCAN_ABOVE = 64
VERDICT_COLUMNS = ["selector", "nprocs", "collective", "msize", "impl", "guideline", "default_s", "mockup_s",
                   "factor", "verdict"]
POINT = ["selector", "nprocs", "collective", "msize"]
TUNED_COLUMNS = [*POINT, "profile", "mockup_factor", "default_s", "tuned_s", "tuned_factor"]
DEFAULT_THRESHOLD = 0.10
# seconds of wall time one launch may take before it is stopped (and split, or left out): SMPI 3.32 spends
# minutes to hours in some algorithms at a few hundred ranks (Open MPI's linear Alltoall under
# allgather_as_alltoall at 256 ranks and 1 kB: over 150 s)
DEFAULT_LAUNCH_TIMEOUT = 600.0
_RAW_NAME = re.compile(r"^(?P<selector>.+)-p(?P<nprocs>\d+)(?:-(?P<collective>[a-z_]+)(?:\.(?P<impl>[a-z_]+))?)?$")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--selectors", default="mpich,ompi,impi",
                   help=f"whose collective selection SMPI models: {', '.join(smpi.SELECTORS)} (default "
                        "mpich,ompi,impi)")
    p.add_argument("--np", default=DEFAULT_NP, help=f"simulated process counts (default {DEFAULT_NP})")
    _platform_arguments(p, "fattree")
    p.add_argument("--collectives", default="all", help="collectives (default all nine)")
    p.add_argument("--sizes", default=DEFAULT_SIZES,
                   help=f"message sizes, as mg_collbench takes them (default {DEFAULT_SIZES}); memory for all "
                        "ranks' buffers is real")
    p.add_argument("--tolerance", type=float, default=0.05,
                   help="a mock-up faster than the default by more than this share is a predicted violation "
                        "(default 0.05)")
    p.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD,
                   help="the tuned library's profiles pick a mock-up that takes at least this share less time than "
                        f"the default (default {DEFAULT_THRESHOLD})")
    timeout = p.add_argument(
        "--timeout", type=float, default=None, metavar="SECONDS",
        help="stop a launch after this much wall time: it is split into one per collective, then one per "
             f"implementation, and what still stops is left out, said so in the report (default "
             f"{DEFAULT_LAUNCH_TIMEOUT:g}; with --resume: a new limit for the launches left)")
    options.add_old_name(p, "--launch-timeout", timeout)
    _output_argument(p, "the directory (default results/<time>-sim-coll)")
    p.add_argument("--resume", type=Path, default=None, metavar="DIR",
                   help="continue a simulation in DIR: finished launches are kept")


def _output_argument(p: argparse.ArgumentParser, what: str) -> None:
    """--output, as every command spells it (--out, its old spelling here, still taken)."""
    options.add_old_name(p, "--out", p.add_argument("--output", type=Path, default=None, metavar="DIR", help=what))


def _platform_arguments(p: argparse.ArgumentParser, default: str) -> None:
    """The modelled cluster and the repetitions, as `sim coll` and `sim check` take them."""
    p.add_argument("--platform", default=default, choices=PLATFORMS,
                   help=f"the modelled cluster, one node per rank: a two-level fat tree of 4-port switches, one "
                        "switch (flat), a 3D torus, a dragonfly of 16-node groups, or the flat cluster calibrated "
                        f"on a ping-pong (mpiguide sim calibrate) (default {default})")
    p.add_argument("--bandwidth", default="10GBps", help="link bandwidth but for calibrated (default 10GBps)")
    p.add_argument("--latency", default="1us", help="link latency but for calibrated (default 1us)")
    p.add_argument("--calibration", type=Path, default=None,
                   help=f"the calibration of --platform calibrated (default {smpi.calibration_path()})")
    p.add_argument("--nrep", type=int, default=3, help="simulated repetitions per configuration (default 3; "
                                                         "simulated time has no noise)")


@dataclasses.dataclass(frozen=True)
class Settings:
    selectors: list[str]
    nps: list[int]
    platform: str
    bandwidth: str
    latency: str
    calibration: str | None
    collectives: list[str]
    sizes: str
    nrep: int
    tolerance: float
    threshold: float = DEFAULT_THRESHOLD  # simulations written before the tuned library was simulated have none
    launch_timeout: float = DEFAULT_LAUNCH_TIMEOUT

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Settings:
        selectors = options.parse_choice_list(args.selectors, smpi.SELECTORS, "collective selector")
        nps = options.int_list(args.np, "--np", minimum=2)
        if args.platform == "fattree" and any(n % 4 for n in nps):
            raise MpiguideError(f"--platform fattree has 4-port switches: every --np must be a multiple of 4 "
                                f"(got {args.np})")
        if args.platform == "dragonfly" and any(n % smpi.DRAGONFLY_GROUP for n in nps):
            raise MpiguideError(f"--platform dragonfly has groups of {smpi.DRAGONFLY_GROUP} nodes: every --np must "
                                f"be a multiple of {smpi.DRAGONFLY_GROUP} (got {args.np})")
        colls = list(COLLECTIVES) if args.collectives == "all" else options.parse_choice_list(
            args.collectives, COLLECTIVES, "collective")
        options.parse_sizes(args.sizes)  # refuses a malformed list with its own message
        if args.nrep < 1:
            raise MpiguideError(f"--nrep {args.nrep}: at least 1")
        if not 0 <= args.tolerance < 1:
            raise MpiguideError(f"--tolerance {args.tolerance}: between 0 and 1")
        threshold = getattr(args, "threshold", DEFAULT_THRESHOLD)
        if not 0 <= threshold < 1:
            raise MpiguideError(f"--threshold {threshold}: the share of time a mock-up must save, such as 0.1")
        timeout = _launch_timeout(args)
        calibration = None
        if args.platform == "calibrated":
            path = args.calibration or smpi.calibration_path()
            if not path.exists():
                raise MpiguideError(f"--platform calibrated: no calibration at {path}; make one with "
                                    "mpiguide sim calibrate RUN (a ping-pong run of this machine)")
            calibration = str(path)
        return cls(selectors, nps, args.platform, args.bandwidth, args.latency, calibration, colls, args.sizes,
                   args.nrep, args.tolerance, threshold, timeout)

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def _launch_timeout(args: argparse.Namespace) -> float:
    timeout = getattr(args, "timeout", None)
    if timeout is None:
        return DEFAULT_LAUNCH_TIMEOUT
    if not timeout > 0:
        raise MpiguideError(f"--timeout {timeout}: seconds, more than 0")
    return timeout


def platform(s: Settings, nprocs: int) -> smpi.Platform:
    """The modelled cluster of a launch of nprocs ranks: one node per rank."""
    if s.platform == "calibrated":
        fit = smpi.Fit.load(Path(s.calibration))
        return smpi.calibrated(fit, nprocs)
    if s.platform == "torus":
        return smpi.Platform("torus", nprocs, topology="torus", dims=_torus_dims(nprocs), bandwidth=s.bandwidth,
                             latency=s.latency)
    return smpi.Platform(s.platform, nprocs, topology=s.platform, bandwidth=s.bandwidth, latency=s.latency)


def _torus_dims(n: int) -> tuple[int, int, int]:
    """Three factors of n, as close to a cube as they come."""
    best = (1, 1, n)
    for a in range(1, round(n ** (1 / 3)) + 2):
        if n % a:
            continue
        for b in range(a, math.isqrt(n // a) + 1):
            if (n // a) % b == 0:
                c = n // a // b
                if max(a, b, c) - min(a, b, c) < max(best) - min(best):
                    best = (a, b, c)
    return best


def memory_needed(s: Settings, nprocs: int) -> int:
    """Bytes of all ranks' buffers at the largest size: the gathering collectives hold p blocks per rank,
    send and receive side."""
    largest = max(options.parse_sizes(s.sizes))
    return 4 * nprocs * nprocs * largest


def _check_memory(s: Settings) -> None:
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return
    for n in s.nps:
        need = memory_needed(s, n)
        if need > MEMORY_SHARE * ram:
            raise MpiguideError(f"--np {n} with --sizes {s.sizes}: the {n} simulated ranks' buffers need about "
                                f"{need / 2**30:.1f} GiB in one process, more than {MEMORY_SHARE:.0%} of this "
                                f"machine's {ram / 2**30:.0f} GiB; use smaller --sizes at that scale")


# ---------------------------------------------------------------- running

# A launch: (selector, nprocs, collective or None: all of the simulation's, implementation or None: all of the
# collective's)
LaunchKey = tuple[str, int, "str | None", "str | None"]


def launch_name(key: LaunchKey) -> str:
    """selector-pP, selector-pP-collective or selector-pP-collective.impl: a launch's files and split mark."""
    sel, n, coll, impl = key
    return f"{sel}-p{n}" + (f"-{coll}" if coll else "") + (f".{impl}" if impl else "")


def raw_path(rundir: Path, key: LaunchKey, kind: str = "raw") -> Path:
    """A launch's raw file: kind raw (the default and every mock-up) or tuned (the tuned library's launch)."""
    return rundir / kind / f"{launch_name(key)}.raw"


STOPPED = "stopped at the wall limit"


def _raw_files(rundir: Path, kind: str) -> list[tuple[str, int, Path]]:
    """(selector, nprocs, file) of every raw file of kind: one per launch, of every collective, of one or of one
    implementation (launch_name)."""
    out = []
    for raw in sorted((rundir / kind).glob("*.raw")):
        m = _RAW_NAME.match(raw.stem)
        if m:
            out.append((m["selector"], int(m["nprocs"]), raw))
    return out


def run(args: argparse.Namespace) -> int:
    if args.resume:
        rundir = args.resume
        try:
            meta = json.loads((rundir / "sim.json").read_text())
        except (OSError, ValueError) as exc:
            raise MpiguideError(f"--resume {rundir}: not a simulation of mpiguide sim ({exc})") from None
        s = Settings(**meta["settings"])
        if args.timeout is not None:  # the one setting a resume may change: it changes no prediction
            s = dataclasses.replace(s, launch_timeout=_launch_timeout(args))
            meta["settings"] = s.to_dict()
            (rundir / "sim.json").write_text(json.dumps(meta, indent=1) + "\n")
    else:
        s = Settings.from_args(args)
        rundir = args.output or Path("results") / (time.strftime("%Y%m%d-%H%M%S") + "-sim-coll")
        if (rundir / "sim.json").exists():
            raise MpiguideError(f"{rundir} holds a simulation already: continue it with --resume {rundir}")
        meta = None
    _check_memory(s)
    if "scan" in s.collectives and max(s.nps) > SLOW_SCAN_ABOVE:
        console.print(f"note: SMPI's Scan is linear (rank r waits on every rank before it): above "
                      f"{SLOW_SCAN_ABOVE} ranks it takes many minutes of wall time per launch; leave it out with "
                      "--collectives")
    tools = smpi.tools(say=console.print)
    model = smpi.version(tools)
    tree = smpi.build_drivers(tools, ["mg_collbench"])
    if meta is None:
        meta = {"kind": "predicted", "model": f"{model} SMPI", "settings": s.to_dict(),
                "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
        rundir.mkdir(parents=True, exist_ok=True)
        (rundir / "sim.json").write_text(json.dumps(meta, indent=1) + "\n")
    console.print(f"simulation {rundir}: {len(s.nps) * len(s.selectors)} launch(es) of mg_collbench under {model} "
                  f"SMPI ({s.platform} platform); every number is a prediction of the model")
    failed = _simulate(tools, tree, s, rundir)
    failed += _simulate_tuned(tools, tree, s, rundir)  # from the predictions there are
    (rundir / FAILED).write_text(json.dumps([dict(zip(("selector", "nprocs", "collective", "impl", "problem"), f,
                                                      strict=True)) for f in failed], indent=1) + "\n")
    report = write_report(rundir)
    for line in report.lines:
        out.print(line, highlight=False)
    out.print(f"simulation report (predictions): {report.path}", highlight=False)
    if failed:
        console.print(f"{len(failed)} launch(es) failed or were stopped (the report lists them; logs in "
                      f"{rundir / 'logs'}); continue with: mpiguide sim coll --resume {rundir}")
        return 1
    return 0


FAILED = "failed.json"  # the launches of the last `sim coll` that did not finish, for the report


Failure = tuple[str, int, str, str, str]  # selector, nprocs, collective or "", implementation or "", problem


def _simulate(tools: smpi.Tools, tree: Path, s: Settings, rundir: Path) -> list[Failure]:
    """Per selector and process count one launch of every collective and implementation (a launch of many ranks
    costs minutes before its first call), split where it stops at the wall limit: into one launch per
    collective, and one of those into one per implementation (the default and each mock-up), so that a slow
    algorithm costs its own configurations only (Open MPI's linear Alltoall under allgather_as_alltoall at 256
    ranks). The launches that failed."""

    def parts(key: LaunchKey) -> list[LaunchKey]:
        sel, n, coll, impl = key
        if coll is None:
            return [(sel, n, c, None) for c in s.collectives]
        if impl is None:
            return [(sel, n, coll, i) for i in (analysis.DEFAULT, *(m[0] for m in MOCKUPS[coll]))]
        return []

    def what(key: LaunchKey) -> list[str]:
        _, _, coll, impl = key
        return ["--collectives", coll or ",".join(s.collectives), "--sizes", s.sizes,
                *(["--impls", impl] if impl else [])]

    tops = [(sel, n, None, None) for n in s.nps for sel in s.selectors]
    return _run_split(tools, tree, s, rundir, "raw", tops, parts, what)


def _simulate_tuned(tools: smpi.Tools, tree: Path, s: Settings, rundir: Path) -> list[Failure]:
    """The tuned library where the predictions chose a mock-up: profiles written once (rundir/profiles/
    <selector>/, as mpiguide tune writes them), then per selector and scale one launch of the default and the
    tuned library at the collectives and sizes they pick (split into one per collective where it stops at the
    wall limit)."""
    _, times, left_out = load(rundir)
    chosen = choices(verdicts(times, left_out, s.tolerance), s.threshold)
    final = rundir / "profiles"
    if not final.is_dir():
        partial = rundir / "profiles.partial"
        shutil.rmtree(partial, ignore_errors=True)
        write_profiles(chosen.rename(columns={"selector": "stack"}), partial,
                       f"chosen by mpiguide sim coll from the predictions in {rundir.name} (threshold "
                       f"{s.threshold:.0%}): predicted, not measured")
        partial.rename(final)
    picked = chosen[chosen["impl"] != analysis.DEFAULT]
    sizes = {(sel, int(n), coll): sorted(set(part["msize"]))
             for (sel, n, coll), part in picked.groupby(["selector", "nprocs", "collective"], sort=True)}

    def colls_of(sel: str, n: int) -> list[str]:
        return [c for (se, m, c) in sizes if (se, m) == (sel, n)]

    def parts(key: LaunchKey) -> list[LaunchKey]:
        sel, n, coll, _ = key
        return [(sel, n, c, None) for c in colls_of(sel, n)] if coll is None else []

    def what(key: LaunchKey) -> list[str]:
        sel, n, coll, _ = key
        colls = [coll] if coll else colls_of(sel, n)
        msizes = sorted({m for c in colls for m in sizes[(sel, n, c)]})
        return ["--collectives", ",".join(colls), "--sizes", ",".join(map(str, msizes)),
                "--impls", analysis.DEFAULT, "--profiles", str((final / sel).resolve())]

    tops = sorted({(sel, n, None, None) for sel, n, _ in sizes}, key=lambda k: (k[1], k[0]))
    return _run_split(tools, tree, s, rundir, "tuned", tops, parts, what)


def _run_split(tools: smpi.Tools, tree: Path, s: Settings, rundir: Path, kind: str, tops: list[LaunchKey],
               parts, what) -> list[Failure]:
    """The launches tops of kind, each with the arguments what(key), those done earlier skipped. A launch that
    stops at the wall limit is replaced by its parts(key) (where it has any; kind/split/ marks it, so that a
    resume goes on with them); one whose parts are all done counts as done. The launches that failed."""
    split = rundir / kind / "split"

    def complete(key: LaunchKey) -> bool:
        return _done(raw_path(rundir, key, kind))

    def pieces(key: LaunchKey) -> list[LaunchKey]:
        """Its parts; where it has one (a launch of one collective: the same launch again), that one's."""
        ps = parts(key)
        return pieces(ps[0]) if len(ps) == 1 else ps

    def expand(key: LaunchKey) -> list[LaunchKey]:
        ps = pieces(key)
        if ps and not complete(key) and ((split / launch_name(key)).exists() or all(map(complete, ps))):
            return [k for part in ps for k in expand(part)]
        return [key]

    todo = [k for key in tops for k in expand(key)]
    failed: list[Failure] = []
    while todo:
        stopped = []
        for key, problem in _run_launches(tools, tree, s, rundir, kind, {k: what(k) for k in todo}):
            if problem.startswith(STOPPED) and pieces(key):
                split.mkdir(parents=True, exist_ok=True)
                (split / launch_name(key)).touch()
                partial = raw_path(rundir, key, kind).with_suffix(".part")
                kept = _salvage(partial, rundir, key, kind)
                if kept:
                    console.print(f"  kept what it finished: {', '.join(kept)}")
                partial.unlink(missing_ok=True)
                stopped.append(key)
            else:
                failed.append((key[0], key[1], key[2] or "", key[3] or "", problem))
        todo = [k for key in stopped for k in pieces(key)]
        if todo:
            console.print(f"{len(todo)} launch(es) in place of {len(stopped)} stopped at the wall limit (a launch of "
                          "every collective split into one per collective, one of a collective into one per "
                          "implementation)")
    return failed


def _salvage(partial: Path, rundir: Path, key: LaunchKey, kind: str) -> list[str]:
    """The collectives a stopped launch of several finished, each written as the raw file of its own launch, so
    that the split does not simulate them again (minutes each at scale); their names. The driver measures the
    collectives one after the other in the order of its --collectives, each starting with its mock-up notes: a
    collective is finished where the next one has started."""
    sel, n, coll, _ = key
    if coll is not None:
        return []
    try:
        lines = partial.read_text().splitlines(keepends=True)
    except OSError:
        return []
    column_line = next((i for i, line in enumerate(lines) if not line.startswith("#@")), None)
    if column_line is None:
        return []
    head, body = lines[:column_line + 1], lines[column_line + 1:]
    colls = next((line.split("=", 1)[1].strip().split(",") for line in head if line.startswith("#@collectives=")), [])
    starts = [i for i, line in enumerate(body)
              if line.startswith("#@mockup[") and (i == 0 or not body[i - 1].startswith("#@mockup["))]
    kept = []
    for c, begin, end in zip(colls, starts, starts[1:], strict=False):  # the last one started is cut short
        own = [f"#@collectives={c}\n" if line.startswith("#@collectives=") else line for line in head]
        raw = raw_path(rundir, (sel, n, c, None), kind)
        tmp = raw.with_suffix(".salvaged")
        tmp.write_text("".join([*own[:-1], f"#@salvaged_from={partial.name}\n", own[-1], *body[begin:end],
                                "#@end=ok\n"]))
        tmp.replace(raw)
        kept.append(c)
    return kept


def _done(raw: Path) -> bool:
    """A launch's raw file is there and complete."""
    return raw.exists() and rawfile.parse(raw).complete


def _run_launches(tools: smpi.Tools, tree: Path, s: Settings, rundir: Path, kind: str,
                  launches: dict[LaunchKey, list[str]]) -> list[tuple[LaunchKey, str]]:
    """One mg_collbench launch per key with its arguments, those done earlier skipped; the ones that failed, with
    the problem."""
    (rundir / kind).mkdir(parents=True, exist_ok=True)
    (rundir / "logs").mkdir(exist_ok=True)
    failed = []
    for k, (key, args) in enumerate(launches.items(), 1):
        sel, n, coll, impl = key
        raw = raw_path(rundir, key, kind)
        label = f"[{k}/{len(launches)}] {sel} p={n}" + (f" {coll}" if coll else "") + (f" {impl}" if impl else "") + (
            "" if kind == "raw" else f" {kind}")
        if _done(raw):
            console.print(f"{label}: done earlier")
            continue
        seconds, problem = _launch(tools, tree, s, n, sel, rundir, raw, args)
        console.print(f"{label}: {'ok' if problem is None else f'FAILED: {problem}'} ({seconds:.1f} s wall)")
        if problem:
            failed.append((key, problem))
    return failed


def _launch(tools: smpi.Tools, tree: Path, s: Settings, n: int, selector: str, rundir: Path,
            raw: Path, what: list[str]) -> tuple[float, str | None]:
    plat = platform(s, n)
    xml, hosts = plat.write(rundir / "platforms", ppn=1)
    partial = raw.with_suffix(".part")
    args = [*what, "--nrep", str(s.nrep), "--output", str(partial)]
    argv, env = smpi.command(tools, xml, hosts, n, selector, tree / "mg_collbench", args, plat.cfg())
    kind = raw.parent.name
    log = rundir / "logs" / (f"{raw.stem}.log" if kind == "raw" else f"{kind}-{raw.stem}.log")
    start = time.monotonic()
    try:
        with log.open("w") as f:
            f.write(" ".join(argv) + "\n")
            f.flush()
            returncode = _run_within(argv, env, f, rundir, s.launch_timeout, _progress(partial, start))
    except (children.NotStarted, OSError) as exc:
        return time.monotonic() - start, f"smpirun did not start: {exc}"
    seconds = time.monotonic() - start
    if returncode is None:
        return seconds, f"{STOPPED} of {s.launch_timeout:g} s (--timeout)"
    # exit 3: some configurations differ from the native call; the driver listed them and the rest stands
    if returncode not in (0, 3) or not _done(partial):
        return seconds, f"smpirun ended with {returncode} (see {log})"
    partial.replace(raw)
    return seconds, None


PROGRESS_EVERY = 30.0  # seconds of wall time between two progress lines of a long launch


def _progress(partial: Path, start: float):
    """What a long launch says while it runs: the configurations its raw file has so far, and the last one."""
    said = [0]

    def say() -> None:
        try:
            rows = [line.split() for line in partial.read_text().splitlines()
                    if line and not line.startswith("#@")][1:]  # after the column line
        except OSError:
            return
        configs = list(dict.fromkeys(tuple(r[:3]) for r in rows if len(r) >= 3))
        if len(configs) > said[0]:
            said[0] = len(configs)
            console.print(f"    {time.monotonic() - start:.0f} s: {len(configs)} configuration(s) simulated, the "
                          f"last {' '.join(configs[-1])}")

    return say


def _kill(proc: subprocess.Popen) -> None:
    """smpirun and the simulation it runs as a child of its own, killed where smpirun has not ended."""
    if proc.returncode is None:  # not reaped yet (the wall limit, a signal): its group id is still its own
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def _run_within(argv: list[str], env: dict[str, str], log, cwd: Path, timeout: float,
                progress=None) -> int | None:
    """Runs argv in a session of its own; its exit status, or None where it was still running after timeout
    seconds (progress() is called every PROGRESS_EVERY seconds meanwhile). Whatever it started goes with it
    then, and on any way out of here (smpirun runs the simulation as a child of its own), a signal that ends
    mpiguide included, whenever it comes (core.children: SIGTERM and SIGHUP, whose default would end mpiguide
    without it, exit through here)."""
    with children.session(argv, _kill, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=cwd) as proc:
        deadline = time.monotonic() + timeout
        while True:
            try:
                return proc.wait(timeout=max(0.0, min(PROGRESS_EVERY, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    return None
                if progress:
                    progress()


# ---------------------------------------------------------------- predictions

def load(rundir: Path) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    """The simulation's settings, its median times (selector, nprocs, collective, impl, msize, time_s,
    guideline) and the configurations the driver left out (selector, nprocs, config, reason)."""
    return (json.loads((rundir / "sim.json").read_text()), *_medians(rundir, "raw"))


def _medians(rundir: Path, kind: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The median times of the raw files of kind (raw, tuned) and the configurations they left out."""
    frames, left_out = [], []
    for selector, p, raw in _raw_files(rundir, kind):
        f = rawfile.parse(raw)
        df = f.frame()
        guideline = {impl: int(v.split()[0]) for impl, v in f.notes.get("mockup", {}).items()}
        if not df.empty:
            med = df.groupby(["collective", "impl", "msize"], as_index=False)["time_s"].median()
            med["guideline"] = med["impl"].map(guideline).fillna(0).astype(int)
            med.insert(0, "nprocs", p)
            med.insert(0, "selector", selector)
            frames.append(med)
        for config, why in f.errors.items():
            left_out.append((selector, p, config, why))
    times = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["selector", "nprocs", "collective", "impl", "msize", "time_s", "guideline"])
    return times, pd.DataFrame(left_out, columns=["selector", "nprocs", "config", "reason"])


def verdicts(times: pd.DataFrame, left_out: pd.DataFrame, tolerance: float) -> pd.DataFrame:
    """One predicted COLL-GLn verdict per (selector, nprocs, collective, msize, mock-up)."""
    bad = {(r.selector, r.nprocs, *r.config.split()[:2], int(r.config.split()[2])) for r in left_out.itertuples()
           if len(r.config.split()) == 3}
    rows = []
    for (sel, n, coll, m), part in times.groupby(["selector", "nprocs", "collective", "msize"], sort=True):
        default = part[part["impl"] == "default"]
        if default.empty or (sel, n, coll, "default", m) in bad:
            continue
        t_d = float(default["time_s"].iloc[0])
        for r in part[part["impl"] != "default"].itertuples():
            if (sel, n, coll, r.impl, m) in bad or r.time_s <= 0:
                continue
            factor = t_d / r.time_s
            rows.append((sel, n, coll, m, r.impl, f"COLL-GL{r.guideline}", t_d, r.time_s, factor,
                         VIOLATED if factor > 1 + tolerance else KEPT))
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def choices(v: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Per point (POINT): the mock-up the tuned library's profile picks, the fastest where it takes at least
    threshold less time than the default (factor >= 1 / (1 - threshold)), else the default; and its factor."""
    if v.empty:
        return pd.DataFrame(columns=[*POINT, "impl", "factor"])
    best = v.loc[v.groupby(POINT)["factor"].idxmax()]
    picked = best["factor"] >= 1 / (1 - threshold)
    return best.assign(impl=best["impl"].where(picked, analysis.DEFAULT))[[*POINT, "impl", "factor"]].reset_index(
        drop=True)


def tuned(rundir: Path, v: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Per point a profile picks a mock-up at: the mock-up's predicted factor and the tuned library's, from
    its own launch (default / tuned, both in that launch); tuned_s empty where that launch has no data yet."""
    chosen = choices(v, threshold)
    chosen = chosen[chosen["impl"] != analysis.DEFAULT]
    med, _ = _medians(rundir, "tuned")
    times = {(r.selector, int(r.nprocs), r.collective, int(r.msize), r.impl): float(r.time_s)
             for r in med.itertuples()}
    rows = []
    for c in chosen.itertuples():
        key = (c.selector, int(c.nprocs), c.collective, int(c.msize))
        t_d, t_t = times.get((*key, analysis.DEFAULT), math.nan), times.get((*key, analysis.TUNED), math.nan)
        rows.append((*key, c.impl, c.factor, t_d, t_t, t_d / t_t if t_t > 0 else math.nan))
    return pd.DataFrame(rows, columns=TUNED_COLUMNS)


def per_scale(v: pd.DataFrame, t: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per selector and process count: checks, predicted violations, the worst factor and where, and the
    geometric mean of the tuned library's simulated gains (t: tuned()) where it was simulated."""
    rows = []
    for (sel, n), part in v.groupby(["selector", "nprocs"], sort=True):
        hit = part[part["verdict"] == VIOLATED]
        worst = hit.loc[hit["factor"].idxmax()] if not hit.empty else None
        mine = pd.Series(dtype=float) if t is None else t[(t["selector"] == sel) & (t["nprocs"] == n)][
            "tuned_factor"].dropna()
        rows.append((sel, n, len(part), len(hit), float(worst["factor"]) if worst is not None else float("nan"),
                     f"{worst['collective']} {worst['msize']} B {worst['impl']}" if worst is not None else "-",
                     len(mine), float(math.exp(mine.map(math.log).mean())) if len(mine) else float("nan")))
    return pd.DataFrame(rows, columns=["selector", "nprocs", "checks", "violations", "worst_factor", "worst_at",
                                       "tuned_points", "tuned_gain_geomean"])


def _label(meta: dict) -> str:
    s = meta["settings"]
    where = (f"platform {s['platform']}" + (f" ({s['bandwidth']}, {s['latency']} links)"
                                           if s["platform"] != "calibrated" else f" ({s['calibration']})"))
    return f"PREDICTED by {meta['model']}, {where}, one rank per node; not measured"


def write_report(rundir: Path) -> Report:
    """report.md/html and the CSVs of rundir's predictions, and the lines the terminal shows of them."""
    meta, times, left_out = load(rundir)
    tol = meta["settings"]["tolerance"]
    threshold = meta["settings"].get("threshold", DEFAULT_THRESHOLD)
    v = verdicts(times, left_out, tol)
    t = tuned(rundir, v, threshold)
    scale = per_scale(v, t)
    label = _label(meta)
    doc = Document(f"Collective guidelines predicted at scale: {label}")
    cells = worst_cells(v.assign(point=v["collective"]), ["selector", "nprocs"], ["collective"])
    doc.heatmap(Heatmap(cells, ["selector", "nprocs"], ["collective"],
                        f"Worst predicted COLL-GL factor (default / mock-up) per collective; {label}.",
                        colors=COLORS))
    doc.heading("How these predictions were made")
    doc.text(f"Each side's simulated time is the median of {meta['settings']['nrep']} repetitions; a point is "
             f"predicted violated where the default is slower than the mock-up by more than {tol:.0%} "
             "(factor = default / mock-up). Simulated time has no run-to-run noise, so no statistical test "
             "applies; these verdicts never mix with measured ones. Where the fastest mock-up takes at least "
             f"{threshold:.0%} less time than the default, a profile picks it (profiles/), and the tuned library "
             "with those profiles is simulated beside the default in a launch of its own: tuned_factor = default "
             "/ tuned there.")
    doc.section("Per selector and scale (predicted)", scale)
    doc.section("Tuned library with the profiles, simulated (predicted)", t,
                note="mockup_factor: the picked mock-up's factor in the first launches; tuned_factor: the tuned "
                     "library's in its own launch (empty: not simulated yet).")
    doc.section("Every predicted verdict", v)
    if not left_out.empty:
        doc.section("Left out: results that differ from the native call under the model", left_out)
    failed = pd.DataFrame(json.loads((rundir / FAILED).read_text())) if (rundir / FAILED).is_file() else None
    if failed is not None and not failed.empty:
        doc.section("Launches that did not finish (not predicted; mpiguide sim coll --resume tries them again)",
                    failed)
    v.assign(kind="predicted", model=meta["model"]).to_csv(rundir / "predicted_verdicts.csv", index=False)
    scale.assign(kind="predicted", model=meta["model"]).to_csv(rundir / "predicted_scale.csv", index=False)
    t.assign(kind="predicted", model=meta["model"]).to_csv(rundir / "predicted_tuned.csv", index=False)
    return Report(doc.write(rundir), _summary_lines(label, scale, left_out))


def _summary_lines(label: str, scale: pd.DataFrame, left_out: pd.DataFrame) -> list[str]:
    lines = [label]
    for r in scale.itertuples():
        worst = f", worst x{r.worst_factor:.2f} ({r.worst_at})" if r.violations else ""
        gain = f"; tuned library x{r.tuned_gain_geomean:.2f} (geometric mean)" if r.tuned_points else ""
        lines.append(f"  {r.selector:8} p={r.nprocs:<5} {r.violations} of {r.checks} COLL-GL points predicted "
                     f"violated{worst}{gain}")
    if not left_out.empty:
        lines.append(f"  {len(left_out)} configuration(s) left out: their results differ from the native call "
                     "under the model (report)")
    return lines


# ---------------------------------------------------------------- the model against measurements

TRUSTED = 2.0  # a prediction within this factor of the measurement, both ways, is called close


def add_check_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", help="a measured coll run (mpiguide run coll), by run id under results/ or its "
                               "directory: its grid is simulated")
    _platform_arguments(p, "calibrated")
    _output_argument(p, "where to write it (default <RUN>/predicted)")


def check(args: argparse.Namespace) -> int:
    """Simulates the grid of a measured coll run, stack by stack with the selector of its family, and sets
    each configuration's prediction beside its measurement (the median of its per-launch medians)."""
    rd = RunDir.open(resolve_run(str(args.run)))
    measured = analysis.load(rd)
    params = rd.meta["params"]
    versions = stack_versions(rd)
    selector_of = {}
    for stack, text in versions.items():
        fam = families.from_version(text)
        if fam in smpi.SELECTOR_OF_FAMILY:
            selector_of[stack] = smpi.SELECTOR_OF_FAMILY[fam]
        else:
            console.print(f"stack {stack} ({text}): SMPI models no selector of its family; left out")
    if not selector_of:
        raise MpiguideError(f"{rd.path}: no stack of a family SMPI models (MPICH, Open MPI, Intel MPI)")
    ns = argparse.Namespace(selectors=",".join(sorted(set(selector_of.values()))),
                            np=",".join(map(str, params["np"])), platform=args.platform, bandwidth=args.bandwidth,
                            latency=args.latency, calibration=args.calibration,
                            collectives=",".join(params["collectives"]),
                            sizes=",".join(map(str, params["sizes"])), nrep=args.nrep, tolerance=0.05)
    s = Settings.from_args(ns)
    out_dir = args.output or rd.path / "predicted"
    if (out_dir / "sim.json").exists():
        earlier = json.loads((out_dir / "sim.json").read_text()).get("settings")
        if earlier != s.to_dict():
            raise MpiguideError(f"{out_dir} holds a prediction with other settings ({earlier}); give another "
                                "--output DIR, or remove it")
    out_dir.mkdir(parents=True, exist_ok=True)
    tools = smpi.tools(say=console.print)
    model = f"{smpi.version(tools)} SMPI"
    tree = smpi.build_drivers(tools, ["mg_collbench"])
    (out_dir / "sim.json").write_text(json.dumps({"kind": "predicted", "model": model, "settings": s.to_dict(),
                                                  "measured_run": str(rd.path)}, indent=1) + "\n")
    failed = _simulate(tools, tree, s, out_dir)
    _, times, _ = load(out_dir)
    table = side_by_side(measured, times, selector_of)
    table.assign(model=model).to_csv(out_dir / "predicted_vs_measured.csv", index=False)
    summary = closeness(table)
    doc = Document(f"Predicted by {model} against measured (run {rd.path.name})")
    doc.text(_label({"model": model, "settings": s.to_dict()}) + ".")
    doc.text(f"ratio = predicted / measured; within x{TRUSTED:g} both ways is called close. The measured time is "
             "the median of the configuration's per-launch medians; the predicted one the median of the "
             "simulated repetitions. A local run puts all ranks on one machine (shared memory, and more ranks "
             "than cores where it says so): a platform calibrated on a local ping-pong models that memory as "
             "its network.")
    doc.section("Per stack and collective", summary)
    doc.section("Every configuration", table)
    path = doc.write(out_dir)
    out.print(f"predicted ({model}) against measured, run {rd.path}:", highlight=False)
    for r in summary.itertuples():
        out.print(f"  {r.stack:10} p={r.nprocs:<3} {r.collective:21} ratio {r.geomean_ratio:6.2f} (geometric mean "
                  f"over {r.configurations}; {r.range}) {r.assessment}", highlight=False)
    out.print(f"report: {path}", highlight=False)
    if failed:  # the comparison above lacks them
        console.print(f"{len(failed)} simulated launch(es) failed (logs in {out_dir / 'logs'}): their configurations "
                      "are missing from the comparison")
        return 1
    return 0


def side_by_side(measured: analysis.CollResult, times: pd.DataFrame, selector_of: dict[str, str]) -> pd.DataFrame:
    """Per measured configuration of a stack SMPI models: measured and predicted seconds, and their ratio. Of a
    run that measured several placements, those of one process per node, as the model has them."""
    rows = []
    predicted = {(r.selector, r.nprocs, r.collective, r.impl, r.msize): r.time_s for r in times.itertuples()}
    for r in measured.medians.itertuples():
        if r.placement and not r.placement.endswith("x1"):
            continue
        sel = selector_of.get(r.stack)
        t_p = predicted.get((sel, r.nprocs, r.collective, r.impl, r.msize))
        if sel is None or t_p is None or len(r.medians) == 0:
            continue
        t_m = float(r.medians["median_s"].median())
        if t_m > 0:
            rows.append((r.stack, sel, r.nprocs, r.collective, r.impl, r.msize, t_m, t_p, t_p / t_m))
    return pd.DataFrame(rows, columns=["stack", "selector", "nprocs", "collective", "impl", "msize", "measured_s",
                                       "predicted_s", "ratio"])


def closeness(table: pd.DataFrame) -> pd.DataFrame:
    """Per stack, process count and collective: the geometric mean of the ratios, their range, and whether
    every configuration is within TRUSTED of its measurement."""
    rows = []
    for (stack, n, coll), part in table.groupby(["stack", "nprocs", "collective"], sort=True):
        logs = part["ratio"].map(math.log)
        lo, hi = part["ratio"].min(), part["ratio"].max()
        close = (part["ratio"] <= TRUSTED).all() and (part["ratio"] >= 1 / TRUSTED).all()
        rows.append((stack, n, coll, len(part), float(math.exp(logs.mean())), f"x{lo:.2f}..x{hi:.2f}",
                     "close" if close else "not trustworthy here"))
    return pd.DataFrame(rows, columns=["stack", "nprocs", "collective", "configurations", "geomean_ratio", "range",
                                       "assessment"])


# ---------------------------------------------------------------- two predictions side by side

COMPARE_COLUMNS = [*POINT, "impl", "guideline", "base_factor", "new_factor", "change", "base_verdict",
                   "new_verdict", "status"]


def add_compare_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("base", type=Path, help="a simulation directory of mpiguide sim coll (BASE)")
    p.add_argument("new", type=Path, help="another (NEW): another platform, selector set or SimGrid version")
    _output_argument(p, "where to write the report (default NEW/compare-<BASE>)")


def _predicted(rundir: Path, what: str) -> tuple[dict, pd.DataFrame]:
    if not (rundir / "sim.json").is_file():
        raise MpiguideError(f"{what} {rundir}: not a simulation of mpiguide sim coll (no sim.json); measured runs "
                            "are compared with mpiguide compare, never with predictions")
    meta, times, left_out = load(rundir)
    return meta, verdicts(times, left_out, meta["settings"]["tolerance"])


def compared(base: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """Every predicted COLL-GL point of either simulation, matched by POINT and mock-up: both factors, NEW's over
    BASE's, and the status (compare's words: newly violated, still violated, fixed; kept where neither
    predicts a violation; only in base / only in new). Simulated time has no noise: a verdict that differs is a
    change of the model's prediction, not of a sample."""
    key = [*POINT, "impl", "guideline"]
    both = base[[*key, "factor", "verdict"]].merge(new[[*key, "factor", "verdict"]], on=key, how="outer",
                                                   suffixes=("_base", "_new"))
    status = []
    for b, n in zip(both["verdict_base"], both["verdict_new"], strict=True):
        if not isinstance(b, str):
            status.append(NEW_ONLY)
        elif not isinstance(n, str):
            status.append(BASE_ONLY)
        elif n == VIOLATED:
            status.append(STILL if b == VIOLATED else NEWLY)
        else:
            status.append(FIXED if b == VIOLATED else "kept")
    out = both.rename(columns={"factor_base": "base_factor", "factor_new": "new_factor",
                               "verdict_base": "base_verdict", "verdict_new": "new_verdict"})
    return out.assign(change=out["new_factor"] / out["base_factor"], status=status)[COMPARE_COLUMNS]


def compare(args: argparse.Namespace) -> int:
    """Two simulations side by side (predicted against predicted; measured runs never enter)."""
    base_meta, base = _predicted(args.base, "BASE")
    new_meta, new = _predicted(args.new, "NEW")
    table = compared(base, new)
    out_dir = args.output or args.new / f"compare-{args.base.resolve().name}"
    out_dir.mkdir(parents=True, exist_ok=True)
    table.assign(kind="predicted").to_csv(out_dir / "predicted_compare.csv", index=False)
    counts = table.pivot_table(index=["selector", "nprocs"], columns="status", values="msize",
                               aggfunc="size", fill_value=0) if not table.empty else pd.DataFrame()
    doc = Document("Two predictions compared (predicted, not measured)")
    doc.text(f"BASE {args.base}: {_label(base_meta)}. NEW {args.new}: {_label(new_meta)}. A point's factor is the "
             "default's simulated time over the mock-up's; change = NEW's factor over BASE's.")
    doc.section("Points per status", counts)
    doc.section("Every point whose predicted verdict differs", table[table["status"].isin([NEWLY, FIXED])])
    doc.section("Every point", table)
    path = doc.write(out_dir)
    out.print(f"BASE {_label(base_meta)}", highlight=False)
    out.print(f"NEW  {_label(new_meta)}", highlight=False)
    for (sel, n), part in table.groupby(["selector", "nprocs"], sort=True):
        tally = part["status"].value_counts()
        out.print(f"  {sel:8} p={n:<5} " + ", ".join(f"{k} {tally[k]}" for k in sorted(tally.index)),
                  highlight=False)
    out.print(f"report: {path}", highlight=False)
    return 0
