"""analysis.py and report.py through `mpiguide analyze` on synthetic run directories with known answers."""

from __future__ import annotations

import json
import math
from itertools import combinations

import pandas as pd
import pytest

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


def exact_p_greater(a: list[float], b: list[float]) -> float:
    """One-sided rank-sum p-value by enumerating every relabelling (no ties): independent of scipy."""
    def u(x, y):
        return sum(1 for xi in x for yi in y if xi > yi)
    pooled, n, observed = a + b, len(a), u(a, b)
    hits = total = 0
    for idx in combinations(range(len(pooled)), n):
        rest = [pooled[i] for i in range(len(pooled)) if i not in idx]
        hits += u([pooled[i] for i in idx], rest) >= observed
        total += 1
    return hits / total


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
    assert gl1_4.ratio == pytest.approx(2.0, rel=1e-6)
    assert gl1_4.p_value == pytest.approx(1 / 252, rel=1e-6)

    gl2_4 = v[("PP-GL2", 4)]
    assert gl2_4.verdict == "PASS" and gl2_4.ratio == pytest.approx(1.0, rel=1e-6)

    gl1_64 = v[("PP-GL1", 64)]
    assert gl1_64.verdict == "PASS" and gl1_64.ratio == pytest.approx(0.5, rel=1e-6)
    assert gl1_64.p_value == pytest.approx(1.0)

    gl2_64 = v[("PP-GL2", 64)]
    send_recv_64 = [3 * b for b in BASE]
    assert gl2_64.ratio == pytest.approx(sum(send_recv_64) / sum(NOISY), rel=1e-6)
    assert gl2_64.ratio > 1.05
    assert gl2_64.p_value == pytest.approx(exact_p_greater(send_recv_64, NOISY), rel=1e-6)
    assert gl2_64.p_value > 0.05
    assert gl2_64.verdict == "INCONCLUSIVE"

    text = res.text
    assert "guideline verdicts: INCONCLUSIVE 1, PASS 2, VIOLATED 1" in text
    assert ("VIOLATED PP-GL1 (MPI_Sendrecv is no slower than MPI_Send followed by MPI_Recv) at stack=fake, "
            "nprocs=2, msize_bytes=4: ratio 2.00, p=0.00397") in text


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
    assert "| PP-GL1 | fake | 4 | sendrecv | send_recv | VIOLATED | 2 | 0.00397 |" in md
    html = (synthetic_run / "report.html").read_text()
    assert "VIOLATED" in html and "INCONCLUSIVE" in html
    assert (synthetic_run / "plots" / "latency.png").read_bytes()[:4] == b"\x89PNG"


def test_only_ok_measure_launches_are_analyzed(synthetic_run, cli):
    data = json.loads((synthetic_run / "launches.json").read_text())
    data["launches"][4]["status"] = "failed"
    (synthetic_run / "launches.json").write_text(json.dumps(data))
    assert cli(["analyze", str(synthetic_run)]).rc == 0
    v = verdict_rows(synthetic_run)[("PP-GL1", 4)]
    assert (v.n_a, v.n_b) == (4, 4)
    assert v.p_value == pytest.approx(1 / math.comb(8, 4), rel=1e-6)
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
