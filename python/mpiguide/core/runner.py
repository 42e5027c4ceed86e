"""Runs a job: r launches per stack and configuration grid, results written as
they arrive, interruptions survived, and `--resume` picking up what is left.

Run directory (docs/formats.md):
    meta.json        everything needed to interpret and to resume the run
    launches.json    one entry per launch with its status, rewritten atomically
    raw/<stack>/     the drivers' raw files; logs/ their stdout and stderr
    measurements.csv summary.csv verdicts.csv plots/ report.md report.html
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import random
import signal
import socket
import subprocess
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from mpiguide import __version__
from mpiguide.core import build, children, launch, rawfile, segments, slurm, tuning_formats
from mpiguide.core import stacks as stackmod
from mpiguide.core.errors import MpiguideError
from mpiguide.core.paths import is_checkout, source_root
from mpiguide.core.suite import LaunchTemplate, Suite

META_KEYS = ("run_id", "job", "title", "stacks_order", "runs", "params", "measurement", "analysis", "launch",
             "stacks", "host", "git")
PENDING, OK, FAILED, INTERRUPTED = "pending", "ok", "failed", "interrupted"
CALIBRATE, MEASURE = "calibrate", "measure"


@dataclass
class Launch:
    id: str
    stack: str
    template: str
    phase: str
    run_index: int
    nprocs: int
    driver: str
    args: list[str]
    raw: str  # relative to the run directory
    placement: str | None = None  # NODESxPPN overriding the run's placement for this launch
    env: dict[str, str] = field(default_factory=dict)  # set for this launch beside the stack's environment
    program: bool = False  # driver is a program of the user's (LaunchTemplate.program)
    status: str = PENDING
    returncode: int | None = None
    message: str = ""
    seconds: float | None = None
    attempts: int = 0

    @property
    def needs_t1(self) -> bool:
        """A measurement launch in estimate mode gets t_nrep1 from the calibration launches."""
        return self.phase == MEASURE and not self.program and "estimate" in self.args and "--t1" not in self.args


def write_json(path: Path, data: object) -> None:
    """Written whole or not at all (a temporary file renamed over the old one)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)


def read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise MpiguideError(f"{path} is missing: is {path.parent} an mpiguide run directory?") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise MpiguideError(f"cannot read {path}: {exc}") from exc


def host_info() -> dict:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"hostname": socket.gethostname(), "cpu_model": cpu, "cores": os.cpu_count(),
            "os": platform.platform(), "python": platform.python_version()}


def git_info() -> dict:
    """The commit of the checkout mpiguide runs from ("unknown" for an installed package), and its version."""
    def git(*args: str) -> str:
        try:
            src = source_root()
            if not is_checkout(src):
                return ""
            res = subprocess.run(["git", "-C", str(src), *args], capture_output=True, text=True, timeout=10)
            return res.stdout.strip() if res.returncode == 0 else ""
        except (OSError, subprocess.TimeoutExpired, MpiguideError):
            return ""

    commit = git("rev-parse", "HEAD")
    return {"commit": commit or "unknown", "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
            "version": __version__}


def measurement_args(m: dict) -> list[str]:
    """Driver options shared by every job: synchronization and nrep."""
    args = ["--sync", m["sync"], "--nrep", str(m["nrep"])]
    if m["nrep"] == "estimate":
        for key in ("rse_calib", "rse_batch", "b1", "b2", "nrep_min", "nrep_max", "calib_max"):
            args += ["--" + key.replace("_", "-"), str(m[key])]
    return args


def order_seed(seed: int, launch_id: str) -> int:
    """The --order-seed of one launch: the order of the sides it measures interleaved, drawn from the run's
    seed and the launch alone (so a rerun of the launch draws the same)."""
    return zlib.crc32(f"{seed}:{launch_id}".encode())


