"""The MPI shared-memory segments a launch leaves behind when it does not finalize (mpiguide.core.segments)."""

from __future__ import annotations

import mmap
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import MPIGUIDE_EXE, REPO, read_launches
from mpiguide.core import segments

ABORT_C = r"""
#include <mpi.h>
int main(int argc, char **argv)
{
    int rank, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD); /* the node's segment is in use */
    if (rank == 0) MPI_Abort(MPI_COMM_WORLD, 5);
    MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
"""


def make(path: Path, size: int = 4096) -> Path:
    path.write_bytes(b"\0" * size)
    return path


def segment_files(shm: Path) -> tuple[list[Path], Path, Path, list[Path]]:
    """Files in shm: segments a sweep removes, one that will be mapped and one held open, and those it keeps
    (other names, a directory, another user's segment)."""
    shm.mkdir()
    gone = [make(shm / "mpich_shm_1a2b_0"), make(shm / "sm_segment.vm.0.42.1"), make(shm / "osc_sm.x.1.0.a"),
            make(shm / "vader_segment.vm.3")]
    mapped, held = make(shm / "sm_segment.vm.0.42.0"), make(shm / "mpich_shm_3c4d_0")
    kept = [mapped, held, make(shm / "mpich_scratch"), make(shm / "user_data"), shm / "mpich_shm_dir_0"]
    (shm / "mpich_shm_dir_0").mkdir()
    foreign = make(shm / "mpich_shm_5e6f_0")
    if os.geteuid() == 0:
        os.chown(foreign, 65534, 65534)  # another user's: never ours to remove
        kept.append(foreign)
    else:
        gone.append(foreign)
    return gone, mapped, held, kept


def test_sweep_removes_only_unused_segments(tmp_path):
    shm = tmp_path / "shm"
    gone, mapped, held, kept = segment_files(shm)
    with open(mapped, "r+b") as f, mmap.mmap(f.fileno(), 0) as view, open(held, "rb"):
        view[0] = 1
        assert segments.sweep(time.time_ns() + 10**12, shm) == []  # nothing appeared since then
        assert segments.sweep(0, shm) == sorted(gone)
    assert sorted(shm.iterdir()) == sorted(kept)
    assert segments.sweep(0, shm) == sorted([mapped, held])  # unused now


