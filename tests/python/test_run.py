"""End-to-end runs with the CLI on the real MPICH stack: the run directory's files and their contents."""

from __future__ import annotations

import json
import math
import os
import subprocess

import numpy as np
import pandas as pd
import pytest

from conftest import REPO, RULE_NREP, SMALL_RUNS, SMALL_SIZES, VARIANTS, read_launches
from mpiguide.core import rawfile

EXPECTED_ROWS = SMALL_RUNS * len(SMALL_SIZES) * len(VARIANTS) * RULE_NREP


def test_run_exit_code_and_files(small_run):
    path, res = small_run
    assert res.rc == 0
    for name in ("meta.json", "launches.json", "measurements.csv", "summary.csv", "verdicts.csv", "report.md",
                 "report.html", "plots/latency.png", "raw/mpich/mpich-pp-r0.txt", "raw/mpich/mpich-pp-r1.txt",
                 "logs/mpich-pp-r0.log", "logs/mpich-pp-r1.log"):
        assert (path / name).is_file(), name
    assert not (path / "config_errors.csv").exists()  # every data check passed
    assert (path / "plots/latency.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_run_console_output(small_run):
    path, res = small_run
    assert f"run {path}: 2 launch(es) to go of 2" in res.text
    assert "[1/2] mpich-pp-r0: ok" in res.err
    assert "[2/2] mpich-pp-r1: ok" in res.err
    assert "guideline verdicts:" in res.text
    assert f"report: {path / 'report.html'}" in res.text


def test_meta_json(small_run):
    meta = json.loads((small_run[0] / "meta.json").read_text())
    assert meta["job"] == "pingpong"
    assert meta["runs"] == SMALL_RUNS
    assert meta["stacks_order"] == ["mpich"]
    assert meta["params"] == {"sizes": [4, 1024], "variants": VARIANTS, "datatype": "int"}
    assert meta["measurement"]["nrep"] == "rule"
    assert meta["measurement"]["sync"] == "barrier"
    assert meta["analysis"] == {"samples": "medians", "tolerance": 0.05, "alpha": 0.05, "looks": 1, "adaptive": None}
    assert meta["launch"] == {"launcher": "local", "nodes": 1, "ppn": None, "hostfile": None, "template": None,
                              "partition": None}
    mpich = meta["stacks"]["mpich"]
    assert mpich["library_version"].startswith("MPICH Version:")
    assert mpich["family"] == "mpich"
    assert mpich["source"].startswith("pip:mpich==")
    assert isinstance(meta["host"]["cpu_model"], str) and meta["host"]["cpu_model"]
    assert meta["host"]["cores"] == os.cpu_count()
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    assert meta["git"]["commit"] == (head.stdout.strip() if head.returncode == 0 else "unknown")
    assert isinstance(meta["git"]["dirty"], bool)


def test_launches_json_all_ok(small_run):
    path = small_run[0]
    launches = read_launches(path)
    assert [x["id"] for x in launches] == ["mpich-pp-r0", "mpich-pp-r1"]
    for i, x in enumerate(launches):
        assert (x["status"], x["returncode"], x["attempts"], x["phase"], x["run_index"]) == ("ok", 0, 1, "measure", i)
        assert x["message"] == ""
        assert x["nprocs"] == 2
        assert x["args"][:2] == ["--sizes", "4,1024"]
        assert x["args"][x["args"].index("--nrep") + 1] == "rule"
        raw = rawfile.parse(path / x["raw"])
        assert raw.complete
        assert raw.header["nrep_method"] == "rule"
        assert raw.header["sizes"] == "4,1024"


def test_launch_log_starts_with_the_command(small_run):
    first = (small_run[0] / "logs/mpich-pp-r0.log").read_text().splitlines()[0]
    assert first.startswith("env PATH=")
    assert "/bin/mpiexec -n 2 " in first
    assert "/mg_pingpong --sizes 4,1024 " in first
    assert f"--output {small_run[0].resolve() / 'raw/mpich/mpich-pp-r0.txt'}" in first


def test_measurements_csv(small_run):
    path = small_run[0]
    m = pd.read_csv(path / "measurements.csv")
    assert list(m.columns) == ["stack", "template", "nprocs", "launch", "launch_id", "variant", "msize_bytes",
                               "count", "rep", "time_s"]
    assert len(m) == EXPECTED_ROWS
    counts = m.groupby(["launch_id", "variant", "msize_bytes"]).size()
    assert len(counts) == SMALL_RUNS * len(SMALL_SIZES) * len(VARIANTS)
    assert (counts == RULE_NREP).all()
    assert set(m["stack"]) == {"mpich"}
    assert m.groupby("launch_id")["launch"].first().to_dict() == {"mpich-pp-r0": 0, "mpich-pp-r1": 1}
    # The rows are the raw files' rows.
    for lid in ("mpich-pp-r0", "mpich-pp-r1"):
        raw = rawfile.parse(path / f"raw/mpich/{lid}.txt").frame()
        mine = m[m["launch_id"] == lid].reset_index(drop=True)
        assert mine["time_s"].to_numpy() == pytest.approx(raw["time_s"].to_numpy(), rel=1e-8)
        assert mine["variant"].tolist() == raw["variant"].tolist()


def test_summary_csv_matches_measurements(small_run):
    path = small_run[0]
    m = pd.read_csv(path / "measurements.csv")
    s = pd.read_csv(path / "summary.csv")
    assert len(s) == len(SMALL_SIZES) * len(VARIANTS)
    assert set(zip(s["variant"], s["msize_bytes"], strict=True)) == {(v, z) for v in VARIANTS for z in SMALL_SIZES}
    assert (s["launches"] == SMALL_RUNS).all()
    assert (s["nrep"] == RULE_NREP).all()
    med = m.groupby(["variant", "msize_bytes", "launch"])["time_s"].median()
    for row in s.itertuples():
        launch_medians = med.loc[(row.variant, row.msize_bytes)]
        assert row.mean_s == pytest.approx(launch_medians.mean(), rel=1e-6)
        assert row.min_s == pytest.approx(launch_medians.min(), rel=1e-6)
        assert row.max_s == pytest.approx(launch_medians.max(), rel=1e-6)


def test_verdicts_csv(small_run):
    path = small_run[0]
    v = pd.read_csv(path / "verdicts.csv")
    m = pd.read_csv(path / "measurements.csv")
    # per launch the median of the log times (stats.per_launch; with an even count, the geometric middle)
    log_medians = np.log(m["time_s"]).groupby([m["variant"], m["msize_bytes"], m["launch"]]).median()
    assert sorted(zip(v["guideline"], v["msize_bytes"], strict=True)) == [
        ("PP-GL1", 4), ("PP-GL1", 1024), ("PP-GL2", 4), ("PP-GL2", 1024)]
    sides = {"PP-GL1": ("sendrecv", "send_recv"), "PP-GL2": ("send_recv", "isend_irecv")}
    for row in v.itertuples():
        a, b = sides[row.guideline]
        assert (row.a, row.b) == (a, b)
        assert (row.n_a, row.n_b) == (SMALL_RUNS, SMALL_RUNS)
        # the sides share every launch: the geometric mean of the per-launch ratios, with its interval
        la, lb = log_medians.loc[(a, row.msize_bytes)], log_medians.loc[(b, row.msize_bytes)]
        assert row.ratio == pytest.approx(math.exp(np.mean(la.to_numpy() - lb.to_numpy())), rel=1e-6)
        assert row.design == "paired by launch" and row.low <= row.ratio <= row.high
        # a verdict only where the interval is clear of 1 + tolerance
        assert {"PASS": row.high < 1.05, "VIOLATED": row.low > 1.05, "INCONCLUSIVE": True}[row.verdict]


def test_report_html_and_md(small_run):
    path = small_run[0]
    meta = json.loads((path / "meta.json").read_text())
    html = (path / "report.html").read_text()
    assert meta["run_id"] in html
    assert "Guideline verdicts" in html and "PP-GL1" in html and "PP-GL2" in html
    assert "MPICH Version: " in html  # first line of the library version, whitespace collapsed
    assert '<img src="plots/latency.png"' in html
    assert "2 ok, 0 not ok" in html
    assert "Launches not completed" not in html
    md = (path / "report.md").read_text()
    for variant in VARIANTS:
        assert f"## Latency of {variant} (microseconds, mean of launch medians)" in md
    assert md.count("| size | mpich |") == len(VARIANTS)
    assert md.count("| 4 B | ") == len(VARIANTS) and md.count("| 1 KiB | ") == len(VARIANTS)
    assert "![latency](plots/latency.png)" in md


def test_meta_command_records_the_given_arguments(small_run):
    meta = json.loads((small_run[0] / "meta.json").read_text())
    assert meta["command"][-2:] == ["--output", str(small_run[0])]


# ---------------------------------------------------------------- analyze

def test_analyze_recomputes_the_same_tables(small_run, small_run_copy, cli):
    for name in ("measurements.csv", "summary.csv", "verdicts.csv", "report.html", "plots/latency.png"):
        (small_run_copy / name).unlink()
    res = cli(["analyze", str(small_run_copy)])
    assert res.rc == 0, res.text
    for name in ("measurements.csv", "summary.csv", "verdicts.csv"):
        assert (small_run_copy / name).read_text() == (small_run[0] / name).read_text(), name
    assert (small_run_copy / "plots/latency.png").is_file()
    assert (small_run_copy / "report.html").is_file()


def test_analyze_with_reps_samples(small_run_copy, cli):
    res = cli(["analyze", str(small_run_copy), "--samples", "reps", "--tolerance", "0.1"])
    assert res.rc == 0, res.text
    meta = json.loads((small_run_copy / "meta.json").read_text())
    assert meta["analysis"] == {"samples": "reps", "tolerance": 0.1, "alpha": 0.05, "looks": 1, "adaptive": None}
    v = pd.read_csv(small_run_copy / "verdicts.csv")
    assert len(v) == 4
    assert (v["n_a"] == SMALL_RUNS * RULE_NREP).all() and (v["n_b"] == SMALL_RUNS * RULE_NREP).all()
    assert (v["design"] == "unpaired").all()  # every repetition a sample of its side
    for row in v.itertuples():  # a verdict only where the interval is clear of the new 1 + tolerance
        assert {"PASS": row.high < 1.1, "VIOLATED": row.low > 1.1, "INCONCLUSIVE": True}[row.verdict]


def test_analyze_rejects_bad_alpha(small_run_copy, cli):
    res = cli(["analyze", str(small_run_copy), "--alpha", "2"])
    assert res.rc == 2
    assert "bad --alpha" in res.err
    assert json.loads((small_run_copy / "meta.json").read_text())["analysis"]["alpha"] == 0.05


# ---------------------------------------------------------------- nrep estimation

def test_nrep_estimate_run(mpich_build, tmp_path, cli):
    path = tmp_path / "est"
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "2", "--sizes", "4,1k", "--nrep", "estimate",
               "--calib-max", "0.2", "--nrep-max", "500", "--output", str(path)])
    assert res.rc == 0, res.text
    launches = read_launches(path)
    assert [(x["id"], x["phase"], x["status"]) for x in launches] == [
        ("mpich-pp-cal0", "calibrate", "ok"), ("mpich-pp-cal1", "calibrate", "ok"),
        ("mpich-pp-r0", "measure", "ok"), ("mpich-pp-r1", "measure", "ok")]
    assert all("--calibrate-only" in x["args"] for x in launches[:2])
    assert not any("--calibrate-only" in x["args"] for x in launches[2:])
    assert all(x["args"][x["args"].index("--calib-max") + 1] == "0.2" for x in launches)

    t1 = []
    for x in launches[:2]:
        cal = rawfile.parse(path / x["raw"])
        assert cal.complete and cal.header["nrep_method"] == "estimate"
        assert cal.rows == [] and cal.estimates == {}
        # The calibration stops when the RSE target is met (never before 10 repetitions) or at --calib-max
        # (after any number of them): which one happens depends on the machine, each has its invariant.
        reps, converged = int(cal.header["t_nrep1_reps"]), cal.header["t_nrep1_converged"] == "1"
        assert reps >= 1
        if converged:
            assert reps >= 10 and float(cal.header["t_nrep1_rse"]) <= 0.01  # written with 6 decimals
        t1.append(float(cal.header["t_nrep1"]))
    assert min(t1) > 0

    total = 0
    for x in launches[2:]:
        raw = rawfile.parse(path / x["raw"])
        assert raw.complete
        assert "t_nrep1" not in raw.header  # t1 came from the calibration launches
        expected_configs = {f"{v} {s} {s // 4}" for s in (4, 1024) for v in VARIANTS}
        assert set(raw.estimates) == expected_configs
        df = raw.frame()
        need = {}  # size -> each variant's own estimate
        for config, est in raw.estimates.items():
            variant, size, _ = config.split()
            nrep = int(est["nrep"])
            assert 10 <= nrep <= 500
            assert int(est["batch_reps"]) in (5, 10)
            assert float(est["l_min"]) > 0
            need.setdefault(int(size), {})[variant] = nrep
        # The variants of a size are measured interleaved, so all of them run the largest estimate.
        for size, per_variant in need.items():
            for variant in per_variant:
                rows = df[(df["variant"] == variant) & (df["msize_bytes"] == size)]
                assert len(rows) == max(per_variant.values())
                total += len(rows)
        # The measurement launch got the largest calibrated t_nrep1.
        first = (path / "logs" / f"{x['id']}.log").read_text().splitlines()[0]
        assert f"--t1 {max(t1):.9e}" in first
    m = pd.read_csv(path / "measurements.csv")
    assert len(m) == total
    assert set(m["launch_id"]) == {"mpich-pp-r0", "mpich-pp-r1"}
