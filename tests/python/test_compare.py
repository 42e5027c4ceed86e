"""`mpiguide compare BASE NEW`: guideline points and configurations of two runs
with known times (an 'old' and a 'new' MPI library), the exit status of
--fail-on, the JUnit file, stack pairing and its errors, every suite's points."""

from __future__ import annotations

import json
import math
import shutil
import xml.etree.ElementTree as ET
import zlib

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

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


# ---------------------------------------------------------------- a change of a point, on simulated runs

def simulated_points(seed: int, truth: np.ndarray, spread: np.ndarray, launches: int = 3) -> pd.DataFrame:
    """The guideline points of one simulated run: point i's per-launch log ratios drawn from
    N(truth[i], spread[i]^2), judged as a run judges its points (stats.decide, one family)."""
    rng = np.random.default_rng(seed)
    estimates = [stats.paired_estimate(rng.normal(mu, sd, launches)) for mu, sd in zip(truth, spread, strict=True)]
    rows = [dict(stack="lib", guideline="GL", point=f"p{i}", factor=v.ratio, **stats.verdict_dict(v))
            for i, v in enumerate(stats.decide(estimates, 0.05, 0.05))]
    return pd.DataFrame(rows)[POINT_COLUMNS]


def simulated_family(seed: int, points: int = 450) -> tuple[np.ndarray, np.ndarray]:
    """True log ratios of a run's points: a third clearly passing, a third clearly violated, a third within
    x1.02 to x1.15 (near the tolerance of 5%, where verdicts flip between runs); launch-to-launch spreads of
    1% to 8%."""
    rng = np.random.default_rng(seed)
    third = points // 3
    truth = np.concatenate([np.log(rng.uniform(0.5, 0.95, third)), np.log(rng.uniform(1.3, 3.0, third)),
                            np.log(rng.uniform(1.02, 1.15, points - 2 * third))])
    return truth, rng.uniform(0.01, 0.08, points)


OPTS = {"tolerance": 0.05, "alpha": 0.05, "looks": 1}


def test_two_runs_of_one_library_show_no_change_ten_times_of_ten():
    """A/A on simulated data (fixed seeds): ten pairs of runs of one library, 450 points each, a third of them
    near the tolerance. Verdicts flip between PASS and VIOLATED in every pair (the false discovery control of a
    run allows it), yet no point is newly violated or fixed: its ratio is not shown to change."""
    truth, spread = simulated_family(1)
    flips = 0
    for rep in range(10):
        base = simulated_points(100 + 2 * rep, truth, spread)
        new = simulated_points(101 + 2 * rep, truth, spread)
        p = compare.compare_points(base, new, [("lib", "lib")], OPTS)
        assert not p["status"].isin([compare.NEW, compare.FIXED]).any(), rep
        assert not p["change"].isin([compare.UP, compare.DOWN]).any(), rep
        flipped = p["status"].isin([compare.VIOLATED_UNCHANGED, compare.PASSES_UNCHANGED])
        # what the former rule (PASS then VIOLATED: newly violated) would have failed on
        flips += int(flipped.sum())
        assert (flipped == ((p["base_verdict"] != p["new_verdict"]) & ~p["status"].eq(compare.UNDECIDED))).all()
    assert flips >= 10


def test_a_real_change_of_points_is_still_flagged():
    """The same family, NEW with 30 of the passing points made 1.5x slower on their left side: each is newly
    violated (its ratio shown up), nothing else changes."""
    truth, spread = simulated_family(1)
    slowed = np.arange(30)  # clearly passing points (ratios x0.5 to x0.95)
    changed = truth.copy()
    changed[slowed] = np.log(1.5)
    base, new = simulated_points(7, truth, spread), simulated_points(8, changed, spread)
    p = compare.compare_points(base, new, [("lib", "lib")], OPTS)
    hit = p["point"].isin([f"p{i}" for i in slowed])
    assert (p.loc[hit, "change"] == compare.UP).sum() >= 28
    assert (p.loc[hit, "status"] == compare.NEW).sum() >= 28
    assert not p.loc[~hit, "status"].isin([compare.NEW, compare.FIXED]).any()
    assert (p.loc[hit & (p["status"] == compare.NEW), "change_ratio"] > 1.05).all()