def _round_order(templates: list[LaunchTemplate], stack_names: list[str], rng: random.Random | None,
                 choose: Callable[[str, LaunchTemplate], LaunchTemplate | None] | None
                 ) -> list[tuple[str, LaunchTemplate]]:
    """One round's launches: the blocks in a random order (a block: one template, or the templates that share
    LaunchTemplate.block), each block's launches on every stack back to back in a random order of their own (a
    randomized block), so that two stacks or two sides compared round by round ran seconds apart. Spread over
    the round instead, a stretch of seconds in which the machine runs slow (the test machine's ping-pongs at
    1.8x for several launches in a row) hit one stack's launch of a template in every round often enough to flag
    whole templates of an A/A pair."""
    blocks: dict[str, list[LaunchTemplate]] = {}
    for t in templates:
        blocks.setdefault(t.block or t.key, []).append(t)
    order = list(blocks.values())
    if rng is not None:
        rng.shuffle(order)
    out = []
    for block in order:
        members = [(stack, t) for t in block for stack in stack_names if t.stack in (None, stack)]
        if rng is not None:
            rng.shuffle(members)
        for stack, t in members:
            chosen = t if choose is None else choose(stack, t)
            if chosen is not None:
                out.append((stack, chosen))
    return out


def plan(suite: Suite, params: dict, stack_names: list[str], runs: int, measurement: dict,
         first_round: int = 0,
         choose: Callable[[str, LaunchTemplate], LaunchTemplate | None] | None = None) -> list[Launch]:
    """All launches, round by round (launch index i of every stack and template, then i + 1, ...) so that every
    stack and template sees the same drift; inside a round in the random order of _round_order, drawn from the
    run's order seed (measurement["order_seed"]), so that no stack or template always goes first. Rounds
    first_round to first_round + runs - 1 (adaptive launches add rounds to a run); `choose` gives per stack the
    template to launch instead of each one (a narrowed one), or None to leave it out."""
    common = measurement_args(measurement)
    seed = int(measurement.get("order_seed", 0))
    out: list[Launch] = []
    templates = suite.launches(params)
    phases = [CALIBRATE, MEASURE] if measurement["nrep"] == "estimate" and first_round == 0 else [MEASURE]
    for phase in phases:
        for i in range(first_round, first_round + runs):
            rng = random.Random(seed * 1_000_003 + i) if seed else None
            for stack, t in _round_order(templates, stack_names, rng, choose):
                if t.program and phase == CALIBRATE:
                    continue  # a program of the user's has no repetitions to calibrate
                lid = f"{stack}-{t.key}-{'cal' if phase == CALIBRATE else 'r'}{i}"
                extra = ["--calibrate-only"] if phase == CALIBRATE else []
                if seed:
                    extra += ["--order-seed", str(order_seed(seed, lid))]
                args = list(t.args) if t.program else [*t.args, *common, *extra]
                out.append(Launch(id=lid, stack=stack, template=t.key, phase=phase, run_index=i,
                                  nprocs=t.nprocs, driver=t.driver, args=args, raw=f"raw/{stack}/{lid}.txt",
                                  placement=t.placement, env=dict(t.env), program=t.program))
    return out


def _renamed(entry: dict) -> dict:
    """A launches.json entry as Launch takes it: runs written before the placement rename say `layout`."""
    if "layout" in entry:
        entry = {**entry}
        entry["placement"] = entry.pop("layout")
    return entry


class RunDir:
    def __init__(self, path: Path):
        self.path = path
        self.meta: dict = {}
        self.launches: list[Launch] = []

    @classmethod
    def create(cls, path: Path, meta: dict, launches: list[Launch]) -> RunDir:
        if path.exists() and not path.is_dir():
            raise MpiguideError(f"--output {path} is a file, not a directory; choose another --output")
        if (path / "meta.json").exists():
            raise MpiguideError(f"{path} already holds a run; continue it with: mpiguide run --resume {path}")
        if path.exists() and any(path.iterdir()):
            raise MpiguideError(f"{path} exists and is not empty; choose another --output")
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MpiguideError(f"cannot create run directory {path}: {exc.strerror}") from exc
        rd = cls(path)
        rd.meta, rd.launches = meta, launches
        write_json(path / "meta.json", meta)
        rd.save()
        return rd

    @classmethod
    def open(cls, path: Path) -> RunDir:
        if not path.is_dir():
            raise MpiguideError(f"run directory {path} does not exist")
        rd = cls(path)
        rd.meta = read_json(path / "meta.json")
        missing = [k for k in META_KEYS if k not in rd.meta]
        if missing:
            raise MpiguideError(f"{path / 'meta.json'} is incomplete (no {', '.join(missing)}): not a run directory "
                                "written by mpiguide, or damaged")
        data = read_json(path / "launches.json")
        try:
            rd.launches = [Launch(**_renamed(d)) for d in data["launches"]]
        except (KeyError, TypeError) as exc:
            raise MpiguideError(f"{path / 'launches.json'} is malformed: {exc}") from exc
        return rd

    def save(self) -> None:
        write_json(self.path / "launches.json", {"launches": [asdict(x) for x in self.launches]})

    @property
    def job(self) -> str:
        """The name of the suite whose job this run measured."""
        return self.meta["job"]

    def pending(self) -> list[Launch]:
        return [x for x in self.launches if x.status != OK]


