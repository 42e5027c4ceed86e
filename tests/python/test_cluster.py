"""The cluster path for real: a 2-node Slurm test cluster on this machine (network and UTS namespaces), jobs
launched through srun on MPICH and Open MPI, and the cluster removed without a trace.

These tests need root and network namespaces (CI runs as root on a machine that has them); elsewhere they
are skipped with the reason. They start one cluster for the module."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import POLL_LIMIT_S, read_launches, start_mpiguide, wait_for
from mpiguide.cluster import batch, system, testcluster
from mpiguide.core import build, launch, rawfile, runner, slurm, tuning_formats
from mpiguide.core import stacks as stackmod
from mpiguide.core.errors import MpiguideError
from mpiguide.suites.app import analysis


def _why_no_cluster() -> str | None:
    try:
        system.check_machine()
    except MpiguideError as exc:
        return str(exc)
    # a namespace that ends with its process: nothing to clean up (`ip netns add` would mount /run/netns)
    res = subprocess.run(["unshare", "--net", "--uts", "true"], capture_output=True, text=True)
    if res.returncode != 0:
        return f"this machine cannot make network namespaces: {res.stderr.strip()}"
    return None


WHY = _why_no_cluster()
pytestmark = pytest.mark.skipif(WHY is not None, reason=f"no test cluster here: {WHY}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A 2-node test cluster of this module's own, named in SLURM_CONF (not made current: two test sessions on
    one machine must not pick up each other's cluster). Its daemons' logs outlive it in pytest's temporary
    directory (cluster-logs/), for whoever has to find out why a test failed."""
    premounted = premounted_netns_dir()
    c = testcluster.up(2, name=f"pt{os.getpid() % 100000}", say=lambda _: None, make_current=False)
    previous = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = str(c.conf)
    try:
        yield c
    finally:
        if previous is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = previous
        shutil.copytree(c.directory / "logs", tmp_path_factory.mktemp("cluster-logs"), dirs_exist_ok=True)
        testcluster.down(c.name, say=lambda _: None)
        if not premounted:
            assert_netns_mount_goes_with_the_last_namespace()


def premounted_netns_dir() -> bool:
    """/run/netns was a mount point that no test cluster made (its unmounting is then nobody's business)."""
    return system.is_mountpoint(testcluster.NETNS_DIR) and not testcluster._netns_mount_marker().exists()


@pytest.fixture(scope="module")
def stacks_built():
    """MPICH (always installed for the tests) and Open MPI where it is (make test installs it unless
    TEST_STACKS leaves it out), built."""
    stacks = {name: stackmod.get(name) for name in ("mpich", "openmpi") if stackmod.load(name) is not None}
    for s in stacks.values():
        build.ensure_built(s)
    return stacks


def stack_list(stacks: dict) -> str:
    return ",".join(stacks)


def test_cluster_is_up_with_its_own_hosts(cluster, monkeypatch):
    assert testcluster.node_states(cluster) == {n.name: "idle" for n in cluster.nodes}
    # before any job: right after one a node may still be "completing"
    lines = testcluster.status(cluster).splitlines()
    for n in cluster.nodes:
        assert any(line.split()[:3] == ["node", n.name, n.addr] and line.endswith("idle") for line in lines), lines
    res = testcluster.slurm_command(cluster, ["srun", "-N", "2", "-n", "2", "sh", "-c",
                                              "echo $(hostname) $(ip -4 -o addr show eth0 | awk '{print $4}')"])
    assert res.returncode == 0, res.stderr
    assert sorted(res.stdout.split("\n")[:2]) == sorted(f"{n.name} {n.addr}/24" for n in cluster.nodes)
    # mpiguide picks the current cluster up without anything exported; an exported SLURM_CONF wins
    monkeypatch.setattr(testcluster, "current", lambda: cluster)
    assert slurm.slurm_env({}) == {"SLURM_CONF": str(cluster.conf)}
    assert slurm.slurm_env({"SLURM_CONF": "/elsewhere/slurm.conf"}) == {}
    assert slurm.site_of({"SLURM_CONF": str(cluster.conf)}).name == cluster.name


