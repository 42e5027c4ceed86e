"""How a driver is started: locally with mpiexec, or on a cluster through srun,
a hostfile, or a user template. A placement is nodes x processes per node, such
as the 32x1 and 1x16 of Carpen-Amarie et al. (2016) (--placement; --layout is
its old name)."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace

from mpiguide.cluster import slurm
from mpiguide.core.errors import MpiguideError
from mpiguide.core.stacks import Stack

LAUNCHERS = ("local", "hostfile", "srun", "template")
TEMPLATE_FIELDS = ("mpiexec", "np", "nodes", "ppn", "hostfile", "prog", "args")


@dataclass(frozen=True)
class LaunchSpec:
    launcher: str = "local"
    nodes: int = 1
    ppn: int | None = None  # processes per node; None: all on one node
    hostfile: str | None = None
    template: str | None = None
    partition: str | None = None  # Slurm partition of srun launches

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> LaunchSpec:
        return cls(**d)

    @property
    def on_nodes(self) -> bool:
        """The processes run on the nodes of a Slurm allocation: srun launches, and templates that call srun."""
        return self.launcher == "srun" or (self.launcher == "template" and
                                           re.search(r"\bsrun\b", self.template or "") is not None)

    def shape(self, nprocs: int) -> tuple[int, int]:
        """Nodes and processes per node of a launch of nprocs processes (no ppn: all on the nodes given)."""
        return self.nodes, self.ppn or nprocs

    def with_placement(self, placement: str | None) -> LaunchSpec:
        """The same launcher with another NODESxPPN placement (None: unchanged)."""
        if placement is None:
            return self
        nodes, ppn = parse_placement(placement)
        return replace(self, nodes=nodes, ppn=ppn)

    def validate(self, nprocs: int) -> None:
        if self.launcher not in LAUNCHERS:
            raise MpiguideError(f"unknown launcher '{self.launcher}': choose one of {', '.join(LAUNCHERS)}")
        if self.ppn is not None and self.nodes * self.ppn != nprocs:
            raise MpiguideError(
                f"placement {self.nodes}x{self.ppn} gives {self.nodes * self.ppn} processes, "
                f"but this measurement needs {nprocs}"
            )
        if self.launcher == "local" and self.nodes > 1:
            raise MpiguideError(
                f"the local launcher runs on this node only, but the placement asks for {self.nodes} nodes; "
                "use --launcher srun, --launcher hostfile --hostfile FILE, or --launcher-template"
            )
        if self.launcher == "hostfile" and not self.hostfile:
            raise MpiguideError("--launcher hostfile needs --hostfile FILE")
        if self.launcher == "template":
            if not self.template:
                raise MpiguideError("--launcher template needs --launcher-template 'TEMPLATE'")
            try:
                self.template.format(**{k: "" for k in TEMPLATE_FIELDS})
            except (KeyError, IndexError, ValueError) as exc:
                raise MpiguideError(
                    f"bad --launcher-template '{self.template}': {exc!r}; "
                    f"fields are {', '.join('{' + f + '}' for f in TEMPLATE_FIELDS)}"
                ) from exc


def parse_placements(text: str) -> list[str]:
    """'2x1,1x2' -> ['2x1', '1x2'], each checked, repeats dropped."""
    out = []
    for part in (x.strip().lower() for x in text.split(",")):
        parse_placement(part)
        if part not in out:
            out.append(part)
    if not out:
        raise MpiguideError(f"bad --placement '{text}': expected NODESxPPN, for example 32x1 or 1x16")
    return out


def parse_placement(text: str) -> tuple[int, int]:
    """'32x1' -> (32 nodes, 1 process per node)."""
    try:
        nodes, ppn = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise MpiguideError(f"bad --placement '{text}': expected NODESxPPN, for example 32x1 or 1x16") from None
    if nodes < 1 or ppn < 1:
        raise MpiguideError(f"bad --placement '{text}': nodes and processes per node must be at least 1")
    return nodes, ppn


def command(spec: LaunchSpec, stack: Stack, nprocs: int, program: str, args: list[str]) -> list[str]:
    """The exact argv that starts `program` on nprocs processes."""
    spec.validate(nprocs)
    nodes, ppn = spec.shape(nprocs)
    mpiexec = str(stack.mpiexec)
    if spec.launcher == "local":
        return [mpiexec, *stack.local_flags(nprocs), "-n", str(nprocs), program, *args]
    if spec.launcher == "hostfile":
        assert spec.hostfile is not None
        return [mpiexec, *stack.hostfile_flags(spec.hostfile, ppn), "-n", str(nprocs), program, *args]
    if spec.launcher == "srun":
        partition = ["-p", spec.partition] if spec.partition else []
        return ["srun", f"--mpi={stack.srun_mpi()}", "-N", str(nodes), "--ntasks-per-node", str(ppn),
                "-n", str(nprocs), *partition, program, *args]
    assert spec.template is not None
    text = spec.template.format(
        mpiexec=shlex.quote(mpiexec), np=nprocs, nodes=nodes, ppn=ppn,
        hostfile=shlex.quote(spec.hostfile or ""), prog=shlex.quote(program), args=shlex.join(args),
    )
    return shlex.split(text)


def environment(spec: LaunchSpec, stack: Stack, base: Mapping[str, str]) -> dict[str, str]:
    """What a launch adds to the stack's environment `base`: on a cluster's nodes, Slurm's settings
    (cluster.slurm.launch_env)."""
    return slurm.launch_env(stack, base) if spec.on_nodes else {}


def test_cluster_name(spec: LaunchSpec) -> str | None:
    """The mpiguide test cluster the launches run on (its nodes share this machine's cores), if any."""
    if not spec.on_nodes:
        return None
    c = slurm.test_cluster({**os.environ, **slurm.slurm_env()})
    return c.name if c else None


def preflight(spec: LaunchSpec, stack: Stack, env: Mapping[str, str]) -> None:
    """Checks made once before the first launch: a missing srun, PMI plugin or partition is refused here."""
    if spec.launcher == "srun":
        slurm.check_srun(stack, env, spec.partition)


def stops_the_run(spec: LaunchSpec, log: str) -> str | None:
    """Why the launches after a failed one cannot run either, read from its log (None: they can)."""
    return slurm.node_failure(log) if spec.on_nodes else None


def failure_hint(spec: LaunchSpec, log: str) -> str | None:
    """What a failed launch's log suggests doing, where it says more than the log itself."""
    return slurm.missing_on_nodes(log) if spec.on_nodes else None


def describe(argv: list[str], stack: Stack, extra: Mapping[str, str] | None = None) -> str:
    """A copy-pasteable shell line: the stack's environment additions, then the command."""
    env = [f"{k}={shlex.quote(v)}" for k, v in {**stack.env_additions(), **(extra or {})}.items()]
    env.append(f'PATH={shlex.quote(str(stack.bin))}:"$PATH"')
    return f"env {' '.join(env)} {shlex.join(argv)}"
