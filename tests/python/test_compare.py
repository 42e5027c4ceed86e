"""`mpiguide compare BASE NEW`: guideline points and configurations of two runs
with known times (an 'old' and a 'new' MPI library), the exit status of
--fail-on, the JUnit file, stack pairing and its errors, every suite's points."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
import zlib

import pandas as pd
import pytest

from conftest import (
    DDT_M,
    coll_known_times,
    ddt_library,
    ddt_params,
    only_row,
    run_cli,
    write_apps_run,
    write_coll_run,
    write_ddt_run,
    write_synthetic_run,
)
from mpiguide.core import compare, runner, stats
from mpiguide.core.suite import POINT_COLUMNS, POINT_MORE, POINT_TEMPLATE
from mpiguide.suites import SUITES


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    path = tmp_path_factory.mktemp("cmp")
    base = write_ddt_run(path / "base", ddt_params(), ddt_library("old"), stacks=("mpich-old",))
    new = write_ddt_run(path / "new", ddt_params(), ddt_library("new"), stacks=("mpich-new",))
    both = write_ddt_run(path / "both", ddt_params(), lambda s, *a, **k: ddt_library(s)(s, *a, **k),
                         stacks=("old", "new"))
    return path, base, new, both


def points_of(out) -> pd.DataFrame:
    return pd.read_csv(out / "points.csv")


def test_statuses_ratios_and_exit_status(runs):
    path, base, new, _ = runs
    out = path / "c1"
    res = run_cli(["compare", str(base), str(new), "--fail-on", "violation", "--junit", str(path / "j.xml"),
                   "--output", str(out)])
    assert res.rc == 1, res.text
    assert "FAIL (--fail-on): 2 guideline point(s) newly violated in NEW" in res.text
    p = points_of(out)
    assert set(p["base_stack"]) == {"mpich-old"} and set(p["new_stack"]) == {"mpich-new"}  # the one stack of each
    for A in (2, 10):
        fixed = only_row(p, guideline="DT-GL4-NORM", point=f"test 8: block-indexed ⪯ block-indexed [normalized], "
                                                           f"pingpong np2 1x2, A={A} m={DDT_M}")
        assert fixed["status"] == compare.FIXED and fixed["base_factor"] == pytest.approx(3, rel=1e-6)
        newly = only_row(p, guideline="DT-GL4-NORM", point=f"test 8: block ⪯ block [normalized], pingpong np2 1x2, "
                                                           f"A={A} m={DDT_M}")
        assert newly["status"] == compare.NEW and newly["new_factor"] == pytest.approx(3, rel=1e-6)
        assert newly["new_p_value"] <= 0.05
        # ≃ is violated whichever side is slower: both libraries violate DT-GL4 here
        still = only_row(p, guideline="DT-GL4", point=f"test 8: block-indexed ≃ block, pingpong np2 1x2, "
                                                       f"A={A} m={DDT_M}")
        assert still["status"] == compare.STILL
    assert set(p[p["guideline"] == "DT-GL4-BEST"]["status"]) == {compare.PASSING}
    c = pd.read_csv(out / "configurations.csv")
    slower = c[c["change"] == compare.SLOWER]
    assert len(slower) == 2 and all("layout=block " in x and "mode=datatype" in x for x in slower["config"])
    assert slower["ratio"].tolist() == pytest.approx([3, 3], rel=1e-6)
    faster = c[c["change"] == compare.FASTER]
    assert len(faster) == 2 and all("layout=block-indexed" in x for x in faster["config"])
    assert set(c["change"]) == {compare.SLOWER, compare.FASTER, compare.SAME}
    summary = pd.read_csv(out / "point_summary.csv").set_index("guideline")
    assert summary.loc["DT-GL4-NORM", compare.NEW] == 2 and summary.loc["DT-GL4-NORM", compare.FIXED] == 2
    # without --fail-on the same comparison exits 0
    assert run_cli(["compare", str(base), str(new), "--output", str(path / "c2")]).rc == 0
    res = run_cli(["compare", str(base), str(new), "--fail-on", "regression", "--output", str(path / "c3")])
    assert res.rc == 1 and "2 configuration(s) significantly slower in NEW" in res.text
    # NEW against itself: nothing new, nothing slower
    assert run_cli(["compare", str(new), str(new), "--stacks", "mpich-new:mpich-new", "--fail-on",
                    "violation,regression", "--output", str(path / "c4")]).rc == 0


def test_points_base_did_not_measure(runs):
    """NEW measures A=100 too: its violated points (block ⪯ its normalized type, block-indexed ≃ block) are
    newly violated everywhere (status, summary, report, exit status), the others are only in new."""
    path, base, _, _ = runs
    new = write_ddt_run(path / "new-a100", ddt_params("2,10,100"), ddt_library("new"), stacks=("mpich-new",))
    out = path / "c-a100"
    res = run_cli(["compare", str(base), str(new), "--fail-on", "violation", "--output", str(out)])
    assert res.rc == 1 and "FAIL (--fail-on): 4 guideline point(s) newly violated in NEW" in res.text, res.text
    p = points_of(out)
    newly = only_row(p, guideline="DT-GL4-NORM", point=f"test 8: block ⪯ block [normalized], pingpong np2 1x2, "
                                                       f"A=100 m={DDT_M}")
    assert newly["status"] == compare.NEW and pd.isna(newly["base_verdict"])
    a100 = p[p["point"].str.contains("A=100 ")]
    assert set(a100["status"]) == {compare.NEW, compare.NEW_ONLY} and (a100["status"] == compare.NEW).sum() == 2
    summary = pd.read_csv(out / "point_summary.csv").set_index("guideline")
    assert summary.loc["DT-GL4-NORM", compare.NEW] == 3
    assert "Newly violated guideline points (4)" in (out / "report.md").read_text()


def test_both_runs_are_judged_alike(runs):
    """BASE recorded a tolerance that would pass its 3x points: NEW's settings judge it, the statuses stay."""
    path, base, new, _ = runs
    lax = path / "base-lax"
    shutil.copytree(base, lax)
    meta = json.loads((lax / "meta.json").read_text())
    meta["analysis"]["tolerance"] = 5.0
    (lax / "meta.json").write_text(json.dumps(meta))
    run_cli(["compare", str(lax), str(new), "--output", str(path / "c-lax")])
    run_cli(["compare", str(base), str(new), "--output", str(path / "c-strict")])
    assert points_of(path / "c-lax")["status"].tolist() == points_of(path / "c-strict")["status"].tolist()
    assert (points_of(path / "c-lax")["status"] == compare.FIXED).sum() == 2


