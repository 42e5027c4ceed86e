"""Planning launches, the ctest mpiexec wrapper, `mpiguide build`, small report helpers, and gaps in
input validation, quoting and resume checks."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO, raw_text, read_launches, save_synthetic_run, synthetic_meta
from mpiguide.core import launch, measurements, runner
from mpiguide.core.stacks import Stack
from mpiguide.core.suite import LaunchTemplate
from mpiguide.suites import SUITES
from mpiguide.suites.pingpong import report

RULE = {"sync": "barrier", "nrep": "rule", "rse_calib": 0.01, "rse_batch": 0.05, "b1": 5, "b2": 5,
        "nrep_min": 10, "nrep_max": 10000, "calib_max": 10.0}
PARAMS = {"sizes": [4, 1024], "variants": ["send_recv", "sendrecv"], "datatype": "int"}


def test_plan_interleaves_stacks_by_launch_index():
    launches = runner.plan(SUITES.get("pingpong"), PARAMS, ["a", "b"], 2, RULE)
    assert [x.id for x in launches] == ["a-pp-r0", "b-pp-r0", "a-pp-r1", "b-pp-r1"]
    assert [x.run_index for x in launches] == [0, 0, 1, 1]
    assert [x.raw for x in launches] == ["raw/a/a-pp-r0.txt", "raw/b/b-pp-r0.txt", "raw/a/a-pp-r1.txt",
                                         "raw/b/b-pp-r1.txt"]
    assert all(x.phase == runner.MEASURE and x.status == runner.PENDING and x.attempts == 0 for x in launches)
    assert launches[0].args == ["--sizes", "4,1024", "--variants", "send_recv,sendrecv", "--datatype", "int",
                                "--sync", "barrier", "--nrep", "rule"]
    assert (launches[0].driver, launches[0].nprocs) == ("mg_pingpong", 2)


def test_plan_runs_a_templates_stacks_back_to_back():
    """Two stacks compared round by round must run each template seconds apart (a randomized block): the
    stacks of one template are adjacent, in a random order per template, and every launch is there once."""
    class Many:
        def launches(self, params):
            return [LaunchTemplate(f"t{k:02d}", "mg_ddtbench", 2, []) for k in range(12)]

    suite, params = Many(), {}
    stacks = ["a", "b", "c"]
    launches = runner.plan(suite, params, stacks, 3, {**RULE, "order_seed": 7})
    templates = [t.key for t in suite.launches(params)]
    assert sorted(x.id for x in launches) == sorted(f"{s}-{t}-r{i}" for s in stacks for t in templates
                                                     for i in range(3))
    firsts = set()
    for i in range(3):
        one = [x for x in launches if x.run_index == i]
        blocks = [one[k:k + len(stacks)] for k in range(0, len(one), len(stacks))]
        assert all(len({x.template for x in b}) == 1 and sorted(x.stack for x in b) == stacks for b in blocks)
        firsts |= {b[0].stack for b in blocks}
    assert firsts == set(stacks)  # no stack always first
    # a narrowed round leaves a stack's launch out without breaking the blocks of the others
    first = templates[0]
    narrowed = runner.plan(suite, params, stacks, 1, {**RULE, "order_seed": 7},
                           choose=lambda s, t: None if (s, t.key) == ("b", first) else t)
    assert len(narrowed) == len(templates) * 3 - 1
    assert [x.stack for x in narrowed if x.template == first] in (["a", "c"], ["c", "a"])
    pos = [k for k, x in enumerate(narrowed) if x.template == first]
    assert pos[1] == pos[0] + 1


def test_plan_estimate_calibrates_first():
    m = {**RULE, "nrep": "estimate", "sync": "dissem"}
    launches = runner.plan(SUITES.get("pingpong"), PARAMS, ["a"], 2, m)
    assert [(x.id, x.phase) for x in launches] == [("a-pp-cal0", "calibrate"), ("a-pp-cal1", "calibrate"),
                                                   ("a-pp-r0", "measure"), ("a-pp-r1", "measure")]
    common = ["--sync", "dissem", "--nrep", "estimate", "--rse-calib", "0.01", "--rse-batch", "0.05", "--b1", "5",
              "--b2", "5", "--nrep-min", "10", "--nrep-max", "10000", "--calib-max", "10.0"]
    assert launches[0].args[6:] == [*common, "--calibrate-only"]
    assert launches[2].args[6:] == common


def test_fixed_nrep_is_passed_to_the_driver():
    assert runner.measurement_args({**RULE, "nrep": 250}) == ["--sync", "barrier", "--nrep", "250"]


@pytest.mark.parametrize(("size", "text"), [(4, "4 B"), (1000, "1000 B"), (1024, "1 KiB"), (1536, "1536 B"),
                                            (65536, "64 KiB"), (1048576, "1 MiB"), (3 << 20, "3 MiB")])
def test_fmt_size(size, text):
    assert report.fmt_size(size) == text


# A stand-in for Open MPI's mpiexec: reports its session directory, leaves a file there as a killed
# prterun would, then exits with 5 or, given "block" (after the wrapper's own flags), tells the test it runs
# and waits to be stopped. The marker comes last: a test that stops the launch when it appears must not race
# the leftover's `touch`.
FAKE_MPIEXEC = """#!/bin/sh
d="$PRTE_MCA_prte_local_tmpdir_base"
[ -d "$d" ] || exit 9
touch "$d/pmix.leftover"
echo "$d" > "$MARKER.tmp"; mv "$MARKER.tmp" "$MARKER"
case " $* " in *" block "*) exec cat "$FIFO" ;; esac
exit 5
"""


def fake_openmpi(tmp_path, monkeypatch) -> Stack:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    prefix = tmp_path / "open mpi"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "mpiexec").write_text(FAKE_MPIEXEC)
    (prefix / "bin" / "mpiexec").chmod(0o755)
    return Stack(name="o", family="openmpi", prefix=str(prefix), source="prefix")


def cmake_wrapper(stack: Stack, path: Path, env: dict[str, str]) -> list[str]:
    """ctest's launcher as CMake writes it for the stack (cmake/mg_mpiexec.cmake in script mode); its lines."""
    launch_env = ";".join(f"{k}={v}" for k, v in env.items())
    subprocess.run(["cmake", f"-DOUT={path}", f"-DMPIEXEC={stack.mpiexec}", f"-DFAMILY={stack.family}",
                    f"-DENV={launch_env}", "-P", str(REPO / "cmake" / "mg_mpiexec.cmake")], check=True)
    assert os.access(path, os.X_OK)
    return path.read_text().splitlines()


