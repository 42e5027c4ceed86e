"""mpiguide.dt for mpi4py programs: mpi4py built from source with the MPICH stack's
mpicc (pip, into a folder of its own), then a program under mpiexec -n 2 that
checks the engine against MPI itself: packed bytes equal MPI_Pack's, the
normalized type moves what the original moves, unpack leaves the gaps alone,
bad buffers are refused before anything is touched."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mpiguide.core import launch

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = textwrap.dedent('''
    import sys
    import numpy as np
    from mpi4py import MPI
    from mpiguide import dt
    from mpiguide.core.errors import MpiguideError

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    vec = MPI.INT.Create_vector(4, 2, 6).Commit()          # 4 blocks of 2 ints, 6 apart
    pair = MPI.Datatype.Create_struct([1, 1], [0, 8], [MPI.INT, MPI.DOUBLE]).Commit()
    count = 3
    ext = vec.Get_extent()[1]
    src = np.arange(count * ext // 4 + 8, dtype=np.int32) + 1000 * rank

    info = dt.explain(vec, count)
    assert info["shape"] == "vector" and info["size"] == 32 and info["blocks"] == 4, info
    assert info["mean_block"] == 8 and info["same_signature"] and info["program"], info
    assert dt.explain(pair)["same_signature"] is False

    # the engine packs what MPI_Pack packs
    ours = dt.pack(src, vec, count)
    theirs = bytearray(vec.Pack_size(count, comm))
    elements = src.view(np.uint8)[:count * ext]       # mpi4py's Pack takes count from the buffer's size
    n = vec.Pack(elements, theirs, 0, comm)
    assert bytes(ours) == bytes(theirs[:n]) and len(ours) == count * 32

    # unpack puts the bytes back and leaves every other byte alone
    dst = np.full_like(src, -7)
    assert dt.unpack(ours, dst, vec, count) == len(ours)
    want = np.full_like(src, -7)
    vec.Unpack(theirs[:n], 0, want.view(np.uint8)[:count * ext], comm)
    assert np.array_equal(dst, want)

    # the normalized type of count elements moves what count elements of vec move
    norm = dt.normalize(vec, count)
    whole = vec.Create_contiguous(count)
    assert norm.Get_extent() == whole.Get_extent() and norm.Get_size() == whole.Get_size()
    whole.Free()
    packed_norm = bytearray(norm.Pack_size(1, comm))
    m = norm.Pack(src.view(np.uint8)[:norm.Get_extent()[1]], packed_norm, 0, comm)
    assert m == n and packed_norm[:m] == theirs[:n]
    peer = 1 - rank
    got = np.full_like(src, -1)
    comm.Sendrecv([src, 1, norm], peer, 0, [got, count, vec], peer, 0)
    expect = np.full_like(src, -1)
    other = np.arange(len(src), dtype=np.int32) + 1000 * peer
    vec.Unpack(bytearray(dt.pack(other, vec, count)), 0, expect.view(np.uint8)[:count * ext], comm)
    assert np.array_equal(got, expect)
    norm.Free()

    # every form moves the same bytes; a form that is none is refused
    for form in dt.FORMS:
        norm = dt.normalize(vec, count, form)
        packed_form = bytearray(norm.Pack_size(1, comm))
        k = norm.Pack(src.view(np.uint8)[:norm.Get_extent()[1]], packed_form, 0, comm)
        assert k == n and packed_form[:k] == theirs[:n], form
        norm.Free()
    try:
        dt.normalize(vec, count, "lists")
        raise AssertionError("an unknown form was accepted")
    except MpiguideError as e:
        assert "form 'lists': expected one of auto, vector, resized, list, copies" in str(e)

    # a buffer too small for count elements is refused, and nothing is written
    small = np.zeros(10, dtype=np.int32)
    try:
        dt.unpack(ours, small, vec, count)
        raise SystemExit("a too small buffer was accepted")
    except MpiguideError as e:
        assert "touch bytes [0, " in str(e) and not small.any(), e
    # packed bytes short of count elements are refused (MPI_Unpack fails too), and nothing is written
    dst = np.zeros_like(src)
    try:
        dt.unpack(ours[:-1], dst, vec, count)
        raise SystemExit("a short packed input was accepted")
    except MpiguideError as e:
        assert f"holds {len(ours) - 1} bytes" in str(e) and not dst.any(), e
    comm.Barrier()
    if rank == 0:
        print("mpi4py dt: ok")
''')


@pytest.fixture(scope="module")
def mpi4py_dir(mpich_stack, tmp_path_factory) -> Path:
    """mpi4py built from source with the MPICH stack's mpicc, installed into a folder of its own."""
    target = tmp_path_factory.mktemp("mpi4py")
    # -O0: the test checks what mpi4py does, not how fast; mpi4py's generated C takes minutes to optimize
    env = {**mpich_stack.env(), "MPICC": str(mpich_stack.mpicc), "CFLAGS": "-O0 -g0"}
    res = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                          "--no-binary", "mpi4py", "--target", str(target), "mpi4py>=4"], env=env,
                         capture_output=True, text=True, timeout=1800)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return target