def _mapping_child(path: Path) -> subprocess.Popen:
    """A process that maps path and waits; returns once the mapping exists."""
    code = ("import mmap, sys; f = open(sys.argv[1], 'r+b'); m = mmap.mmap(f.fileno(), 0); "
            "print('mapped', flush=True); sys.stdin.read()")
    child = subprocess.Popen([sys.executable, "-c", code, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout.readline() == "mapped\n"
    return child


def _stopped(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2] == "T"


def test_sweep_waits_for_dying_ranks_only(tmp_path):
    """A segment still mapped by a process with SIGTERM pending (a rank the launcher has just killed) is removed
    once that process is gone; one mapped by a live process never is."""
    shm = tmp_path / "shm"
    shm.mkdir()
    dying_seg, live_seg = make(shm / "mpich_shm_d_0"), make(shm / "mpich_shm_l_0")
    dying, live = _mapping_child(dying_seg), _mapping_child(live_seg)
    try:
        os.kill(dying.pid, signal.SIGSTOP)  # held still, so that SIGTERM stays pending
        deadline = time.monotonic() + 60  # a guard against hanging, never a measure of speed
        while not _stopped(dying.pid):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        os.kill(dying.pid, signal.SIGTERM)
        assert segments._exiting(dying.pid) and not segments._exiting(live.pid)
        assert segments.sweep(0, shm, wait=0) == []  # both mapped; no waiting allowed
        os.kill(dying.pid, signal.SIGCONT)
        assert dying.wait(timeout=60) == -signal.SIGTERM
        assert segments.sweep(0, shm) == [dying_seg]
        assert live_seg.exists()
    finally:
        for child in (dying, live):
            child.kill()
            child.wait()


def test_sweep_command(tmp_path):
    make(tmp_path / "mpich_shm_77_0")
    make(tmp_path / "notes")
    res = subprocess.run([sys.executable, "-m", "mpiguide.core.segments", "--since", "0", "--dir", str(tmp_path)],
                         capture_output=True, text=True)
    assert (res.returncode, res.stdout) == (0, f"removed {tmp_path / 'mpich_shm_77_0'}\n"), res.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["notes"]
    res = subprocess.run([sys.executable, "-m", "mpiguide.core.segments"], capture_output=True, text=True)
    assert res.returncode == 2 and "--since" in res.stderr


SHM_SEPARATOR = "== /dev/shm after the launch"


def in_private_shm(argv: list[str]) -> tuple[subprocess.CompletedProcess, list[str]]:
    """argv with a /dev/shm of its own (a tmpfs in a mount namespace): its exit and output, and the files left in
    that /dev/shm once it ended. Every launch's sweep removes what it finds unused since its start, whoever left
    it, so a launch of another test running meanwhile (pytest-xdist) could remove this one's segment first."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("a /dev/shm of the test's own needs root and unshare(1)")
    script = (f'mount -t tmpfs -o size=256m tmpfs /dev/shm || exit 90; "$@"; rc=$?; echo "{SHM_SEPARATOR}" >&2; '
              'ls -A /dev/shm >&2; exit $rc')
    res = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *argv],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode != 90, res.stderr
    err, sep, left = res.stderr.rpartition(SHM_SEPARATOR + "\n")
    assert sep, res.stderr
    res.stderr = err
    return res, left.split()


def abort_program(stack, tmp_path: Path) -> Path:
    src, exe = tmp_path / "abort.c", tmp_path / "abort"
    src.write_text(ABORT_C)
    subprocess.run([str(stack.mpicc), str(src), "-o", str(exe)], env=stack.env(), check=True)
    return exe


def test_aborted_launch_leaves_no_segment(mpich_stack, mpich_build, tmp_path):
    """MPICH keeps its node segment until MPI_Finalize: a launch that aborts leaves it in /dev/shm, the runner
    removes it after the launch and says so in the launch's log."""
    exe = abort_program(mpich_stack, tmp_path)
    run = tmp_path / "run"
    res, left = in_private_shm([str(MPIGUIDE_EXE), "run", "pingpong", "--stacks", "mpich", "--runs", "1",
                                "--sizes", "4", "--launcher-template", f"{{mpiexec}} -n {{np}} {exe} {{prog}}",
                                "--output", str(run)])
    assert res.returncode == 1, res.stdout + res.stderr
    [x] = read_launches(run)
    assert (x["status"], x["returncode"]) == ("failed", 5)
    log = (run / "logs" / f"{x['id']}.log").read_text()
    assert re.search(r"mpiguide: removed 1 shared-memory segment\(s\) the launch left behind: mpich_shm_\S+\n",
                     log), log
    assert "mpiguide: removed" not in x["message"]  # the message keeps the launch's own last lines
    assert left == []


@pytest.mark.parametrize("since", ["x", ""])
def test_sweep_command_rejects_a_bad_time(since):
    res = subprocess.run([sys.executable, "-m", "mpiguide.core.segments", "--since", since],
                         capture_output=True, text=True)
    assert res.returncode == 2 and "invalid float value" in res.stderr


def shell_sweep(marker: Path, shm: Path) -> list[Path]:
    """cmake/mg-shm-sweep.sh, the same sweep for ctest's launcher: what it says it removed."""
    res = subprocess.run([str(REPO / "cmake" / "mg-shm-sweep.sh"), str(marker), str(shm)], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return sorted(Path(line.split("removed ", 1)[1]) for line in res.stderr.splitlines() if "removed " in line)


def test_the_shell_sweep_of_ctests_launcher_removes_only_unused_segments(tmp_path):
    shm, marker = tmp_path / "shm", tmp_path / "started"
    marker.touch()
    gone, mapped, held, kept = segment_files(shm)
    later = time.time() + 3600
    os.utime(marker, (later, later))  # the launch started after every file: none is its
    assert shell_sweep(marker, shm) == []
    os.utime(marker, (0, 0))
    with open(mapped, "r+b") as f, mmap.mmap(f.fileno(), 0) as view, open(held, "rb"):
        view[0] = 1
        assert shell_sweep(marker, shm) == sorted(gone)
    assert sorted(shm.iterdir()) == sorted(kept)
    assert shell_sweep(marker, shm) == sorted([mapped, held])  # unused now
    assert shell_sweep(tmp_path / "no such marker", shm) == []


def test_ctests_launcher_removes_what_an_aborted_launch_left(mpich_stack, mpich_build, tmp_path):
    """The launcher CMake writes for ctest (build/<stack>/mg-mpiexec) sweeps after every launch: MPICH's node
    segment of a launch that aborts does not stay in /dev/shm."""
    exe = abort_program(mpich_stack, tmp_path)
    res, left = in_private_shm([str(mpich_build / "mg-mpiexec"), "-n", "2", str(exe)])
    assert res.returncode != 0
    assert len(re.findall(r"mg-shm-sweep: removed /dev/shm/mpich_shm_\S+\n", res.stderr)) == 1, res.stderr
    assert left == []