def resolve_run(ref: str, results: Path = Path("results")) -> Path:
    """A run given as a path, or as a run id under ./results."""
    p = Path(ref)
    if p.is_dir():
        return p
    if not p.is_absolute() and (results / ref).is_dir():
        return results / ref
    where = "" if p.is_absolute() else f" (nor {results / ref})"
    raise MpiguideError(f"run directory {p} does not exist{where}")


def t1_for(rd: RunDir, target: Launch) -> float | None:
    """Hunold and Carpen-Amarie (2018), Section 4.2: t_nrep1 is the longest calibration time over the
    calibration launches."""
    values = []
    for x in rd.launches:
        if x.phase == CALIBRATE and x.stack == target.stack and x.template == target.template and x.status == OK:
            t1 = rawfile.parse(rd.path / x.raw).header.get("t_nrep1")
            if t1:
                values.append(float(t1))
    return max(values) if values else None


def reuse_calibration(calibrated: RunDir, launches: list[Launch]) -> list[Launch]:
    """The launches of a second run (a validation) in estimate mode, planned on templates that `calibrated`
    may have calibrated already: a template it calibrated keeps that t_nrep1 (its measurement launches get
    --t1, its calibration launches are dropped: the same templates need no new calibration); a template it
    did not (one the second run adds, such as a library's own tuning file) is calibrated in the second run."""
    t1 = {(x.stack, x.template): t1_for(calibrated, x) for x in launches}
    out = []
    for x in launches:
        known = t1[(x.stack, x.template)]
        if known is None:
            out.append(x)
        elif x.phase == MEASURE:
            x.args += ["--t1", f"{known:.9e}"]
            out.append(x)
    return out


class _Terminated(BaseException):
    """SIGTERM while a launch runs (a BaseException, so that no `except Exception` on the way swallows it)."""


class RunStopped(Exception):
    """A failed launch showed that the launches after it cannot run either (a cluster node failed)."""


class RunInterrupted(Exception):
    """The run stopped before its end for a reason from outside it (SIGTERM, the end of its Slurm allocation):
    the launch cut off is interrupted, the ones not started are pending with the reason, all for --resume."""


class StopSignals:
    """The signals that end a run early, handled while the context lasts (execute() and what its caller says
    after it, so that a SIGTERM of the allocation's end right after another sign of it does not cut that short).
    SIGTERM (a batch job's end: its time limit or scancel; or a kill) stops the running launch at once; SIGUSR1
    and SIGUSR2 (Slurm's warning that the allocation ends soon, sbatch --signal=B:USR1@SECONDS) let it finish.
    After either, no launch starts."""

    WARNINGS = (signal.SIGUSR1, signal.SIGUSR2)

    def __init__(self) -> None:
        self.reason: str | None = None
        self.now = False  # the reason stops the running launch too
        self._waiting = False
        self._previous: dict[int, object] = {}

    def __enter__(self) -> StopSignals:
        for sig in (signal.SIGTERM, *self.WARNINGS):
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            if handler is not None:  # None: not set from Python, and not restorable from it
                signal.signal(sig, handler)

    def _handle(self, signum: int, frame: object) -> None:  # noqa: ARG002 - signal handler signature
        if signum == signal.SIGTERM:
            self.reason = "stopped by SIGTERM (the end of a batch job: its time limit or scancel; or a kill)"
            self.now = True
            if self._waiting:
                self._waiting = False  # raised once: a second SIGTERM does not cut short the stopping of the launch
                raise _Terminated()
        elif self.reason is None:
            self.reason = f"{signal.Signals(signum).name}: the allocation ends soon (sbatch --signal)"

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """While the runner waits for a launch: SIGTERM (also one that came just before) raises _Terminated."""
        self._waiting = True  # before the look at self.now: a SIGTERM between the two raises in the handler
        try:
            if self.now:
                raise _Terminated()
            yield
        finally:
            self._waiting = False