def test_mpiexec_wrapper_for_openmpi(tmp_path, monkeypatch):
    stack = fake_openmpi(tmp_path, monkeypatch)
    path = tmp_path / "w" / "mg-mpiexec"
    lines = cmake_wrapper(stack, path, {**stack.env_additions(), "QUOTED": "it's $HOME"})
    assert lines[0] == "#!/bin/sh"
    assert "export OMPI_ALLOW_RUN_AS_ROOT='1'" in lines
    assert lines.count("export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1'") == 1
    assert "export QUOTED='it'\\''s $HOME'" in lines
    assert f"export PATH='{stack.bin}':\"$PATH\"" in lines
    assert lines[-1] == f"'{stack.mpiexec}' --oversubscribe \"$@\""
    # Each launch gets a session directory of its own, removed with what the launcher left in it,
    # and the launcher's exit status is the wrapper's; the environment arrives as it was given.
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "MARKER": str(tmp_path / "marker")}
    seen = []
    for _ in range(2):
        res = subprocess.run([str(path), "-n", "2", "prog"], env=env, capture_output=True, text=True, timeout=60)
        assert res.returncode == 5, res.stderr
        seen.append((tmp_path / "marker").read_text().strip())
        assert os.path.dirname(seen[-1]) == str(tmp)
        assert list(tmp.iterdir()) == []
    assert seen[0] != seen[1]
    res = subprocess.run(["sh", "-c", f". {shlex.quote(str(path))} 2>/dev/null; echo \"$QUOTED\""], env={
        **env, "PATH": "/usr/bin:/bin"}, capture_output=True, text=True)
    assert res.stdout.splitlines()[-1] == "it's $HOME"


