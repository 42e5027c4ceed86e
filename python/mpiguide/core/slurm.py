"""Launching through Slurm: the srun line for a stack, the environment it runs with, and a clear message when
srun, a partition or an MPI plugin is missing; and the signs that the allocation a run executes in is ending.

Nothing here knows mpiguide's test cluster. A Slurm that mpiguide knows more about than Slurm tells (the test
cluster: where its configuration is when the user exported none, and that its nodes share one machine) is a
Site; the code that starts it registers a SiteFinder (register_site_finder), so that the launch path never
imports test infrastructure."""

from __future__ import annotations

import functools
import math
import os
import re
import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from mpiguide.core.errors import MpiguideError
from mpiguide.core.stacks import Stack


class Site(Protocol):
    name: str

    def env(self) -> dict[str, str]:
        """What Slurm's commands need to talk to it (SLURM_CONF)."""

    def launch_env(self, stack: Stack) -> dict[str, str]:
        """What a launch of `stack` on its nodes needs besides (for example TCP between nodes)."""


class SiteFinder(Protocol):
    def current(self) -> Site | None:
        """The site to use when the environment names no Slurm configuration."""

    def of_env(self, env: Mapping[str, str]) -> Site | None:
        """The site env's Slurm configuration belongs to, if it is one of these."""


_FINDERS: list[SiteFinder] = []


def register_site_finder(finder: SiteFinder) -> None:
    if finder not in _FINDERS:
        _FINDERS.append(finder)


def slurm_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """What Slurm's commands need on top of `base` (default: this process's environment): the current site's
    SLURM_CONF, unless base names a Slurm configuration of its own."""
    base = os.environ if base is None else base
    if base.get("SLURM_CONF"):
        return {}
    site = next((s for f in _FINDERS if (s := f.current()) is not None), None)
    return site.env() if site else {}


def site_of(env: Mapping[str, str]) -> Site | None:
    """The registered site env's Slurm configuration belongs to, if any."""
    return next((s for f in _FINDERS if (s := f.of_env(env)) is not None), None)


# Where distributions put Slurm's PMI-2 client library (Debian: libpmi2-0).
PMI2_LIBRARIES = ("/usr/lib/x86_64-linux-gnu/libpmi2.so.0", "/usr/lib/x86_64-linux-gnu/libpmi2.so",
                  "/usr/lib64/libpmi2.so", "/usr/lib/libpmi2.so", "/usr/lib64/slurm/libpmi2.so")


def pmi2_library() -> str | None:
    srun = shutil.which("srun")
    near = [str(Path(srun).resolve().parent.parent / lib / "libpmi2.so") for lib in ("lib", "lib64")] if srun else []
    return next((p for p in (*PMI2_LIBRARIES, *near) if Path(p).exists()), None)


def launch_env(stack: Stack, base: Mapping[str, str]) -> dict[str, str]:
    """Additions for a launch of `stack` on Slurm's nodes: slurm_env; the pointer to Slurm's PMI-2 library of a
    family that needs one (Intel MPI: without it every rank starts alone); what a registered site's nodes
    need. Settings the user exported win."""
    add = slurm_env(base)
    var = stack.adapter.pmi_library_variable
    if var and var not in base and (lib := pmi2_library()):
        add[var] = lib
    if site := site_of({**base, **add}):
        add.update({k: v for k, v in site.launch_env(stack).items() if k not in base})
    return add


def srun_path() -> str:
    path = shutil.which("srun")
    if not path:
        raise MpiguideError("srun not found: --launcher srun needs Slurm's client commands on PATH (on this "
                            "machine, `mpiguide cluster up` installs them and starts a test cluster)")
    return path


