"""Shared fixtures: the real MPICH stack and its build tree, a raw file written by
the ping-pong driver, and one small finished run that read-only tests share.

The MPICH stack must already be installed in the default MPIGUIDE_HOME; tests
that install, add or remove stacks use a temporary MPIGUIDE_HOME instead.

Also the helpers that more than one test file uses (synthetic runs with known
outcomes, mpiguide in its own process): test files import them from here,
never from each other.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

# Rich decides its width when a Console is created (COLUMNS) or when it prints;
# the CLI's consoles are created at import, so keep them unpinned here.
for _var in ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
    os.environ.pop(_var, None)

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from mpiguide.cli import main  # noqa: E402
from mpiguide.core import build, launch, runner  # noqa: E402
from mpiguide.core import stacks as stackmod  # noqa: E402
from mpiguide.suites import SUITES  # noqa: E402
from mpiguide.suites.coll import analysis as coll_analysis  # noqa: E402
from mpiguide.suites.coll import selection  # noqa: E402
from mpiguide.suites.ddt.expectations import label as ddt_label  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
MPIGUIDE_EXE = Path(sys.executable).parent / "mpiguide"
REAL_HOME_ENV = {k: os.environ.get(k) for k in ("MPIGUIDE_HOME", "MPIGUIDE_BUILD", "XDG_DATA_HOME")}

# The small shared run: 2 launches x 2 sizes x 3 variants x 100 repetitions (nrep rule).
SMALL_RUNS, SMALL_SIZES, VARIANTS, RULE_NREP = 2, [4, 1024], ["send_recv", "sendrecv", "isend_irecv"], 100


def norm(text: str) -> str:
    """Whitespace-normalized text: Rich wraps long lines at the console width."""
    return " ".join(text.split())


@dataclass
class CliResult:
    rc: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return norm(self.out + "\n" + self.err)


def run_cli(argv: list[str]) -> CliResult:
    """mpiguide.cli.main in-process with stdout and stderr captured (usable in session fixtures)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:  # argparse errors
            rc = exc.code if isinstance(exc.code, int) else 1
    return CliResult(rc, out.getvalue(), err.getvalue())


# What a test needs beyond Python (pytest markers, declared in pyproject.toml): `make check` deselects every one
# of them. A test needs what its fixtures need, and what its file is about.
NEEDS_BY_FIXTURE = {"mpich_stack": ("mpi",), "mpich_build": ("mpi",), "pingpong_raw": ("mpi",),
                    "small_run": ("mpi",), "stacks_built": ("mpi",), "live_stack": ("mpi",),
                    "cluster": ("mpi", "root", "network", "slow"),
                    "simulated": ("build",)}
NEEDS_BY_FILE = {"test_cluster.py": ("mpi", "root", "network", "slow"), "test_install.py": ("mpi", "build", "slow"),
                 "test_mpi4py.py": ("mpi", "build"), "test_presets.py": ("mpi", "build"),
                 "test_report_browser.py": ("browser",)}


def pytest_collection_modifyitems(config, items):
    for item in items:
        needs = set(NEEDS_BY_FILE.get(item.path.name, ()))
        needs.update(m for f in item.fixturenames for m in NEEDS_BY_FIXTURE.get(f, ()))
        for marker in sorted(needs):
            item.add_marker(marker)


@pytest.fixture(autouse=True)
def _wide_console(monkeypatch):
    """A wide console by default so tables are not truncated; tests about narrow output set their own."""
    monkeypatch.setenv("COLUMNS", "250")


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def temp_home(tmp_path, monkeypatch) -> Path:
    """An empty MPIGUIDE_HOME and build root, so that stack tests never touch the real ones."""
    home, builds = tmp_path / "home", tmp_path / "builds"
    monkeypatch.setenv("MPIGUIDE_HOME", str(home))
    monkeypatch.setenv("MPIGUIDE_BUILD", str(builds))
    return home


@pytest.fixture(scope="session")
def mpich_stack() -> stackmod.Stack:
    stack = stackmod.load("mpich")
    if stack is None:
        pytest.fail(f"the mpich stack is not installed in {stackmod.data_home()}; run: mpiguide stack install mpich")
    stack.require_usable()
    return stack