def test_junit_has_a_case_per_point_and_fails_the_violated(runs):
    path, base, new, _ = runs
    run_cli(["compare", str(base), str(new), "--junit", str(path / "j2.xml"), "--output", str(path / "c5")])
    root = ET.parse(path / "j2.xml").getroot()
    cases = root.findall(".//testcase")
    p = points_of(path / "c5")
    assert len(cases) == len(p)
    failures = root.findall(".//failure")
    assert len(failures) == int((p["new_verdict"] == stats.VIOLATED).sum()) == 4
    kinds = sorted(f.get("type") for f in failures)
    assert kinds == ["newly-violated", "newly-violated", "still-violated", "still-violated"]
    newly = next(f for f in failures if f.get("type") == "newly-violated")
    message = newly.get("message")
    assert "factor x3" in message and float(message.split("q=")[1].split()[0]) < 0.05
    for suite in root.findall("testsuite"):
        assert int(suite.get("tests")) == len(suite.findall("testcase"))
        assert int(suite.get("failures")) == len(suite.findall(".//failure"))


def test_two_stacks_of_one_run(runs):
    path, _, _, both = runs
    res = run_cli(["compare", str(both), str(both), "--stacks", "old:new", "--output", str(path / "c6")])
    assert res.rc == 0, res.text
    p = points_of(path / "c6")
    assert (p["status"] == compare.NEW).sum() == 2 and (p["status"] == compare.FIXED).sum() == 2


def test_one_library_as_two_stacks_compares_as_identical(tmp_path):
    """The recommended CI path: BASE and NEW as two stacks of one run, here the same library twice. Each round
    of launches runs at its own speed (up to 10% apart, both stacks alike) and every launch median has its own
    +-0.3% noise: paired round by round, nothing is flagged and --fail-on passes."""
    def times(stack, test, layout, mode, A, m, launch, placement=None, pattern=None):
        jitter = zlib.crc32(f"{stack} {layout} {mode} {A} {launch}".encode()) % 7 - 3
        return ddt_library("old")(stack, test, layout, mode, A, m, launch) * (1 + 0.05 * (launch % 3)) * (
            1 + 0.001 * jitter)
    run = write_ddt_run(tmp_path / "ab", ddt_params(), times, stacks=("lib", "lib-again"))
    res = run_cli(["compare", str(run), str(run), "--stacks", "lib:lib-again", "--fail-on", "regression,violation",
                   "--output", str(tmp_path / "c")])
    assert res.rc == 0, res.text
    p = points_of(tmp_path / "c")
    assert not p["status"].isin([compare.NEW, compare.FIXED]).any()
    configs = pd.read_csv(tmp_path / "c" / "configurations.csv")
    assert len(configs) and not configs["change"].isin([compare.SLOWER, compare.FASTER]).any()
    assert set(configs["design"]) == {stats.PAIRED_ROUND}
    shift = pd.read_csv(tmp_path / "c" / "shifts.csv").iloc[0]
    assert shift["change"] in (compare.SAME, compare.UNCLEAR) and shift["shift"] == pytest.approx(1, abs=0.01)


