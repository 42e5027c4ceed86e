"""Interrupted, crashed and timed-out runs, and --resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pandas as pd
import pytest

from conftest import (
    MPIGUIDE_EXE,
    POLL_LIMIT_S,
    SPAWN_POINTS,
    own_processes,
    read_launches,
    running_with,
    signalled_at_spawn,
    start_mpiguide,
    wait_for,
)
from mpiguide.core import rawfile


def launch_statuses(run_dir):
    try:
        return {x["id"]: x["status"] for x in read_launches(run_dir)}
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


NREP = 5
ROWS_PER_LAUNCH = 2 * 3 * NREP  # sizes 4 and 1m, three variants


def signal_and_wait(proc, sig) -> tuple[str, str]:
    """Sends sig to the running mpiguide and collects its output; never leaves it running."""
    try:
        proc.send_signal(sig)
        return proc.communicate(timeout=POLL_LIMIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()


def stalling_template(tmp_path) -> tuple[str, object]:
    """A launcher whose second launch (of the whole run, resumes included) writes the start of a raw file and
    then waits forever; every other launch runs mpiexec. Ctrl-C then always meets one finished launch and one
    running one, however fast the machine is. Returns the template and the file holding the launch count."""
    count = tmp_path / "launch-count"
    script = (f"n=$(cat {count} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {count}; "
              "out=; for a in \"$@\"; do out=$a; done; "
              "if [ $n -eq 2 ]; then printf \"#@mpiguide_raw=1\\n#@driver=pingpong\\n\" > \"$out\"; "
              "exec sleep 600; fi; exec \"$@\"")
    return f"sh -c '{script}' sh {{mpiexec}} -n {{np}} {{prog}} {{args}}", count


def test_sigint_keeps_finished_launches_and_resume_completes(mpich_build, tmp_path, cli):
    run = tmp_path / "run"
    template, count = stalling_template(tmp_path)
    proc = start_mpiguide(["run", "pingpong", "--stacks", "mpich", "--runs", "4", "--sizes", "4,1m",
                           "--nrep", str(NREP), "--launcher-template", template, "--output", str(run)], tmp_path)
    partial_raw = run / "raw/mpich/mpich-pp-r1.txt"
    try:
        wait_for(lambda: count.exists() and count.read_text().strip() == "2" and partial_raw.exists(), proc,
                 "the second launch")
    except BaseException:
        proc.kill()
        raise
    out, err = signal_and_wait(proc, signal.SIGINT)
    assert proc.returncode == 130, out + err
    assert "interrupted" in err and f"mpiguide run --resume {run}" in " ".join(err.split())

    launches = read_launches(run)
    assert [x["status"] for x in launches] == ["ok", "interrupted", "pending", "pending"]
    interrupted = launches[1]
    assert (interrupted["message"], interrupted["attempts"]) == ("interrupted; rerun with --resume", 1)
    partial = partial_raw.read_text()
    assert not rawfile.parse(partial_raw).complete

    m = pd.read_csv(run / "measurements.csv")
    assert len(m) == ROWS_PER_LAUNCH and set(m["launch_id"]) == {"mpich-pp-r0"}
    html = (run / "report.html").read_text()
    assert "1 ok, 3 not ok" in html
    assert "Launches not completed" in html

    res = cli(["run", "--resume", str(run)])
    assert res.rc == 0, res.text
    assert f"run {run}: 3 launch(es) to go of 4" in res.text
    launches = read_launches(run)
    assert [(x["status"], x["attempts"]) for x in launches] == [("ok", 1), ("ok", 2), ("ok", 1), ("ok", 1)]
    for x in launches:
        assert rawfile.parse(run / x["raw"]).complete
    assert (run / "raw/mpich/mpich-pp-r1.attempt1.txt").read_text() == partial  # kept, never overwritten
    m = pd.read_csv(run / "measurements.csv")
    assert len(m) == 4 * ROWS_PER_LAUNCH
    assert sorted(set(m["launch_id"])) == [f"mpich-pp-r{i}" for i in range(4)]
    assert (m.groupby("launch_id").size() == ROWS_PER_LAUNCH).all()


@pytest.mark.parametrize("point", [pytest.param(p, marks=pytest.mark.skipif(
    p == "fork" and not hasattr(subprocess, "_fork_exec"), reason="this Python's subprocess has no _fork_exec"))
    for p in SPAWN_POINTS])
def test_sigint_while_a_launch_starts_records_it_interrupted_and_stops_it(mpich_build, tmp_path, point):
    """Issue 44: Ctrl-C at the exact moment the launch's process exists but the runner does not wait on it yet
    (right after the fork inside subprocess.Popen, or as Popen returns it). The launch is recorded interrupted,
    not pending (its attempt counts, its partial output is kept), and its processes end with mpiguide."""
    run = tmp_path / "run"
    with own_processes("runner-sigint-start") as marker:
        code = signalled_at_spawn(point, signal.SIGINT, marker) + (
            "import sys\nfrom mpiguide.cli import main\nsys.exit(main(sys.argv[1:]))\n")
        template = f"{sys.executable} -c 'import time; time.sleep(100000)' {marker} {{prog}}"
        res = subprocess.run([sys.executable, "-c", code, "run", "pingpong", "--stacks", "mpich", "--runs", "2",
                              "--sizes", "4", "--launcher-template", template, "--output", str(run)],
                             cwd=tmp_path, capture_output=True, text=True, timeout=POLL_LIMIT_S)
        assert res.returncode == 130, res.stdout + res.stderr
        assert [(x["status"], x["attempts"], x["message"]) for x in read_launches(run)] == [
            ("interrupted", 1, "interrupted; rerun with --resume"), ("pending", 0, "not started: interrupted")]
        assert running_with(marker) == []


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


# What Open MPI 5.0 prints when a process dies in its race inside MPI_Init (open-mpi/ompi#12495), shortened.
INIT_CRASH_LOG = """[n1:05826] *** Process received signal ***
[n1:05826] Signal: Segmentation fault (11)
[n1:05826] [ 1] /prefix/lib/libmpi.so.40(mca_pml_ob1_recv_frag_callback_match+0x95)[0x7fa35f878f25]
[n1:05826] [ 9] /prefix/lib/libmpi.so.40(ompi_mpi_init+0x425)[0x7fa35f691215]
[n1:05826] [10] /prefix/lib/libmpi.so.40(MPI_Init+0x4b)[0x7fa35f6c06db]
[n1:05826] *** End of error message ***
"""


def failing_template(tmp_path, failures: int, log: str, then: str) -> str:
    """A launcher whose first `failures` launches print `log` and then run the shell command `then`; the later
    ones run the driver."""
    (tmp_path / "failure.log").write_text(log)
    count = tmp_path / "failure-count"
    script = tmp_path / "launcher.sh"
    script.write_text(f"n=$(cat {count} 2>/dev/null || echo 0); echo $((n + 1)) > {count}\n"
                      f"if [ $n -lt {failures} ]; then cat {tmp_path / 'failure.log'}; {then}; fi\n"
                      'exec "$@"\n')
    return f"sh {script} {{mpiexec}} -n {{np}} {{prog}} {{args}}"


def crashing_template(tmp_path, crashes: int, log: str = INIT_CRASH_LOG) -> str:
    """A launcher whose first `crashes` launches print `log` and die by SIGSEGV; the later ones run the driver."""
    return failing_template(tmp_path, crashes, log, "kill -SEGV $$")


def test_a_second_crash_inside_mpi_init_fails_the_launch(mpich_build, tmp_path, cli):
    run = tmp_path / "run"
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "1", "--sizes", "4", "--launcher-template",
               crashing_template(tmp_path, 2), "--output", str(run)])
    assert res.rc == 1, res.text
    [x] = read_launches(run)
    assert (x["status"], x["returncode"], x["attempts"]) == ("failed", -11, 2)
    assert x["message"].startswith("exit code -11, raw output incomplete: ")
    assert x["message"].endswith("; a process crashed inside MPI_Init in attempt 1 "
                                 "(logs/mpich-pp-r0.attempt1.log), so it ran again")
    assert (run / "logs/mpich-pp-r0.log").is_file() and (run / "logs/mpich-pp-r0.attempt1.log").is_file()


# What Slurm's PMI-2 plugin printed when it dropped a segmented put of MPICH 5's MPI_Init (shortened).
PMI_DROP_LOG = """slurmstepd-n2: error: mpi/pmi2: value not properly terminated in client request
slurmstepd-n2: error: mpi/pmi2: request not begin with 'cmd='
slurmstepd-n2: error: mpi/pmi2: full request is: 3333333333
slurmstepd-n2: error: mpi/pmi2: invalid client request
"""


def hanging_template(tmp_path, hangs: int) -> str:
    """A launcher whose first `hangs` launches print PMI_DROP_LOG and then wait for ever, as MPI_Init does after
    such a drop; the later ones run the driver."""
    return failing_template(tmp_path, hangs, PMI_DROP_LOG, "exec sleep 100000")


@pytest.mark.parametrize("template, cause, in_log", [
    (crashing_template, "a process crashed inside MPI_Init", "ompi_mpi_init+0x425"),
    (hanging_template, "the process manager dropped a request of MPI_Init's exchange", "invalid client request"),
])
def test_a_launch_that_never_left_mpi_init_is_run_again_once(mpich_build, tmp_path, cli, template, cause, in_log):
    """A crash inside MPI_Init, or a dropped request of its exchange (the runner reads a running launch's log and
    stops it at once, not at its timeout, here the default 1800 s): the launch runs once more."""
    run = tmp_path / "run"
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "1", "--sizes", "4", "--nrep", "3",
               "--launcher-template", template(tmp_path, 1), "--output", str(run)])
    assert res.rc == 0, res.text
    [x] = read_launches(run)
    assert (x["status"], x["returncode"], x["attempts"]) == ("ok", 0, 2)
    assert x["message"] == f"{cause} in attempt 1 (logs/mpich-pp-r0.attempt1.log), so it ran again"
    assert in_log in (run / "logs/mpich-pp-r0.attempt1.log").read_text()
    assert len(pd.read_csv(run / "measurements.csv")) == 3 * 3


def test_a_second_dropped_start_up_fails_the_launch(mpich_build, tmp_path, cli):
    run = tmp_path / "run"
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "1", "--sizes", "4", "--launcher-template",
               hanging_template(tmp_path, 2), "--output", str(run)])
    assert res.rc == 1, res.text
    [x] = read_launches(run)
    assert (x["status"], x["returncode"], x["attempts"]) == ("failed", None, 2)
    assert x["message"].startswith("stopped: the process manager dropped a request of MPI_Init's exchange "
                                   "('mpi/pmi2: invalid client request'), so it would wait for ever")
    assert x["message"].endswith("; the process manager dropped a request of MPI_Init's exchange in attempt 1 "
                                 "(logs/mpich-pp-r0.attempt1.log), so it ran again")


def test_a_crash_after_mpi_init_is_not_run_again(mpich_build, tmp_path, cli):
    run = tmp_path / "run"
    after_init = INIT_CRASH_LOG.replace("ompi_mpi_init", "mg_bench_run").replace("MPI_Init+", "main+")
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "1", "--sizes", "4", "--launcher-template",
               crashing_template(tmp_path, 1, after_init), "--output", str(run)])
    assert res.rc == 1, res.text
    [x] = read_launches(run)
    assert (x["status"], x["returncode"], x["attempts"]) == ("failed", -11, 1)
    assert not list((run / "logs").glob("*.attempt*"))


def test_launch_timeout(mpich_build, tmp_path, cli):
    run = tmp_path / "run"
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "1", "--sizes", "4", "--timeout", "1",
               "--launcher-template", "sh -c 'exec sleep 600' {prog}", "--output", str(run)])
    assert res.rc == 1, res.text
    [x] = read_launches(run)
    assert x["status"] == "failed" and x["returncode"] is None
    assert x["message"] == f"killed after the 1 s launch timeout (see {run / 'logs/mpich-pp-r0.log'})"
    assert x["attempts"] == 1


def test_a_launcher_that_cannot_start_fails_its_launch(mpich_build, tmp_path, cli):
    run = tmp_path / "run"
    missing = tmp_path / "no-such-mpiexec"
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "1", "--sizes", "4", "--launcher-template",
               f"{missing} -n {{np}} {{prog}}", "--output", str(run)])
    assert res.rc == 1, res.text
    [x] = read_launches(run)
    assert (x["status"], x["message"]) == ("failed", f"cannot start {missing}: No such file or directory")


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


# ---------------------------------------------------------------- the end of a batch job's allocation

REFUSED = "srun: error: Unable to create step for job 1: Job/step already completing or completed"
CUT_OFF = "slurmstepd: error: *** STEP 1.1 ON n1 CANCELLED AT 2026-11-26T19:54:35 DUE TO TIME LIMIT ***"


def fake_command(bin_dir, name: str, body: str):
    """An executable `name` in bin_dir (a fake srun or squeue on PATH)."""
    bin_dir.mkdir(exist_ok=True)
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def fake_srun(tmp_path, second: str) -> tuple[object, object]:
    """An srun that counts its calls: the first runs its command (MPICH's mpiexec), the second ends as `second`
    says (a step the allocation's end cut off), every later one is refused as Slurm refuses steps in a job that
    is completing. Once the file `allowed` exists (a new allocation), every call runs its command."""
    count = tmp_path / "srun-calls"
    fake_command(tmp_path / "bin", "srun", f'n=$(cat {count} 2>/dev/null || echo 0); echo $((n+1)) > {count}\n'
                 f'if [ -e {tmp_path}/allowed ] || [ $n -eq 0 ]; then exec "$@"; fi\n'
                 f'if [ $n -eq 1 ]; then {second}; fi\n'
                 f'echo "{REFUSED}" >&2; exit 1\n')
    return count, tmp_path / "allowed"


@pytest.mark.parametrize("second, calls", [
    # Slurm's own words under the step, then no further launch is tried
    (f"echo '{CUT_OFF}' >&2; exit 143", 2),
    # a step that died without them (the other node's ranks killed first): the refusal after it tells
    ("echo 'srun: error: n2: task 1: Terminated' >&2; exit 143", 3),
])
def test_the_allocation_ending_leaves_the_rest_pending(mpich_build, tmp_path, cli, monkeypatch, second, calls):
    run = tmp_path / "run"
    count, allowed = fake_srun(tmp_path, second)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "5", "--sizes", "4", "--nrep", "5",
               "--launcher-template", "srun {mpiexec} -n {np} {prog} {args}", "--output", str(run)])
    assert res.rc == 130, res.text
    assert count.read_text().strip() == str(calls)  # nothing launched after the refusal or the cut-off step
    launches = read_launches(run)
    assert [(x["status"], x["attempts"]) for x in launches] == [
        ("ok", 1), ("interrupted", 1), ("pending", 0), ("pending", 0), ("pending", 0)]
    reason = (("job 1 was cancelled at 2026-11-26T19:54:35 due to its time limit") if calls == 2 else
              "job 1 is ending: srun starts no step in it any more (Job/step already completing or completed)")
    assert launches[1]["message"].startswith(f"cut off: {reason} (it ended: exit code 143")
    assert all(x["message"] == f"not started: {reason}" for x in launches[2:])
    why = reason if calls == 2 else f"{reason}; mpich-pp-r1, which failed just before, counts as cut off by it"
    assert f"the run stopped before its end: {why}. 1 of 5 launches are done; 1 interrupted, 3 pending" in res.text
    assert res.text.count("--resume") == 1 and f"continue with: mpiguide run --resume {run}" in res.text
    assert "did not complete" not in res.text and not (run / "report.html").exists()

    allowed.touch()  # the next allocation
    res = cli(["run", "--resume", str(run)])
    assert res.rc == 0, res.text
    assert [(x["status"], x["attempts"]) for x in read_launches(run)] == [("ok", 1), ("ok", 2)] + [("ok", 1)] * 3


def signalling_template(tmp_path, sig: str, then: str) -> str:
    """A launcher whose second launch sends `sig` to the runner (its parent) itself, then does `then`; every other
    launch runs mpiexec. The signal arrives while that launch runs, however fast the machine is."""
    count = tmp_path / "launch-count"
    script = fake_command(tmp_path / "bin", "signalling-launcher",
                          f'n=$(cat {count} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {count}\n'
                          f'if [ $n -eq 2 ]; then kill -{sig} $PPID; {then}; fi\n'
                          'exec "$@"\n')
    return f"{script} {{mpiexec}} -n {{np}} {{prog}} {{args}}"


def test_sigterm_mid_run_leaves_the_rest_pending(mpich_build, tmp_path):
    run = tmp_path / "run"
    template = signalling_template(tmp_path, "TERM", "exec sleep 600")
    proc = start_mpiguide(["run", "pingpong", "--stacks", "mpich", "--runs", "4", "--sizes", "4", "--nrep", "5",
                           "--launcher-template", template, "--output", str(run)], tmp_path)
    try:
        out, err = proc.communicate(timeout=POLL_LIMIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, out + err
    launches = read_launches(run)
    assert [(x["status"], x["attempts"]) for x in launches] == [
        ("ok", 1), ("interrupted", 1), ("pending", 0), ("pending", 0)]
    reason = "stopped by SIGTERM (the end of a batch job: its time limit or scancel; or a kill)"
    assert launches[1]["message"] == f"{reason}; rerun with --resume"
    assert all(x["message"] == f"not started: {reason}" for x in launches[2:])
    text = " ".join((out + err).split())
    assert text.count("--resume") == 1 and f"continue with: mpiguide run --resume {run}" in text
    assert not (run / "report.html").exists()


def test_sigterm_is_answered_before_the_launch_is_stopped(mpich_build, tmp_path):
    """A batch job's end leaves moments between SIGTERM and SIGKILL (Slurm's KillWait), and stopping a launch can
    take longer: the runner says where the run stopped before it stops the launch. The launch looks, when it is
    stopped, whether that is written already (by order of events, not by time)."""
    run, errors, told = tmp_path / "run", tmp_path / "stderr", tmp_path / "told-first"
    count = tmp_path / "launch-count"
    script = fake_command(tmp_path / "bin", "terming-launcher",
                          f'n=$(cat {count} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {count}\n'
                          'if [ $n -eq 2 ]; then\n'
                          f'  trap \'grep -q "the run stopped before its end" {errors} && touch {told}; exit 143\''
                          ' TERM\n'
                          '  sleep 600 & kill -TERM $PPID; wait\n'
                          'fi\n'
                          'exec "$@"\n')
    with open(errors, "w") as err:
        proc = subprocess.Popen([str(MPIGUIDE_EXE), "run", "pingpong", "--stacks", "mpich", "--runs", "3", "--sizes",
                                 "4", "--nrep", "5", "--launcher-template", f"{script} {{mpiexec}} -n {{np}} {{prog}} "
                                 "{args}", "--output", str(run)], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=err)
        try:
            proc.wait(timeout=POLL_LIMIT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    text = " ".join(errors.read_text().split())
    assert proc.returncode == 130, text
    assert told.exists(), text
    assert text.count("the run stopped before its end") == 1 and "1 of 3 launches are done; 1 interrupted, 1 pending" \
        in text


def test_slurms_warning_signal_lets_the_launch_finish(mpich_build, tmp_path):
    """sbatch --signal=B:USR1@SECONDS: the launch it came in completes, no other starts."""
    run = tmp_path / "run"
    template = signalling_template(tmp_path, "USR1", "true")
    proc = start_mpiguide(["run", "pingpong", "--stacks", "mpich", "--runs", "3", "--sizes", "4", "--nrep", "5",
                           "--launcher-template", template, "--output", str(run)], tmp_path)
    out, err = proc.communicate(timeout=POLL_LIMIT_S)
    assert proc.returncode == 130, out + err
    launches = read_launches(run)
    assert [x["status"] for x in launches] == ["ok", "ok", "pending"]
    assert launches[2]["message"] == "not started: SIGUSR1: the allocation ends soon (sbatch --signal)"
    assert (tmp_path / "launch-count").read_text().strip() == "2"


def test_a_job_past_its_end_time_starts_no_launch(mpich_build, tmp_path, cli, monkeypatch):
    run = tmp_path / "run"
    fake_command(tmp_path / "bin", "squeue", 'echo "COMPLETING 0:00"\n')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    monkeypatch.setenv("SLURM_JOB_END_TIME", "1")
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "2", "--sizes", "4", "--launcher-template",
               f"sh -c 'touch {tmp_path}/launched' {{prog}}", "--output", str(run)])
    assert res.rc == 130, res.text
    assert not (tmp_path / "launched").exists()
    assert [(x["status"], x["message"]) for x in read_launches(run)] == [
        ("pending", "not started: job 7 has reached its end time (squeue)")] * 2
    assert res.text.count("--resume") == 1