@pytest.fixture(params=["mpich", "openmpi", "impi"])
def live_stack(request) -> stackmod.Stack:
    """Each of the libraries `make test` installs, and Intel MPI where it is installed, its drivers built."""
    if stackmod.load(request.param) is None:
        pytest.skip(f"the {request.param} stack is not installed (`mpiguide stack install {request.param}`)")
    stack = stackmod.get(request.param)
    build.ensure_built(stack)
    return stack


@pytest.fixture(scope="session")
def mpich_build(mpich_stack) -> Path:
    """The MPICH build tree (configured once, incremental afterwards)."""
    return build.ensure_built(mpich_stack)


def run_driver(stack: stackmod.Stack, build_dir: Path, driver: str, args: list[str], nprocs: int = 2):
    argv = launch.command(launch.LaunchSpec(), stack, nprocs, str(build_dir / driver), args)
    return subprocess.run(argv, env=stack.env(), capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="session")
def pingpong_raw(mpich_stack, mpich_build, tmp_path_factory) -> Path:
    """A raw file from `mpiexec -n 2 mg_pingpong --sizes 4,64 --nrep 3`."""
    path = tmp_path_factory.mktemp("raw") / "pingpong.txt"
    res = run_driver(mpich_stack, mpich_build, "mg_pingpong", ["--sizes", "4,64", "--nrep", "3", "--output", str(path)])
    assert res.returncode == 0, res.stdout + res.stderr
    return path


@pytest.fixture(scope="session")
def small_run(mpich_build, tmp_path_factory) -> tuple[Path, CliResult]:
    """`mpiguide run pingpong --stacks mpich --runs 2 --sizes 4,1k`: do not modify (copy it first)."""
    path = tmp_path_factory.mktemp("small") / "run"
    res = run_cli(["run", "pingpong", "--stacks", "mpich", "--runs", str(SMALL_RUNS), "--sizes", "4,1k",
                   "--output", str(path)])
    assert res.rc == 0, res.text
    return path, res


@pytest.fixture
def small_run_copy(small_run, tmp_path) -> Path:
    dst = tmp_path / "run-copy"
    shutil.copytree(small_run[0], dst)
    return dst


def read_launches(run_dir: Path) -> list[dict]:
    return json.loads((run_dir / "launches.json").read_text())["launches"]


def read_csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path)


# ---------------------------------------------------------------- mpiguide in its own process

POLL_LIMIT_S = 300  # only a guard against hanging forever, never an assertion about speed


def wait_for(predicate, proc: subprocess.Popen, what: str):
    deadline = time.monotonic() + POLL_LIMIT_S
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"mpiguide ended (exit {proc.returncode}) before {what}:\n{out}\n{err}")
        time.sleep(0.02)
    proc.kill()
    pytest.fail(f"gave up waiting for {what}")


