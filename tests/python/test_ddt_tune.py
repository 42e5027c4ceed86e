"""`mpiguide ddt tune`: strategy choices, datatype profiles, validation gains and
repairs from recorded raw data with known outcomes; the written profiles read by
the real library under LD_PRELOAD; a small real workflow on MPICH."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from conftest import only_row, run_cli, write_ddt_run
from mpiguide.core import dtchoice, launch, runner, stats
from mpiguide.suites import SUITES
from mpiguide.suites.ddt import report as ddtreport
from mpiguide.suites.ddt import tune as dtune
from mpiguide.suites.ddt.expectations import TUNED
from mpiguide.suites.ddt.workflow import DdtTune

JOB = SUITES.get("ddt")
MAX = dtchoice.MAX_BYTES
SMALL, LARGE = 64000, 2560000
EDGE = 404771  # isqrt(SMALL * LARGE): the last byte count SMALL stands for
RULES_HEADER = "# shape from_bytes to_bytes strategy [block from_bytes to_bytes]"
SHAPES = {"tiled": "resized/contig", "block": "resized/struct", "bucket": "resized/indexed",
          "alternating": "resized/indexed"}


def shape_of(layout: str) -> str:
    return "resized/vector" if layout.startswith("tiled-struct") else SHAPES[layout]


def _params(*extra: str) -> dict:
    p = argparse.ArgumentParser()
    JOB.add_arguments(p)
    args = p.parse_args(["--tests", "3,5", "--A", "2,10", "--sizes", f"{SMALL},{LARGE}", "--patterns",
                         "pingpong,bcast", "--np", "2", *extra])
    args.every_mode = True
    return JOB.params(args)


def measured_times(stack, test, layout, mode, A, m, launch, placement=None, pattern=None):
    """fast: native is best everywhere. slow (times in units of t; MPI_Pack always 2):
    - tiled-struct: native 4, normalized 1, engine 2: normalized everywhere;
    - bucket, alternating: native 3, engine 1 (and normalized 3): pack, except the broadcast of SMALL where
      native wins;
    - tiled at LARGE: engine 0.5 at A=2 and 1.2 at A=10 against native 1 (four configurations of one shape,
      Tests 3 and 5): pack saves 15% over the four together;
    - block: engine 7% faster than native, below the 10% threshold: native (a DT-GL2/3-ENG violation left).
    Every other configuration and mode: native 1, others 1.5."""
    t = 1e-4 * (1 + 0.01 * launch)
    if mode == "pack" and stack == "slow":
        return 2 * t
    if mode in ("datatype", TUNED) and (stack == "fast" or layout == "tiled" and m == SMALL):
        return t
    if stack == "fast":
        return 1.5 * t
    small_bcast = pattern == "bcast" and m == SMALL
    native = {"tiled-struct": 4, "bucket": 3, "alternating": 3}.get(layout.split(":")[0], 1)
    if small_bcast and layout in ("bucket", "alternating"):
        native = 1
    if mode == "datatype":
        return native * t
    if layout.startswith("tiled-struct"):
        return {"normalized": 1, "engine": 2}[mode] * t
    if layout in ("bucket", "alternating"):
        return (1.5 if small_bcast else 1 if mode == "engine" else 3) * t
    if layout == "tiled" and m == LARGE:
        return ((0.5 if A == 2 else 1.2) if mode == "engine" else 1.5) * t
    if layout == "block":
        return (0.93 if mode == "engine" else 1.5) * t
    return 1.5 * t


def validation_times(stack, test, layout, mode, A, m, launch, placement=None, pattern=None):
    """The measurement's times, and the tuned mode as fast as the strategy the profiles choose (the broadcast
    of LARGE packs every type: together that saves 22% over each shape's own choice)."""
    if mode != TUNED or stack == "fast":
        return measured_times(stack, test, layout, mode, A, m, launch, placement, pattern)
    small_bcast = pattern == "bcast" and m == SMALL
    chosen = "datatype"
    if pattern == "bcast" and m == LARGE:
        chosen = "engine"  # the collective's "*" pack: every type of that size
    elif layout.startswith("tiled-struct"):
        chosen = "normalized"
    elif layout in ("bucket", "alternating") and not small_bcast or layout == "tiled" and m == LARGE:
        chosen = "engine"
    return measured_times(stack, test, layout, chosen, A, m, launch, placement, pattern)


