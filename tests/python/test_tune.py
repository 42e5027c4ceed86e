"""Collective guideline tuning (job `coll`, `mpiguide tune`): verdicts, profile
choices, profiles, validation tables and report from recorded raw data with
known outcomes; option errors; profiles read by the real library; a small
real workflow on MPICH."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd
import pytest

from conftest import (
    COLL_MOCKUPS,
    coll_known_times,
    coll_params,
    only_row,
    run_cli,
    run_driver,
    save_synthetic_run,
    synthetic_meta,
    write_coll_run,
)
from mpiguide.core import launch, rawfile, runner, stats, tuning
from mpiguide.core.errors import MpiguideError
from mpiguide.core.stacks import Stack
from mpiguide.suites import SUITES
from mpiguide.suites.coll import analysis as tune
from mpiguide.suites.coll import native, profiles, selection
from mpiguide.suites.coll import report as tunereport
from mpiguide.suites.coll.workflow import CollTune

JOB = SUITES.get("coll")


@pytest.fixture(scope="module")
def known_coll(tmp_path_factory) -> tune.CollResult:
    path = write_coll_run(tmp_path_factory.mktemp("coll") / "measure", coll_known_times)
    return tune.load(runner.RunDir.open(path))


def test_coll_job_options():
    p = coll_params("--collectives", "bcast,scan", "--sizes", "4,1k", "--np", "2,4", "--datatype", "int")
    assert p["sizes"] == [4, 1024] and p["np"] == [2, 4] and p["collectives"] == ["bcast", "scan"]
    keys = [t.key for t in JOB.launches(p)]
    assert keys == ["bcast-p2", "scan-p2", "bcast-p4", "scan-p4"]
    args = JOB.launches({**p, "profiles": "{run_dir}/profiles/{stack}"})[0].args
    assert args[-2:] == ["--profiles", "{run_dir}/profiles/{stack}"] and "--msg-pool" in args


def test_adaptive_rounds_measure_only_the_sizes_of_undecided_points():
    """CollSuite.narrow: the sizes a point reads (both of a MONOTONY or SPLIT point); a size that is not one of
    the run's keeps the whole template."""
    p = coll_params("--collectives", "bcast", "--sizes", "4,8,1k,2k", "--np", "4", "--datatype", "int")
    (t,) = JOB.launches(p)
    narrowed = JOB.narrow(p, t, pd.DataFrame({"msize": [8, 2048], "reference_msize": [8, 1024]}))
    assert narrowed.args[narrowed.args.index("--sizes") + 1] == "8,1024,2048"
    assert (narrowed.key, narrowed.nprocs, narrowed.args[:2]) == ("bcast-p4", 4, ["--collectives", "bcast"])
    assert narrowed.args[4:] == t.args[4:]
    assert JOB.narrow(p, t, pd.DataFrame({"msize": [12], "reference_msize": [12]})) == t


@pytest.mark.parametrize("argv,message", [
    (["--collectives", "alltoallv"], "unknown collective 'alltoallv'"),
    (["--np", "1"], "at least 2 processes"),
    (["--np", "2", "--root", "2"], "bad --root 2"),
    (["--sizes", "6", "--datatype", "int"], "not a multiple of the element size 4"),
    (["--op", "bor", "--datatype", "double"], "--op bor needs"),
    (["--msg-pool", "64X"], "bad --msg-pool '64X'"),
])
def test_coll_job_rejects_bad_options(argv, message):
    with pytest.raises(MpiguideError, match=message):
        coll_params(*argv)


def test_load_reads_mockups_and_skips(known_coll):
    assert set(known_coll.mockups["impl"]) == {i for m in COLL_MOCKUPS.values() for i in m}
    assert only_row(known_coll.mockups, impl="bcast_as_scatter_allgather")["guideline"] == 10
    sk = known_coll.skipped
    assert len(sk) == 2 and set(sk["stack"]) == {"fast", "slow"} and set(sk["msize"]) == {2048}
    assert known_coll.versions == {"fast": "fast MPI 1.0", "slow": "slow MPI 1.0"}


def test_pattern_verdicts_from_known_times(known_coll):
    v = tune.guideline_verdicts(known_coll)
    gl5 = v[v["guideline"] == "COLL-GL5"]
    assert set(gl5[gl5["verdict"] == stats.VIOLATED]["stack"]) == {"slow"}
    bad = only_row(v, stack="slow", guideline="COLL-GL5", msize=1024)
    assert bad["verdict"] == stats.VIOLATED and bad["factor"] == pytest.approx(3.0, rel=1e-6)
    assert bad["relation"] == "MPI_Allreduce ⪯ MPI_Reduce + MPI_Bcast"
    assert bad["p_value"] < 1e-6 and bad["design"] == stats.PAIRED_LAUNCH  # 5 launches, each x3
    assert only_row(v, stack="slow", guideline="COLL-GL6", msize=2048)["factor"] == pytest.approx(1.5, rel=1e-6)
    assert only_row(v, stack="slow", guideline="COLL-GL5", msize=8)["verdict"] == stats.PASS
    assert only_row(v, stack="slow", guideline="COLL-GL10", msize=1024)["verdict"] == stats.INCONCLUSIVE
    # a skipped mock-up has no verdict at that size; the fast stack violates nothing
    assert v[(v["guideline"] == "COLL-GL10") & (v["msize"] == 2048)].empty
    assert (v[v["stack"] == "fast"]["verdict"] != stats.VIOLATED).all()


def test_monotony_and_split_from_known_times(known_coll):
    v = tune.guideline_verdicts(known_coll)
    mono = only_row(v, stack="slow", collective="bcast", guideline="MONOTONY", msize=8)
    assert mono["reference_msize"] == 16 and mono["verdict"] == stats.VIOLATED
    assert mono["factor"] == pytest.approx(5 * (1 + 8 / 1024) / (1 + 16 / 1024), rel=1e-6)
    split = only_row(v, stack="slow", collective="bcast", guideline="SPLIT", msize=2048)
    assert split["reference_msize"] == 1024 and split["verdict"] == stats.VIOLATED
    assert split["factor"] == pytest.approx(1.5, rel=1e-6)
    # 16 = 2 x 8: the 8 B call is the slow one, so one call of 16 B beats two of 8 B
    assert only_row(v, stack="slow", collective="bcast", guideline="SPLIT", msize=16)["verdict"] == stats.PASS
    assert set(v[v["guideline"].isin(["MONOTONY", "SPLIT"])]["impl"]) == {"default"}


