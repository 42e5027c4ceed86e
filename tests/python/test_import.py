"""`mpiguide import reprompi`: ReproMPI outputs with known times become a run
whose verdicts follow from them (the per-repetition format, -v with local and
global clocks, window-synchronization error codes) and whose report builds;
what mpiguide cannot take is said with file and line."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import only_row, run_cli
from mpiguide.core import reprompi, runner, stats
from mpiguide.suites.coll.reprompi import CollImporter
from mpiguide.suites.pingpong.reprompi import PingPongImporter

HEADER = """#Command-line arguments:  ./bin/mpibenchmark --calls-list=MPI_Bcast,GL_Bcast_as_ScatterAllgather,MPI_Exscan
#MPI calls:
#    MPI_Bcast
#@operation=MPI_SUM
#@datatype=MPI_INT
#@datatype_extent_bytes=4
#@datatype_size_bytes=4
#@root_proc=0
#@reproMPIcommitSHA1=00325471f9a39c5ffc35796f360fb02838cbef84
#@nprocs={nprocs}
#@clocktype=local
#@clock=MPI_Wtime
#@sync=MPI_Barrier
#@nrep={nrep}
"""


def bcast_time(call: str, count: int, launch: int) -> float:
    """MPI_Bcast of 1024 ints takes 2x its mock-up (COLL-GL10 violated there); of 1 int, the same."""
    t = 1e-5 * (1 + 0.02 * launch)
    return 2 * t if call == "MPI_Bcast" and count == 1024 else t


def write_run_file(path, launch: int, nrep: int = 8) -> None:
    lines = [HEADER.format(nprocs=4, nrep=nrep), f"{'test':>50} {'nrep':>10} {'count':>12} {'runtime_sec':>14}"]
    for call in ("MPI_Bcast", "GL_Bcast_as_ScatterAllgather", "MPI_Exscan"):
        for count in (1, 1024):
            lines += [f"{call:>50} {i:10d} {count:12d} {bcast_time(call, count, launch) * (1 + 1e-3 * i):14.10f}"
                      for i in range(nrep)]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    d = tmp_path_factory.mktemp("repro")
    files = []
    for k in range(4):
        files.append(d / f"out{k}.txt")
        write_run_file(files[-1], k)
    res = run_cli(["import", "reprompi", *map(str, files), "--stack", "site-mpi", "--library-version",
                   "Site MPI 3.1", "--output", str(d / "run")])
    return d, res


def test_a_collective_experiment_becomes_a_coll_run(imported):
    d, res = imported
    assert res.rc == 0, res.text
    assert "MPI_Exscan left out: mpiguide has no such measurement" in res.text
    rd = runner.RunDir.open(d / "run")
    assert rd.job == "coll" and rd.meta["runs"] == 4 and rd.meta["stacks_order"] == ["site-mpi"]
    assert rd.meta["params"]["collectives"] == ["bcast"] and rd.meta["params"]["sizes"] == [4, 4096]
    assert rd.meta["params"]["np"] == [4] and rd.meta["stacks"]["site-mpi"]["library_version"] == "Site MPI 3.1"
    assert sorted(x.id for x in rd.launches) == [f"site-mpi-bcast-p4-r{k}" for k in range(4)]
    m = pd.read_csv(d / "run" / "measurements.csv")
    assert set(m["impl"]) == {"default", "bcast_as_scatter_allgather"} and set(m["msize"]) == {4, 4096}
    assert len(m) == 4 * 2 * 2 * 8  # launches x impls x sizes x repetitions
    row = m[(m["impl"] == "default") & (m["msize"] == 4096) & (m["launch"] == 1)].sort_values("rep")
    assert row["time_s"].tolist() == pytest.approx([2e-5 * 1.02 * (1 + 1e-3 * i) for i in range(8)], rel=1e-6)
    v = pd.read_csv(d / "run" / "verdicts.csv")
    gl10 = only_row(v, guideline="COLL-GL10", msize=4096)
    assert gl10["verdict"] == stats.VIOLATED and gl10["factor"] == pytest.approx(2, rel=1e-3)
    assert only_row(v, guideline="COLL-GL10", msize=4)["verdict"] == stats.PASS
    assert (d / "run" / "report.html").is_file()


def test_the_verbose_format_takes_the_slowest_process_or_the_global_span(tmp_path):
    rows = ["process test nrep count loc_tstart_sec loc_tend_sec"]
    # rep 0: process 1 is the slowest (3 us); rep 1: process 0 (5 us)
    rows += ["0 MPI_Bcast 0 16 1.000000 1.000002", "1 MPI_Bcast 0 16 2.000000 2.000003",
             "0 MPI_Bcast 1 16 3.000000 3.000005", "1 MPI_Bcast 1 16 4.000000 4.000001"]
    p = tmp_path / "v.txt"
    p.write_text(HEADER.format(nprocs=2, nrep=2) + "\n".join(rows) + "\n")
    f = reprompi.parse(p)
    assert f.times[("MPI_Bcast", 64)] == pytest.approx([3e-6, 5e-6], rel=1e-6)
    rows = ["process test nrep count errorcode loc_tstart_sec loc_tend_sec gl_tstart_sec gl_tend_sec"]
    # global clocks: from the first start to the last end; rep 1 has an error code on one process and is left
    # out as a whole (the other process's span alone is not the repetition's time)
    rows += ["0 MPI_Bcast 0 16 0 0 0 10.000000 10.000002", "1 MPI_Bcast 0 16 0 0 0 10.000001 10.000004",
             "0 MPI_Bcast 1 16 0 0 0 11.000000 11.000002", "1 MPI_Bcast 1 16 1 0 0 11.000001 11.000009"]
    p.write_text(HEADER.format(nprocs=2, nrep=2) + "\n".join(rows) + "\n")
    f = reprompi.parse(p)
    assert f.times[("MPI_Bcast", 64)] == pytest.approx([4e-6], rel=1e-6) and f.dropped == 1


def test_reduce_scatter_block_sizes_are_the_whole_vector(tmp_path):
    """ReproMPI's count is the block each process receives; mpiguide's size is p blocks (docs/tuning.md)."""
    files = []
    for k in range(2):
        rows = ["test nrep count runtime_sec"] + [f"{call} {i} 16 {1e-5 * (1 + 0.01 * k):.10f}" for call in (
            "MPI_Reduce_scatter_block", "GL_Reduce_scatter_block_as_ReduceScatter") for i in range(4)]
        files.append(tmp_path / f"rsb{k}.txt")
        files[-1].write_text(HEADER.format(nprocs=4, nrep=4) + "\n".join(rows) + "\n")
    res = run_cli(["import", "reprompi", *map(str, files), "--output", str(tmp_path / "run")])
    assert res.rc == 0, res.text
    m = pd.read_csv(tmp_path / "run" / "measurements.csv")
    assert set(m["msize"]) == {16 * 4 * 4}  # 16 ints x 4 processes


def test_call_names():
    coll, pingpong = CollImporter(), PingPongImporter()
    assert coll.call("MPI_Reduce_scatter_block") == ("reduce_scatter_block", "default")
    assert coll.call("GL_Reduce_scatter_block_as_ReduceScatter") == (
        "reduce_scatter_block", "reducescatterblock_as_reduce_scatter")
    assert coll.call("GL_Allreduce_as_ReducescatterblockAllgather") == (
        "allreduce", "allreduce_as_reducescatterblock_allgather")
    assert coll.call("GL_Scan_as_ExscanReducelocal") == ("scan", "scan_as_exscan_reducelocal")
    assert pingpong.call("Isend_Irecv") == ("isend_irecv", "") and coll.call("Isend_Irecv") is None
    assert pingpong.call("MPI_Bcast") is None
    assert coll.call("MPI_Exscan") is None and coll.call("GL_Bcast_as_Magic") is None


def test_the_coll_and_pingpong_suites_import_reprompi():
    from mpiguide.suites import SUITES

    assert {s.name for s in SUITES if s.reprompi is not None} == {"coll", "pingpong"}


def test_a_pingpong_experiment_becomes_a_pingpong_run(tmp_path):
    lines = [HEADER.format(nprocs=2, nrep=6), "test nrep count runtime_sec"]
    for k in range(3):
        text = lines + [f"{call} {i} {c} {1e-6 * (1 + 0.01 * k) * (3 if call == 'Isend_Irecv' else 1):.10f}"
                        for call in ("Send_Recv", "Isend_Irecv") for c in (1, 256) for i in range(6)]
        (tmp_path / f"pp{k}.txt").write_text("\n".join(text) + "\n")
    res = run_cli(["import", "reprompi", *(str(tmp_path / f"pp{k}.txt") for k in range(3)), "--output",
                   str(tmp_path / "run")])
    assert res.rc == 0, res.text
    rd = runner.RunDir.open(tmp_path / "run")
    assert rd.job == "pingpong" and rd.meta["params"]["variants"] == ["isend_irecv", "send_recv"]
    v = pd.read_csv(tmp_path / "run" / "verdicts.csv")
    assert set(v["verdict"]) == {stats.PASS}  # Send/Recv no slower than Isend/Irecv (3x faster)
    assert set(v["guideline"]) == {"PP-GL2"}


@pytest.mark.parametrize("text, message", [
    ("#@nprocs=2\ntest msize_bytes total_nrep valid_nrep mean_sec\nMPI_Bcast 8 10 10 0.1\n",
     ":2: this is ReproMPI's summary (--summary)"),
    ("test nrep count runtime_sec\nMPI_Bcast 0 1 0.1\n", "no #@nprocs= header line"),
    ("#@nprocs=2\n#@datatype_size_bytes=4\ntest nrep count runtime_sec\nMPI_Bcast 0 1\n",
     ":4: 3 values for the 4 columns test nrep count runtime_sec"),
    ("#@nprocs=2\n#@datatype_size_bytes=4\ntest nrep count runtime_sec\nMPI_Bcast zero 1 0.1\n",
     ":4: not a number where one belongs"),
    ("#@nprocs=2\ntest nrep count runtime_sec\nMPI_Bcast 0 1 0.1\n", "no #@datatype_size_bytes= header line"),
    ("#@nprocs=2\nMPI_Bcast 0 1 0.1\n", ":2: a data row before ReproMPI's column line"),
    ("hello\n", "a data row before"),
    ("#@nprocs=two\n#@datatype_size_bytes=4\ntest nrep count runtime_sec\nMPI_Bcast 0 1 0.1\n",
     "#@nprocs=two is not a whole number"),
    ("#@nprocs=2\n#@datatype_size_bytes=4\ntest nrep count\nMPI_Bcast 0 1\n",
     "the column line test nrep count has no times"),
    ("#@nprocs=2\n#@datatype_size_bytes=4\ntest nrep count runtime_sec\nMPI_Exscan 0 1 0.1\n",
     "nothing to import: "),
    ("#@nprocs=2\n#@datatype_size_bytes=4\ntest nrep count runtime_sec\nMPI_Bcast 0 1 0.1\nSend_Recv 0 1 0.1\n",
     "the files mix measurements of coll and pingpong runs"),
])
def test_what_cannot_be_imported_is_said(tmp_path, text, message):
    p = tmp_path / "bad.txt"
    p.write_text(text)
    res = run_cli(["import", "reprompi", str(p), "--output", str(tmp_path / "run")])
    assert res.rc == 2 and message in res.text, res.text
    assert not (tmp_path / "run").exists()