@pytest.fixture(scope="module")
def known_tune(tmp_path_factory) -> Path:
    """A tune directory: measurement and validation (with the tuned mode) from the known times."""
    path = tmp_path_factory.mktemp("ddttune")
    params = _params()
    write_ddt_run(path / "measure", params, measured_times, shape=shape_of)
    vparams = {**params, "entries": [{**e, "modes": [*e["modes"], TUNED]} for e in params["entries"]],
               "datatype_profiles": "{run_dir}/profiles/{stack}"}
    write_ddt_run(path / "validate", vparams, validation_times, shape=shape_of)
    (path / "tune.json").write_text(json.dumps({"threshold": 0.10, "command": ["test"]}))
    return path


@pytest.fixture(scope="module")
def measured(known_tune) -> ddtreport.DdtResult:
    return ddtreport.load([runner.RunDir.open(known_tune / "measure")])


@pytest.fixture(scope="module")
def choices(measured) -> pd.DataFrame:
    return dtune.choose(measured, 0.10)


def test_every_mode_is_measured_and_the_validation_runs_the_tuned_driver(known_tune):
    params = _params()
    assert all(e["modes"] == ["datatype", "pack", "engine", "normalized"] for e in params["entries"])
    launches = JOB.launches(DdtTune(JOB).validation_params(params, None, {}))
    assert {x.driver for x in launches} == {"mg_ddtbench_tuned"}
    for x in launches:
        assert x.args[-2:] == ["--datatype-profiles", "{run_dir}/profiles/{stack}"]
        assert x.args[x.args.index("--modes") + 1] == "datatype,pack,engine,normalized,tuned"
    assert {x.driver for x in JOB.launches(params)} == {"mg_ddtbench"}


def test_shapes_are_read_per_configuration(measured):
    s = measured.shapes
    assert len(s) == len(s.drop_duplicates(["stack", "template", "layout", "A", "m"]))
    assert only_row(s, stack="slow", template="t05-pingpong-np2", layout="tiled-struct:S1=1:S2=1", A=2,
                    m=SMALL)["shape"] == "resized/vector"


def test_choices_from_known_times(choices):
    slow, fast = choices[choices["stack"] == "slow"], choices[choices["stack"] == "fast"]
    assert (fast["strategy"] == dtune.NATIVE).all()
    assert set(fast["decision"]) == {"native is fastest", "every shape's own choice is fastest"}  # the "*" rows
    p2p = slow[slow["pattern"] == "pingpong"]
    assert set(p2p["procs"]) == {"any"}
    for m in (SMALL, LARGE):
        assert only_row(p2p, msize=m, shape="resized/vector")["strategy"] == dtune.NORMALIZED
        assert only_row(p2p, msize=m, shape="resized/indexed")["strategy"] == dtune.PACK
        block = only_row(p2p, msize=m, shape="resized/struct")
        assert block["strategy"] == dtune.NATIVE and block["decision"] == "native: pack saves 7% (7% to 7%), below 10%"
    assert only_row(p2p, msize=SMALL, shape="resized/contig")["strategy"] == dtune.NATIVE
    tiled = only_row(p2p, msize=LARGE, shape="resized/contig")
    # Tests 3 and 5 at A = 2 and 10: 4 configurations, engine 0.5 + 1.2 per pair against native 1 + 1
    assert tiled["configs"] == 4 and tiled["strategy"] == dtune.PACK
    assert tiled["gain"] == pytest.approx(0.15, abs=1e-3) and tiled["p_value"] <= 0.05
    assert tiled["native_s"] > tiled["best_s"]
    assert "*" not in set(p2p["shape"])
    bc = slow[slow["pattern"] == "bcast"]
    assert set(bc["procs"]) == {"2"}
    # the broadcast packs every type of LARGE: 22% less in total than each shape's own choice
    star = only_row(bc, shape="*", msize=LARGE)
    assert star["strategy"] == dtune.PACK and star["gain"] == pytest.approx(0.2155, abs=1e-3)
    assert star["decision"] == "pack for every shape: saves 22% (22% to 22%) over every shape's own choice"
    assert only_row(bc, shape="*", msize=SMALL)["strategy"] == dtune.NATIVE
    # the shapes choose between native and normalized only (pack is the "*" rows')
    assert set(bc[bc["shape"] != "*"]["strategy"]) == {dtune.NATIVE, dtune.NORMALIZED}
    assert only_row(bc, msize=SMALL, shape="resized/indexed")["strategy"] == dtune.NATIVE
    assert only_row(bc, msize=LARGE, shape="resized/vector")["strategy"] == dtune.NORMALIZED