def test_choices_follow_threshold_and_significance(known_coll):
    c = tune.choose(known_coll, threshold=0.10)
    assert set(c[c["impl"] != "default"][["stack", "collective", "msize", "impl"]].itertuples(index=False)) == {
        ("slow", "allreduce", 1024, "allreduce_as_reduce_bcast"),
        ("slow", "allreduce", 2048, "allreduce_as_reduce_bcast"),
        ("slow", "bcast", 8, "bcast_as_allgatherv")}  # 2.5x faster; the tie with Scatter+Allgather: first name
    small = only_row(c, stack="slow", collective="bcast", msize=16)
    assert small["impl"] == "default" and "saves 5% (5% to 5%), below 10%" in small["decision"]
    assert only_row(c, stack="slow", collective="allreduce", msize=1024)["gain"] == pytest.approx(2 / 3, rel=1e-6)
    # with a 4% threshold the 5% gain counts
    c4 = tune.choose(known_coll, threshold=0.04)
    assert only_row(c4, stack="slow", collective="bcast", msize=16)["impl"] == "bcast_as_allgatherv"
    # a mock-up whose data check failed is never chosen
    broken = tune.CollResult(known_coll.rd, known_coll.measurements, known_coll.summary, known_coll.mockups,
                             known_coll.skipped, pd.DataFrame({"stack": ["slow"], "launch_id": ["x"],
                                                               "config": ["allreduce allreduce_as_reduce_bcast 1024"],
                                                               "error": ["differs"]}))
    cb = tune.choose(broken, threshold=0.10)
    assert only_row(cb, stack="slow", collective="allreduce", msize=1024)["impl"] == \
        "allreduce_as_reducescatterblock_allgather"  # the next best (2t against native 3t)
    assert only_row(cb, stack="slow", collective="allreduce", msize=2048)["impl"] == "allreduce_as_reduce_bcast"


def test_profile_ranges_merge_neighbours_only():
    frame = pd.DataFrame({"msize": [1, 2, 4, 8, 16, 32], "impl": ["a", "a", "default", "a", "b", "b"]})
    assert profiles.profile_ranges(frame) == [(1, 2, "a"), (8, 8, "a"), (16, 32, "b")]
    assert profiles.profile_ranges(frame.assign(impl="default")) == []


def test_profiles_written_and_read_back(known_coll, tmp_path):
    c = tune.choose(known_coll, threshold=0.10)
    written = profiles.write_profiles(c, tmp_path, "test")
    assert [p.relative_to(tmp_path).as_posix() for p in written] == ["slow/allreduce_p2.prof", "slow/bcast_p2.prof"]
    assert (tmp_path / "fast").is_dir() and not any((tmp_path / "fast").iterdir())
    assert profiles.read_profile(written[0]) == ("allreduce", 2, [(1024, 2048, "allreduce_as_reduce_bcast")])
    bad = tmp_path / "bad.prof"
    bad.write_text("# mpiguide tune profile 1\ncollective allreduce\n1 x default\n")
    with pytest.raises(MpiguideError, match="bad.prof:3"):
        profiles.read_profile(bad)


def test_matrix_cells(known_coll):
    m = tune.matrix(tune.guideline_verdicts(known_coll))
    assert list(m.columns) == ["fast", "slow"]
    row = m.loc[("COLL-GL5", "MPI_Allreduce ⪯ MPI_Reduce + MPI_Bcast", 2)]
    assert row["slow"] == "2/4: 1024 B x3.00, 2048 B x3.00" and row["fast"] == "0/4"
    assert m.index.get_level_values(0)[0] == "COLL-GL5" and m.index.get_level_values(0)[-1] == "SPLIT"


def validation_times(stack, coll, impl, m, launch):
    """As measured, plus `tuned`: the mock-up's time where the profile has it, else native."""
    if impl == "tuned" and stack == "slow" and coll == "allreduce" and m >= 1024:
        return coll_known_times(stack, coll, "allreduce_as_reduce_bcast", m, launch)
    if impl == "tuned" and stack == "slow" and coll == "bcast" and m == 8:
        return coll_known_times(stack, coll, "bcast_as_allgatherv", m, launch)
    return coll_known_times(stack, coll, "default" if impl == "tuned" else impl, m, launch)


@pytest.fixture(scope="module")
def known_tune_dir(tmp_path_factory, known_coll) -> Path:
    """A finished tune directory: the known measurement, profiles, and a validation run."""
    out = tmp_path_factory.mktemp("tune")
    write_coll_run(out / "measure", coll_known_times)
    write_coll_run(out / "validate", validation_times, impls_extra=("tuned",))
    profiles.write_profiles(tune.choose(known_coll, 0.10), out / "validate" / "profiles", "test")
    (out / "tune.json").write_text(json.dumps({"threshold": 0.10, "command": ["test"]}))
    return out


def test_gains_and_repairs(known_tune_dir, known_coll):
    v = tune.load(runner.RunDir.open(known_tune_dir / "validate"))
    c = tune.choose(known_coll, 0.10)
    g = tune.gains(v, c)
    row = only_row(g, stack="slow", collective="allreduce", msize=1024)
    assert row["profile"] == "allreduce_as_reduce_bcast" and row["speedup"] == pytest.approx(3.0, rel=1e-6)
    assert row["verdict"] == stats.PASS
    assert only_row(g, stack="fast", collective="bcast", msize=8)["speedup"] == pytest.approx(1.0)
    r = tune.repairs(tune.guideline_verdicts(known_coll), v, c)
    # every COLL-GL violation of the measurement is checked again
    assert len(r) == 7 and set(r["guideline"]) == {"COLL-GL5", "COLL-GL6", "COLL-GL9", "COLL-GL10"}
    gl5 = only_row(r, guideline="COLL-GL5", msize=2048)
    assert gl5["repaired"] == "yes" and gl5["tuned_factor"] == pytest.approx(1.0)
    assert gl5["default_factor"] == pytest.approx(3.0, rel=1e-6)
    # 5% faster at 16 B: a violation (over the 5% tolerance) that the 10% threshold leaves native
    small = only_row(r, guideline="COLL-GL9", msize=16)
    assert small["profile"] == "default" and small["tuned_verdict"] == stats.VIOLATED and small["repaired"] == "no"
    assert (r[r["msize"] != 16]["repaired"] == "yes").all()
    counts = tune.repair_counts(r)
    assert counts.loc[("slow", "profiled"), "yes"] == 6 and counts.loc[("slow", "left native"), "no"] == 1