def test_mpiexec_wrapper_for_mpich_adds_nothing(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "mpiexec").write_text("#!/bin/sh\nprintf '%s|' \"$@\" \"$PRTE_MCA_prte_local_tmpdir_base\"\n")
    (tmp_path / "bin" / "mpiexec").chmod(0o755)
    stack = Stack(name="m", family="mpich", prefix=str(tmp_path), source="prefix")
    lines = cmake_wrapper(stack, tmp_path / "mg-mpiexec", {})
    assert not any("OMPI" in x or "PRTE" in x for x in lines)
    res = subprocess.run([str(tmp_path / "mg-mpiexec"), "-n", "4", "a.out"], capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout == "-n|4|a.out||", res.stdout + res.stderr


def test_mpiexec_wrapper_cleans_up_when_stopped(tmp_path, monkeypatch):
    stack = fake_openmpi(tmp_path, monkeypatch)
    path = tmp_path / "mg-mpiexec"
    cmake_wrapper(stack, path, stack.env_additions())
    tmp, marker, fifo = tmp_path / "tmp", tmp_path / "marker", tmp_path / "fifo"
    tmp.mkdir()
    os.mkfifo(fifo)
    env = {**os.environ, "TMPDIR": str(tmp), "MARKER": str(marker), "FIFO": str(fifo)}
    keep_open = os.open(fifo, os.O_RDWR)  # a writer that never writes: the launcher's read blocks
    proc = subprocess.Popen([str(path), "block"], env=env, start_new_session=True)
    try:
        while not marker.exists():
            assert proc.poll() is None
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=60) == 143
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        os.close(keep_open)
    assert list(tmp.iterdir()) == []


def test_launch_env_gives_each_launch_its_session_directory(tmp_path, monkeypatch):
    stack = fake_openmpi(tmp_path, monkeypatch)
    with pytest.raises(RuntimeError), stack.launch_env() as env:
        session = env["PRTE_MCA_prte_local_tmpdir_base"]
        assert os.path.isdir(session)
        open(os.path.join(session, "pmix.leftover"), "w").close()
        raise RuntimeError
    assert not os.path.exists(session)
    mpich = Stack(name="m", family="mpich", prefix=str(tmp_path), source="prefix")
    with mpich.launch_env() as env:
        assert env == mpich.env()


def test_build_command_and_its_wrapper(cli, mpich_stack, mpich_build):
    res = cli(["build", "--stacks", "mpich"])
    assert res.rc == 0, res.text
    assert f"built {mpich_build} with {mpich_stack.mpicc}" in res.text
    assert os.access(mpich_build / "mg_pingpong", os.X_OK)
    # The wrapper ctest uses runs MPI programs with the stack's mpiexec.
    res = subprocess.run([str(mpich_build / "mg-mpiexec"), "-n", "2", str(mpich_build / "mg_pingpong"),
                          "--sizes", "4,1000", "--check-only"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "pingpong: 6 of 6 configurations passed the data check" in res.stderr


# ---------------------------------------------------------------- input checks and output formats

@pytest.mark.parametrize("extra", [["--nrep", "estimate", "--b1", "1"], ["--nrep", "estimate", "--rse-calib", "2"],
                                   ["--timeout", "0"]])
def test_run_validates_measurement_options(cli, tmp_path, extra):
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "1", "--dry-run", "--output", str(tmp_path / "o"),
               *extra])
    assert res.rc == 2
    assert extra[-2] in res.text


def test_timeout_message_keeps_fractional_seconds(mpich_build, tmp_path, cli):
    run = tmp_path / "run"
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "1", "--sizes", "4", "--timeout", "0.5",
               "--launcher-template", "sh -c 'exec sleep 600' {prog}", "--output", str(run)])
    assert res.rc == 1
    assert read_launches(run)[0]["message"].startswith("killed after the 0.5 s launch timeout")