def test_a_run_without_shapes_chooses_nothing(tmp_path):
    """Without #@shape notes (the engine could not read any type) no rule can be keyed: every stack gets an
    empty profile directory."""
    path = write_ddt_run(tmp_path / "noshape", _params(), measured_times)
    choices = dtune.choose(ddtreport.load([runner.RunDir.open(path)]), 0.10)
    assert choices.empty and list(choices.columns) == dtchoice.CHOICE_COLUMNS
    assert dtune.write_profiles(choices, ["fast", "slow"], tmp_path / "p", "test") == []
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == ["fast", "slow"]


def test_blocks_tell_the_layouts_of_one_shape_apart(tmp_path):
    """With #@block notes (4 x A bytes), tiled at LARGE, one shape, packs with blocks of 8 bytes (A=2, engine
    0.5) and stays native with blocks of 40 (A=10, engine 1.2): its rule carries a block range up to the
    geometric mean of 8 and 40, and shapes whose blocks agree get rules for any block."""
    path = write_ddt_run(tmp_path / "blocks", _params(), measured_times, shape=shape_of, block=lambda lab, a: 4 * a)
    choices = dtune.choose(ddtreport.load([runner.RunDir.open(path)]), 0.10)
    p2p = choices[(choices["stack"] == "slow") & (choices["pattern"] == "pingpong")]
    assert only_row(p2p, msize=LARGE, shape="resized/contig", block=8)["strategy"] == dtune.PACK
    assert only_row(p2p, msize=LARGE, shape="resized/contig", block=40)["strategy"] == dtune.NATIVE
    rules = dtchoice.profile_rules(p2p)
    assert [r for r in rules if r[0] == "resized/contig"] == [("resized/contig", EDGE + 1, MAX, "pack", (0, 17))]
    assert ("resized/indexed", 0, MAX, "pack", None) in rules
    assert dtchoice.rule_for(rules, "resized/contig", 8, LARGE) == dtune.PACK
    assert dtchoice.rule_for(rules, "resized/contig", 40, LARGE) == dtune.NATIVE
    text = dtchoice.profile_text("send", "any", rules, "test")
    assert f"resized/contig {EDGE + 1} {MAX} pack block 0 17\n" in text


def test_charts_of_every_mode(tmp_path):
    """A tune measurement has every mode of every test, Test 1's variant panels too: a bar per layout and
    mode (one bar per layout drew four modes on one bar and failed)."""
    p = argparse.ArgumentParser()
    JOB.add_arguments(p)
    args = p.parse_args(["--tests", "1,3", "--A", "2,10", "--sizes", f"{SMALL}", "--patterns", "pingpong", "--np", "2"])
    args.every_mode = True
    path = write_ddt_run(tmp_path / "every", JOB.params(args), measured_times, stacks=("slow",), runs=2)
    r = ddtreport.load([runner.RunDir.open(path)])
    t1 = r.summary[r.summary["template"] == "t01-pingpong-np2"]
    assert set(t1["mode"]) == {"datatype", "engine", "normalized", "pack"}
    pngs = ddtreport.charts(r, tmp_path / "plots")
    assert {x.name for x in pngs} >= {f"t01-pingpong-np2-m{SMALL}-slow.png", f"t03-pingpong-np2-m{SMALL}-slow.png"}


def test_size_ranges_cover_every_size_once():
    assert dtchoice.size_ranges([(100, "pack")]) == [(0, MAX, "pack")]
    assert dtchoice.size_ranges([(LARGE, "pack"), (SMALL, "native")]) == [(0, EDGE, "native"), (EDGE + 1, MAX, "pack")]
    assert dtchoice.size_ranges([(1, "a"), (4, "a"), (16, "b"), (64, "a")]) == [(0, 8, "a"), (9, 32, "b"),
                                                                           (33, MAX, "a")]
    assert dtchoice.size_ranges([(0, "a"), (1, "b")]) == [(0, 0, "a"), (1, MAX, "b")]


