"""The shared-memory segments of an MPI launch that did not finalize.

MPICH and Open MPI keep their intra-node segments in /dev/shm until
MPI_Finalize removes them; a launch that is killed (a timeout, SIGTERM from a
batch job's time limit, a failed node) or that aborts leaves them there, and
/dev/shm is memory. After a launch, `sweep(since)` removes the segments that
appeared since the launch started and that no process maps or holds open any
more. Only files of this user with the libraries' own segment names are
considered, so what others run on the node is left alone; the one thing not
excluded is a segment of another launch of this user created during this one
in the instant between its creation and its mapping.

`python -m mpiguide.core.segments --since EPOCH_SECONDS` does the same for
scripts (the C tests' erroneous-call runs).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
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


def _in_use(shm_dir: Path) -> set[int]:
    """Inodes of files under shm_dir that some process maps or has open."""
    prefix = str(shm_dir).rstrip("/") + "/"
    used: set[int] = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            with open(proc / "maps", errors="replace") as maps:
                for line in maps:
                    fields = line.split(maxsplit=5)
                    if len(fields) == 6 and fields[5].startswith(prefix):
                        used.add(int(fields[4]))
            for fd in os.scandir(proc / "fd"):
                if os.readlink(fd.path).startswith(prefix):
                    used.add(os.stat(fd.path).st_ino)
        except OSError:  # gone, or not ours to read: its files are not ours either
            continue
    return used


def sweep(since_ns: int, shm_dir: Path = SHM_DIR) -> list[Path]:
    """Removes the unused segments that appeared since `since_ns` (time.time_ns()); returns them."""
    found = _candidates(since_ns, shm_dir)
    if not found:
        return []
    removed = []
    for ino in found.keys() - _in_use(shm_dir):
        try:
            found[ino].unlink()
            removed.append(found[ino])
        except OSError:  # gone already, or not ours to remove after all: never fail the launch for it
            continue
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
