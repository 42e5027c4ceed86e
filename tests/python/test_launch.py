"""Launchers: launch.command on constructed stacks, and `run --dry-run` with the real MPICH stack."""

from __future__ import annotations

import json
import math
import os

import pytest

from conftest import read_launches
from mpiguide.core import build, launch, runner, slurm
from mpiguide.core.errors import MpiguideError
from mpiguide.core.stacks import Stack

PROG = "/opt/build/mg_pingpong"


def ompi(prefix: str = "/opt/ompi") -> Stack:
    return Stack(name="ompi", family="openmpi", prefix=prefix, source="prefix")


def mpich_like(prefix: str = "/opt/mpich") -> Stack:
    return Stack(name="m", family="mpich", prefix=prefix, source="prefix")


class _Site:
    """A Slurm site as the test cluster is one: its configuration and what its nodes need."""

    name = "lab"

    def env(self) -> dict[str, str]:
        return {"SLURM_CONF": "/lab/slurm.conf"}

    def launch_env(self, stack: Stack) -> dict[str, str]:
        return {"FI_PROVIDER": "tcp", "LAB_NODES": stack.name}


class _Finder:
    def current(self):
        return _Site()

    def of_env(self, env):
        return _Site() if env.get("SLURM_CONF") == "/lab/slurm.conf" else None


def test_a_registered_site_reaches_the_launch_path_without_being_imported(monkeypatch):
    """core.slurm knows a site only through its SiteFinder: the site's Slurm configuration where the user
    exported none, and what its nodes need on launches that run on them; what the user exported wins."""
    monkeypatch.setattr(slurm, "_FINDERS", [])
    slurm.register_site_finder(finder := _Finder())
    slurm.register_site_finder(finder)  # once only
    assert slurm._FINDERS == [finder]
    assert slurm.slurm_env({}) == {"SLURM_CONF": "/lab/slurm.conf"}
    assert slurm.slurm_env({"SLURM_CONF": "/elsewhere"}) == {}
    srun = launch.LaunchSpec(launcher="srun")
    assert launch.environment(srun, mpich_like(), {"FI_PROVIDER": "shm"}) == {
        "SLURM_CONF": "/lab/slurm.conf", "LAB_NODES": "m"}
    assert launch.environment(launch.LaunchSpec(), mpich_like(), {}) == {}  # local: not on the site's nodes
    assert slurm.site_of({"SLURM_CONF": "/elsewhere"}) is None
    monkeypatch.setattr(os, "environ", {})
    assert launch.test_cluster_name(srun) == "lab" and launch.test_cluster_name(launch.LaunchSpec()) is None


# ---------------------------------------------------------------- launch.command

def test_local_command_mpich():
    argv = launch.command(launch.LaunchSpec(), mpich_like(), 2, PROG, ["--sizes", "4"])
    assert argv == ["/opt/mpich/bin/mpiexec", "-n", "2", PROG, "--sizes", "4"]


def test_openmpi_hostfile_flags():
    spec = launch.LaunchSpec(launcher="hostfile", nodes=1, ppn=2, hostfile="hf")
    argv = launch.command(spec, ompi(), 2, PROG, ["--x"])
    assert argv == ["/opt/ompi/bin/mpiexec", "--hostfile", "hf", "--map-by", "ppr:2:node", "-n", "2", PROG, "--x"]


def test_mpich_hostfile_flags():
    spec = launch.LaunchSpec(launcher="hostfile", nodes=2, ppn=1, hostfile="hosts.txt")
    argv = launch.command(spec, mpich_like(), 2, PROG, [])
    assert argv == ["/opt/mpich/bin/mpiexec", "-f", "hosts.txt", "-ppn", "1", "-n", "2", PROG]


def test_hostfile_without_placement_puts_all_processes_on_one_node():
    spec = launch.LaunchSpec(launcher="hostfile", hostfile="hf")
    assert launch.command(spec, mpich_like(), 4, PROG, [])[1:5] == ["-f", "hf", "-ppn", "4"]