def test_no_rule_for_a_predefined_type():
    """The contiguous layout sends MPI_INT itself: no shape, no rule (a rule without a shape is malformed);
    in a collective the '*' pack rule covers it as it covers every type."""
    choices = pd.DataFrame([
        dict(stack="s", pattern="bcast", procs="2", msize=3200, shape="", block=4, strategy="pack"),
        dict(stack="s", pattern="bcast", procs="2", msize=3200, shape="*", block=-1, strategy="pack"),
        dict(stack="s", pattern="bcast", procs="2", msize=3200, shape="vector", block=8, strategy="native")])
    rules = dtchoice.profile_rules(choices)
    assert rules == [("*", 0, MAX, "pack", None)]
    assert dtchoice.rule_for(rules, "", 4, 3200, collective=True) == "pack"


def test_a_shape_measured_with_and_without_block_notes():
    """Runs from before the #@block note mixed with newer ones: the shape's choices without a block stand for
    every block."""
    choices = pd.DataFrame([
        dict(stack="s", pattern="pingpong", procs="2", msize=3200, shape="vector", block=-1, strategy="pack"),
        dict(stack="s", pattern="pingpong", procs="2", msize=3200, shape="vector", block=8, strategy="native"),
        dict(stack="s", pattern="pingpong", procs="2", msize=3200, shape="vector", block=800, strategy="normalized")])
    assert dtchoice.profile_rules(choices) == [("vector", 0, MAX, "pack", None)]


def test_rule_for_follows_the_library_order():
    rules = [("resized/vector", 0, 10, "native", None), ("*", 0, 100, "pack", None),
             ("indexed", 5, 5, "normalized", None), ("contig", 0, 100, "pack", (0, 8)),
             ("contig", 0, 100, "normalized", (9, MAX))]
    assert dtchoice.rule_for(rules, "resized/vector", 4, 7) == "native"  # the shape's rule before "*"
    assert dtchoice.rule_for(rules, "resized/vector", 4, 11) == "pack"
    assert dtchoice.rule_for(rules, "indexed", 4, 5) == "normalized"
    assert dtchoice.rule_for(rules, "indexed", 4, 101) == "native"  # no rule: native
    assert dtchoice.rule_for(rules, "contig", 8, 50) == "pack"  # by the block
    assert dtchoice.rule_for(rules, "contig", 9, 50) == "normalized"
    assert dtchoice.rule_for(rules, "contig", 9, 101) == "native"
    # in a collective the "*" pack comes first, for every type (datatypes/strategy.c)
    assert dtchoice.rule_for(rules, "resized/vector", 4, 7, collective=True) == "pack"
    assert dtchoice.rule_for(rules, "contig", 9, 101, collective=True) == "native"


def test_profiles_written(choices, tmp_path):
    written = dtune.write_profiles(choices, ["fast", "slow"], tmp_path, "test")
    assert (tmp_path / "fast").is_dir() and not list((tmp_path / "fast").iterdir())
    assert sorted(p.name for p in written) == ["dt_bcast_p2.prof", "dt_recv_any.prof", "dt_send_any.prof"]
    send = (tmp_path / "slow" / "dt_send_any.prof").read_text()
    assert send == (tmp_path / "slow" / "dt_recv_any.prof").read_text().replace("datatypes recv", "datatypes send")
    assert send.splitlines() == [
        "# mpiguide tune profile 1", "# test", "datatypes send", "procs any", RULES_HEADER,
        f"resized/contig {EDGE + 1} {MAX} pack", f"resized/indexed 0 {MAX} pack", f"resized/vector 0 {MAX} normalized"]
    # a collective packs every type of a size or none: "*", which the library applies first
    assert (tmp_path / "slow" / "dt_bcast_p2.prof").read_text().splitlines()[2:] == [
        "datatypes bcast", "procs 2", RULES_HEADER, f"resized/vector 0 {MAX} normalized", f"* {EDGE + 1} {MAX} pack"]


def exchange_times(stack, test, layout, mode, A, m, launch, placement=None, pattern=None):
    """Tests 12 and 13 on "slow": the subarray call 3t, packing (engine, by hand, MPI_Pack) t; the normalized
    types 1.5t in the transpose and 3t in the halo exchange. On "fast" every mode takes t."""
    t = 1e-4 * (1 + 0.01 * launch)
    if stack == "fast":
        return t
    if mode in ("datatype", TUNED):
        return 3 * t
    if mode == "normalized":
        return (1.5 if pattern == "transpose" else 3) * t
    return t


