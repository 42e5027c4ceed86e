"""The shared-memory segments of an MPI launch that did not finalize.

MPICH and Open MPI keep their intra-node segments in /dev/shm until
MPI_Finalize removes them; a launch that is killed (a timeout, SIGTERM from a
batch job's time limit, a failed node) or that aborts leaves them there, and
/dev/shm is memory. After a launch, `sweep(since)` removes the segments that
appeared since the launch started and that no process maps or holds open any
more; ranks still on their way out (the launcher ends before them: MPICH's run
in sessions of their own) are waited for. Only files of this user with the
libraries' own segment names are considered, so what others run on the node is
left alone; the one thing not excluded is a segment of another launch of this
user created during this one in the instant between its creation and its
mapping. Launches of this user that overlap share the work: a segment left
unused is removed, and named in its log, by whichever sweep comes first.

`python -m mpiguide.core.segments --since EPOCH_SECONDS` does the same for
scripts (the C tests' erroneous-call runs).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import time
from pathlib import Path

SHM_DIR = Path("/dev/shm")
# MPICH; Open MPI 5 btl/sm and osc/sm, Open MPI 4 btl/vader. Intel MPI removes its segments once mapped, so a
# launch killed at once leaves none (checked with 2021.18).
SEGMENT_NAME = re.compile(r"(mpich_shm_|sm_segment\.|vader_segment\.|osc_sm\.)")


# File times come from the kernel's coarse clock, up to a tick (<= 10 ms) behind time.time_ns().
_COARSE_CLOCK_NS = 20_000_000


def _candidates(since_ns: int, shm_dir: Path) -> dict[int, Path]:
    """Inode -> path of the segment files of this user changed since `since_ns`."""
    since_ns -= _COARSE_CLOCK_NS
    found: dict[int, Path] = {}
    uid = os.geteuid()
    try:
        entries = list(os.scandir(shm_dir))
    except OSError:
        return found
    for e in entries:
        if not SEGMENT_NAME.match(e.name):
            continue
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        if e.is_file(follow_symlinks=False) and st.st_uid == uid and st.st_ctime_ns >= since_ns:
            found[st.st_ino] = Path(e.path)
    return found


def _users(shm_dir: Path) -> dict[int, set[int]]:
    """Inode -> the processes that map or hold open that file under shm_dir."""
    prefix = str(shm_dir).rstrip("/") + "/"
    users: dict[int, set[int]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        pid = int(proc.name)
        try:
            with open(proc / "maps", errors="replace") as maps:
                for line in maps:
                    fields = line.split(maxsplit=5)
                    if len(fields) == 6 and fields[5].startswith(prefix):
                        users.setdefault(int(fields[4]), set()).add(pid)
            for fd in os.scandir(proc / "fd"):
                if os.readlink(fd.path).startswith(prefix):
                    users.setdefault(os.stat(fd.path).st_ino, set()).add(pid)
        except OSError:  # gone, or not ours to read: its files are not ours either
            continue
    return users


_PF_EXITING = 0x4
_DEADLY = (1 << (signal.SIGKILL - 1)) | (1 << (signal.SIGTERM - 1))


def _exiting(pid: int) -> bool:
    """The process is gone, a zombie, in its exit, or has SIGKILL/SIGTERM pending: it will unmap its files."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) ": state, ppid, ..., flags is the 7th
        if fields[0] in "ZXx" or int(fields[6]) & _PF_EXITING:
            return True
        status = Path(f"/proc/{pid}/status").read_text()
    except (OSError, ValueError, IndexError):
        return True
    pending = 0
    for line in status.splitlines():
        if line.startswith(("SigPnd:", "ShdPnd:")):
            pending |= int(line.split()[1], 16)
    return bool(pending & _DEADLY)


def sweep(since_ns: int, shm_dir: Path = SHM_DIR, wait: float = 30.0) -> list[Path]:
    """Removes the segments that appeared since `since_ns` (time.time_ns()) and that no process maps or holds
    open; returns them. The ranks of a launch that was killed or aborted may still be on their way out when the
    launcher has ended: segments that only such dying processes use are waited for (at most `wait` seconds),
    those of a live process are left alone."""
    deadline = time.monotonic() + wait
    removed: list[Path] = []
    while True:
        found = _candidates(since_ns, shm_dir)
        if not found:
            break
        users = _users(shm_dir)
        for ino in found.keys() - users.keys():
            try:
                found[ino].unlink()
                removed.append(found[ino])
            except OSError:  # gone already, or not ours to remove after all: never fail the launch for it
                continue
        dying = [ino for ino in found.keys() & users.keys() if all(_exiting(p) for p in users[ino])]
        if not dying or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    return sorted(removed)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mpiguide.core.segments",
                                 description="remove the MPI shared-memory segments a launch left behind")
    ap.add_argument("--since", type=float, required=True, metavar="EPOCH_SECONDS",
                    help="when the launch started (seconds since the epoch)")
    ap.add_argument("--dir", type=Path, default=SHM_DIR, help=f"where the segments are (default {SHM_DIR})")
    args = ap.parse_args(argv)
    for path in sweep(int(args.since * 1e9), args.dir):
        print(f"removed {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