def test_tune_report_of_known_directory(known_tune_dir, cli):
    res = run_cli(["tune", "--report", str(known_tune_dir)])
    assert res.rc == 0, res.text
    assert "slow: 6 of 6 profiled COLL-GL violations repaired (1 more left native)" in res.text
    assert "slow: 9 violation(s)" in res.text and "tuned vs native over 3 tuned point(s)" in res.text
    for name in ("report.html", "report.md", "verdicts.csv", "matrix.csv", "choices.csv", "gains.csv",
                 "repairs.csv"):
        assert (known_tune_dir / name).is_file(), name
    md = (known_tune_dir / "report.md").read_text()
    assert "validate/profiles/slow/allreduce_p2.prof | 1024-2048: allreduce_as_reduce_bcast" in md
    assert "| slow | 2 | allreduce | 2/4 | 3 | 3 | 3 |" in md  # speedup geomean, min, max
    plots = sorted(p.name for p in (known_tune_dir / "plots").iterdir())
    assert plots == [f"validate-{c}-p2-{s}.png" for c in ("allreduce", "bcast") for s in ("fast", "slow")]


def test_resume_writes_profiles_an_interruption_left_out(tmp_path, known_coll):
    """Interrupted after the validation run was created but before its profiles were written."""
    write_coll_run(tmp_path / "measure", coll_known_times)
    write_coll_run(tmp_path / "validate", validation_times, impls_extra=("tuned",))
    (tmp_path / "validate" / "profiles.partial" / "slow").mkdir(parents=True)
    (tmp_path / "tune.json").write_text(json.dumps({"threshold": 0.10, "command": ["test"]}))
    res = run_cli(["tune", "--resume", str(tmp_path)])
    assert res.rc == 0, res.text
    assert "2 profile(s) written" in res.text and not (tmp_path / "validate" / "profiles.partial").exists()
    assert profiles.read_profile(tmp_path / "validate" / "profiles" / "slow" / "bcast_p2.prof")[2] == [
        (8, 8, "bcast_as_allgatherv")]


def test_a_failed_data_check_still_tunes_the_rest_and_says_so(tmp_path):
    """A measurement launch that ended with 3 (a configuration's data check failed, so it was not timed) is no
    reason to stop: the profiles of the rest are written, and tune still exits 3."""
    write_coll_run(tmp_path / "measure", coll_known_times)
    write_coll_run(tmp_path / "validate", validation_times, impls_extra=("tuned",))
    rd = runner.RunDir.open(tmp_path / "measure")
    rd.launches[0].returncode = 3
    rd.save()
    (tmp_path / "validate" / "profiles.partial" / "slow").mkdir(parents=True)
    (tmp_path / "tune.json").write_text(json.dumps({"threshold": 0.10, "command": ["test"]}))
    res = run_cli(["tune", "--resume", str(tmp_path)])
    assert res.rc == 3, res.text
    assert "2 profile(s) written" in res.text
    assert (tmp_path / "validate" / "profiles" / "slow" / "bcast_p2.prof").is_file()


def test_coll_run_report(tmp_path):
    path = write_coll_run(tmp_path / "run", coll_known_times)
    rd = runner.RunDir.open(path)
    r = tune.load(rd)
    html = tunereport.write_coll(r, tune.guideline_verdicts(r), path)
    assert html.is_file() and (path / "skipped.csv").is_file()
    assert len(list((path / "plots").glob("*.png"))) == 4
    assert "COLL-GL5" in (path / "matrix.csv").read_text()


@pytest.mark.parametrize("argv,message", [
    (["--threshold", "1.5"], "bad --threshold 1.5"),
    (["--runs", "1"], "at least 2 launches"),
    (["--np", "1"], "at least 2 processes"),
    (["--stacks", "nosuch"], "nosuch"),
])
def test_tune_rejects_bad_options(argv, message, tmp_path):
    res = run_cli(["tune", "--dry-run", "--output", str(tmp_path / "t"), *argv])
    assert res.rc == 2 and message in res.text, res.text


def test_tune_refuses_a_used_output_directory(tmp_path):
    (tmp_path / "old.txt").write_text("keep me")
    res = run_cli(["tune", "--stacks", "mpich", "--output", str(tmp_path)])
    assert res.rc == 2 and "is not an empty directory" in res.text
    assert (tmp_path / "old.txt").read_text() == "keep me" and not (tmp_path / "measure").exists()


def test_tune_resume_and_report_need_a_tune_directory(tmp_path):
    for opt in ("--resume", "--report"):
        res = run_cli(["tune", opt, str(tmp_path)])
        assert res.rc == 2 and "is not a tune directory" in res.text


@pytest.mark.parametrize("driver,option", [("mg_collbench", "--sizes"), ("mg_ddtbench", "--layouts"),
                                            ("mg_dtbench", "--A"), ("mg_stencil", "--nx")])
def test_drivers_name_an_option_whose_value_is_missing(mpich_stack, mpich_build, driver, option):
    res = run_driver(mpich_stack, mpich_build, driver, [option])
    assert res.returncode == 2 and f"option {option} needs a value" in res.stderr, res.stdout + res.stderr


def test_library_reads_written_profiles(mpich_stack, mpich_build, tmp_path):
    """A profile from write_profiles, through the real library: at 8 B the tuned mode runs the mock-up,
    at 16000 B (no range) the native call; the results equal the native call's (else exit 3)."""
    choices = pd.DataFrame({"stack": ["s", "s"], "nprocs": [2, 2], "collective": ["allreduce", "allreduce"],
                            "msize": [8, 16000], "impl": ["allreduce_as_reduce_bcast", "default"]})
    profiles.write_profiles(choices, tmp_path, "test")
    assert {r[1] for r in tuned_allreduce(mpich_stack, mpich_build, tmp_path / "s", tmp_path).rows} == {"default",
                                                                                                        "tuned"}