def test_mpiguide_dt_under_mpiexec(mpich_stack, mpich_build, mpi4py_dir, tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    env = {**mpich_stack.env(), "PYTHONPATH": os.pathsep.join([str(mpi4py_dir), str(ROOT / "python")])}
    argv = launch.command(launch.LaunchSpec(), mpich_stack, 2, sys.executable, [str(prog)])
    res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0 and "mpi4py dt: ok" in res.stdout, res.stdout[-3000:] + res.stderr[-3000:]


# An mpi4py program whose derived types mpi4py 4 builds with the MPI-4 `_c`
# constructors on MPICH: point-to-point (blocking, nonblocking, persistent)
# and collectives with a vector type against plain ints, checked with numpy.
STRATEGY_PROGRAM = textwrap.dedent('''
    import numpy as np
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    vec = MPI.INT.Create_vector(6, 1, 3).Commit()          # 6 ints, 3 apart
    span = 16
    def layout(values):
        out = np.full(span, -1, dtype=np.int32)
        out[0:18:3] = values
        return out
    values = np.arange(6, dtype=np.int32) + 100
    if rank == 0:
        comm.Send([layout(values), 1, vec], 1, tag=1)
        req = comm.Isend([values, 6, MPI.INT], 1, tag=2)
        req.Wait()
        p = comm.Send_init([layout(values + 1), 1, vec], 1, tag=3)
        p.Start(); p.Wait(); p.Free()
    elif rank == 1:
        got = np.zeros(6, dtype=np.int32)
        comm.Recv([got, 6, MPI.INT], 0, tag=1)
        assert np.array_equal(got, values), got
        buf = np.full(span, -1, dtype=np.int32)
        comm.Irecv([buf, 1, vec], 0, tag=2).Wait()
        assert np.array_equal(buf, layout(values)), buf
        buf[:] = -1
        p = comm.Recv_init([buf, 1, vec], 0, tag=3)
        p.Start(); p.Wait(); p.Free()
        assert np.array_equal(buf, layout(values + 1)), buf
    # Bcast: the root sends plain ints, the others receive one vector
    root = size - 1
    buf = values.copy() if rank == root else np.full(span, -1, dtype=np.int32)
    comm.Bcast([buf, 6, MPI.INT] if rank == root else [buf, 1, vec], root=root)
    if rank != root:
        assert np.array_equal(buf, layout(values)), buf
    # Allgather: every rank sends one vector, receives ints
    mine = layout(values + rank)
    allv = np.zeros(6 * size, dtype=np.int32)
    comm.Allgather([mine, 1, vec], [allv, 6, MPI.INT])
    assert np.array_equal(allv, np.concatenate([values + q for q in range(size)])), allv
    vec.Free()
    comm.Barrier()
    if rank == 0:
        print("mpi4py strategies: ok")
''')


@pytest.mark.parametrize("strategy", ["native", "normalized", "pack"])
def test_datatype_strategies_engage_for_mpi4py(mpich_stack, mpich_build, mpi4py_dir, tmp_path, strategy):
    """libmpiguide-tune preloaded under an mpi4py program: the data are right, no
    MPI error surfaces (mpi4py raises on any), and the report shows the forced
    strategy taken by calls with mpi4py's derived types."""
    prog = tmp_path / "prog.py"
    prog.write_text(STRATEGY_PROGRAM)
    report = tmp_path / "report.txt"
    env = {**mpich_stack.env(), "PYTHONPATH": str(mpi4py_dir), "LD_PRELOAD": str(mpich_build / "libmpiguide-tune.so"),
           "MPIGUIDE_TUNE_MODE": "forced", "MPIGUIDE_TUNE_FORCE": f"datatypes={strategy}",
           "MPIGUIDE_TUNE_REPORT": str(report)}
    argv = launch.command(launch.LaunchSpec(), mpich_stack, 3, sys.executable, [str(prog)])
    res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0 and "mpi4py strategies: ok" in res.stdout, res.stdout[-3000:] + res.stderr[-3000:]
    text = report.read_text()
    if strategy != "native":  # native calls with derived types are not counted; rank 0's calls
        for op in ("MPI_Send", "MPI_Send_init", "MPI_Bcast", "MPI_Allgather"):
            assert f"#@tune_dt[{op} 24 {strategy}]=" in text, text