def test_a_point_not_shown_changed_is_reported_and_does_not_fail(runs, tmp_path):
    """A point PASS in BASE and VIOLATED in NEW whose ratio moved less than the tolerance: 'violated in new, no
    change shown' (console, JUnit type violated-no-change), and --fail-on violation passes."""
    path, _, _, _ = runs

    def times(version):
        def t(stack, test, layout, mode, A, m, launch, placement=None, pattern=None):
            base = 1e-4 * (1 + 0.01 * launch) * (1 + 0.001 * (launch % 2))
            if mode == "datatype" and layout == "block":  # block ⪯ block [normalized]: x1.04, then x1.07
                return base * (1.04 if version == "old" else 1.07)
            return base
        return t
    base = write_ddt_run(tmp_path / "b", ddt_params(), times("old"), stacks=("lib",))
    new = write_ddt_run(tmp_path / "n", ddt_params(), times("new"), stacks=("lib",))
    res = run_cli(["compare", str(base), str(new), "--fail-on", "violation", "--junit", str(tmp_path / "j.xml"),
                   "--output", str(tmp_path / "c")])
    assert res.rc == 0, res.text
    p = points_of(tmp_path / "c")
    flipped = p[p["status"] == compare.VIOLATED_UNCHANGED]
    # block ⪯ its normalized type, and block-indexed ≃ block (whose ratio block-indexed / block went down)
    assert len(flipped) == 4 and set(flipped["base_verdict"]) == {stats.PASS}
    assert sorted(flipped["change_ratio"]) == pytest.approx([1.04 / 1.07] * 2 + [1.07 / 1.04] * 2, rel=1e-3)
    assert set(flipped["change"]) == {compare.SAME}  # shown within the tolerance both ways
    assert "violated in new, no change shown 4" in res.text
    kinds = {f.get("type") for f in ET.parse(tmp_path / "j.xml").getroot().findall(".//failure")}
    assert "violated-no-change" in kinds and "newly-violated" not in kinds


def test_what_a_comparison_could_have_seen():
    """detectable: the ratio whose interval just clears 1 + tolerance; launches_for: the fewest launches whose
    interval is narrow enough, from a known spread."""
    se, df, n, level = 0.05, 2.0, 3, 0.05
    assert stats.detectable(se, df, 0.05, level) == pytest.approx(1.05 * math.exp(sps.t.ppf(0.95, 2) * se))
    room = math.log(1.1 / 1.05)
    k = stats.launches_for(se, df, n, room, level)

    def half(k):
        return sps.t.ppf(0.95, df + k - n) * se * math.sqrt(n / k)
    assert half(k) <= room < half(k - 1)
    assert stats.launches_for(se, df, n, math.log(1.05), level) < k  # "same" needs a half-width of x1.05
    assert stats.launches_for(se, df, 1, room, level) is None and stats.launches_for(5.0, df, n, room, level) is None
    assert math.isnan(stats.detectable(se, 0, 0.05, level))


def test_compare_says_what_it_could_have_seen(runs):
    """The console and configuration_summary.csv: the median smallest detectable change and the launches that
    would show x1.1 (--detect 1.2: x1.2) and 'same', computed from configurations.csv's typical row."""
    path, base, new, _ = runs
    out = path / "c-detect"
    res = run_cli(["compare", str(base), str(new), "--detect", "1.2", "--output", str(out)])
    assert res.rc == 0, res.text
    summary = pd.read_csv(out / "configuration_summary.csv").iloc[0]
    configs = pd.read_csv(out / "configurations.csv")
    assert summary["detectable_median"] == pytest.approx(configs["detectable"].median(), rel=0.2)
    assert configs["detectable"].min() <= summary["detectable_median"] <= configs["detectable"].max()
    assert f"changes below x{summary['detectable_median']:.3g} could not be shown" in res.text
    assert "would show x1.2" in res.text and f"with {int(summary['rounds'])} launch(es) per run" in res.text
    bad = run_cli(["compare", str(base), str(new), "--detect", "1.03", "--output", str(path / "c-bad")])
    assert bad.rc == 2 and "bad --detect 1.03" in bad.text
