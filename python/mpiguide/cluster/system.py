"""The Linux plumbing the test cluster needs: commands that must succeed, processes told apart from
others that reuse their IDs, and the packages that bring Slurm and munge."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from mpiguide.core.errors import MpiguideError

# Debian packages: the Slurm daemons and clients, munge, the PMIx library Slurm's pmix plugin loads (it opens
# libpmix.so, which only the -dev package provides) and Slurm's PMI-2 library that Intel MPI loads.
PACKAGES = {"slurmctld": "slurm-wlm", "slurmd": "slurm-wlm", "srun": "slurm-wlm", "sbatch": "slurm-wlm",
            "munged": "munge", "/usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so": "libpmix-dev",
            "/usr/lib/x86_64-linux-gnu/libpmi2.so.0": "libpmi2-0"}
TOOLS = ("ip", "nsenter", "unshare")


def run(cmd: list[str], what: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
    """Runs a command; raises with its own message when it fails and check is set."""
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise MpiguideError(f"{what}: {cmd[0]} not found") from None
    except subprocess.TimeoutExpired:
        raise MpiguideError(f"{what}: {' '.join(cmd)} did not finish within {timeout:g} s") from None
    if check and res.returncode != 0:
        raise MpiguideError(f"{what}: {' '.join(cmd)} failed: {(res.stderr or res.stdout).strip()}")
    return res


def missing_packages() -> list[str]:
    """The Debian packages whose programs or files are missing."""
    missing = []
    for item, package in PACKAGES.items():
        present = Path(item).exists() if item.startswith("/") else shutil.which(item) or Path(
            "/usr/sbin", item).exists()
        if not present and package not in missing:
            missing.append(package)
    return missing


def check_machine() -> None:
    """The test cluster needs Linux, root and the namespace tools."""
    if not Path("/proc/self/ns/net").exists():
        raise MpiguideError("the test cluster needs Linux network namespaces (/proc/self/ns/net is missing)")
    if os.geteuid() != 0:
        raise MpiguideError("the test cluster needs root (it creates network namespaces and a bridge): "
                            "run mpiguide cluster up as root")
    missing = [t for t in TOOLS if not shutil.which(t)]
    if missing:
        raise MpiguideError(f"the test cluster needs {', '.join(missing)} (Debian: apt-get install iproute2 "
                            "util-linux)")


@dataclass(frozen=True)
class Process:
    """A process as the cluster recorded it: its ID and its start time, which tells it apart from a later
    process that got the same ID."""
    pid: int
    start: int

    @classmethod
    def of(cls, pid: int) -> Process | None:
        start = start_time(pid)
        return None if start is None else cls(pid, start)

    def alive(self) -> bool:
        return start_time(self.pid) == self.start

    def to_dict(self) -> dict:
        return {"pid": self.pid, "start": self.start}


def _stat(proc: Path) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (field 3 onwards), None if the process is gone."""
    try:
        text = (proc / "stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def _processes() -> list[Path]:
    return [entry for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def start_time(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat (clock ticks after boot); None if there is no such process (or a zombie)."""
    fields = _stat(Path(f"/proc/{pid}"))
    return None if fields is None or fields[0] == "Z" else int(fields[19])


def session_members(leader: Process) -> list[Process]:
    """The processes of leader's session (itself and the daemons' children) that started after it."""
    members = []
    for entry in _processes():
        fields = _stat(entry)
        if fields and int(fields[3]) == leader.pid and int(fields[19]) >= leader.start and fields[0] != "Z":
            members.append(Process(int(entry.name), int(fields[19])))
    return members


def slurm_clients(conf: str) -> list[Process]:
    """srun, salloc and sbatch processes talking to the Slurm of `conf` (SLURM_CONF in their environment)."""
    needle = f"SLURM_CONF={conf}".encode()
    found = []
    for entry in _processes():
        try:
            if (entry / "comm").read_text().strip() not in ("srun", "salloc", "sbatch"):
                continue
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                p = Process.of(int(entry.name))
                if p:
                    found.append(p)
        except OSError:
            continue
    return found


def netns_members(netns: str) -> list[Process]:
    """Every process in the network namespace netns."""
    res = run(["ip", "netns", "pids", netns], "listing the processes of a node", check=False)
    if res.returncode != 0:
        return []
    return [p for p in (Process.of(int(x)) for x in res.stdout.split()) if p is not None]


def _signal_and_wait(processes: list[Process], sig: int, wait: float) -> list[Process]:
    """Sends sig to those of processes still there; returns the ones still there after `wait` seconds."""
    alive = [p for p in processes if p.alive()]
    for p in alive:
        try:
            os.kill(p.pid, sig)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + wait
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [p for p in alive if p.alive()]
    return alive


def stop(processes: list[Process], grace: float = 10) -> list[Process]:
    """SIGTERM, then SIGKILL for those still there after `grace` seconds; returns the ones that survived."""
    if not _signal_and_wait(processes, signal.SIGTERM, grace):
        return []
    return _signal_and_wait(processes, signal.SIGKILL, 5.0)


def kill(processes: list[Process]) -> list[Process]:
    """SIGKILL at once, as a crash would; returns the ones still there after 5 seconds."""
    return _signal_and_wait(processes, signal.SIGKILL, 5.0)


def is_mountpoint(path: str) -> bool:
    target = os.path.realpath(path)
    try:
        with open("/proc/self/mounts") as f:
            return any(line.split()[1] == target for line in f)
    except OSError:
        return False