def test_openmpi_oversubscribes_only_beyond_the_core_count(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert launch.command(launch.LaunchSpec(), ompi(), 2, PROG, []) == [
        "/opt/ompi/bin/mpiexec", "--oversubscribe", "-n", "2", PROG]
    assert "--oversubscribe" not in launch.command(launch.LaunchSpec(), ompi(), 1, PROG, [])
    assert "--oversubscribe" not in launch.command(launch.LaunchSpec(), mpich_like(), 2, PROG, [])
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert "--oversubscribe" not in launch.command(launch.LaunchSpec(), ompi(), 2, PROG, [])


def test_openmpi_root_environment(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    add = ompi().env_additions()
    assert add["OMPI_ALLOW_RUN_AS_ROOT"] == "1"
    assert add["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] == "1"
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    add = ompi().env_additions()
    assert "OMPI_ALLOW_RUN_AS_ROOT" not in add and "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM" not in add
    assert mpich_like().env_additions() == {}


def test_stack_env_paths(tmp_path):
    prefix = tmp_path / "impi"
    (prefix / "lib").mkdir(parents=True)
    st = Stack(name="i", family="impi", prefix=str(prefix), source="prefix")
    env = st.env()
    assert env["PATH"].split(os.pathsep)[0] == str(prefix / "bin")
    assert env["LD_LIBRARY_PATH"].split(os.pathsep)[0] == str(prefix / "lib")
    assert env["I_MPI_ROOT"] == str(prefix)
    # No lib folder: LD_LIBRARY_PATH is left alone.
    st2 = mpich_like(str(tmp_path / "nolib"))
    assert st2.env().get("LD_LIBRARY_PATH") == os.environ.get("LD_LIBRARY_PATH")


def test_describe_is_a_shell_line_with_the_environment(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    argv = ["/opt/ompi/bin/mpiexec", "-n", "2", PROG, "--output", "/r/a b.txt"]
    assert launch.describe(argv, ompi()) == (
        "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_base_warn_component_unused=0 "
        "PATH=/opt/ompi/bin:\"$PATH\" /opt/ompi/bin/mpiexec -n 2 /opt/build/mg_pingpong --output '/r/a b.txt'")


def test_srun_command():
    spec = launch.LaunchSpec(launcher="srun", nodes=2, ppn=1)
    assert launch.command(spec, mpich_like(), 2, PROG, ["--a"]) == [
        "srun", "--mpi=pmi2", "-N", "2", "--ntasks-per-node", "1", "-n", "2", PROG, "--a"]
    # Open MPI 5 speaks PMIx, not PMI-2; a partition goes before the program
    spec = launch.LaunchSpec(launcher="srun", nodes=1, ppn=2, partition="batch")
    assert launch.command(spec, ompi(), 2, PROG, []) == [
        "srun", "--mpi=pmix", "-N", "1", "--ntasks-per-node", "2", "-n", "2", "-p", "batch", PROG]


def test_template_fields_and_quoting():
    spec = launch.LaunchSpec(launcher="template", nodes=2, ppn=1, hostfile="my hosts",
                             template="{mpiexec} -np {np} -N {nodes} -ppn {ppn} -f {hostfile} {prog} {args}")
    argv = launch.command(spec, mpich_like("/opt/my mpi"), 2, "/b d/prog", ["--output", "/r s/x.txt"])
    assert argv == ["/opt/my mpi/bin/mpiexec", "-np", "2", "-N", "2", "-ppn", "1", "-f", "my hosts", "/b d/prog",
                    "--output", "/r s/x.txt"]


@pytest.mark.parametrize(("spec", "nprocs", "message"), [
    (launch.LaunchSpec(nodes=3, ppn=1), 2, "placement 3x1 gives 3 processes, but this measurement needs 2"),
    (launch.LaunchSpec(nodes=2, ppn=1), 2,
     "the local launcher runs on this node only, but the placement asks for 2 nodes"),
    (launch.LaunchSpec(launcher="hostfile"), 2, "--launcher hostfile needs --hostfile FILE"),
    (launch.LaunchSpec(launcher="template"), 2, "--launcher template needs --launcher-template 'TEMPLATE'"),
    (launch.LaunchSpec(launcher="ssh"), 2, "unknown launcher 'ssh': choose one of local, hostfile, srun, template"),
    (launch.LaunchSpec(launcher="template", template="{mpiexec} {0} {prog}"), 2, "bad --launcher-template"),
])
def test_validate_messages(spec, nprocs, message):
    with pytest.raises(MpiguideError) as exc:
        spec.validate(nprocs)
    assert message in str(exc.value)


@pytest.mark.parametrize(("text", "expected"), [("2x1", (2, 1)), ("1X16", (1, 16)), ("32x1", (32, 1))])
def test_parse_placement(text, expected):
    assert launch.parse_placement(text) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("2by1", "bad --placement '2by1': expected NODESxPPN"),
    ("2x", "bad --placement '2x': expected NODESxPPN"),
    ("1x2x3", "bad --placement '1x2x3': expected NODESxPPN"),
    ("0x2", "bad --placement '0x2': nodes and processes per node must be at least 1"),
])
def test_parse_placement_errors(text, message):
    with pytest.raises(MpiguideError, match=message.replace("(", r"\(")):
        launch.parse_placement(text)


def test_launch_spec_round_trip():
    spec = launch.LaunchSpec(launcher="hostfile", nodes=2, ppn=4, hostfile="hf", template=None)
    assert launch.LaunchSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec


# ---------------------------------------------------------------- run --dry-run with the real stack

def dry(cli, tmp_path, *extra: str, runs: str = "2"):
    out = tmp_path / "dry-run-out"
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", runs, "--sizes", "4", "--output", str(out),
               "--dry-run", *extra])
    return res, out, [line for line in res.out.splitlines() if line.strip()]


