"""Launching through Slurm: the srun line for a stack, the environment it runs with (the test cluster's
SLURM_CONF when the user set none; TCP between the test cluster's nodes), and a clear message when srun,
a partition or an MPI plugin is missing. Nothing here assumes the test cluster: on any other Slurm it
only adds what the stack needs."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from mpiguide.cluster import testcluster
from mpiguide.core.errors import MpiguideError
from mpiguide.core.stacks import Stack


def slurm_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """What Slurm's commands need on top of `base` (default: this process's environment): the current
    test cluster's SLURM_CONF, unless base names a Slurm configuration of its own."""
    base = os.environ if base is None else base
    if base.get("SLURM_CONF"):
        return {}
    c = testcluster.current()
    return c.env() if c and c.state == "up" else {}


def test_cluster(env: Mapping[str, str]) -> testcluster.TestCluster | None:
    """The test cluster env's Slurm configuration belongs to, if any."""
    conf = env.get("SLURM_CONF")
    if not conf:
        return None
    for name in testcluster.names():
        try:
            c = testcluster.TestCluster.load(name)
        except MpiguideError:
            continue
        if Path(conf) == c.conf:
            return c
    return None


# Where distributions put Slurm's PMI-2 client library (Debian: libpmi2-0).
PMI2_LIBRARIES = ("/usr/lib/x86_64-linux-gnu/libpmi2.so.0", "/usr/lib/x86_64-linux-gnu/libpmi2.so",
                  "/usr/lib64/libpmi2.so", "/usr/lib/libpmi2.so", "/usr/lib64/slurm/libpmi2.so")


def pmi2_library() -> str | None:
    srun = shutil.which("srun")
    near = [str(Path(srun).resolve().parent.parent / lib / "libpmi2.so") for lib in ("lib", "lib64")] if srun else []
    return next((p for p in (*PMI2_LIBRARIES, *near) if Path(p).exists()), None)


def launch_env(stack: Stack, base: Mapping[str, str]) -> dict[str, str]:
    """Additions for a launch of `stack` on Slurm's nodes: slurm_env; Intel MPI's pointer to Slurm's PMI-2
    library (without it every rank starts alone); on the test cluster the stack's TCP-between-nodes
    settings. Settings the user exported win."""
    add = slurm_env(base)
    if stack.family == "impi" and "I_MPI_PMI_LIBRARY" not in base and (lib := pmi2_library()):
        add["I_MPI_PMI_LIBRARY"] = lib
    if test_cluster({**base, **add}):
        add.update({k: v for k, v in stack.network_between_nodes_env().items() if k not in base})
    return add


def srun_path() -> str:
    path = shutil.which("srun")
    if not path:
        raise MpiguideError("srun not found: --launcher srun needs Slurm's client commands on PATH (on this "
                            "machine, `mpiguide cluster up` installs them and starts a test cluster)")
    return path


@functools.lru_cache(maxsize=8)
def _mpi_plugins(srun: str, conf: str | None) -> frozenset[str]:
    env = {**os.environ, **({"SLURM_CONF": conf} if conf else {})}
    try:
        res = subprocess.run([srun, "--mpi=list"], capture_output=True, text=True, timeout=60, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MpiguideError(f"srun --mpi=list failed: {exc}") from None
    if res.returncode != 0:
        raise MpiguideError(f"srun --mpi=list failed ({'SLURM_CONF=' + conf if conf else 'no SLURM_CONF'}): "
                            f"{(res.stderr or res.stdout).strip()}")
    # "MPI plugin types are...", one per line, then "specific pmix plugin versions available: pmix_v4"
    lines = [line.strip() for line in res.stdout.splitlines() if line.strip()]
    return frozenset(w for line in lines for w in line.replace(",", " ").split()[-1:] if w.isidentifier())


def check_srun(stack: Stack, env: Mapping[str, str], partition: str | None = None) -> None:
    """Before the first srun launch: srun is there, has the stack's PMI plugin, and knows the partition;
    each refusal names the way out."""
    srun = srun_path()
    plugin = stack.srun_mpi()
    plugins = _mpi_plugins(srun, env.get("SLURM_CONF"))
    if plugin not in plugins:
        fix = ("run inside an allocation (salloc, or mpiguide batch) with --launcher-template "
               "'{mpiexec} -n {np} --map-by ppr:{ppn}:node {prog} {args}': Open MPI's mpirun starts its "
               "daemons through Slurm itself" if stack.family == "openmpi" else
               "ask for Slurm's PMI-2 plugin (mpi_pmi2.so), or launch with --launcher hostfile")
        raise MpiguideError(f"stack '{stack.name}' needs srun --mpi={plugin}, which this Slurm does not have "
                            f"(srun --mpi=list: {', '.join(sorted(plugins)) or 'nothing'}); {fix}")
    if stack.family == "impi" and not env.get("I_MPI_PMI_LIBRARY"):
        raise MpiguideError(f"stack '{stack.name}' (Intel MPI) needs Slurm's PMI-2 library under srun, and none "
                            f"was found ({', '.join(PMI2_LIBRARIES)}): install it (Debian: apt-get install "
                            "libpmi2-0) or set I_MPI_PMI_LIBRARY to it")
    if partition:
        check_partition(partition, env)


def check_partition(partition: str, env: Mapping[str, str]) -> None:
    """Refuses a partition Slurm does not know, listing the ones it does."""
    try:
        res = subprocess.run(["sinfo", "-h", "-o", "%R"], capture_output=True, text=True, timeout=60,
                             env={**os.environ, **env})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MpiguideError(f"cannot list Slurm's partitions (sinfo): {exc}") from None
    if res.returncode != 0:
        raise MpiguideError(f"cannot list Slurm's partitions: sinfo says {res.stderr.strip()}")
    known = sorted(set(res.stdout.split()))
    if partition not in known:
        raise MpiguideError(f"Slurm has no partition '{partition}' (sinfo lists: {', '.join(known) or 'none'})")


def node_failure(log: str) -> str | None:
    """srun's word that a node failed under a job step, as a reason to stop a run; None otherwise."""
    nodes = sorted(set(re.findall(r"Node failure on (\S+)", log)))
    if not nodes:
        return None
    return (f"node {', '.join(nodes)} failed during the launch; the following launches would wait for it, so "
            "the run stops here (finished launches and the partial raw file are kept)")


def missing_on_nodes(log: str) -> str | None:
    """srun's or the loader's word that a program or library is missing on a compute node, as advice."""
    if re.search(r"execve\(\): .*No such file or directory|error while loading shared libraries", log):
        return ("a program or library is missing on a compute node: the stack's prefix, mpiguide's build "
                "directory and the run directory must be on a file system the nodes share")
    return None
