"""The datatype expectation tests (job `ddt`): the test catalog against
Carpen-Amarie et al. (2016), option handling, verdicts from recorded raw data
with known outcomes, the report of one and of several runs, and a small real run
on MPICH."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pandas as pd
import pytest

from conftest import only_row, run_cli, run_driver, write_ddt_run
from mpiguide.core import rawfile, runner, stats
from mpiguide.core.catalog import LAYOUT_NAMES
from mpiguide.core.errors import MpiguideError
from mpiguide.core.launch import default_np
from mpiguide.suites import SUITES
from mpiguide.suites.ddt import expectations as ddt
from mpiguide.suites.ddt import report as ddtreport

JOB = SUITES.get("ddt")


def _params(*argv: str) -> dict:
    p = argparse.ArgumentParser()
    JOB.add_arguments(p)
    p.add_argument("--placement", "--layout", dest="placement")
    return JOB.params(p.parse_args(list(argv)))


# ---------------------------------------------------------------- the catalog

def test_every_test_uses_catalog_layouts_and_its_own_layouts_only():
    assert sorted(ddt.TESTS) == list(range(1, 14)) and ddt.PAPER_TESTS == tuple(range(1, 12))
    for t in ddt.TESTS.values():
        for spec in t.layouts:
            assert spec.split()[0] in LAYOUT_NAMES if not t.exchange else \
                (spec,) == tuple(ddt.EXCHANGE_LAYOUTS[p] for p in t.paper.patterns), spec
            assert "A=" not in spec
        for c in t.comparisons():
            assert c.compared[0] in t.layouts
            assert c.reference[0] in t.layouts if not c.among else (c.reference[0] == ddt.BEST
                                                                     and set(c.among) <= set(t.layouts))
            assert {c.compared[1], c.reference[1]} <= set(t.modes), (t.number, c)


def test_paper_grids():
    """Carpen-Amarie et al. (2016), Sections 2.4.1-3.2.9."""
    T = ddt.TESTS
    assert T[1].paper.A == (2, 10, 100, 1000, 1024, 10000) and T[1].paper.sizes == (3200, 2560000)
    assert set(T[1].paper.patterns) == {"pingpong", "bcast", "allgather"}
    assert T[2].paper.A == (2, 6, 8, 10, 16, 100, 128, 200) and T[2].paper.sizes == (48000, 1500000)
    assert T[2].references == ("contiguous type=byte",)
    assert T[3].paper.A == (2, 10, 10000) and T[3].paper.sizes == (64000, 320000, 640000, 1280000, 2560000)
    for n in (4, 5, 6, 7):
        assert T[n].paper.sizes == (2000, 2560000) and T[n].paper.patterns == ("pingpong",)
    for n in (8, 9, 10):
        assert T[n].paper.sizes == (3200, 2560000)
    assert T[11].paper.A == (2, 10, 100, 128, 512, 1000, 1024, 5000, 10000)
    assert T[11].paper.sizes == (400, 40960)  # n = 100 and 10240 elements of MPI_INT
    assert {T[n].guideline for n in range(5, 12)} == {"DT-GL4"}
    assert (T[3].guideline, T[4].guideline) == ("DT-GL2/3", "DT-GL1")


def test_comparisons_name_the_right_sides():
    t3 = {(c.guideline, c.compared, c.reference) for c in ddt.TESTS[3].comparisons()}
    assert ("DT-GL2/3", ("block", "datatype"), ("block", "pack")) in t3
    assert ("DT-GL2/3-ENG", ("block", "datatype"), ("block", "engine")) in t3
    (c4,) = [c for c in ddt.TESTS[4].comparisons() if c.compared[0].endswith("tiled")]
    assert c4.reference == ("tiled", "datatype") and c4.relation == ddt.SIMILAR
    t10 = [c for c in ddt.TESTS[10].comparisons() if c.guideline == "DT-GL4"]
    assert [(c.compared[0], c.reference[0], c.relation) for c in t10] == [
        ("alternating-repeated", "alternating-struct", ddt.PRECEDES)]
    norm = [c.compared[0] for c in ddt.TESTS[11].comparisons() if c.guideline == "DT-GL4-NORM"]
    assert sorted(norm) == sorted(ddt.TESTS[11].layouts)


def test_label_is_the_spec_with_colons():
    assert ddt.label("tiled-struct  S1=2 S2=3") == "tiled-struct:S1=2:S2=3"
    assert ddt.label("contiguous") == "contiguous"


# ---------------------------------------------------------------- options

def test_default_plan_covers_the_paper():
    params = _params()
    assert params["tests"] == list(range(1, 12)) and params["grid"] == "paper"
    keys = [e["key"] for e in params["entries"]]
    np_ = default_np()
    assert f"t01-allgather-np{np_}" in keys and "t11-pingpong-np2" in keys
    t3 = [e for e in params["entries"] if e["test"] == 3]
    assert {e["pattern"] for e in t3} == {"pingpong", "bcast", "allgather"}
    assert t3[0]["modes"] == ["datatype", "pack", "engine"]
    launches = JOB.launches(params)
    assert len(launches) == len(params["entries"])
    t5 = next(x for x in launches if x.key == "t05-pingpong-np2")
    assert t5.driver == "mg_ddtbench" and t5.nprocs == 2
    assert t5.args[t5.args.index("--layouts") + 1] == "tiled;tiled-struct S1=1 S2=1;tiled-struct S1=2 S2=3"
    assert t5.args[t5.args.index("--modes") + 1] == "datatype,normalized"
    # the order of the layouts and modes inside a launch comes from the runner's --order-seed, per launch
    assert "--rotate" not in t5.args and "--order-seed" not in t5.args
    planned = runner.plan(JOB, params, ["mpich"], 2, {"sync": "barrier", "nrep": "rule", "order_seed": 42})
    seeds = {x.id: x.args[x.args.index("--order-seed") + 1] for x in planned}
    assert len(set(seeds.values())) == len(planned)  # every launch its own
    again = runner.plan(JOB, params, ["mpich"], 2, {"sync": "barrier", "nrep": "rule", "order_seed": 42})
    assert [x.id for x in again] == [x.id for x in planned]  # the run's seed fixes the order of the rounds
    assert {x.id: x.args[x.args.index("--order-seed") + 1] for x in again} == seeds
    rounds = [[x.template for x in planned if x.run_index == i] for i in (0, 1)]
    assert sorted(rounds[0]) == sorted(rounds[1]) and rounds[0] != rounds[1]  # each round in its own order


def test_subsets():
    params = _params("--tests", "3-5", "--layouts", "tiled", "--modes", "datatype,pack", "--np", "3",
                     "--A", "2,4", "--sizes", "4k")
    entries = params["entries"]
    # Test 4 compares contiguous-subtype descriptions, not tiled itself; Test 5 keeps its reference only
    # for DT-GL4-NORM, which needs the normalized mode: both drop out.
    assert sorted({e["test"] for e in entries}) == [3]
    assert {(e["pattern"], e["nprocs"]) for e in entries} == {("pingpong", 2), ("bcast", 3), ("allgather", 3)}
    e = entries[0]
    assert e["layouts"] == ["tiled"] and e["modes"] == ["datatype", "pack"] and e["A"] == [2, 4]
    assert e["sizes"] == [4096]
    assert [c["guideline"] for c in e["comparisons"]] == ["DT-GL2/3"]


def test_test_11_sizes_follow_the_element_type():
    (e,) = [e for e in _params("--tests", "11", "--type", "double")["entries"]]
    assert e["sizes"] == [800, 81920]  # n = 100 and 10240 doubles


def test_pingpong_layout_follows_the_collective_layout():
    params = _params("--tests", "1", "--layout", "32x1")
    by_pattern = {e["pattern"]: e for e in params["entries"]}
    assert by_pattern["pingpong"]["placement"] == "2x1" and by_pattern["bcast"]["nprocs"] == 32
    assert by_pattern["bcast"]["placement"] == "32x1"
    params = _params("--tests", "1", "--layout", "1x16", "--patterns", "pingpong")
    assert params["entries"][0]["placement"] == "1x2"


def test_several_placements_plan_a_launch_each():
    """The pair of Carpen-Amarie et al. (2016): collectives on 32x1 and 1x16, the ping-pong inter-node (2x1) and
    intra-node (1x2)."""
    entries = _params("--tests", "3", "--placement", "32x1,1x16")["entries"]
    assert [(e["key"], e["nprocs"], e["placement"]) for e in entries] == [
        ("t03-pingpong-np2-2x1", 2, "2x1"), ("t03-pingpong-np2-1x2", 2, "1x2"),
        ("t03-bcast-np32-32x1", 32, "32x1"), ("t03-bcast-np16-1x16", 16, "1x16"),
        ("t03-allgather-np32-32x1", 32, "32x1"), ("t03-allgather-np16-1x16", 16, "1x16")]
    # placements that give the same ping-pong share its launch
    entries = _params("--tests", "3", "--placement", "2x1,4x1", "--patterns", "pingpong")["entries"]
    assert [e["placement"] for e in entries] == ["2x1"]


def _arg(template, name: str) -> str:
    return template.args[template.args.index(name) + 1]


def test_adaptive_rounds_measure_only_what_the_undecided_points_read():
    """DdtSuite.narrow: the A, m, layouts and modes of the open points; a DT-GL4-BEST point keeps every layout
    the fastest is sought among."""
    params = _params("--tests", "3,5", "--A", "2,10", "--sizes", "4k,8k", "--patterns", "pingpong")
    t3, t5 = JOB.launches(params)

    def points(comparisons: list[str], A: int, m: int) -> pd.DataFrame:
        return pd.DataFrame({"comparison": comparisons, "A": A, "m": m})

    narrowed = JOB.narrow(params, t3, points(["block ⪯ block [pack]"], 10, 8192))
    assert (_arg(narrowed, "--layouts"), _arg(narrowed, "--A"), _arg(narrowed, "--sizes"),
            _arg(narrowed, "--modes")) == ("block", "10", "8192", "datatype,pack")
    assert narrowed.key == t3.key and narrowed.nprocs == t3.nprocs and _arg(narrowed, "--pattern") == "pingpong"
    best = "tiled-struct:S1=1:S2=1 [normalized] ⪯ fastest of tiled, tiled-struct:S1=1:S2=1, tiled-struct:S1=2:S2=3"
    narrowed = JOB.narrow(params, t5, points([best, best], 2, 4096))
    assert _arg(narrowed, "--layouts") == _arg(t5, "--layouts") == "tiled;tiled-struct S1=1 S2=1;tiled-struct S1=2 S2=3"
    assert (_arg(narrowed, "--A"), _arg(narrowed, "--sizes"), _arg(narrowed, "--modes")) == \
        ("2", "4096", "datatype,normalized")
    # points of no comparison of the entry (another version's texts): the whole template
    assert JOB.narrow(params, t5, points(["gone ⪯ away"], 2, 4096)) == t5


@pytest.mark.parametrize("argv, message", [
    (["--tests", "0-3"], "tests are numbered 1 to 13"),
    (["--tests", "5-3"], "tests are numbered 1 to 13"),
    (["--tests", "x"], "bad --tests 'x'"),
    (["--np", "1"], "collectives need at least 2 processes"),
    (["--np", "4", "--placement", "2x2"], "a placement fixes the collectives' processes"),
    (["--placement", "2x1,banana"], "bad --placement 'banana'"),
    (["--layouts", "tiled,wiggly"], "unknown layout 'wiggly' in --layouts"),
    (["--patterns", "alltoall"], "unknown pattern 'alltoall'"),
    (["--modes", "fast"], "unknown mode 'fast'"),
    (["--A", "0"], "bad --A '0'"),
    (["--sizes", "10", "--type", "int"], "not a multiple of the element size 4"),
    (["--tests", "2", "--modes", "pack"], "leave no test to run"),
])
def test_bad_options(argv, message):
    with pytest.raises(MpiguideError, match=re.escape(message)):
        _params(*argv)


def test_estimate_grows_with_the_grid():
    quick = ddt.estimate(_params("--grid", "quick")["entries"], "rule")
    paper = ddt.estimate(_params()["entries"], "rule")
    assert 0 < quick[0] < paper[0] and 0 < quick[1] < paper[1]
    # Test 5 on the quick grid: 3 layouts x 2 modes x 3 A x 2 sizes
    assert ddt.estimate(_params("--grid", "quick", "--tests", "5")["entries"], 10)[0] == 36


# ---------------------------------------------------------------- verdicts from recorded data

def known_times(stack, test, layout, mode, A, m, launch, placement=None, pattern=None):
    """fast keeps every guideline; slow: datatype 2x MPI_Pack (Test 3), contiguous-subtype over tiled 3x
    slower and over block 3x faster (Test 4, both violate ≃), tiled-struct 4x slower (Test 5) at A=2 only,
    and an inconclusive 1.5x for tiled-struct at A=10 (launch medians interleave)."""
    t = 1e-3 * (1 + 0.01 * launch)
    slow = stack == "slow"
    if test == 3 and mode == "datatype" and slow:
        return 2 * t
    if test == 3 and mode == "datatype":
        return 0.9 * t
    if test == 4 and slow and layout == "contiguous-subtype:sub=tiled":
        return 3 * t
    if test == 4 and slow and layout == "block":
        return 3 * t
    if test == 5 and slow and layout.startswith("tiled-struct") and mode == "datatype":
        if A == 2:
            return 4 * t
        if A == 10:
            return 1e-3 * (0.9 if launch % 2 else 1.5)
    if test == 1:
        return t * {"contiguous": 1, "tiled": 2, "block": 3}.get(layout.split(":")[0], 5)
    return t


@pytest.fixture(scope="module")
def known_run(tmp_path_factory) -> Path:
    params = _params("--tests", "1,3,4,5", "--grid", "quick", "--A", "2,10", "--sizes", "3200",
                     "--patterns", "pingpong")
    path = tmp_path_factory.mktemp("ddt") / "known"
    return write_ddt_run(path, params, known_times, skip={("tiled-struct:S1=2:S2=3", 10): "m is too small"})


def test_verdicts_from_known_times(known_run):
    r = ddtreport.load([runner.RunDir.open(known_run)])
    v = r.verdicts
    row = only_row(v, stack="slow", guideline="DT-GL2/3", compared="block", A=2)
    assert row["verdict"] == stats.VIOLATED and row["ratio"] == pytest.approx(2.0)
    assert row["p_value"] < 1e-6 and row["design"] == stats.PAIRED_LAUNCH and row["low"] > 1.9
    assert only_row(v, stack="fast", guideline="DT-GL2/3", compared="block", A=2)["verdict"] == stats.PASS
    assert only_row(v, stack="slow", guideline="DT-GL2/3-ENG", compared="tiled", A=10)["verdict"] == stats.VIOLATED
    # ≃ fails both ways: the compared side 3x slower, and the compared side 3x faster
    sub_tiled = only_row(v, stack="slow", guideline="DT-GL1", compared="contiguous-subtype:sub=tiled", A=2)
    assert sub_tiled["verdict"] == stats.VIOLATED and sub_tiled["factor"] == pytest.approx(3.0)
    sub_block = only_row(v, stack="slow", guideline="DT-GL1", compared="contiguous-subtype:sub=block", A=2)
    assert sub_block["verdict"] == stats.VIOLATED and sub_block["ratio"] == pytest.approx(1 / 3)
    assert sub_block["factor"] == pytest.approx(3.0)
    assert only_row(v, stack="fast", guideline="DT-GL1", compared="contiguous-subtype:sub=block",
                    A=2)["verdict"] == stats.PASS
    t5 = only_row(v, stack="slow", guideline="DT-GL4", compared="tiled-struct:S1=1:S2=1", A=2)
    assert t5["verdict"] == stats.VIOLATED and t5["factor"] == pytest.approx(4.0)
    inconclusive = only_row(v, stack="slow", guideline="DT-GL4", compared="tiled-struct:S1=1:S2=1", A=10)
    assert inconclusive["verdict"] == stats.INCONCLUSIVE
    # the skipped configuration has no verdict, and is listed
    assert v[(v["compared"] == "tiled-struct:S1=2:S2=3") & (v["A"] == 10) & (v["guideline"] == "DT-GL4")].empty
    assert set(r.notes["reason"]) == {"m is too small"}
    # mpiguide's normalized type: as fast as tiled, so the slow tiled-struct violates DT-GL4-NORM too
    norm = v[v["guideline"] == "DT-GL4-NORM"]
    assert set(norm[norm["stack"] == "fast"]["verdict"]) == {stats.PASS}
    assert only_row(norm, stack="slow", compared="tiled-struct:S1=1:S2=1", A=2)["factor"] == pytest.approx(4.0)
    assert only_row(norm, stack="slow", compared="tiled", A=2)["verdict"] == stats.PASS


def test_slowdown_factors_from_known_times(known_run):
    f = ddtreport.load([runner.RunDir.open(known_run)]).factors
    tiled = f[(f["compared"] == "tiled") & (f["stack"] == "fast") & (f["A"] == 2)]
    assert tiled["factor"].tolist() == pytest.approx([2.0])
    assert set(f["reference"]) == {"contiguous"}
    assert f[f["compared"] == "alternating:variant=2"]["factor"].tolist() == pytest.approx([5.0] * 4)


def test_matrix_cells(known_run):
    r = ddtreport.load([runner.RunDir.open(known_run)])
    m = ddtreport.matrix(r)
    assert list(m.columns) == ["fast", "slow"]
    row = m.xs((5, "DT-GL4", "tiled-struct:S1=1:S2=1 ⪯ tiled", "pingpong", 2, "1x2", 3200))
    assert row["slow"] == "VIOLATED 1/2 x4.00 (A=2)"
    assert row["fast"].startswith("PASS 2/2 x1.00")
    row = m.xs((1, "slowdown", "tiled / contiguous", "pingpong", 2, "1x2", 3200))
    assert row["fast"] == "x2.00 median, x2.00 max (A=2)"
    row = m.xs((4, "DT-GL1", "contiguous-subtype:sub=block ≃ block", "pingpong", 2, "1x2", 3200))
    assert row["slow"] == "VIOLATED 2/2 x3.00 (A=2, reference slower)"
    counts = ddtreport.verdict_counts(r)
    assert counts.loc[("fast", "DT-GL2/3"), stats.PASS] == 8  # 4 layouts x 2 A
    assert counts.loc[("slow", "DT-GL2/3"), stats.VIOLATED] == 8


def test_inter_and_intra_node_side_by_side(tmp_path):
    """Test 3 at 2x1 and 1x2 in one run: the datatype is 2x slower than MPI_Pack between nodes only."""
    def times(stack, test, layout, mode, A, m, launch, placement=None, pattern=None):
        t = 1e-3 * (1 + 0.01 * launch)
        return 2 * t if mode == "datatype" and placement == "2x1" else t

    params = _params("--tests", "3", "--grid", "quick", "--A", "2", "--sizes", "3200", "--patterns", "pingpong",
                     "--layouts", "tiled", "--modes", "datatype,pack", "--placement", "2x1,1x2")
    run = write_ddt_run(tmp_path / "run", params, times, stacks=("one",))
    r = ddtreport.load([runner.RunDir.open(run)])
    assert set(r.verdicts["placement"]) == {"2x1", "1x2"}
    m = ddtreport.matrix(r)
    assert m.xs((3, "DT-GL2/3", "tiled ⪯ tiled [pack]", "pingpong", 2, "2x1", 3200))["one"].startswith("VIOLATED 1/1")
    assert m.xs((3, "DT-GL2/3", "tiled ⪯ tiled [pack]", "pingpong", 2, "1x2", 3200))["one"].startswith("PASS 1/1")
    c = ddtreport.placement_contrast(r)
    assert list(c.columns) == ["2x1", "1x2"]  # inter-node first
    row = c.xs(("one", 3, "DT-GL2/3", "tiled ⪯ tiled [pack]", "pingpong", 3200))
    assert row["2x1"].startswith("VIOLATED 1/1 x2.00") and row["1x2"].startswith("PASS 1/1")
    html = ddtreport.write(r, tmp_path / "rep").read_text()
    assert "DT-GL2/3 across placements (inter- vs intra-node)" in html
    assert (tmp_path / "rep" / "placements.csv").exists()


def test_report_of_one_run(known_run, tmp_path):
    out = tmp_path / "rep"
    r = ddtreport.load([runner.RunDir.open(known_run)])
    html_path = ddtreport.write(r, out)
    text = html_path.read_text()
    assert "Cross-stack matrix" in text and "Test 5: Tiled vs Tiled-struct" in text
    assert "Paper found" in text and "DT-GL4: 2 of 3 VIOLATED, worst x4.00" in text
    for name in ("measurements", "summary", "verdicts", "factors", "matrix", "skipped"):
        assert (out / f"{name}.csv").exists(), name
    verdicts = pd.read_csv(out / "verdicts.csv")
    assert len(verdicts) == len(r.verdicts) and "factor" in verdicts.columns
    # one chart per test x pattern x processes x m x stack
    pngs = sorted(p.name for p in (out / "plots").glob("*.png"))
    assert len(pngs) == 4 * 2 and "t05-pingpong-np2-m3200-slow.png" in pngs
    for p in pngs:
        assert f'src="plots/{p}"' in text
    assert (out / "report.md").read_text().count("### Test") == 8  # paper section + details, 4 tests


def test_report_of_two_runs_side_by_side(known_run, tmp_path, capsys):
    params = _params("--tests", "3", "--grid", "quick", "--A", "2", "--sizes", "3200", "--patterns", "pingpong")
    other = write_ddt_run(tmp_path / "other", params, known_times, stacks=("fast",))
    out = tmp_path / "both"
    res = run_cli(["ddt", "report", str(known_run), str(other), "--output", str(out)])
    assert res.rc == 0, res.text
    m = pd.read_csv(out / "matrix.csv")
    assert {"fast@known", "slow", "fast@other"} <= set(m.columns)
    assert f"report: {out / 'report.html'}" in res.text


def test_report_of_a_run_without_any_finished_launch(tmp_path):
    params = _params("--tests", "5", "--grid", "quick", "--A", "2", "--sizes", "3200")
    path = write_ddt_run(tmp_path / "none", params, known_times, runs=2)
    rd = runner.RunDir.open(path)
    for x in rd.launches:
        x.status, x.message = runner.FAILED, "exit code 137"
    rd.save()
    res = run_cli(["analyze", str(path)])
    assert res.rc == 0, res.text
    text = (path / "report.html").read_text()
    assert "Launches not completed" in text and "exit code 137" in text
    assert pd.read_csv(path / "verdicts.csv").empty


def test_report_rejects_other_jobs(small_run, tmp_path):
    res = run_cli(["ddt", "report", str(small_run[0]), "--output", str(tmp_path / "x")])
    assert res.rc == 2 and "is a 'pingpong' run, not a ddt run" in res.text


# ---------------------------------------------------------------- the real driver

def test_corrupted_data_is_caught(mpich_stack, mpich_build, tmp_path):
    """The data check can fail: with --corrupt every configuration must be reported, none timed."""
    raw = tmp_path / "c.txt"
    res = run_driver(mpich_stack, mpich_build, "mg_ddtbench",
                     ["--pattern", "pingpong", "--layouts", "tiled;block", "--A", "2", "--sizes", "3200",
                      "--modes", "datatype,pack", "--corrupt", "--output", str(raw)])
    assert res.returncode == 3, res.stdout + res.stderr
    parsed = rawfile.parse(raw)
    assert len(parsed.errors) == 4 and not parsed.rows
    assert all("differ" in msg for msg in parsed.errors.values())


@pytest.mark.parametrize("args, message", [
    (["--layouts", "tiled A=2"], "give A with --A"),
    (["--layouts", "tiled B=2", "--A", "2"], "layout 'tiled B=2' is invalid for every A: tiled: B must be > A"),
    (["--layouts", "tiled;wiggly"], "unknown layout 'wiggly'"),
    (["--modes", "datatype,fast"], "unknown mode 'fast'"),
    (["--pattern", "alltoall"], "unknown --pattern 'alltoall'"),
    (["--pattern", "bcast", "--root", "2"], "bad --root '2': expected a rank from 0 to 1"),
    (["--sizes", "0"], "bad --sizes value 0"),
    (["--rotate", "-1"], "bad --rotate '-1': expected a count of layouts from 0"),
    (["--order-seed", "x"], "bad value 'x' for --order-seed"),
])
def test_driver_rejects_bad_input(mpich_stack, mpich_build, args, message):
    res = run_driver(mpich_stack, mpich_build, "mg_ddtbench", [*args, "--check-only"])
    assert res.returncode == 2, res.stdout + res.stderr
    assert message in res.stderr


def test_driver_interleaves_the_layouts_and_modes(mpich_stack, mpich_build, tmp_path):
    """The layouts and modes of each grid point are measured interleaved in an order drawn from --order-seed:
    the header records it, the rows come out grouped by configuration in the catalog's order, and every
    configuration has its nrep rows (the order itself: test_bench_core)."""
    raw = tmp_path / "r.txt"
    res = run_driver(mpich_stack, mpich_build, "mg_ddtbench",
                     ["--pattern", "pingpong", "--layouts", "tiled;block;bucket", "--A", "2,10", "--sizes", "64",
                      "--modes", "datatype,pack", "--nrep", "3", "--order-seed", "17", "--output", str(raw)])
    assert res.returncode == 0, res.stdout + res.stderr
    parsed = rawfile.parse(raw)
    assert parsed.header["order"] == "interleaved" and parsed.header["order_seed"] == "17"
    rows = [dict(zip(parsed.columns, r, strict=True)) for r in parsed.rows]
    seen = list(dict.fromkeys((int(r["A"]), r["layout"], r["mode"]) for r in rows))
    assert seen == [(a, lay, mode) for a in (2, 10) for lay in ("tiled", "block", "bucket")
                    for mode in ("datatype", "pack")]
    assert len(rows) == 3 * len(seen)


def test_driver_skips_impossible_configurations(mpich_stack, mpich_build, tmp_path):
    """RowCol needs A < n; m below half the common unit cannot be formed: skipped with the reason, not run."""
    raw = tmp_path / "s.txt"
    res = run_driver(mpich_stack, mpich_build, "mg_ddtbench",
                     ["--layouts", "rowcol-struct;rowcol-fully-indexed", "--A", "2,100", "--sizes", "400",
                      "--check-only", "--output", str(raw)])
    assert res.returncode == 0, res.stdout + res.stderr
    skips = rawfile.parse(raw).notes["skip"]
    assert "A must be < n (A=100, n=100)" in skips["pingpong rowcol-struct 100 400"]
    assert "pingpong rowcol-struct 2 400" not in skips
    res = run_driver(mpich_stack, mpich_build, "mg_ddtbench",
                     ["--layouts", "tiled;block", "--A", "1000", "--sizes", "3200", "--check-only",
                      "--output", str(raw)])
    assert res.returncode == 0
    skip = rawfile.parse(raw).notes["skip"]["pingpong tiled 1000 3200"]
    assert "less than half of the common unit of 8000 bytes" in skip


def test_small_real_run(mpich_build, tmp_path):
    out = tmp_path / "run"
    res = run_cli(["ddt", "run", "--tests", "3,5", "--grid", "quick", "--A", "2", "--sizes", "3200",
                   "--patterns", "pingpong", "--runs", "2", "--nrep", "3", "--output", str(out)])
    assert res.rc == 0, res.text
    assert "2 test(s), 2 launch template(s)" in res.text and "report: " in res.text
    v = pd.read_csv(out / "verdicts.csv")
    assert set(v["guideline"]) == {"DT-GL2/3", "DT-GL2/3-ENG", "DT-GL4", "DT-GL4-NORM", "DT-GL4-BEST"}
    assert len(v[v["guideline"] == "DT-GL2/3"]) == 4  # tiled, block, bucket, alternating at A=2
    s = pd.read_csv(out / "summary.csv")
    # DT-GL4-BEST: each description's normalized type against the faster of the two descriptions
    best = v[v["guideline"] == "DT-GL4-BEST"]
    m = pd.read_csv(out / "measurements.csv")
    test5 = (m["layout"] == "tiled") | m["layout"].str.startswith("tiled-struct")
    # Test 5's own launches: Test 3 measures tiled too, in launches of its own
    dt = m[test5 & (m["mode"] == "datatype") & m["template"].isin(set(best["template"]))]
    assert sorted(best["compared"]) == sorted(set(dt["layout"])) and set(best["compared_mode"]) == {"normalized"}
    fastest = dt.groupby("layout")["time_s"].median().idxmin()
    assert set(best["reference"]) == {fastest}
    assert set(s["msize"]) == {3200} and (s["mean_s"] > 0).all()
    assert (out / "report.html").exists() and any((out / "plots").glob("t05-*.png"))
