"""analysis.py and report.py through `mpiguide analyze` on synthetic run directories with known answers."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from scipy import stats as sps

from conftest import VARIANTS, write_synthetic_run

BASE = [1.00e-6, 1.01e-6, 1.02e-6, 1.03e-6, 1.04e-6]  # launch medians of the reference side
NOISY = [3.05e-6, 3.6e-6, 2.4e-6, 2.7e-6, 2.2e-6]


def synthetic_time(variant: str, size: int, launch: int) -> float:
    """size 4: sendrecv twice as slow as send_recv (PP-GL1 violated), isend_irecv equal (PP-GL2 passes).
    size 64: sendrecv half of send_recv (PP-GL1 passes); send_recv slower than a noisy isend_irecv
    by ~10 % without significance (PP-GL2 inconclusive)."""
    b = BASE[launch]
    if size == 4:
        return {"send_recv": b, "sendrecv": 2 * b, "isend_irecv": b}[variant]
    return {"send_recv": 3 * b, "sendrecv": 1.5 * b, "isend_irecv": NOISY[launch]}[variant]


@pytest.fixture
def synthetic_run(tmp_path):
    return write_synthetic_run(tmp_path / "syn", synthetic_time)


def verdict_rows(path) -> dict:
    v = pd.read_csv(path / "verdicts.csv")
    return {(r.guideline, r.msize_bytes): r for r in v.itertuples()}


def test_analyze_synthetic_verdicts(synthetic_run, cli):
    res = cli(["analyze", str(synthetic_run)])
    assert res.rc == 0, res.text
    v = verdict_rows(synthetic_run)
    assert set(v) == {("PP-GL1", 4), ("PP-GL1", 64), ("PP-GL2", 4), ("PP-GL2", 64)}

    gl1_4 = v[("PP-GL1", 4)]
    assert (gl1_4.verdict, gl1_4.n_a, gl1_4.n_b, gl1_4.a, gl1_4.b) == ("VIOLATED", 5, 5, "sendrecv", "send_recv")
    # every launch says exactly 2: no spread, so the interval is the point and the p-value 0
    assert gl1_4.ratio == pytest.approx(2.0, rel=1e-6) and (gl1_4.low, gl1_4.high) == pytest.approx((2.0, 2.0))
    assert gl1_4.p_value == 0.0 and gl1_4.design == "paired by launch"

    gl2_4 = v[("PP-GL2", 4)]
    assert gl2_4.verdict == "PASS" and gl2_4.ratio == pytest.approx(1.0, rel=1e-6)

    gl1_64 = v[("PP-GL1", 64)]
    assert gl1_64.verdict == "PASS" and gl1_64.ratio == pytest.approx(0.5, rel=1e-6)
    assert gl1_64.p_value == pytest.approx(1.0 * 1.05 * 3 / 4)  # p = 1, adjusted as below

    # per launch d = log(3 b / noisy): mean, Student's t on 4 degrees of freedom (four points: too few to
    # moderate), then the family's two-stage step-up: Benjamini-Hochberg ranks it 2nd of 4 (q = 2p), stage
    # one rejects only PP-GL1 at 4 bytes (m0 = 3), and the adjusted value is q (1 + alpha) m0 / m
    gl2_64 = v[("PP-GL2", 64)]
    d = [math.log(3 * b / n) for b, n in zip(BASE, NOISY, strict=True)]
    mean = sum(d) / 5
    se = math.sqrt(sum((x - mean) ** 2 for x in d) / 4 / 5)
    p = sps.t.sf((mean - math.log(1.05)) / se, 4)
    assert gl2_64.ratio == pytest.approx(math.exp(mean), rel=1e-6) and gl2_64.ratio > 1.05
    half = sps.t.ppf(0.95, 4) * se
    assert (gl2_64.low, gl2_64.high) == pytest.approx((math.exp(mean - half), math.exp(mean + half)))
    assert gl2_64.p_value == pytest.approx(2 * p * 1.05 * 3 / 4, rel=1e-6)
    assert gl2_64.verdict == "INCONCLUSIVE" and "holds 1 + tolerance" in gl2_64.reason

    text = res.text
    assert "guideline verdicts: INCONCLUSIVE 1, PASS 2, VIOLATED 1" in text
    assert ("VIOLATED PP-GL1 (MPI_Sendrecv is no slower than MPI_Send followed by MPI_Recv) at stack=fake, "
            "nprocs=2, msize_bytes=4: ratio 2.00 (x2 to x2, q=0)") in text


def test_analyze_synthetic_summary(synthetic_run, cli):
    assert cli(["analyze", str(synthetic_run)]).rc == 0
    s = pd.read_csv(synthetic_run / "summary.csv").set_index(["variant", "msize_bytes"])
    assert len(s) == len(VARIANTS) * 2
    assert (s["launches"] == 5).all() and (s["nrep"] == 5).all()
    mean_base = sum(BASE) / 5
    assert s.loc[("sendrecv", 4), "mean_s"] == pytest.approx(2 * mean_base, rel=1e-6)
    assert s.loc[("sendrecv", 4), "min_s"] == pytest.approx(2 * BASE[0], rel=1e-6)
    assert s.loc[("sendrecv", 4), "max_s"] == pytest.approx(2 * BASE[-1], rel=1e-6)
    assert s.loc[("isend_irecv", 64), "mean_s"] == pytest.approx(sum(NOISY) / 5, rel=1e-6)
    assert s.loc[("isend_irecv", 64), "min_s"] == pytest.approx(min(NOISY), rel=1e-6)
    assert s.loc[("isend_irecv", 64), "max_s"] == pytest.approx(max(NOISY), rel=1e-6)
    m = pd.read_csv(synthetic_run / "measurements.csv")
    assert len(m) == 5 * 2 * 3 * 5
    assert set(m["stack"]) == {"fake"}


def test_analyze_synthetic_report(synthetic_run, cli):
    assert cli(["analyze", str(synthetic_run)]).rc == 0
    md = (synthetic_run / "report.md").read_text()
    assert "| host | testhost (Test CPU, 2 cores) |" in md
    assert "| commit | 0123456789ab |" in md
    assert "| fake | Fake MPI 1.0 | prefix | cc 1.0 |" in md
    assert "| launches | 5 ok, 0 not ok |" in md
    # Latency of sendrecv in microseconds: the mean launch median 2 * 1.02 us.
    sendrecv = md.split("## Latency of sendrecv", 1)[1].split("##", 1)[0]
    assert "| 4 B | 2.04 |" in sendrecv
    assert "| PP-GL1 | fake | 4 | sendrecv | send_recv | VIOLATED | 2 | 2 | 2 | 0 | paired by launch |  |" in md
    html = (synthetic_run / "report.html").read_text()
    assert "VIOLATED" in html and "INCONCLUSIVE" in html
    assert (synthetic_run / "plots" / "latency.png").read_bytes()[:4] == b"\x89PNG"


def test_only_ok_measure_launches_are_analyzed(synthetic_run, cli):
    data = json.loads((synthetic_run / "launches.json").read_text())
    data["launches"][4]["status"] = "failed"
    (synthetic_run / "launches.json").write_text(json.dumps(data))
    assert cli(["analyze", str(synthetic_run)]).rc == 0
    v = verdict_rows(synthetic_run)[("PP-GL1", 4)]
    assert (v.n_a, v.n_b) == (4, 4) and v.verdict == "VIOLATED"
    m = pd.read_csv(synthetic_run / "measurements.csv")
    assert sorted(set(m["launch"])) == [0, 1, 2, 3]
    assert "Launches not completed" in (synthetic_run / "report.html").read_text()


def test_samples_reps_changes_the_sample_size(synthetic_run, cli):
    assert cli(["analyze", str(synthetic_run), "--samples", "reps"]).rc == 0
    v = verdict_rows(synthetic_run)[("PP-GL1", 4)]
    assert (v.n_a, v.n_b) == (25, 25)
    assert v.verdict == "VIOLATED" and v.ratio == pytest.approx(2.0, rel=1e-6)
    assert json.loads((synthetic_run / "meta.json").read_text())["analysis"]["samples"] == "reps"


def test_tolerance_turns_a_violation_into_a_pass(synthetic_run, cli):
    assert cli(["analyze", str(synthetic_run), "--tolerance", "1.5"]).rc == 0
    assert set(pd.read_csv(synthetic_run / "verdicts.csv")["verdict"]) == {"PASS"}


def test_config_errors_csv(synthetic_run, cli):
    raw = synthetic_run / "raw/fake/fake-pp-r2.txt"
    raw.write_text(raw.read_text().replace("#@end=ok", "#@error[isend_irecv 64 16]=received data differs from "
                                                       "what was sent\n#@end=errors"))
    assert cli(["analyze", str(synthetic_run)]).rc == 0
    errors = pd.read_csv(synthetic_run / "config_errors.csv")
    assert errors.to_dict("records") == [{"stack": "fake", "launch_id": "fake-pp-r2", "config": "isend_irecv 64 16",
                                          "error": "received data differs from what was sent"}]
    assert "Configurations that failed their data check" in (synthetic_run / "report.html").read_text()
    # Removing the error again removes the table.
    raw.write_text(raw.read_text().replace("#@error[isend_irecv 64 16]=received data differs from what was sent\n",
                                           ""))
    assert cli(["analyze", str(synthetic_run)]).rc == 0
    assert not (synthetic_run / "config_errors.csv").exists()


def test_one_variant_only_gives_no_verdicts(tmp_path, cli):
    path = write_synthetic_run(tmp_path / "one", lambda v, s, i: BASE[i])
    data = json.loads((path / "launches.json").read_text())
    for x in data["launches"]:
        raw = path / x["raw"]
        raw.write_text("\n".join(line for line in raw.read_text().splitlines()
                                 if not line.startswith(("sendrecv", "isend_irecv"))) + "\n")
    res = cli(["analyze", str(path)])
    assert res.rc == 0, res.text
    assert pd.read_csv(path / "verdicts.csv").empty  # header only
    assert "guideline verdicts" not in res.text
    assert len(pd.read_csv(path / "summary.csv")) == 2  # send_recv at 4 and 64 bytes


def test_error_bars_are_never_negative():
    """The mean of equal values can round outside them (here by 1e-15); a missing bound gives no bar."""
    from mpiguide.core.charts import error_bars

    err = error_bars([1.0, 1.0, 1.0], [1.0 + 1e-15, 0.5, math.nan], [1.0 - 1e-15, 2.0, 1.5])
    assert err.tolist() == [[0.0, 0.5, 0.0], [0.0, 1.0, 0.5]]