@pytest.mark.parametrize("argv, message", [
    (["--stacks", "old"], "'old' is not BASE_STACK:NEW_STACK"),
    (["--stacks", "nope:new"], "BASE ("),
    (["--stacks", "old:nope"], "NEW ("),
    (["--fail-on", "slowness"], "--fail-on slowness: unknown slowness (choose from regression, violation"),
    ([], "say which stacks to compare: --stacks BASE_STACK:NEW_STACK (BASE has old, new; NEW has old, new)"),
])
def test_bad_pairings_and_options(runs, argv, message):
    path, _, _, both = runs
    res = run_cli(["compare", str(both), str(both), *argv, "--output", str(path / "bad")])
    assert res.rc == 2 and message in res.text, res.text


def test_runs_of_two_jobs_are_refused(runs, tmp_path):
    _, base, _, _ = runs
    ping = write_synthetic_run(tmp_path / "ping", lambda v, s, k: 1e-6)
    res = run_cli(["compare", str(base), str(ping), "--output", str(tmp_path / "o")])
    assert res.rc == 2 and "is a 'ddt' run and NEW" in res.text and "'pingpong' run" in res.text


def test_a_guideline_suite_compares_by_its_verdicts(tmp_path):
    """pingpong (a GuidelineSuite): Send/Recv becomes 2x slower than Isend/Irecv at 64 B in NEW (PP-GL2)."""
    base = write_synthetic_run(tmp_path / "b", lambda v, s, k: 1e-6 * (1 + 0.01 * k))
    new = write_synthetic_run(tmp_path / "n", lambda v, s, k: 1e-6 * (1 + 0.01 * k) * (
        2 if v == "send_recv" and s == 64 else 1))
    pts = SUITES.get("pingpong").verdict_points(runner.RunDir.open(new))
    assert list(pts.columns) == [*POINT_COLUMNS, POINT_TEMPLATE, POINT_MORE] and set(pts[POINT_TEMPLATE]) == {"pp"}
    gl2 = pts[(pts["guideline"] == "PP-GL2") & pts["point"].str.contains("msize_bytes=64")]
    assert len(gl2) == 1 and gl2["verdict"].iloc[0] == stats.VIOLATED
    res = run_cli(["compare", str(base), str(new), "--stacks", "fake:fake", "--fail-on", "violation", "--output",
                   str(tmp_path / "c")])
    p = points_of(tmp_path / "c")
    newly = p[p["status"] == compare.NEW]
    assert res.rc == 1, res.text
    assert list(newly["guideline"]) == ["PP-GL2"] and "msize_bytes=64" in newly["point"].iloc[0]


def test_coll_and_apps_points(tmp_path):
    """The points of the other suites, from their known runs: COLL-GL5 of the slow stack's Allreduce at 1024 B
    (native 3x Reduce+Bcast), and "ddt ⪯ basic" of the apps (DDT 2x slower on the slow stack in nonblocking
    mode, 1.5x faster on the fast one)."""
    coll = SUITES.get("coll").verdict_points(runner.RunDir.open(write_coll_run(tmp_path / "coll", coll_known_times)))
    assert list(coll.columns)[:len(POINT_COLUMNS)] == POINT_COLUMNS and POINT_TEMPLATE in coll.columns
    gl5 = only_row(coll, stack="slow", guideline="COLL-GL5", point="allreduce allreduce_as_reduce_bcast np2 m=1024 "
                                                                   "vs m=1024")
    assert gl5["verdict"] == stats.VIOLATED and gl5["factor"] == pytest.approx(3, rel=1e-3)
    assert set(coll[coll["stack"] == "fast"]["verdict"]) <= {stats.PASS, stats.INCONCLUSIVE}
    apps = SUITES.get("apps").verdict_points(runner.RunDir.open(write_apps_run(tmp_path / "apps")))
    assert list(apps.columns)[:len(POINT_COLUMNS)] == POINT_COLUMNS
    slow = only_row(apps, stack="slow", guideline="ddt ⪯ basic", point="jacobi strong np2 nonblocking")
    assert slow["verdict"] == stats.VIOLATED and slow["factor"] == pytest.approx(2, rel=1e-2)
    fast = only_row(apps, stack="fast", guideline="ddt ⪯ basic", point="jacobi strong np2 nonblocking")
    assert fast["verdict"] == stats.PASS and fast["factor"] == pytest.approx(1 / 1.5, rel=1e-2)