def test_stack_env_output_is_valid_shell(temp_home, cli, tmp_path):
    prefix = tmp_path / "my mpi"
    (prefix / "bin").mkdir(parents=True)
    for tool in ("mpicc", "mpiexec"):
        (prefix / "bin" / tool).write_text("")
    entry = temp_home / "stacks" / "spaced" / "stack.json"
    entry.parent.mkdir(parents=True)
    entry.write_text(json.dumps({"name": "spaced", "family": "impi", "prefix": str(prefix), "source": "prefix"}))
    res = cli(["stack", "env", "spaced"])
    assert res.rc == 0
    sh = subprocess.run(["sh", "-c", res.out + '\nprintf "%s\\n%s" "$I_MPI_ROOT" "$PATH"'], capture_output=True,
                        text=True)
    assert sh.returncode == 0, sh.stderr
    root, path = sh.stdout.split("\n", 1)
    assert root == str(prefix)
    assert path.split(":")[0] == str(prefix / "bin")


def test_describe_line_runs_in_a_shell():
    stack = Stack(name="m", family="mpich", prefix="/opt/my mpi", source="prefix")
    line = launch.describe(["printenv", "PATH"], stack)
    sh = subprocess.run(["sh", "-c", line], capture_output=True, text=True)
    assert sh.returncode == 0, sh.stderr
    assert sh.stdout.split(":")[0] == "/opt/my mpi/bin"
    assert shlex.split(line)[-2:] == ["printenv", "PATH"]


def test_tables_of_a_run_without_results_have_headers(tmp_path, cli):
    path = tmp_path / "failed-run"
    path.mkdir()
    meta = synthetic_meta(runs=1)
    launches = runner.plan(SUITES.get("pingpong"), meta["params"], ["fake"], 1, meta["measurement"])
    launches[0].status, launches[0].message = runner.FAILED, "exit code 7"
    (path / "meta.json").write_text(json.dumps(meta))
    rd = runner.RunDir(path)
    rd.meta, rd.launches = meta, launches
    rd.save()
    res = cli(["analyze", str(path)])
    assert res.rc == 0, res.text
    assert "0 ok, 1 not ok" in (path / "report.html").read_text()
    m = pd.read_csv(path / "measurements.csv")
    assert len(m) == 0
    assert {"stack", "launch_id", "rep", "time_s"} <= set(m.columns)


def test_resume_notices_a_changed_library_version(small_run_copy, cli):
    meta = json.loads((small_run_copy / "meta.json").read_text())
    meta["stacks"]["mpich"]["library_version"] = "MPICH Version:      0.0.1\nMPICH Release date: long ago"
    (small_run_copy / "meta.json").write_text(json.dumps(meta))
    data = json.loads((small_run_copy / "launches.json").read_text())
    data["launches"][1]["status"] = "failed"
    (small_run_copy / "launches.json").write_text(json.dumps(data))
    res = cli(["run", "--resume", str(small_run_copy)])
    assert "0.0.1" in res.text  # a warning or an error naming the recorded version


@pytest.mark.parametrize(("cluster", "header", "expected"), [
    ("tc1", "#@hosts=tc1-n1,tc1-n1,tc1-n2,tc1-n2\n#@nodes=2\n#@ppn=2", "some launches run 4 ranks on 2 cores "
     "(the nodes of test cluster 'tc1' share this machine)"),
    (None, "#@hosts=a,a,b,b\n#@nodes=2\n#@ppn=2", None),  # real nodes: 2 per node fit
    (None, "#@hosts=a,a,a,b\n#@nodes=2\n#@ppn=0", "some launches run 4 ranks on 2 cores (one machine)"),
])
def test_oversubscription_from_the_placement(tmp_path, cluster, header, expected):
    meta = synthetic_meta()
    meta["host"]["cores"], meta["test_cluster"] = 2, cluster
    launches = runner.plan(SUITES.get("pingpong"), meta["params"], ["fake"], 1, RULE)
    raw = raw_text([("send_recv", 4, 1e-6)], 5, extra_header=header).replace("#@nprocs=2", "#@nprocs=4")
    path = save_synthetic_run(tmp_path / "run", meta, launches, lambda x: raw)
    text = measurements.oversubscription(measurements.Measured.load(runner.RunDir.open(path)))
    assert (text is None) if expected is None else text.startswith(expected)
