"""How a driver is started: locally with mpiexec, or on a cluster through srun,
a hostfile, or a user template. A placement is nodes x processes per node, such
as the 32x1 and 1x16 of Carpen-Amarie et al. (2016) (--placement; --layout is
its old name)."""

from __future__ import annotations

import os
import re
import shlex
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace

from mpiguide.core import slurm
from mpiguide.core.errors import MpiguideError
from mpiguide.core.stacks import Stack

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
        return launcher(self.launcher).on_nodes(self)

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
        how = launcher(self.launcher)
        if self.ppn is not None and self.nodes * self.ppn != nprocs:
            raise MpiguideError(
                f"placement {self.nodes}x{self.ppn} gives {self.nodes * self.ppn} processes, "
                f"but this measurement needs {nprocs}"
            )
        how.validate(self)


# ---------------------------------------------------------------- launchers

class Launcher(ABC):
    """How a driver is started. A launcher whose processes run on a Slurm allocation's nodes (on_nodes) gets
    Slurm's environment, its node-failure and missing-file diagnostics (core.slurm)."""

    name: str

    def on_nodes(self, spec: LaunchSpec) -> bool:
        return False

    def validate(self, spec: LaunchSpec) -> None:  # noqa: B027 (most launchers take every setting)
        """Refuses settings this launcher cannot use."""

    @abstractmethod
    def command(self, spec: LaunchSpec, stack: Stack, nprocs: int, program: str, args: list[str]) -> list[str]:
        """The exact argv that starts `program` on nprocs processes (spec validated)."""

    def preflight(self, spec: LaunchSpec, stack: Stack, env: Mapping[str, str]) -> None:  # noqa: B027
        """Checks made once before the first launch (none by default)."""


class Local(Launcher):
    name = "local"

    def validate(self, spec: LaunchSpec) -> None:
        if spec.nodes > 1:
            raise MpiguideError(
                f"the local launcher runs on this node only, but the placement asks for {spec.nodes} nodes; "
                "use --launcher srun, --launcher hostfile --hostfile FILE, or --launcher-template"
            )

    def command(self, spec: LaunchSpec, stack: Stack, nprocs: int, program: str, args: list[str]) -> list[str]:
        return [str(stack.mpiexec), *stack.local_flags(nprocs), "-n", str(nprocs), program, *args]


class Hostfile(Launcher):
    name = "hostfile"

    def validate(self, spec: LaunchSpec) -> None:
        if not spec.hostfile:
            raise MpiguideError("--launcher hostfile needs --hostfile FILE")

    def command(self, spec: LaunchSpec, stack: Stack, nprocs: int, program: str, args: list[str]) -> list[str]:
        assert spec.hostfile is not None
        _, ppn = spec.shape(nprocs)
        return [str(stack.mpiexec), *stack.hostfile_flags(spec.hostfile, ppn), "-n", str(nprocs), program, *args]


class Srun(Launcher):
    name = "srun"

    def on_nodes(self, spec: LaunchSpec) -> bool:
        return True

    def command(self, spec: LaunchSpec, stack: Stack, nprocs: int, program: str, args: list[str]) -> list[str]:
        nodes, ppn = spec.shape(nprocs)
        partition = ["-p", spec.partition] if spec.partition else []
        return ["srun", f"--mpi={stack.srun_mpi()}", "-N", str(nodes), "--ntasks-per-node", str(ppn),
                "-n", str(nprocs), *partition, program, *args]

    def preflight(self, spec: LaunchSpec, stack: Stack, env: Mapping[str, str]) -> None:
        slurm.check_srun(stack, env, spec.partition)


class Template(Launcher):
    """The user's command line with the fields of TEMPLATE_FIELDS; on a Slurm allocation's nodes when it calls
    srun."""

    name = "template"

    def on_nodes(self, spec: LaunchSpec) -> bool:
        return re.search(r"\bsrun\b", spec.template or "") is not None

    def validate(self, spec: LaunchSpec) -> None:
        if not spec.template:
            raise MpiguideError("--launcher template needs --launcher-template 'TEMPLATE'")
        try:
            spec.template.format(**{k: "" for k in TEMPLATE_FIELDS})
        except (KeyError, IndexError, ValueError) as exc:
            raise MpiguideError(
                f"bad --launcher-template '{spec.template}': {exc!r}; "
                f"fields are {', '.join('{' + f + '}' for f in TEMPLATE_FIELDS)}"
            ) from exc

    def command(self, spec: LaunchSpec, stack: Stack, nprocs: int, program: str, args: list[str]) -> list[str]:
        assert spec.template is not None
        nodes, ppn = spec.shape(nprocs)
        text = spec.template.format(
            mpiexec=shlex.quote(str(stack.mpiexec)), np=nprocs, nodes=nodes, ppn=ppn,
            hostfile=shlex.quote(spec.hostfile or ""), prog=shlex.quote(program), args=shlex.join(args),
        )
        return shlex.split(text)