@pytest.mark.parametrize("stack_name", ["mpich", "openmpi"])
def test_pingpong_through_srun_on_both_nodes(cluster, stacks_built, cli, tmp_path, stack_name):
    if stack_name not in stacks_built:
        pytest.skip(f"the {stack_name} stack is not installed")
    run = tmp_path / "run"
    res = cli(["run", "pingpong", "--stacks", stack_name, "--runs", "1", "--sizes", "4,64k", "--nrep", "20",
               "--launcher", "srun", "--placement", "2x1", "--output", str(run)])
    assert res.rc == 0, res.text
    (x,) = read_launches(run)
    assert x["status"] == "ok"
    parsed = rawfile.parse(run / x["raw"])
    assert parsed.complete and not parsed.errors
    assert parsed.header["hosts"] == ",".join(n.name for n in cluster.nodes)
    assert (parsed.header["nodes"], parsed.header["ppn"]) == ("2", "1")
    log = (run / "logs" / f"{x['id']}.log").read_text().splitlines()[0]
    stack = stacks_built[stack_name]
    for k, v in stack.network_between_nodes_env().items():
        assert f"{k}={v}" in log  # TCP between the test cluster's nodes
    assert f"srun --mpi={stack.srun_mpi()} -N 2 --ntasks-per-node 1 -n 2 " in log


@pytest.mark.skipif(stackmod.load("impi") is None, reason="the impi stack is not installed (mpiguide stack install "
                    "impi): make test installs MPICH and Open MPI only")
def test_intel_mpi_through_srun_with_slurms_pmi2(cluster, cli, tmp_path):
    stack = stackmod.get("impi")
    build.ensure_built(stack)
    run = tmp_path / "run"
    res = cli(["run", "pingpong", "--stacks", "impi", "--runs", "1", "--sizes", "4,64k", "--nrep", "20",
               "--launcher", "srun", "--placement", "2x1", "--output", str(run)])
    assert res.rc == 0, res.text
    assert_checked_on_both_hosts(run, cluster)
    log = (run / "logs" / "impi-pp-r0.log").read_text().splitlines()[0]
    assert f"I_MPI_PMI_LIBRARY={slurm.pmi2_library()}" in log and "srun --mpi=pmi2 " in log


def test_one_node_placement_keeps_ranks_together(cluster, stacks_built, tmp_path):
    stack = stacks_built["mpich"]
    out = tmp_path / "pp.txt"
    spec = launch.LaunchSpec(launcher="srun", nodes=1, ppn=2)
    argv = launch.command(spec, stack, 2, str(build.build_dir(stack) / "mg_pingpong"),
                          ["--sizes", "4", "--check-only", "--output", str(out)])
    with stack.launch_env() as env:
        env.update(launch.environment(spec, stack, env))
        res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    header = rawfile.parse(out).header
    assert (header["nodes"], header["ppn"]) == ("1", "2")
    assert header["hosts"].split(",")[0] == header["hosts"].split(",")[1]


def test_unknown_partition_is_refused(cluster, stacks_built, cli, tmp_path):
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "1", "--sizes", "4", "--launcher", "srun",
               "--placement", "2x1", "--partition", "nosuch", "--output", str(tmp_path / "run")])
    assert res.rc == 2
    assert "Slurm has no partition 'nosuch' (sinfo lists: debug)" in res.text


def test_down_leaves_nothing(stacks_built):
    """A cluster of its own, torn down: no process, namespace, link, mount or directory is left."""
    c = testcluster.up(1, name=f"pd{os.getpid() % 100000}", say=lambda _: None, make_current=False)
    daemons = [c.daemon(k) for k in c.daemons]
    assert all(p is not None and p.alive() for p in daemons)
    testcluster.down(c.name, say=lambda _: None)
    assert not any(p.alive() for p in daemons)
    assert testcluster.leftovers(c) == []
    assert not c.directory.exists()
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert c.nodes[0].netns not in netns
    with open("/proc/self/mounts") as f:
        assert c.nodes[0].netns not in f.read()


