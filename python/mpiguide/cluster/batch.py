"""Batch jobs: a run executed inside one Slurm allocation.

`mpiguide batch` plans the run (its directory holds everything from the start), writes an sbatch script
into <run>/batch/ that continues the run (`mpiguide run --resume RUN`) inside the allocation, submits it
and records the job. The run directory is the state: when the allocation ends (its time limit), the runner
starts no launch any more, records the launch it was in as interrupted and the others as pending, with the
reason, keeps every finished one, and `mpiguide batch --resume RUN` submits the rest in a new allocation."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from mpiguide.core import launch, slurm
from mpiguide.core.errors import MpiguideError
from mpiguide.core.runner import Launch, RunDir, write_json

TIME_RE = re.compile(r"^(\d+)(:\d{1,2}){0,2}$|^\d+-\d{1,2}(:\d{1,2}){0,2}$")


@dataclass
class Allocation:
    """What each job of the run asks Slurm for."""

    nodes: int
    ppn: int
    time: str  # sbatch --time: minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]]
    partition: str | None = None
    account: str | None = None

    def validate(self) -> None:
        if self.nodes < 1 or self.ppn < 1:
            raise MpiguideError(f"bad allocation {self.nodes} node(s) x {self.ppn} process(es) per node: "
                                "both at least 1")
        if not TIME_RE.match(self.time):
            raise MpiguideError(f"bad --time '{self.time}': minutes, MM:SS, HH:MM:SS or D-HH:MM:SS as sbatch "
                                "takes it")

    def fits(self, nodes: int, ppn: int) -> bool:
        return nodes <= self.nodes and ppn <= self.ppn


def _jobs_file(rd: RunDir) -> Path:
    return rd.path / "batch" / "jobs.json"


def jobs(rd: RunDir) -> list[dict]:
    """The run's submitted jobs, oldest first: job id, script, allocation, submission time."""
    path = _jobs_file(rd)
    if not path.exists():
        return []
    try:
        return json.loads(path.read_text())["jobs"]
    except (ValueError, KeyError) as exc:
        raise MpiguideError(f"{path}: not a batch job record ({exc})") from None


def last_allocation(rd: RunDir) -> Allocation | None:
    recorded = jobs(rd)
    return Allocation(**recorded[-1]["allocation"]) if recorded else None


def script_text(rd: RunDir, alloc: Allocation, timeout: float | None, job_name: str) -> str:
    run = rd.path.resolve()
    lines = ["#!/bin/bash", f"#SBATCH --job-name={job_name}", f"#SBATCH --nodes={alloc.nodes}",
             f"#SBATCH --ntasks-per-node={alloc.ppn}", f"#SBATCH --time={alloc.time}",
             f"#SBATCH --output={run}/batch/slurm-%j.out"]
    if alloc.partition:
        lines.append(f"#SBATCH --partition={alloc.partition}")
    if alloc.account:
        lines.append(f"#SBATCH --account={alloc.account}")
    lines += ["# Written by mpiguide batch: continues the run in this allocation. When the time limit ends it,",
              "# the launches left stay pending (launches.json); mpiguide batch --resume RUN submits them."]
    # the compute nodes find the same stacks, builds and sources (a file system they share)
    for var in ("MPIGUIDE_HOME", "MPIGUIDE_BUILD", "MPIGUIDE_SOURCE"):
        if os.environ.get(var):
            lines.append(f"export {var}={shlex.quote(os.environ[var])}")
    argv = [sys.executable, "-m", "mpiguide", "run", "--resume", str(run)]
    if timeout is not None:
        argv += ["--timeout", f"{timeout:g}"]
    lines += [f"cd {shlex.quote(os.getcwd())}", f"exec {shlex.join(argv)}"]
    return "\n".join(lines) + "\n"


def check(alloc: Allocation, launches: list[Launch], spec: dict) -> None:
    """Refuses an allocation that is malformed, in an unknown partition, or too small for a launch."""
    alloc.validate()
    if alloc.partition:
        slurm.check_partition(alloc.partition, {**os.environ, **slurm.slurm_env()})
    run_spec = launch.LaunchSpec.from_dict(spec)
    for x in launches:
        nodes, ppn = run_spec.with_placement(x.placement).shape(x.nprocs)
        if not alloc.fits(nodes, ppn):
            raise MpiguideError(f"launch {x.id} needs {nodes} node(s) x {ppn} process(es) per node, more than "
                                f"the allocation's {alloc.nodes} x {alloc.ppn}: raise --nodes or --ppn")


def submit(rd: RunDir, alloc: Allocation, timeout: float | None = None) -> str:
    """Writes the next sbatch script of the run, submits it and records the job; returns the job id. The
    allocation has passed check(); timeout None keeps the launch timeout of the run's previous job."""
    env = {**os.environ, **slurm.slurm_env()}
    recorded = jobs(rd)
    if timeout is None and recorded:
        timeout = recorded[-1].get("timeout")
    directory = rd.path / "batch"
    directory.mkdir(exist_ok=True)
    script = directory / f"job{len(recorded) + 1}.sbatch"
    script.write_text(script_text(rd, alloc, timeout, f"mpiguide-{rd.job}"))
    try:
        res = subprocess.run(["sbatch", "--parsable", str(script)], capture_output=True, text=True, env=env,
                             timeout=120)
    except FileNotFoundError:
        raise MpiguideError("sbatch not found: mpiguide batch needs Slurm's client commands on PATH") from None
    except subprocess.TimeoutExpired:
        raise MpiguideError("sbatch did not answer within 120 s") from None
    if res.returncode != 0:
        raise MpiguideError(f"sbatch refused {script}: {(res.stderr or res.stdout).strip()}")
    job_id = res.stdout.strip().split(";")[0]
    recorded.append({"job_id": job_id, "script": script.name, "allocation": asdict(alloc), "timeout": timeout,
                     "submitted": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
    write_json(_jobs_file(rd), {"jobs": recorded})
    return job_id