def test_the_exchanges_choose_only_what_the_library_takes_for_a_w_call(tmp_path):
    """MPI_Alltoallw and MPI_Neighbor_alltoallw: the library packs no w call by profile (its ranks do not all
    know each block's bytes), so the engine's packing, though fastest, is no candidate and no "*" row is
    written; the transpose takes the normalized types, the halo exchange stays native."""
    p = argparse.ArgumentParser()
    JOB.add_arguments(p)
    args = p.parse_args(["--tests", "12,13", "--grid", "quick", "--np", "2"])
    args.every_mode = True
    params = JOB.params(args)
    assert {e["pattern"] for e in params["entries"]} == {"transpose", "halo"}
    assert all(e["modes"] == ["datatype", "manual", "pack", "engine", "normalized"] for e in params["entries"])
    launches = JOB.launches(DdtTune(JOB).validation_params(params, None, {}))
    assert {x.driver for x in launches} == {"mg_ddtexchange_tuned"}
    assert all(x.args[x.args.index("--modes") + 1].endswith(",tuned") for x in launches)
    write_ddt_run(tmp_path / "measure", params, exchange_times,
                  shape=lambda layout: "subarray-shape-" + layout)
    ch = dtune.choose(ddtreport.load([runner.RunDir.open(tmp_path / "measure")]), 0.10)
    assert "*" not in set(ch["shape"]) and dtune.PACK not in set(ch["strategy"])
    slow = ch[ch["stack"] == "slow"].set_index("pattern")["strategy"]
    assert set(slow["transpose"]) == {dtune.NORMALIZED} and set(slow["halo"]) == {dtune.NATIVE}
    assert set(ch[ch["stack"] == "fast"]["strategy"]) == {dtune.NATIVE}
    written = dtune.write_profiles(ch, ["fast", "slow"], tmp_path / "p", "test")
    assert [x.name for x in written] == ["dt_alltoallw_p2.prof"]
    assert written[0].read_text().splitlines()[2:] == [
        "datatypes alltoallw", "procs 2", RULES_HEADER, f"subarray-shape-pencils 0 {MAX} normalized"]


def test_gains_of_the_validation(known_tune, measured, choices):
    v = ddtreport.load([runner.RunDir.open(known_tune / "validate")])
    g = dtune.gains(v, choices)
    slow = g[g["stack"] == "slow"]
    ts = only_row(slow, template="t05-pingpong-np2", layout="tiled-struct:S1=1:S2=1", A=2, m=SMALL)
    assert ts["strategy"] == dtune.NORMALIZED and ts["speedup"] == pytest.approx(4.0, rel=1e-6)
    assert ts["verdict"] == stats.PASS and ts["best_mode"] == "normalized" and ts["best_verdict"] == stats.PASS
    # the price of one choice per shape: tiled at A=10 packs, 1.2x slower than natively
    t10 = only_row(slow, template="t03-pingpong-np2", layout="tiled", A=10, m=LARGE)
    assert t10["strategy"] == dtune.PACK and t10["speedup"] == pytest.approx(1 / 1.2, rel=1e-6)
    assert t10["verdict"] == stats.VIOLATED and t10["best_mode"] == "datatype"
    block = only_row(slow, template="t03-pingpong-np2", layout="block", A=2, m=LARGE)
    assert block["strategy"] == dtune.NATIVE and block["best_mode"] == "engine"
    assert block["best_verdict"] == stats.VIOLATED  # 7% slower than the engine: the threshold's price
    # the broadcast of LARGE packs every type: Block gets the engine's 7%, Tiled-struct pays (normalized is 2x)
    block = only_row(slow, template="t03-bcast-np2", layout="block", A=2, m=LARGE)
    assert block["strategy"] == dtune.PACK and block["speedup"] == pytest.approx(1 / 0.93, rel=1e-6)
    assert block["best_verdict"] == stats.PASS
    ts = only_row(slow, template="t05-bcast-np2", layout="tiled-struct:S1=1:S2=1", A=2, m=LARGE)
    assert ts["strategy"] == dtune.PACK and ts["speedup"] == pytest.approx(2.0, rel=1e-6)
    assert ts["best_mode"] == "normalized" and ts["best_verdict"] == stats.VIOLATED
    summary = dtune.gain_summary(g)
    row = summary.loc[("slow", "pingpong")]
    assert row["slower_than_native"] == 2 and row["speedup_max"] == pytest.approx(4.0, rel=1e-6)
    assert summary.loc[("fast", "pingpong"), "tuned"] == "0/28"


