"""Stencil applications (job `apps`, `mpiguide apps run|report`): options and
launches, winners, speedups and memory from recorded raw data with known
outcomes, and small real runs of mg_stencil on MPICH."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import APPS_STEPS, APPS_VARIANTS, apps_params, only_row, run_cli, run_driver, write_apps_run
from mpiguide.core import runner
from mpiguide.core.errors import MpiguideError
from mpiguide.suites import SUITES
from mpiguide.suites.apps import job as apps
from mpiguide.suites.apps import report as appsreport

JOB = SUITES.get("apps")


def test_defaults_are_the_machine_preset():
    p = apps_params()
    assert p["apps"] == list(apps.APPS) and p["scalings"] == ["strong", "weak"] and p["ranks"] == [1, 2, 4]
    assert p["variants"] is None and p["check"] is True and p["sequential"] is False
    assert p["scales"]["life"] == {"strong": [512, 512, 100], "weak": [256, 256, 200]}
    keys = [t.key for t in JOB.launches(p)]
    assert len(keys) == 18 and keys[:3] == ["jacobi-strong-p1", "jacobi-strong-p2", "jacobi-strong-p4"]


def test_launch_arguments_follow_the_options(tmp_path):
    img = tmp_path / "in.pgm"
    img.write_bytes(b"P5\n2 2\n255\n\x00\x01\x02\x03")
    p = apps_params("--apps", "image,life", "--scaling", "strong", "--np", "4,2,2", "--variants",
                    "ddt:neighbor,basic:persistent", "--preset", "paper", "--steps", "7", "--image", str(img),
                    "--no-check")
    assert p["ranks"] == [2, 4] and p["variants"] == ["ddt:neighbor", "basic:persistent"]
    by_key = {t.key: t for t in JOB.launches(p)}
    assert set(by_key) == {"image-strong-p2", "image-strong-p4", "life-strong-p2", "life-strong-p4"}
    assert by_key["image-strong-p4"].nprocs == 4
    assert by_key["image-strong-p2"].args == ["--app", "image", "--variants", "ddt:neighbor,basic:persistent",
                                              "--steps", "7", "--image", str(img.resolve()), "--no-check"]
    assert by_key["life-strong-p2"].args[-5:] == ["--nx", "1024", "--ny", "1024", "--no-check"]
    weak = {t.key: t for t in JOB.launches(apps_params("--apps", "jacobi", "--weak-grid", "40x30", "--sequential"))}
    assert weak["jacobi-weak-p2"].args[-6:] == ["--local-nx", "40", "--local-ny", "30", "--check", "--sequential"]


@pytest.mark.parametrize("argv,message", [
    (["--apps", "heat"], "unknown application 'heat'"),
    (["--variants", "ddt:alltoall"], "unknown variant 'ddt:alltoall'"),
    (["--variants", "vector:neighbor"], "unknown variant 'vector:neighbor'"),
    (["--scaling", "medium"], "unknown scaling 'medium'"),
    (["--np", "0,2"], "bad --np"),
    (["--strong-grid", "12y4"], "bad --strong-grid '12y4'"),
    (["--weak-grid", "0x4"], "bad --weak-grid '0x4'"),
    (["--steps", "0"], "bad --steps 0"),
    (["--image", "/nonexistent.pgm", "--scaling", "strong"], "--image /nonexistent.pgm: no such file"),
    (["--image", "x.pgm"], "weak scaling of the image application is not possible"),
    (["--image", "x.pgm", "--apps", "life", "--scaling", "strong"], "only for the image application"),
])
def test_bad_options_are_named(argv, message):
    with pytest.raises(MpiguideError, match=message.replace("(", r"\(")):
        apps_params(*argv)


@pytest.mark.parametrize("argv,message", [
    (["--nrep", "rule"], "bad --nrep 'rule': the apps job times a whole loop a fixed number of times"),
    (["--nrep", "estimate"], "bad --nrep 'estimate'"),
    (["--rse-calib", "0.1"], "unrecognized arguments: --rse-calib"),
])
def test_apps_run_takes_only_a_number_of_repetitions(argv, message, tmp_path):
    res = run_cli(["apps", "run", "--dry-run", "--output", str(tmp_path / "r"), *argv])
    assert res.rc == 2 and message in res.text, res.text


# ---------------------------------------------------------------- recorded runs with known outcomes

@pytest.fixture(scope="module")
def known_apps(tmp_path_factory) -> appsreport.AppsResult:
    return appsreport.load(runner.RunDir.open(write_apps_run(tmp_path_factory.mktemp("apps") / "run")))


def test_load_and_summary(known_apps):
    s = known_apps.summary
    assert len(s) == 2 * 2 * len(APPS_VARIANTS) and set(s["scaling"]) == {"strong"}
    row = only_row(s, stack="fast", nprocs=2, packing="basic", mode="nonblocking")
    # launch medians 5e-5 x (1 + 0.01 launch) x (1 + 1e-3), mean over launches 0..4
    assert row["mean_s"] == pytest.approx(5e-5 * 1.02 * 1.001, rel=1e-6)
    assert row["total_s"] == pytest.approx(row["mean_s"] * APPS_STEPS)
    assert row["speedup"] == pytest.approx(2.0, rel=1e-6)
    assert row["comm_share"] == 0.25 and row["setup_s"] == 2e-5 and row["halo_bytes"] == 1536
    assert row["mem"] == 200 * 1024 + 4096 * 2  # median over the 5 launches
    assert set(known_apps.measurements["scaling"]) == {"strong"}


def test_winners_from_known_times(known_apps):
    w = appsreport.winners(known_apps, "basic", "ddt")
    assert len(w) == 2 * 2 * 3
    fast_nb = only_row(w, stack="fast", nprocs=2, mode="nonblocking")
    assert fast_nb["winner"] == "ddt" and fast_nb["factor"] == pytest.approx(1.5, rel=1e-6)
    assert fast_nb["p_value"] <= 0.05
    assert only_row(w, stack="fast", nprocs=1, mode="neighbor")["winner"] == appsreport.TIE
    assert only_row(w, stack="fast", nprocs=2, mode="persistent")["winner"] == appsreport.TIE
    slow = only_row(w, stack="slow", nprocs=2, mode="neighbor")
    assert slow["winner"] == "basic" and slow["factor"] == pytest.approx(2.0, rel=1e-6)
    assert only_row(w, stack="slow", nprocs=1, mode="persistent")["winner"] == appsreport.UNCLEAR
    m = appsreport.winner_matrix(w, "strong", 2)
    assert list(m.columns) == ["fast", "slow"]
    assert m.loc[("jacobi", "nonblocking"), "fast"] == "DDT x1.50"
    assert m.loc[("jacobi", "neighbor"), "slow"] == "BASIC x2.00"
    assert m.loc[("jacobi", "persistent"), "fast"] == "tie"
    assert m.loc[("jacobi", "persistent"), "slow"].startswith("unclear (")
    counts = appsreport.winner_counts(w)
    assert counts.loc["fast"].to_dict() == {"basic": 0, "ddt": 2, "tie": 4, "unclear": 0}
    assert counts.loc["slow"].to_dict() == {"basic": 4, "ddt": 0, "tie": 0, "unclear": 2}


def test_setup_and_memory_against_basic(known_apps):
    costs = appsreport.packing_costs(known_apps)
    assert list(costs.index) == [("fast", "basic"), ("fast", "ddt"), ("slow", "basic"), ("slow", "ddt")]
    ddt = costs.loc[("fast", "ddt")]
    assert ddt["mem_median_kib"] == pytest.approx(188.0) and ddt["vs_basic_median_kib"] == pytest.approx(-20.0)
    assert costs.loc[("fast", "basic"), "halo_buffers_max_kib"] == pytest.approx(1.5)
    assert ddt["halo_buffers_max_kib"] == 0 and ddt["configurations"] == 2 * 3
    assert ddt["setup_us"] == pytest.approx(20.0)


def test_tables_by_processes(known_apps):
    t = appsreport.per_process_count(known_apps, "speedup")
    assert list(t.columns) == ["fast P=1", "fast P=2", "slow P=1", "slow P=2"]
    assert t.loc[("jacobi", "strong", "basic", "neighbor"), "slow P=2"] == pytest.approx(2.0)
    assert t.index[0][2] == "basic" and t.index[-1][2] == "ddt"


def test_headline_processes_fit_the_cores(known_apps):
    assert appsreport.headline_nprocs(known_apps) == 2  # the synthetic host has 2 cores
    assert not appsreport.oversubscribed(known_apps, 2) and appsreport.oversubscribed(known_apps, 4)


def test_report_and_failed_checks(tmp_path, cli):
    path = write_apps_run(tmp_path / "run", error_on=lambda x, p, m: x.stack == "slow" and p == "ddt"
                          and m == "neighbor" and x.nprocs == 2 and x.run_index == 0)
    res = cli(["apps", "report", str(path)])
    assert res.rc == 0, res.text
    assert "CHECK FAILED slow slow-jacobi-strong-p2-r0 jacobi ddt neighbor: step 10 rank 1 cell (3,4)" in res.text
    assert "BASIC vs DDT, strong scaling, 2 processes:" in res.text and "DDT x1.50" in res.text
    html = (path / "report.html").read_text()
    assert "FAILED their bitwise check" in html and "BASIC vs DDT" in html
    assert len(list((path / "plots").glob("apps-*.png"))) == 2
    assert (path / "winners_basic_vs_ddt.csv").is_file() and (path / "packing_costs.csv").is_file()
    # the failed variant is missing from that launch only: 4 launch medians remain
    w = appsreport.winners(appsreport.load(runner.RunDir.open(path)), "basic", "ddt")
    assert only_row(w, stack="slow", nprocs=2, mode="neighbor")["launches"] == 4


def test_report_refuses_another_job(small_run, cli):
    res = cli(["apps", "report", str(small_run[0]), "--output", "/tmp/never-written-apps"])
    assert res.rc == 2 and "is a 'pingpong' run, not a stencil applications (apps) run" in res.text


# ---------------------------------------------------------------- real runs on MPICH

def test_small_real_apps_run(mpich_build, tmp_path):
    """Two processes and one, every packing in two modes, Life (corners, periodic) and Jacobi on grids that
    do not divide: every variant passes its bitwise check and is timed in every launch."""
    out = tmp_path / "apps"
    variants = [f"{p}:{m}" for p in apps.PACKINGS for m in ("nonblocking", "neighbor")]
    res = run_cli(["apps", "run", "--stacks", "mpich", "--runs", "2", "--nrep", "2", "--np", "1,2",
                   "--apps", "life,jacobi", "--scaling", "strong,weak", "--strong-grid", "21x17",
                   "--weak-grid", "9x7", "--steps", "6", "--variants", ",".join(variants), "--output", str(out)])
    assert res.rc == 0, res.text
    r = appsreport.load(runner.RunDir.open(out))
    assert r.errors.empty and not r.failed and r.settings["samples"] == "medians"
    raw = (out / r.rd.launches[0].raw).read_text()
    assert "\n#@order=interleaved\n" in raw and "\n#@nrep=2\n" in raw
    counts = r.measurements.groupby(["app", "scaling", "nprocs", "packing", "mode"]).size()
    assert len(counts) == 2 * 2 * 2 * len(variants) and set(counts) == {2 * 2}
    weak2 = only_row(r.summary, app="life", scaling="weak", nprocs=2, packing="ddt", mode="neighbor")
    assert (weak2["gnx"], weak2["gny"]) == (9, 14)  # MPI_Dims_create(2): 2 process rows x 1 column
    assert r.notes["mem"].notna().all() and r.notes["halo_bytes"].notna().all()
    assert (only_row(r.notes, app="life", scaling="strong", nprocs=2, packing="basic", mode="neighbor",
                     launch=0)["halo_bytes"] > 0)
    assert (r.notes[r.notes["packing"] != "basic"]["halo_bytes"] == 0).all()
    assert "BASIC vs DDT, strong scaling, 2 processes:" in res.text
    assert (out / "report.html").is_file()


def test_real_image_run_from_a_pgm_file(mpich_build, tmp_path):
    img = tmp_path / "in.pgm"
    pixels = bytes((x * 7 + y * 13) % 256 for y in range(11) for x in range(13))
    img.write_bytes(b"P5\n13 11\n255\n" + pixels)
    out = tmp_path / "apps"
    res = run_cli(["apps", "run", "--stacks", "mpich", "--runs", "1", "--nrep", "1", "--np", "2", "--apps",
                   "image", "--scaling", "strong", "--image", str(img), "--steps", "4", "--variants",
                   "basic:persistent,subarray:persistent", "--output", str(out)])
    assert res.rc == 0, res.text
    r = appsreport.load(runner.RunDir.open(out))
    assert r.errors.empty and set(zip(r.summary["gnx"], r.summary["gny"], strict=True)) == {(13, 11)}


def _pgm_pixels(path: Path) -> tuple[int, int, bytes]:
    """Width, height and samples of an 8-bit P5 file."""
    data = path.read_bytes()
    magic, w, h, maxval, rest = data.split(maxsplit=4)
    assert magic == b"P5" and maxval == b"255"
    return int(w), int(h), rest


def test_image_reconstructed_from_its_edges(mpich_stack, mpich_build, tmp_path):
    """Jacobi iteration on the edge image converges to the image itself (its exact fixed point with the
    frame of 0 the edges were taken with): after 3000 sweeps on 13 x 11 cells, on 2 processes, the written
    reconstruction equals the input pixel for pixel."""
    pixels = bytes((x * 7 + y * 13) % 256 for y in range(11) for x in range(13))
    (tmp_path / "in.pgm").write_bytes(b"P5\n13 11\n255\n" + pixels)
    res = run_driver(mpich_stack, mpich_build, "mg_stencil", [
        "--app", "image", "--image", str(tmp_path / "in.pgm"), "--steps", "3000", "--nrep", "1", "--variants",
        "basic:nonblocking,ddt:neighbor", "--save-image", str(tmp_path / "out.pgm"), "--output",
        str(tmp_path / "raw.txt")])
    assert res.returncode == 0, res.stdout + res.stderr
    assert _pgm_pixels(tmp_path / "out.pgm") == (13, 11, pixels)
    few = run_driver(mpich_stack, mpich_build, "mg_stencil", [
        "--app", "image", "--image", str(tmp_path / "in.pgm"), "--steps", "5", "--nrep", "1", "--variants",
        "basic:nonblocking", "--save-image", str(tmp_path / "few.pgm"), "--output", str(tmp_path / "raw5.txt")])
    assert few.returncode == 0 and _pgm_pixels(tmp_path / "few.pgm")[2] != pixels  # 5 sweeps are not enough


@pytest.mark.parametrize("args,message", [
    (["--app", "jacobi", "--save-image", "x.pgm"], "--save-image x.pgm: only for --app image, with --check"),
    (["--app", "image", "--no-check", "--save-image", "x.pgm"], "only for --app image, with --check"),
    (["--app", "image", "--nx", "8", "--ny", "8", "--steps", "2", "--save-image", "/nonexistent/dir/x.pgm"],
     "--save-image: /nonexistent/dir/x.pgm"),
])
def test_save_image_errors_are_named(mpich_stack, mpich_build, args, message, tmp_path):
    res = run_driver(mpich_stack, mpich_build, "mg_stencil", [*args, "--output", str(tmp_path / "raw.txt")])
    assert res.returncode == 2 and message in res.stderr, res.stdout + res.stderr


def test_processes_per_node_give_each_launch_its_placement():
    p = apps_params("--np", "1,4,8,16", "--ppn", "4", "--apps", "life", "--scaling", "weak")
    assert {t.nprocs: t.placement for t in JOB.launches(p)} == {1: "1x1", 4: "1x4", 8: "2x4", 16: "4x4"}
    assert all(t.placement is None for t in JOB.launches(apps_params("--apps", "life")))
    with pytest.raises(MpiguideError, match="--ppn 4: 6 processes do not fill whole nodes"):
        apps_params("--np", "2,6", "--ppn", "4")


def test_cluster_launch_lines(cli, tmp_path):
    res = cli(["apps", "run", "--dry-run", "--launcher", "srun", "--np", "2,4", "--ppn", "2", "--apps",
               "jacobi", "--scaling", "strong", "--output", str(tmp_path / "r")])
    assert res.rc == 0, res.text
    assert "srun --mpi=pmi2 -N 1 --ntasks-per-node 2 -n 2 " in res.text
    assert "srun --mpi=pmi2 -N 2 --ntasks-per-node 2 -n 4 " in res.text
    res = cli(["apps", "run", "--dry-run", "--layout", "1x2", "--output", str(tmp_path / "r")])
    assert res.rc == 2 and "give the processes per node with --ppn instead" in res.text


def test_winners_follow_the_sample_setting(tmp_path, cli):
    """Every repetition instead of the 5 launch medians: the same winners, judged unpaired on every
    repetition (launch effects then count as noise)."""
    path = write_apps_run(tmp_path / "run")
    medians = appsreport.winners(appsreport.load(runner.RunDir.open(path)), "basic", "ddt")
    assert cli(["apps", "report", str(path), "--samples", "reps", "--tolerance", "0.005"]).rc == 0
    r = appsreport.load(runner.RunDir.open(path))
    assert r.settings["samples"] == "reps" and r.settings["tolerance"] == 0.005
    reps = appsreport.winners(r, "basic", "ddt")
    where = dict(stack="fast", nprocs=2, mode="nonblocking")
    assert only_row(medians, **where)["winner"] == only_row(reps, **where)["winner"] == "ddt"
    assert only_row(medians, **where)["launches"] == 5
    # DDT 2% slower in persistent mode: a tie within 5%, a BASIC win with a 0.5% tolerance
    assert only_row(reps, stack="fast", nprocs=2, mode="persistent")["winner"] == "basic"


def test_run_apps_is_the_same_job(cli, tmp_path):
    res = cli(["run", "apps", "--dry-run", "--apps", "life", "--np", "2", "--scaling", "strong", "--nrep", "3",
               "--sync", "dissem", "--output", str(tmp_path / "r")])
    assert res.rc == 0, res.text
    assert "mg_stencil --app life --variants all --steps 100 --nx 512 --ny 512 --check --sync dissem --nrep 3" \
        in res.text


@pytest.mark.mpi
def test_a_failed_check_fails_the_command(tmp_path, monkeypatch):
    """A variant whose halos differ (the driver's hidden --corrupt) is reported and the command exits 3."""
    real = JOB.launches
    monkeypatch.setattr(JOB, "launches", lambda params: [
        type(t)(t.key, t.driver, t.nprocs, [*t.args, "--corrupt"], t.placement) for t in real(params)])
    out = tmp_path / "apps"
    res = run_cli(["apps", "run", "--stacks", "mpich", "--runs", "1", "--nrep", "1", "--np", "2", "--apps",
                   "jacobi", "--scaling", "strong", "--strong-grid", "12x10", "--steps", "3", "--variants",
                   "basic:nonblocking,ddt:nonblocking", "--output", str(out)])
    assert res.rc == 3, res.text
    assert "CHECK FAILED mpich mpich-jacobi-strong-p2-r0 jacobi ddt nonblocking: step 1 rank 1" in res.text
    r = appsreport.load(runner.RunDir.open(out))
    assert set(r.measurements["packing"]) == {"basic"}
