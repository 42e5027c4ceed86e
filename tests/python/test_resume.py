"""Interrupted, crashed and timed-out runs, and --resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pandas as pd
import pytest

from conftest import MPIGUIDE_EXE, read_launches
from mpiguide import rawfile

POLL_LIMIT_S = 300  # only a guard against hanging forever, never an assertion about speed


def wait_for(predicate, proc: subprocess.Popen, what: str):
    deadline = time.monotonic() + POLL_LIMIT_S
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"mpiguide ended (exit {proc.returncode}) before {what}:\n{out}\n{err}")
        time.sleep(0.02)
    proc.kill()
    pytest.fail(f"gave up waiting for {what}")


def start_mpiguide(args: list[str], cwd) -> subprocess.Popen:
    """The real CLI in its own process. SIGINT is reset to its default first: a shell that starts the test suite
    in the background (nohup, `cmd &` without job control) makes children ignore it, and Python keeps it ignored."""
    return subprocess.Popen([str(MPIGUIDE_EXE), *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def launch_statuses(run_dir):
    try:
        return {x["id"]: x["status"] for x in read_launches(run_dir)}
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def first_running(run_dir):
    """The first launch that is not ok yet, once an earlier one is ok and its raw file has been started."""
    statuses = launch_statuses(run_dir)
    ok = [lid for lid, st in statuses.items() if st == "ok"]
    nxt = next((lid for lid, st in statuses.items() if st != "ok"), None)
    if ok and nxt and (run_dir / f"raw/mpich/{nxt}.txt").exists():
        return nxt
    return None


NREP = 3000
ROWS_PER_LAUNCH = 2 * 3 * NREP  # sizes 4 and 1m, three variants


def signal_and_wait(proc, sig) -> tuple[str, str]:
    """Sends sig to the running mpiguide and collects its output; never leaves it running."""
    try:
        proc.send_signal(sig)
        return proc.communicate(timeout=POLL_LIMIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_sigint_keeps_finished_launches_and_resume_completes(mpich_build, tmp_path, cli):
    run = tmp_path / "run"
    proc = start_mpiguide(["run", "pingpong", "--stacks", "mpich", "--runs", "4", "--sizes", "4,1m",
                           "--nrep", str(NREP), "--output", str(run)], tmp_path)
    try:
        running = wait_for(lambda: first_running(run), proc, "a finished launch and a started one")
    except BaseException:
        proc.kill()
        raise
    out, err = signal_and_wait(proc, signal.SIGINT)
    assert proc.returncode == 130, out + err
    assert "interrupted" in err and f"mpiguide run --resume {run}" in " ".join(err.split())

    launches = read_launches(run)
    statuses = [x["status"] for x in launches]
    ok_ids = [x["id"] for x in launches if x["status"] == "ok"]
    assert ok_ids and len(ok_ids) < 4, statuses
    # Finished launches first, then at most one interrupted, then pending ones.
    n_ok = len(ok_ids)
    assert statuses[:n_ok] == ["ok"] * n_ok
    assert all(st in ("interrupted", "pending") for st in statuses[n_ok:])
    assert statuses.count("interrupted") <= 1
    assert all(st == "pending" for st in statuses[n_ok + 1:])
    for x in launches:
        if x["status"] == "interrupted":
            assert x["message"] == "interrupted; rerun with --resume"
            assert x["attempts"] == 1
    # The launch that was running when we pressed Ctrl-C left a partial raw file (or finished just in time).
    by_id = {x["id"]: x for x in launches}
    assert by_id[running]["status"] in ("interrupted", "ok")
    partial = {}
    for x in launches[n_ok:]:
        raw = run / x["raw"]
        if raw.exists():
            partial[x["id"]] = raw.read_text()
            assert not rawfile.parse(raw).complete
    if by_id[running]["status"] == "interrupted":
        assert running in partial

    m = pd.read_csv(run / "measurements.csv")
    assert len(m) == n_ok * ROWS_PER_LAUNCH
    assert sorted(set(m["launch_id"])) == sorted(ok_ids)
    html = (run / "report.html").read_text()
    assert f"{n_ok} ok, {4 - n_ok} not ok" in html
    assert "Launches not completed" in html

    before = {x["id"]: x["status"] for x in launches}
    res = cli(["run", "--resume", str(run)])
    assert res.rc == 0, res.text
    assert f"run {run}: {4 - n_ok} launch(es) to go of 4" in res.text
    launches = read_launches(run)
    assert [x["status"] for x in launches] == ["ok"] * 4
    for x in launches:
        assert x["attempts"] == (2 if before[x["id"]] == "interrupted" else 1), x
        assert rawfile.parse(run / x["raw"]).complete
    for lid, text in partial.items():
        kept = run / f"raw/mpich/{lid}.attempt1.txt"
        assert kept.read_text() == text  # the earlier attempt is kept, never overwritten
    m = pd.read_csv(run / "measurements.csv")
    assert len(m) == 4 * ROWS_PER_LAUNCH
    assert sorted(set(m["launch_id"])) == [f"mpich-pp-r{i}" for i in range(4)]
    assert (m.groupby("launch_id").size() == ROWS_PER_LAUNCH).all()


def test_sigterm_stops_the_running_launch(tmp_path, mpich_build):
    run = tmp_path / "run"
    pidfile = tmp_path / "launcher.pid"
    template = f"sh -c 'echo $$ > {pidfile}; exec sleep 600' {{prog}}"
    proc = start_mpiguide(["run", "pingpong", "--stacks", "mpich", "--runs", "2", "--sizes", "4",
                           "--launcher-template", template, "--output", str(run)], tmp_path)
    try:
        pid = int(wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), proc, "the launcher's pid"))
    except BaseException:
        proc.kill()
        raise
    out, err = signal_and_wait(proc, signal.SIGTERM)
    assert proc.returncode == 130, out + err
    assert not os.path.exists(f"/proc/{pid}")  # the launch's process group was ended and reaped
    assert [(x["status"], x["attempts"]) for x in read_launches(run)] == [("interrupted", 1), ("pending", 0)]


def test_crashed_driver(mpich_build, tmp_path, cli):
    run = tmp_path / "run"
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "2", "--sizes", "4", "--launcher-template",
               "sh -c 'echo driver crashed; exit 7' {prog}", "--output", str(run)])
    assert res.rc == 1, res.text
    assert "2 launch(es) did not complete" in res.text
    assert f"mpiguide run --resume {run}" in res.text
    for x in read_launches(run):
        assert (x["status"], x["returncode"], x["attempts"]) == ("failed", 7, 1)
        assert "exit code 7, raw output incomplete" in x["message"]
        assert "driver crashed" in x["message"]  # the tail of the launch's log
        assert not (run / x["raw"]).exists()
        assert "driver crashed" in (run / "logs" / f"{x['id']}.log").read_text()
    html = (run / "report.html").read_text()
    assert "0 ok, 2 not ok" in html
    assert "Launches not completed" in html and "exit code 7" in html
    assert (run / "report.md").is_file()
    assert not (run / "plots").exists()


def test_failed_attempt_is_kept_and_resume_succeeds(mpich_build, tmp_path, cli):
    """The first launch writes a partial raw file and dies; the second works; --resume redoes the first."""
    run = tmp_path / "run"
    mark = tmp_path / "crashed-once"
    script = (f"out=; for a in \"$@\"; do out=$a; done; "
              f"if [ ! -e {mark} ]; then touch {mark}; printf \"#@mpiguide_raw=1\\n#@driver=fake\\n\" > \"$out\"; "
              f"exit 7; fi; exec \"$@\"")
    template = f"sh -c '{script}' sh {{mpiexec}} -n {{np}} {{prog}} {{args}}"
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "2", "--sizes", "4", "--nrep", "7",
               "--launcher-template", template, "--output", str(run)])
    assert res.rc == 1, res.text
    first, second = read_launches(run)
    assert (first["status"], first["returncode"], second["status"]) == ("failed", 7, "ok")
    assert "exit code 7, raw output incomplete" in first["message"]
    assert rawfile.parse(run / first["raw"]).header["driver"] == "fake"
    assert len(pd.read_csv(run / "measurements.csv")) == 3 * 7  # the second launch only

    res = cli(["run", "--resume", str(run)])
    assert res.rc == 0, res.text
    first, second = read_launches(run)
    assert (first["status"], first["attempts"], second["attempts"]) == ("ok", 2, 1)
    kept = run / "raw/mpich/mpich-pp-r0.attempt1.txt"
    assert kept.read_text() == "#@mpiguide_raw=1\n#@driver=fake\n"
    assert rawfile.parse(run / first["raw"]).header["driver"] == "pingpong"
    m = pd.read_csv(run / "measurements.csv")
    assert len(m) == 2 * 3 * 7
    assert sorted(set(m["launch_id"])) == ["mpich-pp-r0", "mpich-pp-r1"]


def test_launch_timeout(mpich_build, tmp_path, cli):
    run = tmp_path / "run"
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "1", "--sizes", "4", "--timeout", "1",
               "--launcher-template", "sh -c 'exec sleep 600' {prog}", "--output", str(run)])
    assert res.rc == 1, res.text
    [x] = read_launches(run)
    assert x["status"] == "failed" and x["returncode"] is None
    assert x["message"] == f"killed after the 1 s launch timeout (see {run / 'logs/mpich-pp-r0.log'})"
    assert x["attempts"] == 1


def test_resume_of_a_finished_run_runs_nothing(small_run_copy, cli):
    before = (small_run_copy / "raw/mpich/mpich-pp-r0.txt").read_text()
    res = cli(["run", "--resume", str(small_run_copy)])
    assert res.rc == 0, res.text
    assert "0 launch(es) to go of 2" in res.text
    assert [x["attempts"] for x in read_launches(small_run_copy)] == [1, 1]
    assert (small_run_copy / "raw/mpich/mpich-pp-r0.txt").read_text() == before
    assert not list(small_run_copy.glob("raw/mpich/*.attempt*"))


def test_failed_launch_output_with_brackets(mpich_build, tmp_path, cli):
    run = tmp_path / "run"
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "1", "--sizes", "4", "--launcher-template",
               "sh -c 'echo \"[/usr/lib/libfoo.so] cannot map segment\"; exit 7' {prog}", "--output", str(run)])
    assert res.rc == 1
    assert "[/usr/lib/libfoo.so] cannot map segment" in res.err
    assert (run / "report.html").is_file()