def test_the_last_cluster_down_unmounts_run_netns():
    """Two clusters, the first one down first: the mount `ip netns` made goes with the last one."""
    if premounted_netns_dir():
        pytest.skip("/run/netns was a mount point before any test cluster")
    a = testcluster.up(1, name=f"pa{os.getpid() % 100000}", say=lambda _: None, make_current=False)
    b = testcluster.up(1, name=f"pb{os.getpid() % 100000}", say=lambda _: None, make_current=False)
    testcluster.down(a.name, say=lambda _: None)
    assert system.is_mountpoint(testcluster.NETNS_DIR)  # b's namespace is still there
    testcluster.down(b.name, say=lambda _: None)
    assert_netns_mount_goes_with_the_last_namespace()


def assert_netns_mount_goes_with_the_last_namespace() -> None:
    left = any(Path(testcluster.NETNS_DIR).iterdir()) if Path(testcluster.NETNS_DIR).is_dir() else False
    assert system.is_mountpoint(testcluster.NETNS_DIR) == left


# ---------------------------------------------------------------- the jobs through srun

def assert_checked_on_both_hosts(run, cluster, placements=None) -> list[dict]:
    """Every launch ok, its raw file complete with no failed data check, its ranks on the placement's hosts."""
    launches = read_launches(run)
    assert launches and all(x["status"] == "ok" and x["returncode"] == 0 for x in launches), launches
    hosts = {n.name for n in cluster.nodes}
    for x in launches:
        parsed = rawfile.parse(run / x["raw"])
        assert parsed.complete and not parsed.errors, x["id"]
        ranks = parsed.header["hosts"].split(",")
        assert set(ranks) <= hosts and len(ranks) == int(parsed.header["nprocs"])
        nodes, ppn = launch.parse_placement(placements[x["id"]] if placements else "2x1")
        assert (int(parsed.header["nodes"]), int(parsed.header["ppn"])) == (nodes, ppn), x["id"]
    return launches


def test_ddt_subset_inter_and_intra_node(cluster, stacks_built, cli, tmp_path):
    run = tmp_path / "run"
    res = cli(["run", "ddt", "--stacks", stack_list(stacks_built), "--tests", "3", "--grid", "quick", "--patterns",
               "pingpong", "--A", "1,16", "--sizes", "1k,64k", "--runs", "1", "--nrep", "5", "--launcher", "srun",
               "--placement", "2x1,1x2", "--output", str(run)])
    assert res.rc == 0, res.text
    placements = {x["id"]: x["placement"] for x in read_launches(run)}
    assert sorted(placements.values()) == sorted(["1x2", "2x1"] * len(stacks_built))
    assert_checked_on_both_hosts(run, cluster, placements)
    contrast = pd.read_csv(run / "placements.csv")
    assert {"2x1", "1x2"} <= set(contrast.columns) and set(contrast["stack"]) == set(stacks_built)


def test_coll_and_a_stencil_app_on_two_nodes(cluster, stacks_built, cli, tmp_path):
    run = tmp_path / "coll"
    res = cli(["run", "coll", "--stacks", stack_list(stacks_built), "--collectives", "allreduce,bcast",
               "--sizes", "4,64k", "--np", "4", "--runs", "1", "--nrep", "5", "--launcher", "srun", "--placement",
               "2x2", "--output", str(run)])
    assert res.rc == 0, res.text
    assert_checked_on_both_hosts(run, cluster, {x["id"]: "2x2" for x in read_launches(run)})
    run = tmp_path / "apps"
    res = cli(["run", "apps", "--stacks", stack_list(stacks_built), "--apps", "jacobi", "--np", "4", "--runs", "1",
               "--steps", "3", "--launcher", "srun", "--placement", "2x2", "--output", str(run)])
    assert res.rc == 0, res.text
    assert_checked_on_both_hosts(run, cluster, {x["id"]: "2x2" for x in read_launches(run)})