def test_dry_run_local(cli, tmp_path, mpich_stack):
    res, out, lines = dry(cli, tmp_path, "--order-seed", "7")
    assert res.rc == 0, res.text
    assert "dry run: 2 launch(es); nothing is built or run" in res.text
    assert len(lines) == 2
    exe = build.build_dir(mpich_stack) / "mg_pingpong"
    for i, line in enumerate(lines):
        seed = runner.order_seed(7, f"mpich-pp-r{i}")  # the run's --order-seed 7, drawn per launch
        assert line == (f"env PATH={mpich_stack.bin}:\"$PATH\" {mpich_stack.mpiexec} -n 2 {exe} --sizes 4 "
                        "--variants send_recv,sendrecv,isend_irecv --datatype int --sync barrier --nrep rule "
                        f"--order-seed {seed} --output {out}/raw/mpich/mpich-pp-r{i}.txt")
    assert not out.exists()


def test_dry_run_srun_placement(cli, tmp_path, mpich_stack):
    res, _, lines = dry(cli, tmp_path, "--launcher", "srun", "--placement", "2x1")
    assert res.rc == 0, res.text
    exe = build.build_dir(mpich_stack) / "mg_pingpong"
    assert all(f"\"$PATH\" srun --mpi=pmi2 -N 2 --ntasks-per-node 1 -n 2 {exe} --sizes 4 " in line for line in lines)
    assert len(lines) == 2


def test_dry_run_hostfile_mpich(cli, tmp_path, mpich_stack):
    res, _, lines = dry(cli, tmp_path, "--launcher", "hostfile", "--hostfile", "hf", "--layout", "1x2")
    assert res.rc == 0, res.text
    assert all(f" {mpich_stack.mpiexec} -f hf -ppn 2 -n 2 " in line for line in lines)


def test_dry_run_custom_template(cli, tmp_path, mpich_stack):
    res, out, lines = dry(cli, tmp_path, "--launcher-template", "{mpiexec} -np {np} --host-count {nodes} {prog} {args}",
                          runs="1")
    assert res.rc == 0, res.text
    exe = build.build_dir(mpich_stack) / "mg_pingpong"
    assert len(lines) == 1
    assert f" {mpich_stack.mpiexec} -np 2 --host-count 1 {exe} --sizes 4 " in lines[0]
    assert lines[0].endswith(f"--output {out}/raw/mpich/mpich-pp-r0.txt")


def test_dry_run_estimate_shows_both_phases(cli, tmp_path):
    res, _, lines = dry(cli, tmp_path, "--nrep", "estimate")
    assert res.rc == 0, res.text
    assert len(lines) == 4
    assert all("--nrep estimate" in line for line in lines)
    assert ["--calibrate-only" in line for line in lines] == [True, True, False, False]
    assert ["--t1 '<max t_nrep1 of the calibration launches>'" in line for line in lines] == [False, False, True,
                                                                                                True]