def test_repairs_of_the_measured_violations(known_tune, measured, choices):
    v = ddtreport.load([runner.RunDir.open(known_tune / "validate")])
    r = dtune.repairs(measured, v, choices)
    assert set(r["stack"]) == {"slow"}
    assert set(r["guideline"]) == {"DT-GL2/3", "DT-GL2/3-ENG", "DT-GL4", "DT-GL4-NORM"}
    gl4 = only_row(r, guideline="DT-GL4", pattern="pingpong", slow="tiled-struct:S1=1:S2=1", A=2, m=SMALL)
    assert gl4["fast"] == "tiled" and gl4["strategy"] == dtune.NORMALIZED
    assert gl4["measured_factor"] == pytest.approx(4.0, rel=1e-6) and gl4["repaired"] == "yes"
    assert gl4["tuned_factor"] == pytest.approx(1.0, rel=1e-6)
    pack = only_row(r, guideline="DT-GL2/3", pattern="pingpong", slow="bucket", A=2, m=LARGE)
    assert pack["fast_mode"] == "pack" and pack["tuned_factor"] == pytest.approx(0.5, rel=1e-6)
    left = only_row(r, guideline="DT-GL2/3-ENG", pattern="pingpong", slow="block", A=2, m=LARGE)
    assert left["strategy"] == dtune.NATIVE and left["repaired"] == "no"
    # left: Block below the threshold (ping-pong, the broadcast of SMALL), and Tiled-struct in the broadcast
    # of LARGE, which "*" packs (2x) where its own choice was the normalized type (1x, as Tiled)
    not_repaired = r[r["repaired"] != "yes"]
    assert set(not_repaired["repaired"]) == {"no"}
    block = not_repaired[not_repaired["slow"] == "block"]
    assert len(block) == 6 and set(block["guideline"]) == {"DT-GL2/3-ENG"}
    assert set(zip(block["pattern"], block["m"], strict=True)) == {("pingpong", SMALL), ("pingpong", LARGE),
                                                                ("bcast", SMALL)}
    ts = not_repaired[not_repaired["slow"] != "block"]
    assert len(ts) == 8 and set(ts["pattern"]) == {"bcast"} and set(ts["m"]) == {LARGE}
    assert set(ts["strategy"]) == {dtune.PACK} and ts["tuned_factor"].tolist() == pytest.approx([2.0] * 8)
    counts = dtune.repair_counts(r)
    assert counts.loc[("slow", "DT-GL2/3-ENG"), "not_repaired"] == 6


def test_resume_writes_the_profiles_and_the_report(known_tune, tmp_path):
    """Interrupted after the validation run was created but before its profiles were written: the resume
    writes them (no launch is pending) and the report."""
    known_tune = shutil.copytree(known_tune, tmp_path / "tune")
    (known_tune / "validate" / "profiles.partial" / "slow").mkdir(parents=True)
    res = run_cli(["ddt", "tune", "--resume", str(known_tune)])
    assert res.rc == 0, res.text
    assert "3 profile(s) written" in res.text and not (known_tune / "validate" / "profiles.partial").exists()
    # Tiled-struct (2 layouts) x A 2, 10 x m x ping-pong and broadcast, each 4x slower than Tiled; the
    # broadcast of LARGE packs it (2x)
    assert "slow: DT-GL4: 12 of 16 violation(s) repaired, 4 not, 0 unclear; worst x4.00 before, x2.00 tuned" \
        in res.text
    # Block x A x m x patterns: the engine's 7% is below the threshold, but for the packed broadcast of LARGE
    assert "slow: DT-GL2/3-ENG: 16 of 22 violation(s) repaired, 6 not" in res.text
    assert "slow pingpong: tuned 20/28 configuration(s), speedup geometric mean x2.84 (x0.83 to x4.00); 2 " \
        "significantly slower than native, 6 than the best mode" in res.text
    assert "fast pingpong: tuned 0/28 configuration(s); 0 significantly slower than native" in res.text
    for name in ("report.html", "report.md", "verdicts.csv", "matrix.csv", "choices.csv", "gains.csv",
                 "repairs.csv"):
        assert (known_tune / name).is_file(), name
    md = (known_tune / "report.md").read_text()
    assert f"validate/profiles/slow/dt_send_any.prof | resized/contig {EDGE + 1} {MAX} pack;" in md