def test_an_application_recorded_tuned_and_validated_across_the_nodes(cluster, stacks_built, cli, tmp_path):
    """mpiguide app run through srun, one rank per node: the record names both hosts, every step ran (record,
    the measurement runs, the validation, the tuned record) and every launch printed the native output."""
    out = tmp_path / "app"
    res = cli(["app", "run", "--stacks", "mpich", "--np", "2", "--runs", "2", "--launcher", "srun", "--placement",
               "2x1", "--mask", r"^[a-z]+ [a-z]+ [a-z-]+ ", "--mask", "^#@", "--output", str(out), "--",
               str(build.build_dir(stacks_built["mpich"]) / "mg_stencil"), "--app", "jacobi", "--variants",
               "ddt:nonblocking,basic:nonblocking", "--nx", "32", "--ny", "32", "--steps", "5", "--nrep", "1"])
    assert res.rc == 0, res.text
    rec = analysis.records(runner.RunDir.open(out / "record"))["mpich"]
    assert sorted(rec.hosts.values()) == sorted(n.name for n in cluster.nodes)
    assert "outputs: every launch printed what the native program prints" in res.text
    for step in ("validate", "record-tuned"):
        assert all(x.status == runner.OK for x in runner.RunDir.open(out / step).launches)


def test_tune_with_the_libraries_own_algorithms_on_two_nodes(cluster, stacks_built, cli, tmp_path):
    """mpiguide tune --algorithms through srun at two placements: every algorithm the libraries list forced in
    launches of their own, between the nodes and on one node, and the validation run with each library's own
    tuning file at both too."""
    run = tmp_path / "tune"
    res = cli(["tune", "--stacks", stack_list(stacks_built), "--collectives", "bcast", "--sizes", "64k",
               "--runs", "2", "--nrep", "5", "--algorithms", "all", "--launcher", "srun", "--placement", "2x1,1x2",
               "--output", str(run)])
    assert res.rc == 0, res.text
    placements = {x["id"]: x["placement"] for x in read_launches(run / "measure")}
    assert set(placements.values()) == {"2x1", "1x2"}
    measured = [x for x in read_launches(run / "measure") if x["placement"] == "2x1"]
    assert_checked_on_both_hosts(run / "measure", cluster, placements)
    forced = {x["stack"]: x["env"] for x in measured if x["env"]}
    assert any(k == "MPIR_CVAR_BCAST_INTRA_ALGORITHM" for k in forced["mpich"])
    assert forced["openmpi"].get("OMPI_MCA_coll_tuned_use_dynamic_rules") == "1"
    validated = read_launches(run / "validate")
    assert_checked_on_both_hosts(run / "validate", cluster, {x["id"]: x["placement"] for x in validated})
    files = [x for x in validated if "-file-" in x["id"]]
    assert {(x["stack"], x["placement"]) for x in files} == {(s, p) for s in stacks_built for p in ("2x1", "1x2")}
    for x in files:  # the file's environment reaches the launch on the nodes
        log = (run / "validate" / "logs" / f"{x['id']}.log").read_text().splitlines()[0]
        assert f"/validate/native/{x['stack']}/" in log and "srun --mpi=" in log, log


