"""The datatype engine's user commands: `dt explain` on the real MPICH build,
the dtbench job's options, and the ratio/goal tables from known times."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from mpiguide.core import rawfile
from mpiguide.core.errors import MpiguideError
from mpiguide.suites import SUITES
from mpiguide.suites.dtbench import report as dtreport

# ---------------------------------------------------------------- dt explain

def test_explain_layout_gives_the_normal_form(mpich_build):
    r = run_cli(["dt", "explain", "tiled A=2 B=4", "--n", "8"])
    assert r.rc == 0, r.text
    # 4 elements of extent 16: the vector alone would end at 56 bytes, so the text keeps the extent
    assert "count=4 resized(lb=0, extent=64, vector(count=4, block=2, stride=4, int))" in r.text
    assert "strided @0 count=4 block=8B stride=16B" in r.text
    assert "packed: 32 bytes in 4 blocks" in r.text


def test_explain_notation_with_count(mpich_build):
    r = run_cli(["dt", "explain", "resized(lb=0, extent=16, contig(count=2, int))", "--count", "3"])
    assert r.rc == 0, r.text
    assert "vector(count=3, block=2, stride=4, int)" in r.text
    assert "shape: resized/contig " in r.text


def test_explain_bad_type_says_where(mpich_build):
    r = run_cli(["dt", "explain", "vector(count=2, blok=1, stride=3, int)"])
    assert r.rc == 2
    assert "at 16: unknown keyword 'blok' for vector" in r.text


def test_explain_impossible_layout_names_the_rule(mpich_build):
    r = run_cli(["dt", "explain", "tiled A=4 B=4"])
    assert r.rc == 2
    assert "B must be > A" in r.text


# ---------------------------------------------------------------- job options

def _params(**kw) -> dict:
    job = SUITES.get("dtbench")
    p = argparse.ArgumentParser()
    job.add_arguments(p)
    argv = [x for k, v in kw.items() for x in (f"--{k.replace('_', '-')}", v)]
    return job.params(p.parse_args(argv))


def test_params_defaults_and_launch_args():
    params = _params()
    assert params["A"] == [2, 10, 100, 1000, 1024, 10000]
    assert params["sizes"] == [3200, 2560000, 64000000]
    (launch,) = SUITES.get("dtbench").launches(params)
    assert launch.driver == "mg_dtbench" and launch.nprocs == 1
    assert "--layouts" not in launch.args
    assert launch.args[launch.args.index("--commit-blocks") + 1] == "10,1000,1000000"


@pytest.mark.parametrize("kw, message", [
    ({"layouts": "tiled;wiggly"}, "unknown layout 'wiggly'"),
    ({"layouts": "tiled A=4"}, "give A with --A"),
    ({"A": "2,x"}, "bad --A"),
    ({"A": "0"}, "bad --A"),
    ({"methods": "engine,fast"}, "unknown method 'fast'"),
    ({"commit_blocks": "-1"}, "bad --commit-blocks"),
])
def test_params_reject_bad_values(kw, message):
    with pytest.raises(MpiguideError, match=message):
        _params(**kw)


def test_no_commit_is_passed_on():
    (launch,) = SUITES.get("dtbench").launches(_params(commit_blocks="none"))
    assert "--no-commit" in launch.args


# ---------------------------------------------------------------- raw notes

def test_raw_notes_are_kept_by_kind(tmp_path):
    path = tmp_path / "r.txt"
    path.write_text("#@mpiguide_raw=1\n#@info[tiled tiled 2 3200]=packed=3200,span=6392,touched=6400,blocks=400,n=800\n"
                    "#@normal[tiled tiled 2 3200]=vector(count=400, block=2, stride=4, int)\n"
                    "#@skip[rowcol-struct rowcol 10000 3200]=rowcol: A must be < n\n"
                    "layout geometry A msize method direction rep time_s\n#@end=ok\n")
    raw = rawfile.parse(path)
    assert raw.notes["normal"]["tiled tiled 2 3200"] == "vector(count=400, block=2, stride=4, int)"
    assert raw.notes["skip"]["rowcol-struct rowcol 10000 3200"] == "rowcol: A must be < n"
    assert raw.notes["info"]["tiled tiled 2 3200"].startswith("packed=3200,")


# ---------------------------------------------------------------- ratios and goals

def _summary(times: dict[tuple[str, str, str, int], float], msize: int = 3200) -> pd.DataFrame:
    """times: (stack, layout, method, A) -> seconds; geometry tiled, direction pack."""
    rows = [{"stack": st, "layout": lay, "geometry": "tiled", "A": a, "msize": msize, "method": m,
             "direction": "pack", "mean_s": t} for (st, lay, m, a), t in times.items()]
    return pd.DataFrame(rows)


def test_ratios_and_goals_from_known_times():
    times = {}
    for st, mpi in (("fast", 2.0), ("slow", 8.0)):
        times.update({(st, "tiled", "engine", 2): 1.0, (st, "tiled", "mpi", 2): mpi,
                      (st, "tiled", "hand", 2): 1.0, (st, "tiled", "memcpy", 2): 0.5,
                      (st, "tiled", "normalized", 2): 1.5,
                      (st, "vector-tiled", "engine", 2): 1.2, (st, "vector-tiled", "mpi", 2): mpi * 3,
                      (st, "vector-tiled", "hand", 2): 1.0, (st, "vector-tiled", "memcpy", 2): 0.5,
                      (st, "vector-tiled", "normalized", 2): 1.5})
    info = pd.DataFrame([{"stack": st, "layout": lay, "geometry": "tiled", "A": 2, "msize": 3200,
                          "touched": 6400.0, "packed": 3200.0, "normal": ""}
                         for st in ("fast", "slow") for lay in ("tiled", "vector-tiled")])
    r = dtreport.ratios(_summary(times), info)
    row = r[(r["stack"] == "fast") & (r["layout"] == "vector-tiled")].iloc[0]
    assert row["engine/mpi"] == pytest.approx(1.2 / 6.0)
    assert row["engine/hand"] == pytest.approx(1.2)
    assert row["slowest-mpi/engine"] == pytest.approx(24.0 / 1.2)  # the slow stack's MPI_Pack
    assert row["engine/best-description"] == pytest.approx(1.2)
    # memcpy moves 2 x 3200 bytes in 0.5 s; the bound moves 6400 + 3200 bytes at that rate
    assert row["engine/bound"] == pytest.approx(1.2 / ((6400 + 3200) / (6400 / 0.5)))

    commit = pd.DataFrame([{"stack": "fast", "layout": "commit-indexed", "geometry": "commit", "A": a, "msize": 0,
                            "method": m, "direction": "commit", "mean_s": t}
                           for a, m, t in ((1000, "engine", 9.0), (1000, "mpi-create", 1.0),
                                           (1000000, "engine", 3.0), (1000000, "mpi-create", 2.0))])
    g = dtreport.goals(r, commit).set_index(["stack", "goal"])
    met = g["met"]
    assert met[("fast", "engine vs MPI_Pack/MPI_Unpack of the stack")] == "PASS"
    # engine/hand is 1.0 (tiled) and 1.2 (vector-tiled): median 1.1 > 1.0, worst 1.2 > 1.10
    median_goal = "engine vs hand-written loop, median over the grid"
    assert met[("fast", median_goal)] == "FAIL"
    assert g.loc[("fast", median_goal), "median"] == pytest.approx(1.1)
    assert g.loc[("fast", "engine vs hand-written loop, worst at 3.2 kB"), "worst"] == pytest.approx(1.2)
    assert met[("fast", "engine vs hand-written loop, worst at 3.2 kB")] == "FAIL"
    assert met[("slow", "each description vs the best description of its layout (engine)")] == "FAIL"
    assert met[("fast", "engine vs memory-traffic bound at 64 MB")] == "not measured"
    hard = "slowest stack's MPI_Pack vs engine, descriptions stacks fail to normalize, A <= 10"
    assert met[("fast", hard)] == "PASS" and g.loc[("fast", hard), "configs"] == 1
    # the commit goal takes the largest indexed type: 3.0 / 2.0
    commit_goal = "commit of an indexed type of 1000000 blocks vs MPI's constructor + MPI_Type_commit"
    assert g.loc[("fast", commit_goal), "median"] == pytest.approx(1.5)
    assert met[("fast", commit_goal)] == "FAIL"
    assert ("slow", commit_goal) not in g.index


def test_ratios_without_info_leave_the_bound_empty():
    times = {("s", "tiled", m, 2): 1.0 for m in ("engine", "mpi", "hand", "memcpy", "normalized")}
    r = dtreport.ratios(_summary(times), pd.DataFrame())
    assert np.isnan(r["engine/bound"]).all()
    assert r["engine/mpi"].tolist() == [1.0]


# ---------------------------------------------------------------- a real run

def test_small_bench_run_end_to_end(mpich_build, tmp_path):
    out = tmp_path / "dt"
    r = run_cli(["dt", "bench", "--stacks", "mpich", "--runs", "2", "--A", "2", "--sizes", "3200",
                 "--layouts", "tiled;tiled-struct;rowcol-fully-indexed", "--commit-blocks", "10", "--nrep", "3",
                 "--output", str(out)])
    assert r.rc == 0, r.text
    assert "Engine goals" in r.text
    ratios = pd.read_csv(out / "dt_ratios.csv")
    assert set(ratios["layout"]) == {"tiled", "tiled-struct", "rowcol-fully-indexed"}
    assert set(ratios["direction"]) == {"pack", "unpack"}
    assert (ratios["engine/mpi"] > 0).all() and (ratios["engine/hand"] > 0).all()
    normal = dict(zip(ratios["layout"], ratios["normal"], strict=False))
    tiled = "resized(lb=0, extent=6400, vector(count=400, block=2, stride=4, int))"
    assert normal["tiled-struct"] == normal["tiled"] == tiled
    assert normal["rowcol-fully-indexed"].startswith("struct(displs=[0, 16], types=[contig(count=3, int), vector(")
    report = (out / "report.md").read_text()
    assert "Commit cost" in report and "engine/mpi-create" in report
    verdicts = pd.read_csv(out / "verdicts.csv")
    assert {"ENG-MPI", "ENG-HAND", "NORM-MPI"} <= set(verdicts["guideline"])