def tuned_allreduce(stack, build_dir, profiles_dir: Path, tmp_path: Path) -> rawfile.RawFile:
    """mg_collbench's Allreduce of 8 and 16000 B in tuned mode with the profiles: the raw file, once its
    data checks passed and the library ran the mock-up at 8 B and the native call at 16000 B."""
    raw_path = tmp_path / "raw.txt"
    run_driver(stack, build_dir, "mg_collbench",
               ["--collectives", "allreduce", "--sizes", "8,16000", "--impls", "default", "--profiles",
                str(profiles_dir), "--nrep", "3", "--output", str(raw_path)])
    raw = rawfile.parse(raw_path)
    assert raw.complete and not raw.errors
    alg = raw.notes["tune_alg"]
    assert int(alg["MPI_Allreduce 8 allreduce_as_reduce_bcast"]) > 0
    assert "MPI_Allreduce 16000 allreduce_as_reduce_bcast" not in alg
    return raw


def test_small_real_tune_workflow(mpich_build, tmp_path):
    out = tmp_path / "tune"
    res = run_cli(["tune", "--stacks", "mpich", "--np", "2", "--collectives", "allreduce,bcast", "--sizes",
                   "8,16000", "--runs", "3", "--nrep", "10", "--sync", "barrier", "--output", str(out)])
    assert res.rc == 0, res.text
    assert "tune report:" in res.text
    v = tune.load(runner.RunDir.open(out / "validate"))
    assert v.errors.empty and not v.failed
    impls = set(v.measurements["impl"])
    assert {"default", "tuned", "allreduce_as_reduce_bcast", "bcast_as_allgatherv"} <= impls
    assert (out / "validate" / "profiles" / "mpich").is_dir()
    g = pd.read_csv(out / "gains.csv")
    assert len(g) == 4 and set(g["collective"]) == {"allreduce", "bcast"}
    assert g["speedup"].notna().all() and (g["speedup"] > 0).all()
    # the validation reuses nothing but the profiles: every launch measured tuned and default
    assert all(x.status == runner.OK for x in runner.RunDir.open(out / "validate").launches)


def test_real_tune_with_library_algorithms_and_estimated_nrep(mpich_build, tmp_path):
    """`mpiguide tune --algorithms` with nrep estimated (the default): the validation calibrates the library's own
    tuning file's launches, which the measurement never made, and runs to the report."""
    out = tmp_path / "tune"
    res = run_cli(["tune", "--stacks", "mpich", "--np", "2", "--algorithms", "binomial", "--collectives", "bcast",
                   "--sizes", "1024", "--runs", "2", "--calib-max", "0.2", "--nrep-max", "50", "--output", str(out)])
    assert res.rc == 0, res.text
    assert "tune report:" in res.text
    v = runner.RunDir.open(out / "validate")
    assert v.meta["measurement"]["nrep"] == "estimate"
    file_key = selection.template_key("bcast", 2, "mpich", selection.FILE)
    assert {x.template for x in v.launches if x.phase == runner.CALIBRATE} == {file_key}
    assert all(x.status == runner.OK for x in v.launches)
    assert set(tune.load(v).measurements["impl"]) >= {"default", selection.NATIVE_FILE}


def _written(tmp_path) -> Path:
    choices = pd.DataFrame({"stack": ["s"] * 4, "nprocs": [2, 2, 2, 2],
                            "collective": ["allreduce", "allreduce", "allreduce", "bcast"],
                            "msize": [8, 64, 16000, 8], "impl": ["allreduce_as_reduce_bcast",
                                                                 "allreduce_as_reduce_bcast", "default",
                                                                 "bcast_as_scatter_allgather"]})
    profiles.write_profiles(choices, tmp_path / "p", "test")
    (tmp_path / "p" / "s" / "dt_send_any.prof").write_text(
        "# mpiguide tune profile 1\n# test\ndatatypes send\nprocs any\n* 0 100 pack\n")
    return tmp_path / "p" / "s"


def test_profiles_convert_to_pgmpi_and_back(tmp_path):
    src = _written(tmp_path)
    res = run_cli(["profiles", "convert", str(src), "--to", "pgmpi", "--output", str(tmp_path / "pg")])
    assert res.rc == 0 and "left out: dt_send_any.prof: a datatype profile" in res.text, res.text
    assert sorted(p.name for p in (tmp_path / "pg").iterdir()) == ["allreduce_p2.prf", "bcast_p2.prf"]
    assert (tmp_path / "pg" / "allreduce_p2.prf").read_text().splitlines() == [
        profiles.PGMPI_HEADER, "MPI_Allreduce", "2 # nb. of processes", "1 # nb. of mock-up impl.",
        "1 allreduce_as_reduce_bcast", "1 # nb. of ranges", "8 64 1 # byte_range_start byte_range_end alg_id"]
    back = tmp_path / "back"
    assert run_cli(["profiles", "convert", str(tmp_path / "pg"), "--to", "mpiguide", "--output", str(back)]).rc == 0
    for name in ("allreduce_p2", "bcast_p2"):
        assert profiles.read_profile(back / f"{name}.prof") == profiles.read_profile(src / f"{name}.prof")


def test_profiles_convert_refuses_to_overwrite(tmp_path, monkeypatch):
    src = _written(tmp_path)
    res = run_cli(["profiles", "convert", str(src), "--to", "pgmpi", "--output", str(src)])
    assert res.rc == 2 and "is the profile directory itself" in res.text, res.text
    monkeypatch.chdir(src)  # SRC '.': the default output is beside it
    assert run_cli(["profiles", "convert", ".", "--to", "pgmpi"]).rc == 0
    assert (src.parent / f"{src.name}-pgmpi" / "bcast_p2.prf").is_file()
    res = run_cli(["profiles", "convert", ".", "--to", "pgmpi"])
    assert res.rc == 2 and "allreduce_p2.prf exists: convert into an empty directory" in res.text, res.text
    # two profiles of one (collective, processes): the library would take either, so no conversion
    (src / "bcast_copy.prof").write_text((src / "bcast_p2.prof").read_text())
    res = run_cli(["profiles", "convert", str(src), "--to", "pgmpi", "--output", str(tmp_path / "two")])
    assert res.rc == 2 and "are both for bcast on 2 processes" in res.text, res.text