@pytest.mark.parametrize(("extra", "message"), [
    (["--layout", "3x1"], "placement 3x1 gives 3 processes, but this measurement needs 2"),
    (["--layout", "2x1"], "the local launcher runs on this node only, but the placement asks for 2 nodes; "
                          "use --launcher srun"),
    (["--launcher", "hostfile"], "--launcher hostfile needs --hostfile FILE"),
    (["--layout", "two"], "bad --placement 'two': expected NODESxPPN"),
    (["--launcher-template", "{mpiexec} -n {nprocs} {prog}"],
     "bad --launcher-template '{mpiexec} -n {nprocs} {prog}': KeyError('nprocs'); fields are {mpiexec}, {np}, "
     "{nodes}, {ppn}, {hostfile}, {prog}, {args}"),
])
def test_dry_run_launcher_errors(cli, tmp_path, extra, message):
    res, out, lines = dry(cli, tmp_path, *extra)
    assert res.rc == 2
    assert f"mpiguide: error: {message}" in res.text
    assert lines == []
    assert not out.exists()


def test_dry_run_unknown_stack(cli, tmp_path):
    res = cli(["run", "pingpong", "--stacks", "nosuch", "--dry-run", "--output", str(tmp_path / "o")])
    assert res.rc == 2
    assert "unknown stack 'nosuch'" in res.text


def test_dry_run_does_not_install_the_default_stack(cli, tmp_path, temp_home):
    res, _, lines = dry(cli, tmp_path, runs="1")
    assert res.rc == 0, res.text
    assert len(lines) == 1
    assert f"{temp_home}/stacks/mpich/prefix/bin/mpiexec -n 2 " in lines[0]
    assert not (temp_home / "stacks").exists()


def test_dry_run_resume_prints_only_what_is_missing(cli, small_run_copy):
    data = json.loads((small_run_copy / "launches.json").read_text())
    data["launches"][1]["status"] = "failed"
    (small_run_copy / "launches.json").write_text(json.dumps(data))
    res = cli(["run", "--resume", str(small_run_copy), "--dry-run"])
    assert res.rc == 0, res.text
    lines = [line for line in res.out.splitlines() if line.strip()]
    assert len(lines) == 1
    assert lines[0].endswith(f"--output {small_run_copy}/raw/mpich/mpich-pp-r1.txt")
    assert [x["status"] for x in read_launches(small_run_copy)] == ["ok", "failed"]  # nothing ran


def test_dry_run_prints_brackets_verbatim(cli, tmp_path):
    res, _, lines = dry(cli, tmp_path, "--launcher-template", "srun --constraint=[ib|opa] -n {np} {prog} {args}",
                        runs="1")
    assert res.rc == 0, res.text
    assert " srun '--constraint=[ib|opa]' -n 2 " in lines[0]


@pytest.mark.parametrize(("launcher", "template", "on_nodes"), [
    ("local", None, False), ("hostfile", None, False), ("srun", None, True),
    ("template", "sh stall.sh srun --mpi=pmi2 -n {np} {prog} {args}", True),
    ("template", "{mpiexec} -n {np} --map-by ppr:{ppn}:node {prog} {args}", False),
    ("template", "sh -c 'srun -n {np} {prog} {args}'", True),
])
def test_which_launches_run_on_slurm_nodes(launcher, template, on_nodes):
    """Only those get Slurm's environment (the test cluster's SLURM_CONF and TCP between its nodes)."""
    spec = launch.LaunchSpec(launcher=launcher, hostfile="h" if launcher == "hostfile" else None, template=template)
    assert spec.on_nodes is on_nodes
    assert launch.environment(spec, mpich_like(), {"SLURM_CONF": "/mine/slurm.conf"}) == {}