def start_mpiguide(args: list[str], cwd) -> subprocess.Popen:
    """The real CLI in its own process. SIGINT is reset to its default first: a shell that starts the test suite
    in the background (nohup, `cmd &` without job control) makes children ignore it, and Python keeps it ignored."""
    return subprocess.Popen([str(MPIGUIDE_EXE), *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


# ---------------------------------------------------------------- the processes a test starts

def running_with(marker: str) -> list[int]:
    """The processes whose command line holds marker and that are not on their way out: a zombie, or a process
    whose death by a signal is under way (the kernel has SIGKILL pending for it then, whichever signal it was),
    is not running any more. Looked at once, without waiting, so that nothing depends on the machine's speed."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if marker.encode() not in (proc / "cmdline").read_bytes():
                continue
            status = dict(line.split(":", 1) for line in (proc / "status").read_text().splitlines() if ":" in line)
        except OSError:  # gone meanwhile
            continue
        dying = any(int(status.get(k, "0").strip(), 16) & (1 << (signal.SIGKILL - 1)) for k in ("SigPnd", "ShdPnd"))
        if not (status.get("State", "").strip().startswith("Z") or dying):
            found.append(int(proc.name))
    return found


@contextlib.contextmanager
def own_processes(what: str):
    """A marker for the command lines of the processes a test starts, unique to this run of the test (a uuid): a
    process a failed run left behind never matches a later run, and is told apart from everyone else's. On the
    way out, what still runs with it is killed: it is this test's."""
    marker = f"mg-{what}-{uuid.uuid4().hex}"
    try:
        yield marker
    finally:
        for pid in running_with(marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


# Where signalled_at_spawn delivers its signal: right after the fork inside subprocess.Popen (the launch runs,
# Popen has not returned it), or as Popen returns it (before the caller has it in hand).
SPAWN_POINTS = ("fork", "return")


def signalled_at_spawn(point: str, sig: int, marker: str) -> str:
    """Python code to run first in a process standing for mpiguide: it makes that process receive sig at `point`
    (SPAWN_POINTS) of starting the first child whose command line holds marker. It stands, exactly and on any
    machine, for a signal that comes while the machine is too loaded to have taken mpiguide further (issue 44).
    SIGINT is set to raise KeyboardInterrupt, as in a terminal (a background shell would leave it ignored)."""
    return textwrap.dedent(f"""\
        import os, signal, subprocess
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _sent = []
        def _signal_once(args):
            if not _sent and any({marker!r} in str(a) for a in args):
                _sent.append(True)
                os.kill(os.getpid(), {int(sig)})
        if {point!r} == "fork":
            _real_fork_exec = subprocess._fork_exec
            def _fork_exec(args, *rest):
                pid = _real_fork_exec(args, *rest)
                _signal_once(args)
                return pid
            subprocess._fork_exec = _fork_exec
        else:
            class _Popen(subprocess.Popen):
                def __init__(self, args, *rest, **kw):
                    super().__init__(args, *rest, **kw)
                    _signal_once(args)
            subprocess.Popen = _Popen
        """)


# ---------------------------------------------------------------- synthetic run directories

def synthetic_meta(run_id: str = "synthetic-pingpong", runs: int = 5, sizes: list[int] | None = None,
                   analysis: dict | None = None) -> dict:
    """meta.json of a ping-pong run on an invented stack 'fake' (nothing here needs MPI)."""
    sizes = sizes or [4, 64]
    return {
        "run_id": run_id, "job": "pingpong",
        "title": "Ping-pong latency (MPI_Send/MPI_Recv between two processes)",
        "created": "2026-01-01T00:00:00+0000", "mpiguide_version": "test", "command": ["test"],
        "stacks_order": ["fake"], "runs": runs,
        "params": {"sizes": sizes, "variants": list(VARIANTS), "datatype": "int"},
        "measurement": {"sync": "barrier", "nrep": 5, "rse_calib": 0.01, "rse_batch": 0.05, "b1": 5, "b2": 5,
                        "nrep_min": 10, "nrep_max": 10000, "calib_max": 10.0},
        "analysis": analysis or {"samples": "medians", "tolerance": 0.05, "alpha": 0.05},
        "launch": launch.LaunchSpec().to_dict(),
        "stacks": {"fake": {"name": "fake", "family": "mpich", "prefix": "/nonexistent", "source": "prefix",
                            "library_version": "Fake MPI 1.0\nsecond line", "compiler": "cc 1.0", "extra": {}}},
        "host": {"hostname": "testhost", "cpu_model": "Test CPU", "cores": 2, "os": "Linux", "python": "3"},
        "git": {"commit": "0123456789abcdef", "dirty": False},
    }


def raw_text(rows: list[tuple[str, int, float]], nrep: int, end: str | None = "ok",
             extra_header: str = "") -> str:
    """A ping-pong raw file: `rows` are (variant, msize_bytes, time of every repetition)."""
    lines = ["#@mpiguide_raw=1", "#@driver=pingpong", "#@library_version=Fake MPI 1.0 | second line",
             "#@nprocs=2", "#@nrep_method=fixed", f"#@nrep={nrep}"]
    if extra_header:
        lines.append(extra_header)
    lines.append("variant msize_bytes count rep time_s")
    for variant, size, t in rows:
        lines += [f"{variant} {size} {size // 4} {i} {t:.9e}" for i in range(nrep)]
    if end:
        lines.append(f"#@end={end}")
    return "\n".join(lines) + "\n"


def only_row(frame: pd.DataFrame, **sel) -> pd.Series:
    """The one row of frame whose columns have the given values (fails unless exactly one matches)."""
    mask = pd.Series(True, index=frame.index)
    for k, v in sel.items():
        mask &= frame[k] == v
    rows = frame[mask]
    assert len(rows) == 1, (sel, rows)
    return rows.iloc[0]


def save_synthetic_run(path: Path, meta: dict, launches: list[runner.Launch], raw_of) -> Path:
    """Writes raw_of(launch) as each launch's raw file, marks every launch finished, saves the run."""
    for x in launches:
        raw = path / x.raw
        raw.parent.mkdir(parents=True, exist_ok=True)
        raw.write_text(raw_of(x))
        x.status, x.returncode, x.attempts, x.seconds = runner.OK, 0, 1, 0.1
    (path / "meta.json").write_text(json.dumps(meta, indent=2))
    rd = runner.RunDir(path)
    rd.meta, rd.launches = meta, launches
    rd.save()
    return path


def synthetic_job_run(path: Path, job, params: dict, stacks, runs: int, nrep: int, raw_of) -> Path:
    """A finished run of `job` on invented stacks (library version '<stack> MPI 1.0' and a second line)."""
    meta = synthetic_meta(run_id=path.name, runs=runs)
    meta.update(job=job.name, title=job.title, params=params, stacks_order=list(stacks))
    meta["stacks"] = {s: {**meta["stacks"]["fake"], "name": s, "library_version": f"{s} MPI 1.0\nmore"}
                      for s in stacks}
    meta["measurement"]["nrep"] = nrep
    return save_synthetic_run(path, meta, runner.plan(job, params, list(stacks), runs, meta["measurement"]), raw_of)


def write_synthetic_run(path: Path, times, runs: int = 5, nrep: int = 5, sizes: list[int] | None = None,
                        stacks: tuple[str, ...] = ("fake",)) -> Path:
    """A finished run directory whose raw files hold constant times: times(variant, size, launch) -> seconds
    (the same for every stack)."""
    sizes = sizes or [4, 64]
    meta = synthetic_meta(runs=runs, sizes=sizes)
    meta["measurement"]["nrep"] = nrep
    job = SUITES.get("pingpong")
    launches = runner.plan(job, meta["params"], list(stacks), runs, meta["measurement"])
    path.mkdir(parents=True)
    return save_synthetic_run(path, meta, launches, lambda x: raw_text(
        [(v, s, times(v, s, x.run_index)) for s in sizes for v in VARIANTS], nrep))


COLUMNS = "pattern layout A m msize mode rep time_s"


def write_ddt_run(path: Path, params: dict, times, stacks=("fast", "slow"), runs: int = 5, nrep: int = 4,
                  skip: dict | None = None, shape=None, block=None) -> Path:
    """A finished ddt run whose raw files hold times(stack, test, layout, mode, A, m, launch, placement=,
    pattern=) seconds, shape(layout) as each configuration's #@shape note and block(layout, A) as its
    #@block note."""
    entries = {e["key"]: e for e in params["entries"]}

    def raw_of(x) -> str:
        e = entries[x.template]
        lines = ["#@mpiguide_raw=1", "#@driver=ddtbench", f"#@nprocs={e['nprocs']}", COLUMNS]
        for m in e["sizes"]:
            for a in e["A"]:
                for spec in e["layouts"]:
                    lab = ddt_label(spec)
                    if skip and (lab, a) in skip:
                        lines.append(f"#@skip[{e['pattern']} {lab} {a} {m}]={skip[(lab, a)]}")
                        continue
                    if shape:
                        lines.insert(3, f"#@shape[{e['pattern']} {lab} {a} {m}]={shape(lab)}")
                    if block:
                        lines.insert(3, f"#@block[{e['pattern']} {lab} {a} {m}]={block(lab, a)}")
                    for mode in e["modes"]:
                        t = times(x.stack, e["test"], lab, mode, a, m, x.run_index, placement=e["placement"],
                                  pattern=e["pattern"])
                        lines += [f"{e['pattern']} {lab} {a} {m} {m} {mode} {i} {t * (1 + 1e-3 * i):.9e}"
                                  for i in range(nrep)]
        return "\n".join([*lines, "#@end=ok"]) + "\n"

    return synthetic_job_run(path, SUITES.get("ddt"), params, stacks, runs, nrep, raw_of)


# ---------------------------------------------------------------- a ddt run of an old and a new library

DDT_M = 64000  # the one message size of ddt_params


def ddt_params(A: str = "2,10") -> dict:
    job = SUITES.get("ddt")
    p = argparse.ArgumentParser()
    job.add_arguments(p)
    return job.params(p.parse_args(["--tests", "8", "--A", A, "--sizes", str(DDT_M), "--patterns", "pingpong",
                                    "--np", "2"]))


def ddt_library(version: str):
    """Test 8 (Block, Block-indexed; native and normalized): the old library sends Block-indexed 3x slower
    than Block, the new one Block 3x slower than its normalized type; everything else takes 1."""
    def times(stack, test, layout, mode, A, m, launch, placement=None, pattern=None):
        t = 1e-4 * (1 + 0.01 * launch)
        if mode == "datatype" and layout == ("block-indexed" if version == "old" else "block"):
            return 3 * t
        return t
    return times


# ---------------------------------------------------------------- an apps run with known outcomes

APPS_VARIANTS = ["basic:nonblocking", "ddt:nonblocking", "basic:neighbor", "ddt:neighbor", "basic:persistent",
                 "ddt:persistent"]
APPS_RANKS = [1, 2]
APPS_STEPS = 10


def apps_params(*argv: str) -> dict:
    job = SUITES.get("apps")
    p = argparse.ArgumentParser()
    job.add_arguments(p)
    return job.params(p.parse_args(list(argv)))


def apps_known_time(stack: str, nprocs: int, packing: str, mode: str, launch: int) -> float:
    """Seconds per iteration. Halving with 2 processes (speedup 2). 'fast': DDT 1.5x faster than BASIC in
    nonblocking, the same in neighbor, 2% apart in persistent (tie). 'slow': BASIC 2x faster in every mode,
    except persistent where the launches scatter (unclear)."""
    t = 1e-4 / nprocs * (1 + 0.01 * launch)
    if stack == "fast":
        factor = {"nonblocking": 1 / 1.5, "neighbor": 1.0, "persistent": 1.02}[mode]
    elif mode == "persistent":
        factor = (0.5, 3.0, 0.6, 2.5, 0.7)[launch]
    else:
        factor = 2.0
    return t * (factor if packing == "ddt" else 1.0)


def apps_known_mem(packing: str) -> int:
    return {"basic": 200 * 1024, "ddt": 180 * 1024}[packing]


def write_apps_run(path: Path, stacks=("fast", "slow"), runs: int = 5, nrep: int = 3, error_on=None) -> Path:
    params = apps_params("--apps", "jacobi", "--scaling", "strong", "--np", ",".join(map(str, APPS_RANKS)),
                         "--variants", ",".join(APPS_VARIANTS), "--strong-grid", "64x48", "--steps", str(APPS_STEPS))

    def raw_of(x) -> str:
        lines = ["#@mpiguide_raw=1", "#@driver=stencil", f"#@nprocs={x.nprocs}", f"#@nrep={nrep}",
                 "app packing mode gnx gny steps rep time_s"]
        for v in APPS_VARIANTS:
            packing, mode = v.split(":")
            label = f"jacobi {packing} {mode}"
            lines.append(f"#@rss_before[{label}]=1000000")
            if error_on and error_on(x, packing, mode):
                lines.append(f"#@error[{label}]=step 10 rank 1 cell (3,4): got 1 want 2")
                continue
            t = apps_known_time(x.stack, x.nprocs, packing, mode, x.run_index)
            lines += [f"{label} 64 48 {APPS_STEPS} {i} {t * (1 + 1e-3 * i):.9e}" for i in range(nrep)]
            lines += [f"#@setup[{label}]=2e-5", f"#@comm[{label}]=0.25", f"#@rss[{label}]=3145728",
                      f"#@mem[{label}]={apps_known_mem(packing) + 4096 * x.run_index}",
                      f"#@halo_bytes[{label}]={1536 if packing == 'basic' else 0}"]
        return "\n".join([*lines, "#@end=ok"]) + "\n"

    return synthetic_job_run(path, SUITES.get("apps"), params, stacks, runs, nrep, raw_of)


# ---------------------------------------------------------------- a coll run with known outcomes

COLL_SIZES = [8, 16, 1024, 2048]
COLL_MOCKUPS = {
    "allreduce": {"allreduce_as_reduce_bcast": (5, "MPI_Reduce + MPI_Bcast"),
                  "allreduce_as_reducescatterblock_allgather": (6, "MPI_Reduce_scatter_block + MPI_Allgather")},
    "bcast": {"bcast_as_allgatherv": (9, "MPI_Allgatherv"),
              "bcast_as_scatter_allgather": (10, "MPI_Scatter + MPI_Allgather")}}
COLL_SKIPPED = ("bcast", "bcast_as_scatter_allgather", 2048)


def coll_params(*argv: str) -> dict:
    job = SUITES.get("coll")
    p = argparse.ArgumentParser()
    job.add_arguments(p)
    return job.params(p.parse_args(list(argv)))


def write_coll_run(path: Path, times, stacks=("fast", "slow"), runs: int = 5, nrep: int = 4,
                   impls_extra: tuple[str, ...] = (), algorithms: dict | None = None, notes=None,
                   placements: tuple[str, ...] = ()) -> Path:
    """A finished coll run (2 processes) whose raw files hold times(stack, collective, impl, msize, launch);
    algorithms: the run's params["algorithms"] (suites.coll.selection), whose launches measure `default` with
    times(stack, collective, "alg:<name>", msize, launch) and add the note lines notes(stack, collective,
    "alg:<name>", msize). placements: NODESxPPN of 2 processes each, measured in one run as --placement
    2x1,1x2 does; times then takes the launch's placement as a sixth argument."""
    params = coll_params("--collectives", "allreduce,bcast", "--sizes", ",".join(map(str, COLL_SIZES)), "--np", "2")
    params["algorithms"] = algorithms or {}
    params["placements"] = list(placements)
    labels = selection.labels(params)

    def raw_of(x) -> str:
        coll = x.template.split("-")[0]
        alg = labels.get((x.stack, x.template))
        lines = ["#@mpiguide_raw=1", "#@driver=collbench", "#@nprocs=2", f"#@collectives={coll}",
                 f"#@mockup[default]=0 {coll_analysis.mpi_name(coll)}"]
        lines += [f"#@mockup[{impl}]={n} {f}" for impl, (n, f) in COLL_MOCKUPS[coll].items()]
        lines.append("collective impl msize rep time_s")
        for m in COLL_SIZES:
            for impl in ["default"] if alg else ["default", *COLL_MOCKUPS[coll], *impls_extra]:
                if (coll, impl, m) == COLL_SKIPPED:
                    lines.insert(5, f"#@skip[{coll} {impl} {m}]=the library ran the native call")
                    continue
                if alg and notes:
                    lines[5:5] = notes(x.stack, coll, alg, m)
                at = (x.placement,) if placements else ()
                t = times(x.stack, coll, alg or impl, m, x.run_index, *at)
                lines += [f"{coll} {impl} {m} {i} {t * (1 + 1e-3 * i):.9e}" for i in range(nrep)]
        return "\n".join([*lines, "#@tune_config[msg_pool_bytes]=67108864", "#@end=ok"]) + "\n"

    return synthetic_job_run(path, SUITES.get("coll"), params, stacks, runs, nrep, raw_of)


def coll_known_times(stack, coll, impl, m, launch):
    """fast: native is best everywhere. slow: Allreduce native 3x slower than Reduce+Bcast (and 1.5x slower
    than RSB+Allgather) at 1024 and 2048 B; Bcast slower at 8 B than at 16 B (monotony) and at 2048 B 3x
    its 1024 B time (split: 1.5x two calls of 1024 B); Bcast as Allgatherv 5% faster at 16 B (below the
    threshold); Bcast as Scatter+Allgather noisy at 1024 B (inconclusive)."""
    t = 1e-5 * (1 + 0.01 * launch) * (1 + m / 1024)
    if stack == "fast":
        return t if impl in ("default", "tuned") else 2 * t
    if coll == "allreduce":
        slow_native = m >= 1024
        if impl == "default":
            return 3 * t if slow_native else t
        if impl == "tuned":
            return t
        if impl == "allreduce_as_reduce_bcast":
            return t if slow_native else 2 * t
        return 2 * t
    if impl == "default" or impl == "tuned":
        if m == 8:
            return 5 * t
        if m == 2048:
            return 3 * 1e-5 * (1 + 0.01 * launch) * 2  # 3 x the 1024 B time
        return t
    if impl == "bcast_as_allgatherv":
        return 0.95 * t if m == 16 else 2 * t
    if m == 1024:
        return 1e-5 * (3 if launch % 2 else 0.5)  # mean 1.5e-5 against native 2e-5, no clear order
    return 2 * t