@functools.lru_cache(maxsize=8)
def _mpi_plugins(srun: str, conf: str | None) -> frozenset[str]:
    env = {**os.environ, **({"SLURM_CONF": conf} if conf else {})}
    try:
        res = subprocess.run([srun, "--mpi=list"], capture_output=True, text=True, timeout=60, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MpiguideError(f"srun --mpi=list failed: {exc}") from None
    if res.returncode != 0:
        raise MpiguideError(f"srun --mpi=list failed ({'SLURM_CONF=' + conf if conf else 'no SLURM_CONF'}): "
                            f"{(res.stderr or res.stdout).strip()}")
    # "MPI plugin types are...", one per line, then "specific pmix plugin versions available: pmix_v4"
    lines = [line.strip() for line in res.stdout.splitlines() if line.strip()]
    return frozenset(w for line in lines for w in line.replace(",", " ").split()[-1:] if w.isidentifier())


def check_srun(stack: Stack, env: Mapping[str, str], partition: str | None = None) -> None:
    """Before the first srun launch: srun is there, has the stack's PMI plugin, and knows the partition;
    each refusal names the way out."""
    srun = srun_path()
    plugin = stack.srun_mpi()
    plugins = _mpi_plugins(srun, env.get("SLURM_CONF"))
    if plugin not in plugins:
        raise MpiguideError(f"stack '{stack.name}' needs srun --mpi={plugin}, which this Slurm does not have "
                            f"(srun --mpi=list: {', '.join(sorted(plugins)) or 'nothing'}); "
                            f"{stack.adapter.srun_plugin_hint}")
    var = stack.adapter.pmi_library_variable
    if var and not env.get(var):
        raise MpiguideError(f"stack '{stack.name}' ({stack.family}) needs Slurm's PMI-2 library under srun, and "
                            f"none was found ({', '.join(PMI2_LIBRARIES)}): install it (Debian: apt-get install "
                            f"libpmi2-0) or set {var} to it")
    if partition:
        check_partition(partition, env)


def check_partition(partition: str, env: Mapping[str, str]) -> None:
    """Refuses a partition Slurm does not know, listing the ones it does."""
    try:
        res = subprocess.run(["sinfo", "-h", "-o", "%R"], capture_output=True, text=True, timeout=60,
                             env={**os.environ, **env})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MpiguideError(f"cannot list Slurm's partitions (sinfo): {exc}") from None
    if res.returncode != 0:
        raise MpiguideError(f"cannot list Slurm's partitions: sinfo says {res.stderr.strip()}")
    known = sorted(set(res.stdout.split()))
    if partition not in known:
        raise MpiguideError(f"Slurm has no partition '{partition}' (sinfo lists: {', '.join(known) or 'none'})")


def node_failure(log: str) -> str | None:
    """srun's word that a node failed under a job step, as a reason to stop a run; None otherwise."""
    nodes = sorted(set(re.findall(r"Node failure on (\S+)", log)))
    if not nodes:
        return None
    return (f"node {', '.join(nodes)} failed during the launch; the following launches would wait for it, so "
            "the run stops here (finished launches and the partial raw file are kept)")


def missing_on_nodes(log: str) -> str | None:
    """srun's or the loader's word that a program or library is missing on a compute node, as advice."""
    if re.search(r"execve\(\): .*No such file or directory|error while loading shared libraries", log):
        return ("a program or library is missing on a compute node: the stack's prefix, mpiguide's build "
                "directory and the run directory must be on a file system the nodes share")
    return None


# ---------------------------------------------------------------- the end of the allocation

# srun inside a job that is completing (its time limit, scancel) or gone: the step never starts
_REFUSED = re.compile(r"Unable to create step for job (\d+): (Job/step already completing or completed|"
                      r"Invalid job id specified)")
# slurmstepd, through srun, when the whole job ends under a running step (a step's own scancel says no DUE TO)
_CUT_OFF = re.compile(r"\*\*\* (?:STEP|JOB) (\d+)\S* ON \S+ CANCELLED AT (\S+) "
                      r"DUE TO (TIME LIMIT|PREEMPTION|JOB REQUEUE) \*\*\*")


def step_refused(log: str) -> str | None:
    """srun's word in a launch's log that it started nothing because the job's allocation is ending or over,
    as the reason; None otherwise."""
    m = _REFUSED.search(log)
    return f"job {m[1]} is ending: srun starts no step in it any more ({m[2]})" if m else None


def step_cut_off(log: str) -> str | None:
    """slurmstepd's word in a launch's log that the job's time limit (or its preemption or requeue) ended the
    running step, as the reason; None otherwise."""
    m = _CUT_OFF.search(log)
    return f"job {m[1]} was cancelled at {m[2]} due to its {m[3].lower()}" if m else None


# states in which a job runs no launch any more (squeue -o %T)
_OVER = {"COMPLETING", "COMPLETED", "CANCELLED", "TIMEOUT", "FAILED", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
         "DEADLINE", "OUT_OF_MEMORY"}


def _seconds_left(text: str) -> float | None:
    """squeue's %L ([days-][hours:]minutes:seconds, UNLIMITED, NOT_SET, INVALID once the limit has passed)."""
    if text in ("UNLIMITED", "NOT_SET"):
        return math.inf
    if text == "INVALID":
        return 0.0
    m = re.fullmatch(r"(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)", text)
    if not m:
        return None
    days, hours, minutes, seconds = (int(x or 0) for x in m.groups())
    return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)


class JobEnd:
    """The end of the Slurm job this process runs in (SLURM_JOB_ID; none outside a job), so that a runner starts
    no launch after it: SLURM_JOB_END_TIME where Slurm sets it (23.02 and later), else squeue's time left, asked
    once; when that moment has passed, squeue is asked again (the limit may have been raised)."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        self.job_id = env.get("SLURM_JOB_ID")
        self.env = {**env, **slurm_env(env)}
        end = env.get("SLURM_JOB_END_TIME", "")
        self.end: float | None = float(end) if end.isdigit() else None

    def passed(self) -> str | None:
        """Why the job's end has come, or None (it has not, squeue cannot tell, or this is no Slurm job)."""
        if not self.job_id:
            return None
        if self.end is None:
            self.end = self._ask()
        if time.time() < self.end:
            return None
        self.end = self._ask()
        if time.time() < self.end:
            return None
        return f"job {self.job_id} has reached its end time (squeue)"

    def _ask(self) -> float:
        """When squeue says the job ends: now once it is completing or over, never when squeue cannot tell."""
        assert self.job_id is not None
        try:
            res = subprocess.run(["squeue", "-h", "-j", self.job_id, "-o", "%T %L"], capture_output=True, text=True,
                                 timeout=30, env=self.env)
        except (OSError, subprocess.TimeoutExpired):
            return math.inf
        words = res.stdout.split()
        if res.returncode != 0 or len(words) != 2:
            return math.inf
        state, left = words
        if state in _OVER:
            return time.time()
        seconds = _seconds_left(left)
        return math.inf if seconds is None else time.time() + seconds