def test_what_srun_logs_mean():
    spec = launch.LaunchSpec(launcher="srun", nodes=2, ppn=1)
    missing = "slurmstepd: error: execve(): /scratch/build/mg_pingpong: No such file or directory"
    assert "must be on a file system the nodes share" in launch.failure_hint(spec, missing)
    loader = "mg_pingpong: error while loading shared libraries: libmpi.so.12: cannot open shared object file"
    assert "missing on a compute node" in launch.failure_hint(spec, loader)
    assert launch.failure_hint(spec, "srun: error: task 0: Exited with exit code 2") is None
    failed = "srun: error: Node failure on c2-n7\nsrun: error: Node failure on c2-n7"
    assert launch.stops_the_run(spec, failed).startswith("node c2-n7 failed during the launch")
    assert launch.stops_the_run(spec, missing) is None
    assert launch.stops_the_run(launch.LaunchSpec(), failed) is None  # a local launch has no nodes


def test_what_slurm_says_when_the_allocation_ends():
    refused = "srun: error: Unable to create step for job 41: Job/step already completing or completed"
    assert slurm.step_refused(refused) == ("job 41 is ending: srun starts no step in it any more (Job/step already "
                                           "completing or completed)")
    gone = "srun: error: Unable to create step for job 41: Invalid job id specified"
    assert slurm.step_refused(gone).endswith("(Invalid job id specified)")
    limit = "slurmstepd: error: *** STEP 41.3 ON c2-n1 CANCELLED AT 2026-11-26T19:54:35 DUE TO TIME LIMIT ***"
    assert slurm.step_cut_off(limit) == "job 41 was cancelled at 2026-11-26T19:54:35 due to its time limit"
    preempted = "slurmstepd: error: *** JOB 41 ON c2-n1 CANCELLED AT 2026-11-26T19:54:35 DUE TO PREEMPTION ***"
    assert slurm.step_cut_off(preempted).endswith("due to its preemption")
    # a step's own scancel, a node failure, an ordinary failure: the allocation goes on
    for log in ("slurmstepd: error: *** STEP 41.3 ON c2-n1 CANCELLED AT 2026-11-26T19:54:35 ***",
                "srun: error: Node failure on c2-n7", "srun: error: task 0: Exited with exit code 2", refused):
        assert slurm.step_cut_off(log) is None
    assert slurm.step_refused(limit) is None


@pytest.mark.parametrize("text, seconds", [
    ("5:07", 307), ("1:00:00", 3600), ("2-01:00:05", 2 * 86400 + 3605), ("INVALID", 0), ("UNLIMITED", math.inf),
    ("NOT_SET", math.inf), ("soon", None),
])
def test_squeue_time_left(text, seconds):
    assert slurm._seconds_left(text) == seconds


def test_the_job_end_is_asked_of_squeue_only_when_it_may_have_come(tmp_path):
    """squeue once at the start, and again only once the end it gave (or SLURM_JOB_END_TIME) has passed."""
    calls, answer = tmp_path / "calls", tmp_path / "answer"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "squeue").write_text(f'#!/bin/sh\necho "$*" >> {calls}\ncat {answer}\n')
    (bin_dir / "squeue").chmod(0o755)

    def job_end(**env: str) -> slurm.JobEnd:
        return slurm.JobEnd({"PATH": f"{bin_dir}:{os.environ['PATH']}", "SLURM_CONF": "/x/slurm.conf", **env})

    def asked() -> list[str]:
        return calls.read_text().splitlines() if calls.exists() else []

    assert job_end().passed() is None and asked() == []  # no Slurm job
    answer.write_text("RUNNING 1-00:00:00\n")
    j = job_end(SLURM_JOB_ID="7")
    assert j.passed() is None and j.passed() is None
    assert asked() == ["-h -j 7 -o %T %L"]
    # SLURM_JOB_END_TIME passed, but the limit was raised since
    assert job_end(SLURM_JOB_ID="7", SLURM_JOB_END_TIME="1").passed() is None and len(asked()) == 2
    assert job_end(SLURM_JOB_ID="7", SLURM_JOB_END_TIME=str(2**40)).passed() is None and len(asked()) == 2
    for state in ("COMPLETING 0:00", "RUNNING INVALID", "TIMEOUT 0:00"):
        answer.write_text(state + "\n")
        assert job_end(SLURM_JOB_ID="7", SLURM_JOB_END_TIME="1").passed() == "job 7 has reached its end time (squeue)"
    answer.write_text("")  # squeue cannot tell (the job unknown, the controller away): never a reason to stop
    assert job_end(SLURM_JOB_ID="7", SLURM_JOB_END_TIME="1").passed() is None