def test_mpich_applies_a_selection_rule_of_one_placement_only_there(cluster, stacks_built, tmp_path):
    """The selection file of a run with several placements keys them by processes per node (comm_avg_ppn), and
    MPICH applies each where it belongs: its nonblocking bcast `nb`, written for 2x1 only, shows its schedule
    (MPIR_CVAR_COLL_SCHED_DUMP) between the two nodes and not on one node."""
    stack = stacks_built["mpich"]
    tree, names = tuning_formats.mpich_selection(tuning_formats.mpich_library(Path(stack.prefix)))
    size = 333336  # above what MPICH's own MPI_Init exchanges
    written = tuning_formats.mpich_json([tuning_formats.Choice("bcast", 2, size, "nb", "nb", placement="2x1"),
                                         tuning_formats.Choice("bcast", 2, size, placement="1x2")], tree, names)
    path = tmp_path / "coll_selection.json"
    path.write_text(written.text)
    for placement, applies in (("2x1", True), ("1x2", False)):
        spec = launch.LaunchSpec(launcher="srun").with_placement(placement)
        out = tmp_path / f"{placement}.txt"
        argv = launch.command(spec, stack, 2, str(build.build_dir(stack) / "mg_collbench"),
                              ["--collectives", "bcast", "--impls", "default", "--sizes", str(size), "--check-only",
                               "--output", str(out)])
        with stack.launch_env() as base:
            env = {**base, **launch.environment(spec, stack, base), **stack.adapter.tuning_env(str(path)),
                   "MPIR_CVAR_COLL_SCHED_DUMP": "1"}
            res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        text = res.stdout + res.stderr
        assert res.returncode == 0 and not rawfile.parse(out).errors, text[-1500:]
        assert ("s->size" in text) == applies, (placement, text[-1500:])


# ---------------------------------------------------------------- time limits and node failures

def node_stalling_template(tmp_path) -> tuple[str, Path]:
    """srun with the stack's plugin; the second launch of the run (resumes included) writes the start of its
    raw file, then runs a step on the nodes that waits until it is stopped (marker files say it runs)."""
    count, script = tmp_path / "launch-count", tmp_path / "stall.sh"
    script.write_text(
        f'n=$(cat {count} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {count}\n'
        'out=; for a in "$@"; do out=$a; done\n'
        'if [ $n -eq 2 ]; then\n'
        '  printf "#@mpiguide_raw=1\\n#@driver=pingpong\\n" > "$out"\n'
        f'  exec srun -N 2 -n 2 sh -c \'touch {tmp_path}/running.$SLURM_PROCID; exec sleep 600\'\n'
        'fi\n'
        'exec "$@"\n')
    return (f"sh {script} srun --mpi=pmi2 -N {{nodes}} --ntasks-per-node {{ppn}} -n {{np}} {{prog}} {{args}}",
            count)