@pytest.mark.parametrize("text, message", [
    ("MPI_Allgatherx\n2\n0\n0\n", ":2: unknown collective 'MPI_Allgatherx'"),
    ("MPI_Bcast\ntwo\n", ":3: expected the number of processes, found 'two'"),
    ("MPI_Bcast\n2\n1\n3 bcast_as_magic\n", ":5: bcast has no mock-up 'bcast_as_magic'"),
    ("MPI_Bcast\n2\n1\n3 bcast_as_allgatherv\n1\n1 8 4\n", ":7: expected 'start end alg_id' with a declared alg id"),
    ("MPI_Bcast\n2\n1\n", "ends before 'alg_id name'"),
])
def test_a_bad_pgmpi_profile_is_named_with_its_line(tmp_path, text, message):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "x.prf").write_text("# pgtune profile\n" + text)
    res = run_cli(["profiles", "convert", str(tmp_path / "in"), "--to", "mpiguide", "--output", str(tmp_path / "o")])
    assert res.rc == 2 and message in res.text, res.text


@pytest.mark.parametrize("to", ["pgmpi", "mpiguide"])
def test_convert_names_a_file_that_is_not_a_profile(tmp_path, to):
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    (src / "x.prf").write_text("# a comment\nnonsense line\n")
    res = run_cli(["profiles", "convert", str(src), "--to", to, "--output", str(out)])
    assert res.rc == 2, res.text
    assert f"skipped: {src / 'x.prf'}:2: not a profile: found 'nonsense line'" in res.text
    assert f"mpiguide: error: nothing converted from {src} to {to}'s format: 1 file(s) could not be read" in res.text
    assert not out.exists()


@pytest.mark.parametrize("to", ["pgmpi", "mpiguide"])
def test_convert_of_a_mixed_directory_writes_the_good_profiles(tmp_path, to):
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    ranges = [(8, 64, "bcast_as_scatter_allgather")]
    if to == "pgmpi":
        (src / "bcast_p2.prof").write_text(profiles.profile_text("bcast", 2, ranges, "test"))
    else:
        (src / "bcast_p2.prf").write_text(profiles.pgmpi_text("bcast", 2, ranges))
    (src / "bad.prof").write_text("nonsense line\n")
    (src / "notes.txt").write_text("nonsense line\n")
    res = run_cli(["profiles", "convert", str(src), "--to", to, "--output", str(out)])
    assert res.rc == 1, res.text
    assert f"skipped: {src / 'bad.prof'}:1: not a profile: found 'nonsense line'" in res.text
    assert "left out: notes.txt: not named like a profile" in res.text
    assert f"wrote 1 profile(s) in {to}'s format to {out}; 1 file(s) could not be read" in res.text
    (written,) = out.iterdir()
    read = profiles.read_pgmpi if to == "pgmpi" else profiles.read_profile
    assert read(written) == ("bcast", 2, ranges)


@pytest.mark.parametrize("text, message", [
    ("", ":1: ends without a 'collective' line"),
    ("collective MPI_Bcastx\n", ":2: unknown collective 'MPI_Bcastx'"),
    ("collective bcast\n8 64 bcast_as_magic\n", ":3: bcast has no mock-up 'bcast_as_magic'"),
    ("8 64 default\n", ":2: cannot read '8 64 default' (a range needs a 'collective' line before it)"),
    ("collective bcast\n8 64 default\n", ":3: ends without a 'procs' line"),
])
def test_a_bad_mpiguide_profile_is_named_with_its_line(tmp_path, text, message):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "x.prof").write_text(tuning.PROFILE_HEADER + "\n" + text)
    res = run_cli(["profiles", "convert", str(tmp_path / "in"), "--to", "pgmpi", "--output", str(tmp_path / "o")])
    assert res.rc == 2 and f"skipped: {tmp_path / 'in' / 'x.prof'}{message}" in res.text, res.text


def test_library_reads_an_exported_pgmpi_profile(mpich_stack, mpich_build, tmp_path):
    """The PGMPITuneLib form of a written profile, through the real library: the same choices as the mpiguide
    form (the mock-up at 8 B, native at 16000 B)."""
    profiles.convert(_written(tmp_path), "pgmpi", tmp_path / "pg")
    tuned_allreduce(mpich_stack, mpich_build, tmp_path / "pg", tmp_path)


def sel_algorithms(family: str = "mpich") -> dict:
    """params["algorithms"] of a run on the stacks fast and slow (values: Open MPI's numbers, MPICH's names)."""
    values = {"ring": "4", "tree": "5", "smp": "6", "broken": "7"}
    return {s: {"family": family, "detection": "the library says so",
                "refusal_env": {"MPIR_CVAR_COLLECTIVE_FALLBACK": "print"}, "refusal_marks": ["cannot be applied"],
                "collectives": {"allreduce": [{"name": n, "value": values[n] if family == "openmpi" else n,
                                               "env": {"ALLREDUCE_ALG": n}} for n in values],
                                "bcast": []}}
            for s in ("fast", "slow")}


SEL_ALGORITHMS = sel_algorithms()


def sel_times(stack, coll, impl, m, launch):
    """Default as coll_known_times; on slow, the library's ring allreduce takes half the default's time at every
    size, in every launch (launches 2x apart, so only pairing by round decides it); tree as the default."""
    t = coll_known_times(stack, coll, "default", m, launch) * (2 if launch % 2 else 1)
    if impl == "default":
        return t
    if impl == "alg:ring" and stack == "slow":
        return t / 2
    return t if impl in ("alg:tree", "alg:smp", "alg:broken") else coll_known_times(stack, coll, impl, m, launch)


def sel_notes(stack, coll, alg, m):
    """smp refused at 8 B (the library says so); broken returns a wrong result at 1024 B."""
    if alg == "alg:smp" and m == 8:
        return [f"#@printed[{coll} default {m}]=Allreduce smp cannot be applied."]
    if alg == "alg:broken" and m == 1024:
        return [f"#@error[{coll} default {m}]=rank 1: the native call's result differs from MPI's definition"]
    return []