@pytest.mark.parametrize("argv,message", [
    (["--threshold", "-0.1"], "bad --threshold -0.1"),
    (["--runs", "1"], "at least 2 launches"),
    (["--modes", "pack"], "leave no test to run"),
])
def test_tune_rejects_bad_options(argv, message, tmp_path):
    res = run_cli(["ddt", "tune", "--dry-run", "--output", str(tmp_path / "t"), *argv])
    assert res.rc == 2 and message in res.text, res.text


def test_resume_and_report_need_a_tune_directory(tmp_path):
    for opt in ("--resume", "--report"):
        res = run_cli(["ddt", "tune", opt, str(tmp_path)])
        assert res.rc == 2 and "is not a tune directory (no tune.json); start one with mpiguide ddt tune" in res.text


def test_the_library_applies_written_profiles(mpich_stack, mpich_build, tmp_path):
    """Profiles from write_profiles read by the real library, preloaded into the plain ddt driver: the
    report counts pack for the shape, block and size chosen and native for the others (the driver checks its
    data against native transfers, exit 0). Both layouts have blocks of 8 bytes at A=2: pack for tiled-struct's
    shape up to blocks of 56 bytes, for tiled's only from 26."""
    rows = [("resized/vector", 8, "pack"), ("resized/vector", 400, "native"), ("resized/contig", 8, "native"),
            ("resized/contig", 80, "pack")]
    choices = pd.DataFrame([dict(stack="s", pattern="pingpong", procs="any", msize=3200, shape=shape, block=block,
                                 strategy=strategy) for shape, block, strategy in rows])
    dtune.write_profiles(choices, ["s"], tmp_path, "test")
    assert (tmp_path / "s" / "dt_send_any.prof").read_text().splitlines()[5:] == [
        f"resized/contig 0 {MAX} pack block 26 {MAX}", f"resized/vector 0 {MAX} pack block 0 56"]
    report = tmp_path / "report.txt"
    env = {**mpich_stack.env(), "MPIGUIDE_TUNE_MODE": "tuned", "MPIGUIDE_TUNE_PROFILES": str(tmp_path / "s"),
           "MPIGUIDE_TUNE_REPORT": str(report), "LD_PRELOAD": str(mpich_build / "libmpiguide-tune.so")}
    argv = launch.command(launch.LaunchSpec(), mpich_stack, 2, str(mpich_build / "mg_ddtbench"),
                          ["--check-only", "--pattern", "pingpong", "--layouts", "tiled;tiled-struct", "--A", "2",
                           "--sizes", "3200", "--modes", "datatype"])
    res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    text = report.read_text()
    assert "warning" not in res.stderr.lower(), res.stderr
    lines = [x for x in text.splitlines() if x.startswith("#@tune_dt[")]
    assert any(" 3200 pack]=" in x for x in lines), text
    assert any(" 3200 native]=" in x for x in lines), text


def test_small_real_ddt_tune(mpich_build, tmp_path):
    out = tmp_path / "tune"
    res = run_cli(["ddt", "tune", "--stacks", "mpich", "--tests", "5", "--A", "2", "--sizes", "3200", "--runs", "3",
                   "--nrep", "10", "--output", str(out)])
    assert res.rc == 0, res.text
    assert "tune report:" in res.text
    v = ddtreport.load([runner.RunDir.open(out / "validate")])
    assert v.errors.empty and not v.failed
    assert set(v.measurements["mode"]) == {"datatype", "pack", "engine", "normalized", TUNED}
    assert (out / "validate" / "profiles" / "mpich").is_dir()
    g = pd.read_csv(out / "gains.csv")
    assert len(g) == 3 and set(g["layout"]) == {"tiled", "tiled-struct:S1=1:S2=1", "tiled-struct:S1=2:S2=3"}
    assert g["speedup"].notna().all() and (g["speedup"] > 0).all()
    assert set(g["shape"]) == {"resized/contig", "resized/vector"}