def _stop_process(proc: subprocess.Popen) -> None:
    """Ends mpiexec and everything it started (it runs in its own process group)."""
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


_SWEPT = "mpiguide: removed"


def _sweep_segments(since: int, logf) -> None:
    """A launch that did not finalize leaves its MPI segments in /dev/shm: remove them, say so in its log."""
    removed = segments.sweep(since)
    if removed:
        logf.write(f"{_SWEPT} {len(removed)} shared-memory segment(s) the launch left behind: "
                   f"{' '.join(p.name for p in removed)}\n")


@contextlib.contextmanager
def _launched(argv: list[str], env: dict[str, str], logf) -> Iterator[subprocess.Popen]:
    """mpiexec started in a process group of its own, its output in logf. On the way out the whole group is
    stopped (what a finished launch left running too: the kernel does not reuse a live group's ID) and the
    shared-memory segments the launch left behind are removed, with the signals that end mpiguide held until
    then (core.children: no Ctrl-C or SIGTERM leaves a launch running). children.NotStarted if it cannot
    start."""
    since = time.time_ns()

    def stop(proc: subprocess.Popen) -> None:
        _stop_process(proc)
        _sweep_segments(since, logf)

    with children.session(argv, stop, env=env, stdout=logf, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL) as proc:
        yield proc


def run_once(argv: list[str], env: dict[str, str], timeout: float, log: Path) -> int | None:
    """A launch outside a run's plan (a check before a run): its exit status, None if it was stopped after
    timeout seconds; its output in log."""
    with open(log, "w") as logf, _launched(argv, env, logf) as proc:
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None


def _keep_previous_attempt(rd: RunDir, x: Launch) -> None:
    """A rerun never overwrites what an earlier attempt measured."""
    raw = rd.path / x.raw
    if raw.exists():
        raw.rename(raw.with_name(f"{raw.stem}.attempt{x.attempts}{raw.suffix}"))


def _expand(text: str, run_dir: Path, x: Launch) -> str:
    text = text.replace("{run_dir}", str(run_dir.resolve())).replace("{stack}", x.stack).replace(
        "{run}", str(x.run_index)).replace("{launch}", x.id)
    stack = stackmod.load(x.stack) if "{build}" in text else None
    if stack is not None:  # (a dry run before the stack is installed shows the placeholder)
        text = text.replace("{build}", str(build.build_dir(stack)))
    return text


def expand_args(run_dir: Path, x: Launch) -> list[str]:
    """Driver arguments with {run_dir}, {stack}, {run} (the launch's run index), {launch} (its id) and {build}
    (its stack's build directory: the tuning library) filled in: per-stack inputs inside the run directory (the
    tuned library's profiles) stay valid when the directory is moved and resumed, and a driver can vary its
    order from run to run."""
    return [_expand(a, run_dir, x) for a in x.args]


def expand_env(run_dir: Path, x: Launch, read_files: bool = True) -> dict[str, str]:
    """The launch's own environment, filled in as expand_args (a library's tuning file in the run directory), with
    the settings of an environment file it names (tuning_formats.ENV_FILE: Intel MPI's tuning file) unless
    read_files is false (a dry run, before the file is written)."""
    env = {k: _expand(v, run_dir, x) for k, v in x.env.items()}
    return tuning_formats.with_env_file(env) if read_files else env


def write_inputs(rd: RunDir) -> None:
    """The files the run's launches read (Suite.inputs, kept in meta.json), where missing: a resumed or copied
    run has them again."""
    for rel, text in rd.meta.get("inputs", {}).items():
        path = rd.path / rel
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


class _DroppedInInit(Exception):
    """The launch's log shows that its processes can never leave MPI_Init (launch.dropped_in_init)."""


_LOG_LOOK_SECONDS = 1.0  # how often a running launch's log is read for a start-up that can never end