def test_library_algorithms_are_planned_beside_the_default():
    """Each stack's algorithms get launches of their own on that stack only, with the forcing and the refusal
    settings in their environment, in the block of the default's template of the same collective."""
    p = {**coll_params("--collectives", "allreduce,bcast", "--sizes", "8,16", "--np", "2"),
         "algorithms": SEL_ALGORITHMS}
    launches = runner.plan(JOB, p, ["fast", "slow"], 2, {"sync": "barrier", "nrep": "rule", "order_seed": 3})
    mine = [x for x in launches if x.template.startswith("allreduce-p2-")]
    assert {(x.stack, x.template) for x in mine} == {(s, f"allreduce-p2-{s}-{n}") for s in ("fast", "slow")
                                                     for n in ("ring", "tree", "smp", "broken")}
    ring = next(x for x in mine if x.template == "allreduce-p2-slow-ring")
    assert ring.env == {"ALLREDUCE_ALG": "ring", "MPIR_CVAR_COLLECTIVE_FALLBACK": "print"}
    assert ring.args[ring.args.index("--impls") + 1] == "default" and "--capture-output" in ring.args
    assert all(x.env == {} for x in launches if x.template in ("allreduce-p2", "bcast-p2"))
    for i in range(2):  # the allreduce block: 2 default launches and 8 algorithm launches in a row
        order = [x.template.startswith("allreduce-") for x in launches if x.run_index == i]
        first = order.index(True)
        assert order[first:first + 10] == [True] * 10 and sum(order) == 10


def test_coll_sel_verdicts_pair_the_default_with_each_algorithm_by_round(tmp_path):
    path = write_coll_run(tmp_path / "sel", sel_times, algorithms=SEL_ALGORITHMS, notes=sel_notes)
    r = tune.load(runner.RunDir.open(path))
    v = tune.guideline_verdicts(r)
    sel = v[v["guideline"] == "COLL-SEL"]
    ring = sel[(sel["stack"] == "slow") & (sel["impl"] == "alg:ring")]
    assert len(ring) == 4 and set(ring["verdict"]) == {stats.VIOLATED}
    assert ring["factor"].between(1.99, 2.01).all() and set(ring["design"]) == {stats.PAIRED_ROUND}
    assert set(sel[sel["impl"] == "alg:tree"]["verdict"]) == {stats.PASS}
    assert set(sel[(sel["stack"] == "fast") & (sel["impl"] == "alg:ring")]["verdict"]) == {stats.PASS}
    # refused: not timed, reported with what the library said
    assert 8 not in set(sel[sel["impl"] == "alg:smp"]["msize"]) and len(sel[sel["impl"] == "alg:smp"]) == 6
    refused = r.skipped[r.skipped["impl"] == "alg:smp"]
    assert set(refused["msize"]) == {8} and refused["reason"].str.contains("smp cannot be applied").all()
    # a wrong result: an error of the algorithm, no verdict
    assert 1024 not in set(sel[sel["impl"] == "alg:broken"]["msize"])
    assert set(r.errors["config"]) == {"allreduce alg:broken 1024"}
    # the library's algorithms are no mock-ups: profiles never choose them
    assert not tune.choose(r, 0.1)["impl"].str.startswith("alg:").any()
    # an undecided COLL-SEL point relaunches both of its templates
    points = JOB.verdict_points(runner.RunDir.open(path))
    row = points[(points["guideline"] == "COLL-SEL") & points["point"].str.contains("alg:ring")].iloc[0]
    assert row["template"] == f"allreduce-p2;allreduce-p2-{row['stack']}-ring"


def sel_validation_times(stack, coll, impl, m, launch):
    """The validation of sel_times: on slow, the library with its tuning file is as fast as its ring allreduce."""
    return sel_times(stack, coll, "alg:ring" if impl == selection.NATIVE_FILE else impl, m, launch)


@pytest.fixture(scope="module")
def sel_tune(tmp_path_factory) -> tuple[tune.CollResult, tune.CollResult]:
    """A measurement with the library's own algorithms (sel_times) and its validation: the tuning file's launches
    and those of the algorithms it chooses or a violation names."""
    out = tmp_path_factory.mktemp("sel-tune")
    m = tune.load(runner.RunDir.open(write_coll_run(out / "measure", sel_times, algorithms=SEL_ALGORITHMS,
                                                    notes=sel_notes)))
    params = CollTune(JOB).validation_params(m.rd.meta["params"], m, {"threshold": 0.10})
    v = write_coll_run(out / "validate", sel_validation_times, algorithms=params["algorithms"])
    return m, tune.load(runner.RunDir.open(v))


def test_an_estimated_validation_calibrates_only_the_templates_it_adds(sel_tune, tmp_path):
    """With nrep estimated, the validation's launches of templates the measurement calibrated take its t_nrep1
    (the longest of their calibration launches); the library's own tuning file, measured only in the
    validation, is calibrated there (`mpiguide tune --algorithms all` without --nrep failed here)."""
    m, _ = sel_tune
    est = {"sync": "barrier", "nrep": "estimate", "rse_calib": 0.01, "rse_batch": 0.05, "b1": 5, "b2": 5,
           "nrep_min": 10, "nrep_max": 100, "calib_max": 1.0}
    params, stacks = m.rd.meta["params"], ["fast", "slow"]
    meta = {**synthetic_meta(run_id="m", runs=2), "job": "coll", "params": params, "measurement": est,
            "stacks_order": stacks}
    t1 = {0: 2e-6, 1: 3e-6}
    save_synthetic_run(tmp_path, meta, runner.plan(JOB, params, stacks, 2, est),
                       lambda x: f"#@mpiguide_raw=1\n#@t_nrep1={t1[x.run_index]}\n#@end=ok\n")
    v_params = CollTune(JOB).validation_params(params, m, {"threshold": 0.10})
    launches = runner.reuse_calibration(runner.RunDir.open(tmp_path), runner.plan(JOB, v_params, stacks, 2, est))
    files = {selection.template_key(c, 2, s, selection.FILE) for c in ("allreduce", "bcast") for s in stacks}
    assert {x.template for x in launches if x.phase == runner.CALIBRATE} == files
    measured = [x for x in launches if x.phase == runner.MEASURE]
    assert {x.template for x in measured} >= files | {"allreduce-p2", "allreduce-p2-slow-ring"}
    for x in measured:
        assert x.needs_t1 == (x.template in files), x.id
        if x.template not in files:
            assert x.args[x.args.index("--t1") + 1] == "3.000000000e-06"