def stop_mpiguide(proc: subprocess.Popen) -> None:
    """Never leaves mpiguide running: SIGTERM first, so that it stops its launch (an srun of its own session)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


@pytest.mark.parametrize("link", [False, True], ids=["slurmd-killed", "link-down"])
def test_node_failure_stops_the_run_and_resume_completes(cluster, stacks_built, cli, tmp_path, link):
    run = tmp_path / "run"
    template, _ = node_stalling_template(tmp_path)
    proc = start_mpiguide(["run", "pingpong", "--stacks", "mpich", "--runs", "3", "--sizes", "4", "--nrep", "5",
                           "--placement", "2x1", "--launcher-template", template, "--output", str(run)], tmp_path)
    try:
        wait_for(lambda: all((tmp_path / f"running.{r}").exists() for r in (0, 1)), proc, "the stalled step")
        testcluster.stop_node(cluster, cluster.nodes[1].name, link=link)
        out, err = proc.communicate(timeout=POLL_LIMIT_S)
    finally:
        stop_mpiguide(proc)
    assert proc.returncode == 1, out + err
    text = " ".join((out + err).split())
    assert f"node {cluster.nodes[1].name} failed during the launch" in text
    assert f"continue with: mpiguide run --resume {run}" in text
    launches = read_launches(run)
    assert [x["status"] for x in launches] == ["ok", "failed", "pending"]
    assert f"Node failure on {cluster.nodes[1].name}" in launches[1]["message"]
    partial = (run / launches[1]["raw"]).read_text()

    testcluster.start_node(cluster, cluster.nodes[1].name)
    res = cli(["run", "--resume", str(run)])
    assert res.rc == 0, res.text
    launches = read_launches(run)
    assert [(x["status"], x["attempts"]) for x in launches] == [("ok", 1), ("ok", 2), ("ok", 1)]
    assert (run / "raw/mpich/mpich-pp-r1.attempt1.txt").read_text() == partial


def test_batch_job_time_limit_leaves_launches_pending_and_resume_completes(cluster, stacks_built, cli, tmp_path):
    """The job's second launch runs until it is killed, so the time limit (1 minute, a hard limit on the test
    cluster) is certain to end the job with two launches left, however fast the machine is. Whichever sign of the
    end the runner meets first (SIGTERM, the step cut off, srun refusing the next step), it starts nothing more:
    nothing failed, the launches left are pending with the reason, and a second job completes them."""
    run = tmp_path / "run"
    template, _ = node_stalling_template(tmp_path)
    res = cli(["batch", "pingpong", "--stacks", "mpich", "--runs", "4", "--sizes", "4", "--nrep", "5",
               "--launcher-template", template, "--output", str(run), "--nodes", "2", "--ppn", "1", "--time", "1",
               "--timeout", "900"])
    assert res.rc == 0, res.text
    (job,) = batch.jobs(runner.RunDir.open(run))
    assert f"submitted batch job {job['job_id']}: run directory {run}" in res.text
    script = (run / "batch" / job["script"]).read_text()
    assert "#SBATCH --nodes=2" in script and "#SBATCH --time=1" in script
    assert f"-m mpiguide run --resume {run} --timeout 900" in script
    assert job_state(cluster, job["job_id"]) == "TIMEOUT"
    launches = read_launches(run)
    assert [x["status"] for x in launches] == ["ok", "interrupted", "pending", "pending"], launches
    cut = launches[1]["message"]
    assert cut.startswith(("stopped by SIGTERM (the end of a batch job", f"cut off: job {job['job_id']} ")), cut
    assert all(x["message"].startswith("not started: ") and x["attempts"] == 0 for x in launches[2:]), launches
    partial = (run / launches[1]["raw"]).read_text()
    output = " ".join((run / "batch" / f"slurm-{job['job_id']}.out").read_text().split())
    assert "the run stopped before its end: " in output and "1 of 4 launches are done; 1 interrupted, 2 pending" \
        in output, output
    assert output.count("--resume") == 1 and f"continue with: mpiguide batch --resume {run}" in output, output
    assert "did not complete" not in output

    res = cli(["batch", "--resume", str(run), "--time", "10"])
    assert res.rc == 0, res.text
    second = batch.jobs(runner.RunDir.open(run))[-1]
    assert second["allocation"] == {**job["allocation"], "time": "10"}
    assert "--timeout 900" in (run / "batch" / second["script"]).read_text()  # the run's own, kept
    assert job_state(cluster, second["job_id"]) == "COMPLETED"
    launches = read_launches(run)
    assert [(x["status"], x["attempts"]) for x in launches] == [("ok", 1), ("ok", 2), ("ok", 1), ("ok", 1)]
    assert (run / "raw/mpich/mpich-pp-r1.attempt1.txt").read_text() == partial


def job_state(cluster, job_id: str) -> str:
    """The job's final state, once it has one (a guard, not an assertion, bounds the wait)."""
    deadline = time.monotonic() + POLL_LIMIT_S
    while time.monotonic() < deadline:
        res = testcluster.slurm_command(cluster, ["scontrol", "-o", "show", "job", job_id])
        state = re.search(r"JobState=(\S+)", res.stdout)
        if state and state.group(1) not in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING"):
            return state.group(1)
        time.sleep(0.5)
    pytest.fail(f"job {job_id} did not end")


def test_a_failed_start_removes_what_it_made(monkeypatch):
    """up() fails after the network is made (here: slurmctld never answers): nothing of it is left."""
    made = {}

    def failing_daemons(c):
        made["cluster"] = c
        raise MpiguideError("slurmctld did not come up")

    monkeypatch.setattr(testcluster, "_daemons", failing_daemons)
    with pytest.raises(MpiguideError, match="slurmctld did not come up"):
        testcluster.up(2, name=f"pf{os.getpid() % 100000}", say=lambda _: None, make_current=False)
    c = made["cluster"]
    assert testcluster.leftovers(c) == [] and not c.directory.exists()
