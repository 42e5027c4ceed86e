"""What differs between MPI implementations, one adapter per family: how to recognise an installation, the
environment and mpiexec flags it needs, its PMI under srun, and how its processes on different nodes are made
to talk over TCP. Everything else in mpiguide asks the stack's family (Stack.adapter) and never compares family
names itself."""

from __future__ import annotations

import os
from pathlib import Path


class Family:
    """The defaults: an MPI mpiguide knows nothing particular about (MPICH-style launcher options)."""

    name = "other"
    marker_files: tuple[str, ...] = ()  # files under the prefix that only this family installs
    name_marks: tuple[str, ...] = ()  # in the names of its wrappers (Debian's mpicc.openmpi, mpiexec.mpich)
    version_marks: tuple[str, ...] = ()  # in its MPI_Get_library_version
    srun_mpi = "pmi2"  # srun's --mpi plugin
    # the variable that points the library at Slurm's PMI-2 client library under srun, where it needs one
    pmi_library_variable: str | None = None
    # what to do when srun lacks srun_mpi
    srun_plugin_hint = "ask for Slurm's PMI-2 plugin (mpi_pmi2.so), or launch with --launcher hostfile"

    def env(self, prefix: str) -> dict[str, str]:
        """What every build and launch of an installation at prefix needs."""
        return {}

    def session_dir_env(self, directory: str) -> dict[str, str]:
        """Puts the launcher's session files under directory, where the launcher keeps any."""
        return {}

    def oversubscribe_flags(self) -> list[str]:
        """mpiexec flags that allow more processes than cores."""
        return []

    def hostfile_flags(self, hostfile: str, ppn: int) -> list[str]:
        return ["-f", hostfile, "-ppn", str(ppn)]

    def network_between_nodes_env(self) -> dict[str, str]:
        """Processes on different nodes over TCP, on one node over shared memory (Stack's docstring says why)."""
        return {}

    def recognises(self, prefix: Path) -> bool:
        return any((prefix / f).exists() for f in self.marker_files)


class Mpich(Family):
    name = "mpich"
    marker_files = ("bin/mpichversion",)
    name_marks = ("mpich",)
    version_marks = ("MPICH", "MVAPICH")

    def network_between_nodes_env(self) -> dict[str, str]:
        # whichever network module the build has and picks (MPICH's own shared memory serves one node)
        return {"UCX_TLS": "tcp,self", "FI_PROVIDER": "tcp"}


class OpenMpi(Family):
    name = "openmpi"
    marker_files = ("bin/ompi_info", "bin/prterun")
    name_marks = ("openmpi", "ompi")
    version_marks = ("Open MPI",)
    srun_mpi = "pmix"  # Open MPI 5 speaks no PMI-2
    srun_plugin_hint = ("run inside an allocation (salloc, or mpiguide batch) with --launcher-template "
                        "'{mpiexec} -n {np} --map-by ppr:{ppn}:node {prog} {args}': Open MPI's mpirun starts its "
                        "daemons through Slurm itself")

    def env(self, prefix: str) -> dict[str, str]:
        add = {}
        if os.geteuid() == 0:  # Open MPI refuses to run as root without both
            add["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
            add["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
        # The PyPI build's shared-memory transport needs no network; keep it quiet.
        add["OMPI_MCA_btl_base_warn_component_unused"] = "0"
        return add

    def session_dir_env(self, directory: str) -> dict[str, str]:
        # prterun names its session directory after its own PID and leaves it behind when it is killed; a later
        # prterun that gets the same PID then fails to start ("the PMIx server's listener thread failed to start")
        return {"PRTE_MCA_prte_local_tmpdir_base": directory}

    def oversubscribe_flags(self) -> list[str]:
        return ["--oversubscribe"]

    def hostfile_flags(self, hostfile: str, ppn: int) -> list[str]:
        return ["--hostfile", hostfile, "--map-by", f"ppr:{ppn}:node"]

    def network_between_nodes_env(self) -> dict[str, str]:
        return {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "tcp,sm,self"}


class IntelMpi(Family):
    name = "impi"
    marker_files = ("bin/impi_info", "bin/mpiicc", "etc/impi")
    name_marks = ("impi", "intel")
    version_marks = ("Intel(R) MPI",)
    pmi_library_variable = "I_MPI_PMI_LIBRARY"  # without it every rank starts alone under srun

    def env(self, prefix: str) -> dict[str, str]:
        return {"I_MPI_ROOT": prefix}

    def network_between_nodes_env(self) -> dict[str, str]:
        return {"I_MPI_FABRICS": "shm:ofi", "FI_PROVIDER": "tcp"}


# in the order they are tried when recognising an installation
_KNOWN = (OpenMpi(), IntelMpi(), Mpich())
_ALL = {f.name: f for f in (*_KNOWN, Family())}
FAMILIES = ("mpich", "openmpi", "impi", "other")  # as --family offers them


def get(name: str) -> Family:
    """The adapter of a family name (the defaults for one mpiguide does not know)."""
    return _ALL.get(name, _ALL["other"])


def from_prefix(prefix: Path) -> str:
    """The family a prefix holds, from the files only it installs; "other" when none says."""
    return next((f.name for f in _KNOWN if f.recognises(prefix)), "other")


def from_names(*tools: Path) -> str | None:
    """The family the names of its wrappers tell (Debian's mpicc.openmpi, mpiexec.mpich, ...), if any."""
    for tool in tools:
        for f in _KNOWN:
            if any(m in tool.name.lower() for m in f.name_marks):
                return f.name
    return None


def from_version(text: str) -> str:
    """The family an MPI_Get_library_version string names; "other" when none."""
    return next((f.name for f in _KNOWN if any(m in text for m in f.version_marks)), "other")