def test_native_choices_validation_and_repairs(sel_tune):
    m, v = sel_tune
    chosen = tune.choose_native(m, 0.10)
    slow = chosen[(chosen["stack"] == "slow") & (chosen["collective"] == "allreduce")]
    assert set(slow["impl"]) == {"alg:ring"} and slow["gain"].between(0.49, 0.51).all()
    assert set(chosen[chosen["stack"] == "fast"]["impl"]) == {"default"}
    # the validation measures the file and only the algorithms it chooses or a violation names
    found = v.rd.meta["params"]["algorithms"]["slow"]["collectives"]["allreduce"]
    assert [a["name"] for a in found] == ["ring", "file"]
    assert found[1]["env"] == {"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE":
                               "{run_dir}/native/{stack}/coll_selection.json"}
    t = tune.analyze(m, v, 0.10)
    g = only_row(t.native_gains, stack="slow", collective="allreduce", msize=1024)
    assert g["profile"] == "alg:ring" and g["speedup"] == pytest.approx(2.0, rel=1e-3) and g["verdict"] == stats.PASS
    rep = t.native_repairs
    assert len(rep) == 4 and set(rep["guideline"]) == {"COLL-SEL"} and set(rep["repaired"]) == {"yes"}
    assert rep["default_factor"].between(1.99, 2.01).all()
    both = tunereport.fixes(t)
    row = only_row(both, stack="slow", collective="allreduce", msize=1024)
    assert row["use"] == "the library's tuning file (ring)"
    lines = tunereport.native_summary(t)
    assert "slow: with its tuning file: x2.00 geometric mean over 4 point(s)" in "\n".join(lines)
    assert "4 of 4 COLL-SEL violations repaired, slower than the default at 0 of" in "\n".join(lines)


def test_a_validation_run_decides_its_fixes_in_its_adaptive_rounds(sel_tune):
    """Beside its guidelines, a validation run's points are its checks of each fix: the file against the default
    and against each algorithm measured beside it, with the templates of both sides, so that --until-decided
    measures again what the gains and repairs need."""
    _, v = sel_tune
    checks = tune.validation_checks(v)
    slow = checks[(checks["stack"] == "slow") & (checks["collective"] == "allreduce")]
    assert set(slow["relation"]) == {"native-file ⪯ default", "native-file ⪯ alg:ring"}
    vs_default = slow[slow["reference"] == "default"]
    assert set(vs_default["verdict"]) == {stats.PASS} and vs_default["factor"].between(0.49, 0.51).all()
    vs_ring = slow[slow["reference"] == "alg:ring"]
    assert len(vs_ring) == 4 and vs_ring["factor"].between(0.99, 1.01).all()
    assert set(checks[checks["stack"] == "fast"]["reference"]) == {"default"}  # fast's file chooses nothing
    points = JOB.verdict_points(v.rd)
    row = only_row(points, stack="slow", point="allreduce native-file vs alg:ring np2 m=1024 vs m=1024")
    assert row["template"] == "allreduce-p2-slow-ring;allreduce-p2-slow-file" and row["guideline"] == "VALIDATION"
    row = only_row(points, stack="slow", point="allreduce native-file np2 m=1024 vs m=1024")
    assert row["template"] == "allreduce-p2;allreduce-p2-slow-file"
    # a measurement run has no fix to check
    assert tune.validation_checks(sel_tune[0]).empty


def test_native_files_are_written_tried_and_reverted_where_the_library_fails(tmp_path, monkeypatch):
    out = tmp_path / "t"
    m = tune.load(runner.RunDir.open(write_coll_run(out / "measure", sel_times,
                                                    algorithms=sel_algorithms("openmpi"))))
    rd_v = runner.RunDir(out / "validate")
    rd_v.path.mkdir()
    rd_v.meta = {"launch": launch.LaunchSpec().to_dict()}
    monkeypatch.setattr(native.stackmod, "get", lambda name: Stack(name=name, family="openmpi",
                                                                   prefix=str(tmp_path), source="prefix"))
    tried = []

    def probe(stack, spec, env, choices, where):
        tried.append((stack.name, choices[0].collective, [c.msize for c in choices]))
        return "the check-only launch with the file ended with status 13" if stack.name == "fast" else None

    monkeypatch.setattr(native, "_probe", probe)
    # on fast, the file is made to choose ring too, so that its probe fails and sends it back to the default
    choose = tune.choose_native

    def everywhere_ring(r, threshold):
        c = choose(r, threshold)
        return c.assign(impl=c["impl"].where(c["collective"] != "allreduce", "alg:ring"))

    monkeypatch.setattr(native.analysis, "choose_native", everywhere_ring)
    written = native.write(m, 0.10, rd_v, "test")
    assert [p.relative_to(rd_v.path).as_posix() for p in written] == [
        "native/fast/coll_tuned_rules.conf", "native/slow/coll_tuned_rules.conf"]
    assert tried == [("fast", "allreduce", [8, 16, 1024, 2048]), ("slow", "allreduce", [8, 16, 1024, 2048])]
    slow = (rd_v.path / "native/slow/coll_tuned_rules.conf").read_text()
    assert "0 4 0 0  # ring" in slow
    fast = (rd_v.path / "native/fast/coll_tuned_rules.conf").read_text()
    assert fast.splitlines()[1].startswith("0")  # no collective left in the file
    summary = native.summaries(rd_v)
    assert summary["slow"]["env"]["OMPI_MCA_coll_tuned_dynamic_rules_filename"].endswith(
        "native/slow/coll_tuned_rules.conf")
    assert [c["why"][:30] for c in summary["fast"]["left_out"]] == ["the library failed with it: th"] * 4
    assert native.write(m, 0.10, rd_v, "test") == []  # written once


def test_algorithms_option():
    assert selection.parse_choice("none") is None and selection.parse_choice("all") == []
    assert selection.parse_choice(" ring, tree ") == ["ring", "tree"]
    with pytest.raises(MpiguideError, match="bad --algorithms ' , '"):
        selection.parse_choice(" , ")
    assert coll_params("--collectives", "bcast")["algorithms"] == {}


# ---------------------------------------------------------------- several placements in one run

PLACEMENTS = ("2x1", "1x2")


def placed_times(stack, coll, impl, m, launch, placement):
    """sel_times between two nodes (2x1), but on slow the library's tree allreduce takes 0.6 of the default's
    time at both placements; on one node (1x2) the ring allreduce is no faster than the default and the
    allreduce mock-ups are all 2x slower than it. So the placements choose differently: ring between the
    nodes, tree on one node, and tree is the one that saves at both."""
    if stack == "slow" and coll == "allreduce" and impl == "alg:tree":
        return 0.6 * sel_times(stack, coll, "default", m, launch)
    if placement == "1x2" and impl == "alg:ring":
        impl = "default"
    t = sel_times(stack, coll, impl, m, launch)
    if placement == "1x2" and coll == "allreduce" and impl in COLL_MOCKUPS["allreduce"]:
        return 2 * sel_times(stack, coll, "default", m, launch)
    return t