_REGISTRY: dict[str, Launcher] = {x.name: x for x in (Local(), Hostfile(), Srun(), Template())}
LAUNCHERS = tuple(_REGISTRY)


def launcher(name: str) -> Launcher:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise MpiguideError(f"unknown launcher '{name}': choose one of {', '.join(LAUNCHERS)}") from None


def default_np() -> int:
    """Processes of a collective measurement without --np: the 16 per node of Carpen-Amarie et al. (2016), at most
    the cores here, at least 2."""
    return max(2, min(16, os.cpu_count() or 2))


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
    return launcher(spec.launcher).command(spec, stack, nprocs, program, args)


def environment(spec: LaunchSpec, stack: Stack, base: Mapping[str, str]) -> dict[str, str]:
    """What a launch adds to the stack's environment `base`: on a Slurm allocation's nodes, Slurm's settings
    (core.slurm.launch_env)."""
    return slurm.launch_env(stack, base) if spec.on_nodes else {}


def test_cluster_name(spec: LaunchSpec) -> str | None:
    """The registered Slurm site the launches run on (mpiguide's test cluster, whose nodes share this machine's
    cores), if any."""
    if not spec.on_nodes:
        return None
    site = slurm.site_of({**os.environ, **slurm.slurm_env()})
    return site.name if site else None


def preflight(spec: LaunchSpec, stack: Stack, env: Mapping[str, str]) -> None:
    """Checks made once before the first launch: a missing srun, PMI plugin or partition is refused here."""
    launcher(spec.launcher).preflight(spec, stack, env)


def stops_the_run(spec: LaunchSpec, log: str) -> str | None:
    """Why the launches after a failed one cannot run either, read from its log (None: they can)."""
    return slurm.node_failure(log) if spec.on_nodes else None


# A frame of MPI's initialisation in the backtrace a library prints when a process gets a signal, as
# backtrace_symbols writes it: "lib(symbol+0x95)[0x7f..]".
_INIT_FRAME = re.compile(r"\((?:P?MPI_Init(?:_thread)?|ompi_mpi_init|MPIR_Init_thread|MPII_Init_thread)\+0x[0-9a-f]+\)")
_SIGNAL_REPORT = re.compile(r"Signal: |Segmentation fault|Bus error|signal \d+")


def crashed_in_init(log: str) -> bool:
    """The log shows a process killed by a signal inside MPI_Init: the program itself never ran. Open MPI 5.0
    does so now and then when a peer's first message arrives before MPI_COMM_WORLD is set up
    (open-mpi/ompi#12495), most often under srun."""
    return bool(_SIGNAL_REPORT.search(log) and _INIT_FRAME.search(log))


# What Slurm's PMI-2 plugin prints when it drops a request it could not parse. Seen with MPICH 5's
# segmented puts of MPI_Init's address exchange on a loaded machine (the request arrives in pieces): the
# plugin answers nothing, and every process waits in MPI_Init until the launch timeout.
PMI_REQUEST_DROPPED = "mpi/pmi2: invalid client request"


def dropped_in_init(log: str) -> bool:
    """The log shows the process manager dropped a request of MPI's start-up exchange: the program can never
    start, so the launch is stopped at once rather than at its timeout."""
    return PMI_REQUEST_DROPPED in log


def failure_hint(spec: LaunchSpec, log: str) -> str | None:
    """What a failed launch's log suggests doing, where it says more than the log itself."""
    return slurm.missing_on_nodes(log) if spec.on_nodes else None


def describe(argv: list[str], stack: Stack, extra: Mapping[str, str] | None = None) -> str:
    """A copy-pasteable shell line: the stack's environment additions, then the command."""
    env = [f"{k}={shlex.quote(v)}" for k, v in {**stack.env_additions(), **(extra or {})}.items()]
    env.append(f'PATH={shlex.quote(str(stack.bin))}:"$PATH"')
    return f"env {' '.join(env)} {shlex.join(argv)}"