def _wait(proc: subprocess.Popen, log: Path, deadline: float) -> int:
    """proc's exit code, reading what its log gains meanwhile: _DroppedInInit where the log shows a start-up
    that can never end, subprocess.TimeoutExpired at the deadline (time.monotonic())."""
    seen, tail = 0, ""
    while True:
        try:
            return proc.wait(timeout=max(0.0, min(_LOG_LOOK_SECONDS, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            with open(log, errors="replace") as f:
                f.seek(seen)
                new = f.read()
                seen = f.tell()
            if launch.dropped_in_init(tail + new):
                raise _DroppedInInit() from None
            tail = (tail + new)[-len(launch.PMI_REQUEST_DROPPED):]  # a line written across two looks
            if time.monotonic() >= deadline:
                raise


def run_launch(rd: RunDir, x: Launch, stack: stackmod.Stack, spec: launch.LaunchSpec, timeout: float,
               signals: StopSignals, cut_off: Callable[[str], None]) -> None:
    """Runs one launch and records its outcome in x. SIGTERM or Ctrl-C once the attempt counts (x.attempts):
    x is interrupted, never left pending, cut_off(why) records that, and the exception goes on. Where the
    signal comes while the launch runs, that is before the launch is stopped (which takes a moment that a batch
    job's end may not leave); where it comes earlier (while the launch starts, when core.children holds it until
    the launch can be stopped), once the launch is stopped."""
    exe = x.driver if x.program else build.driver_path(stack, x.driver)
    args = expand_args(rd.path, x)
    try:
        own_env = expand_env(rd.path, x)
    except MpiguideError as e:  # an environment file that is missing or does not read
        x.status, x.message = FAILED, str(e)
        return
    if x.needs_t1:
        t1 = t1_for(rd, x)
        if t1 is None:
            x.status, x.message = FAILED, "no calibration launch of this stack succeeded, so t_nrep1 is unknown"
            return
        args += ["--t1", f"{t1:.9e}"]
    raw = rd.path / x.raw
    raw.parent.mkdir(parents=True, exist_ok=True)
    _keep_previous_attempt(rd, x)
    argv = launch.command(spec.with_placement(x.placement), stack, x.nprocs, str(exe),
                          args if x.program else [*args, "--output", str(raw.resolve())])
    log = rd.path / "logs" / f"{x.id}.log"
    log.parent.mkdir(exist_ok=True)
    recorded = []

    def interrupted(exc: BaseException) -> None:
        if not recorded:
            recorded.append(exc)
            why = signals.reason if isinstance(exc, _Terminated) else "interrupted"
            x.status, x.message = INTERRUPTED, f"{why}; rerun with --resume"
            x.seconds = time.monotonic() - start
            cut_off(why)

    start = time.monotonic()
    x.attempts += 1
    try:
        with open(log, "w") as logf, stack.launch_env() as env:
            extra = {**launch.environment(spec, stack, env), **own_env}
            env.update(extra)
            logf.write(launch.describe(argv, stack, extra) + "\n")
            logf.flush()
            with _launched(argv, env, logf) as proc:
                try:
                    with signals.waiting():
                        rc = _wait(proc, log, start + timeout)
                except subprocess.TimeoutExpired:
                    x.status, x.returncode = FAILED, None
                    x.message = f"killed after the {timeout:g} s launch timeout (see {log})"
                    x.seconds = time.monotonic() - start
                    return
                except _DroppedInInit:
                    x.status, x.returncode = FAILED, None
                    x.message = (f"stopped: the process manager dropped a request of MPI_Init's exchange "
                                 f"({launch.PMI_REQUEST_DROPPED!r}), so it would wait for ever (see {log})")
                    x.seconds = time.monotonic() - start
                    return
                except BaseException as exc:  # the launch is stopped on the way out, after cut_off
                    interrupted(exc)
                    raise
    except children.NotStarted as exc:
        x.status, x.message = FAILED, str(exc)
        return
    except (KeyboardInterrupt, SystemExit, _Terminated) as exc:  # before the launch ran: it is stopped by now
        interrupted(exc)
        raise
    x.seconds = time.monotonic() - start
    x.returncode = rc
    if x.program and rc == 0:
        rawfile.write_program_raw(raw, x.template, x.driver, x.nprocs, x.seconds)
    complete = False
    if raw.exists():
        try:
            parsed = rawfile.parse(raw)
            complete = parsed.complete
            if parsed.errors:
                x.message = f"{len(parsed.errors)} configuration(s) failed their data check"
        except MpiguideError as exc:
            x.message = str(exc)
    if complete and rc in (0, 3):  # 3: the driver finished but some data checks failed
        x.status = OK
    else:
        text = log.read_text(errors="replace")
        tail = " | ".join([line for line in text.strip().splitlines() if not line.startswith(_SWEPT)][-4:])
        hint = launch.failure_hint(spec, text)
        x.status = FAILED
        x.message = (x.message + "; " if x.message else "") + f"exit code {rc}" + (
            "" if complete else ", raw output incomplete") + f": {tail}" + (f" ({hint})" if hint else "")


def launch_output(rd: RunDir, x: Launch) -> str:
    """What a launch printed (its log without the command line the runner wrote first and without the runner's
    own notes of removed shared-memory segments); "" if it has no log."""
    log = rd.path / "logs" / f"{x.id}.log"
    if not log.exists():
        return ""
    lines = log.read_text(errors="replace").splitlines()[1:]
    return "\n".join(line for line in lines if not line.startswith(_SWEPT)) + ("\n" if lines else "")


ProgressFn = Callable[[Launch, int, int, float], None]


def _failed_in_init(rd: RunDir, x: Launch) -> str | None:
    """Why x, which just failed, is run once more at once: one of its processes was killed by a signal inside
    MPI_Init (launch.crashed_in_init), or the process manager dropped a request of MPI_Init's exchange
    (launch.dropped_in_init), so nothing of the program ran and nothing was measured. Its log is kept beside.
    None when x is not such a launch."""
    log = rd.path / "logs" / f"{x.id}.log"
    if x.status != FAILED or (rd.path / x.raw).exists() or not log.exists():
        return None
    text = log.read_text(errors="replace")
    if launch.crashed_in_init(text):
        what = "a process crashed inside MPI_Init"
    elif launch.dropped_in_init(text):
        what = "the process manager dropped a request of MPI_Init's exchange"
    else:
        return None
    kept = log.with_name(f"{x.id}.attempt{x.attempts}.log")
    log.rename(kept)
    return f"{what} in attempt {x.attempts} ({kept.relative_to(rd.path)}), so it ran again"


def _cut_off(x: Launch, reason: str) -> None:
    """A failed launch whose allocation ended under it: interrupted, to be redone, its failure kept in the message."""
    x.status, x.message = INTERRUPTED, f"cut off: {reason} (it ended: {x.message})"


def _stop_here(rd: RunDir, rest: list[Launch], reason: str, last: Launch | None = None) -> str:
    """The run stops before `rest` for `reason`; recorded at once. The launches of rest that were to run stay
    pending with the reason. `last`, the launch just before, if it failed, was cut off by the same end (the
    allocation's steps die before the runner hears of it): interrupted, to be redone, not failed. Returns the
    reason, with that said."""
    for x in rest:
        if x.status == PENDING:
            x.message = f"not started: {reason}"
    if last is not None and last.status == FAILED:
        _cut_off(last, reason)
        reason += f"; {last.id}, which failed just before, counts as cut off by it"
    rd.save()
    return reason


def _prepare(rd: RunDir) -> tuple[dict[str, stackmod.Stack], launch.LaunchSpec]:
    """The run's stacks (the ones it started with), built, and its launcher, checked before the first launch."""
    names = sorted({x.stack for x in rd.launches})
    stack_objs = {name: stackmod.get(name) for name in names}
    for name, s in stack_objs.items():
        recorded = rd.meta["stacks"].get(name, {})
        if recorded and (recorded.get("library_version"), recorded.get("prefix")) != (s.library_version, s.prefix):
            raise MpiguideError(
                f"stack '{name}' is not the one this run started with ({recorded.get('prefix')}: "
                f"{' '.join(str(recorded.get('library_version', '')).split()[:4])}); resuming would mix two MPI "
                "libraries in one run: reinstall that version or start a new run")
    for s in stack_objs.values():
        build.ensure_built(s)
    spec = launch.LaunchSpec.from_dict(rd.meta["launch"])
    for s in stack_objs.values():
        env = s.env()
        launch.preflight(spec, s, {**env, **launch.environment(spec, s, env)})
    return stack_objs, spec


def execute(rd: RunDir, on_start: ProgressFn, on_done: ProgressFn, timeout: float, signals: StopSignals,
            on_stop: Callable[[str], None] = lambda reason: None) -> list[Launch]:
    """Runs every launch that is not done yet, inside `with signals`; returns the ones that failed. Raises
    RunStopped when a node failed, KeyboardInterrupt on Ctrl-C, and RunInterrupted when the run must stop before
    its end: SIGTERM, or the Slurm allocation it runs in ending (Slurm's warning signal, srun refusing steps, a
    step cut off by the time limit, the job's end time passed). Then no launch starts any more and the ones left
    stay pending. on_stop(reason) is called once, as soon as such a stop is recorded: on SIGTERM that is before
    the launch cut off is stopped, since a batch job's end leaves only moments (Slurm's KillWait) to say it."""
    stack_objs, spec = _prepare(rd)
    write_inputs(rd)
    todo = rd.pending()
    job_end = slurm.JobEnd()
    started = time.monotonic()
    last: Launch | None = None  # the launch run just before
    told: list[str] = []

    def stop_here(rest: list[Launch], reason: str, last: Launch | None = None) -> str:
        reason = _stop_here(rd, rest, reason, last)
        if not told:
            told.append(reason)
            on_stop(reason)
        return reason

    def cut_off(rest: list[Launch]) -> Callable[[str], None]:
        """What run_launch records when a signal cuts its launch off; Ctrl-C is said by the caller instead."""
        return lambda why: stop_here(rest, why) if signals.now else _stop_here(rd, rest, why)

    for k, x in enumerate(todo):
        reason = signals.reason or job_end.passed()
        if reason:
            now = signals.now or signals.reason is None  # the end has come (not a warning of it)
            raise RunInterrupted(stop_here(todo[k:], reason, last if now else None))
        on_start(x, k, len(todo), time.monotonic() - started)
        x.status, x.message = PENDING, ""
        try:
            run_launch(rd, x, stack_objs[x.stack], spec, timeout, signals, cut_off(todo[k + 1:]))
            again = _failed_in_init(rd, x)
            if again:
                x.status, x.message = PENDING, ""
                run_launch(rd, x, stack_objs[x.stack], spec, timeout, signals, cut_off(todo[k + 1:]))
                x.message = "; ".join(m for m in (x.message, again) if m)
        except _Terminated:
            raise RunInterrupted(told[0] if told else stop_here([], signals.reason or "SIGTERM")) from None
        finally:
            rd.save()
        log = rd.path / "logs" / f"{x.id}.log"
        text = log.read_text(errors="replace") if x.status == FAILED and log.exists() else ""
        refused = slurm.step_refused(text)
        if refused:
            x.status, x.message, x.attempts = PENDING, "", x.attempts - 1  # it never ran
            raise RunInterrupted(stop_here(todo[k:], refused, last))
        cut = slurm.step_cut_off(text)
        if cut:
            _cut_off(x, cut)
        on_done(x, k + 1, len(todo), time.monotonic() - started)
        if cut:
            raise RunInterrupted(stop_here(todo[k + 1:], cut))
        stop = launch.stops_the_run(spec, text) if text else None
        if stop:
            raise RunStopped(f"{x.id}: {stop}")
        last = x
    return [x for x in rd.launches if x.status != OK]


def stack_meta(names: list[str]) -> dict:
    return {name: asdict(stackmod.get(name)) for name in names}


def new_meta(suite: Suite, params: dict, stack_names: list[str], runs: int, measurement: dict, analysis: dict,
             spec: launch.LaunchSpec, run_id: str, command: list[str]) -> dict:
    return {
        "run_id": run_id,
        "job": suite.name,
        "title": suite.title,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "mpiguide_version": __version__,
        "command": command,
        "stacks_order": stack_names,
        "runs": runs,
        "params": params,
        "measurement": measurement,
        "analysis": analysis,
        "launch": spec.to_dict(),
        "test_cluster": launch.test_cluster_name(spec),
        "stacks": stack_meta(stack_names),
        "host": host_info(),
        "git": git_info(),
        "inputs": suite.inputs(params),
    }


def new_run_id(job: str) -> str:
    return time.strftime("%Y%m%d-%H%M%S") + f"-{job}"