@pytest.fixture(scope="module")
def placed_run(tmp_path_factory) -> Path:
    return write_coll_run(tmp_path_factory.mktemp("placed") / "measure", placed_times,
                          algorithms=sel_algorithms("openmpi"), placements=PLACEMENTS)


def placed_params(*argv: str) -> dict:
    """The coll job's parameters with --placement (a run option, not one of the job's own)."""
    parser = argparse.ArgumentParser()
    JOB.add_arguments(parser)
    parser.add_argument("--placement")
    return JOB.params(parser.parse_args(list(argv)))


def test_several_placements_are_planned_each_with_its_launches():
    p = placed_params("--collectives", "allreduce", "--sizes", "8", "--placement", "2x1,1x2")
    assert p["placements"] == ["2x1", "1x2"] and p["np"] == [2]
    launches = runner.plan(JOB, {**p, "algorithms": sel_algorithms("openmpi")}, ["fast"], 1,
                           {"sync": "barrier", "nrep": "rule", "order_seed": 3})
    assert {(x.template, x.placement) for x in launches if x.stack == "fast" and "ring" in x.template} == {
        ("allreduce-p2-2x1-fast-ring", "2x1"), ("allreduce-p2-1x2-fast-ring", "1x2")}
    assert {(x.template, x.placement) for x in launches if x.env == {}} == {("allreduce-p2-2x1", "2x1"),
                                                                             ("allreduce-p2-1x2", "1x2")}
    assert "at 2x1, 1x2 (nodes x processes per node): 2 launch template(s)" in JOB.describe_plan(p, 1, 1, 10)
    with pytest.raises(MpiguideError, match="--np 2 and --placement 2x1,1x2: each placement fixes"):
        placed_params("--np", "2", "--placement", "2x1,1x2")
    # one placement stays the run's: no placement of the launches' own
    assert placed_params("--np", "2", "--placement", "2x1")["placements"] == []


def test_each_placement_has_its_verdicts_and_choices(placed_run):
    r = tune.load(runner.RunDir.open(placed_run))
    assert set(r.measurements["placement"]) == set(PLACEMENTS)
    v = tune.guideline_verdicts(r)
    ring = v[(v["guideline"] == "COLL-SEL") & (v["stack"] == "slow") & (v["impl"] == "alg:ring")]
    assert set(ring[ring["placement"] == "2x1"]["verdict"]) == {stats.VIOLATED}
    assert set(ring[ring["placement"] == "1x2"]["verdict"]) == {stats.PASS}
    chosen = tune.choose_native(r, 0.10)
    slow = chosen[(chosen["stack"] == "slow") & (chosen["collective"] == "allreduce")]
    assert set(slow[slow["placement"] == "2x1"]["impl"]) == {"alg:ring"}
    assert set(slow[slow["placement"] == "1x2"]["impl"]) == {"alg:tree"}
    # a file that names no placement gets the algorithm that saves at both
    across = tune.across_placements(r, 0.10, chosen)
    one = across[(across["stack"] == "slow") & (across["collective"] == "allreduce")]
    assert set(one["placement"]) == {""} and set(one["impl"]) == {"alg:tree"} and len(one) == 4
    assert one["gain"].between(0.39, 0.41).all() and one["decision"].str.startswith("alg:tree: at every").all()
    rest = across[across["stack"] == "fast"]
    assert set(rest["impl"]) == {"default"} and set(rest["placement"]) == {""}
    assert rest[rest["collective"] == "allreduce"]["decision"].str.startswith(
        "native: no algorithm shown to save above 10% at every").all()
    assert set(rest[rest["collective"] == "bcast"]["decision"]) == {"no algorithm applies at every placement"}
    # a profile names no placement: the mock-up that wins between nodes is not used on one node either
    mock = tune.choose(r, 0.10)
    at = only_row(mock, stack="slow", collective="allreduce", msize=1024, placement="2x1")
    assert at["impl"] == "default"
    assert "the placements chose differently (1x2: default, 2x1: allreduce_as_" in at["decision"]
    assert "and a profile names no placement" in at["decision"]
    # the verdicts' points and templates name the placement (compare and the adaptive rounds keep them apart)
    points = JOB.verdict_points(runner.RunDir.open(placed_run))
    row = points[(points["guideline"] == "COLL-SEL") & points["point"].str.contains("alg:ring np2 2x1 m=1024")]
    assert set(zip(row["stack"], row["template"], strict=True)) == {
        (s, f"allreduce-p2-2x1;allreduce-p2-2x1-{s}-ring") for s in ("fast", "slow")}
    assert "placement" in tune.matrix(v).index.names


def test_a_file_format_without_placements_takes_what_saves_at_every_placement(placed_run, tmp_path, monkeypatch):
    """Open MPI's rules file has no condition on processes per node: ring, the fastest between two nodes only,
    gives way to tree, which saves at both; the report's choices say so."""
    m = tune.load(runner.RunDir.open(placed_run))
    rd_v = runner.RunDir(tmp_path / "validate")
    rd_v.path.mkdir()
    rd_v.meta = {"launch": launch.LaunchSpec().to_dict()}
    monkeypatch.setattr(native.stackmod, "get", lambda name: Stack(name=name, family="openmpi",
                                                                   prefix=str(tmp_path), source="prefix"))
    monkeypatch.setattr(native, "_probe", lambda *a: None)
    native.write(m, 0.10, rd_v, "test")
    rules = (rd_v.path / "native/slow/coll_tuned_rules.conf").read_text()
    assert "0 5 0 0  # tree" in rules and "# ring" not in rules
    summary = native.summaries(rd_v)["slow"]
    assert not summary["left_out"]
    assert {(c.get("placement"), c["algorithm"]) for c in summary["carried"] if c["collective"] == "allreduce"} == {
        (None, "tree")}
    written = tune.as_written(tune.choose_native(m, 0.10), native.summaries(rd_v))
    slow = written[(written["stack"] == "slow") & (written["collective"] == "allreduce")]
    assert set(slow["impl"]) == {"alg:tree"} and len(slow) == 8
    assert "in the file: the file names tree at every placement" in only_row(
        slow, msize=8, placement="2x1")["decision"]
