"""What differs between MPI implementations, one adapter per family: how to recognise an installation, the
environment and mpiexec flags it needs, its PMI under srun, how its processes on different nodes are made
to talk over TCP, and how it names and forces its own collective algorithms. Everything else in mpiguide asks
the stack's family (Stack.adapter) and never compares family names itself."""

from __future__ import annotations

import functools
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from mpiguide.core import tuning_formats
from mpiguide.core.errors import MpiguideError


@dataclass(frozen=True)
class Algorithm:
    """One algorithm an MPI library offers for a collective, as the library lists it."""

    collective: str  # mpiguide's name of the collective (libmpiguide-tune's: bcast, reduce_scatter_block, ...)
    name: str  # the library's name of the algorithm
    value: str  # what the library's control variable takes to force it
    control: str  # that variable, as an environment variable
    needs: tuple[tuple[str, str], ...] = ()  # other settings without which the control has no effect
    # what a tuning file must give the algorithm beside its name, (key, value), as the library has them set
    params: tuple[tuple[str, str], ...] = ()

    @property
    def env(self) -> dict[str, str]:
        """The environment that forces the algorithm."""
        return {**dict(self.needs), self.control: self.value}

    def to_dict(self) -> dict:
        """As a run's parameters keep it and `mpiguide algorithms --json` prints it."""
        return {"name": self.name, "value": self.value, "env": self.env, "params": dict(self.params)}


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

    def network_between_nodes_env(self, prefix: str) -> dict[str, str]:
        """Processes on different nodes over TCP, on one node over shared memory (Stack's docstring says why),
        for the installation at prefix."""
        return {}

    def recognises(self, prefix: Path) -> bool:
        return any((prefix / f).exists() for f in self.marker_files)

    # Collective algorithms: the library lists them through its MPI_T control variables (mg_mpit), whose
    # names contain one of algorithm_cvar_match; algorithms() reads that listing.
    algorithm_cvar_match: tuple[str, ...] = ()

    def check_lists_algorithms(self) -> None:
        """Raises unless mpiguide knows where this family lists its collective algorithms."""
        if not self.algorithm_cvar_match:
            raise MpiguideError(f"mpiguide cannot list the collective algorithms of an MPI of family "
                                f"{self.name!r}: it knows how MPICH, Open MPI and Intel MPI list theirs")

    def algorithms(self, cvars: list[dict], collective: str) -> list[Algorithm]:
        """The algorithms the library lists for a collective (its default left out), from mg_mpit's cvars."""
        self.check_lists_algorithms()
        return []

    # A forced algorithm the library does not apply to a call: the settings under which it says so
    # (mg_collbench --capture-output notes what it prints per size), what it then prints, and the report's
    # account of how (or that it cannot be) detected.
    refusal_env: tuple[tuple[str, str], ...] = ()
    refusal_marks: tuple[str, ...] = ()
    refusal_detection = "not detectable: mpiguide knows no way in which this library says so"

    # The library's own tuning file (core.tuning_formats): its name, how it is written from the choices, and the
    # environment that makes the library read it.
    tuning_file: str | None = None
    # whether its rules can name processes per node, so that placements of one process count choose apart
    tuning_names_placement = False

    def write_tuning(self, choices: list[tuning_formats.Choice], prefix: Path, origin: str) -> tuning_formats.Written:
        raise MpiguideError(f"mpiguide cannot write the collective tuning format of an MPI of family {self.name!r}: "
                            "it writes MPICH's selection JSON, Open MPI's coll/tuned rules and Intel MPI's "
                            "I_MPI_ADJUST settings")

    def tuning_env(self, path: str) -> dict[str, str]:
        return {}

    def ignored_rule(self, log: str, collective: str, value: str) -> str | None:
        """What the library printed (in a launch's log) to say it ignores its tuning file's rule choosing value for
        collective, if it did (a check launch with the file then fails)."""
        return None


@functools.cache
def _mpich_devices(prefix: str) -> str:
    """The network modules of the MPICH at prefix, as `mpichversion` names its device ("ch4:ucx ofi"); "" where
    it does not say."""
    try:
        out = subprocess.run([str(Path(prefix) / "bin" / "mpichversion")], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    m = re.search(r"^MPICH Device:\s*(.*)$", out, re.MULTILINE)
    return m.group(1) if m else ""


class Mpich(Family):
    name = "mpich"
    marker_files = ("bin/mpichversion",)
    name_marks = ("mpich",)
    version_marks = ("MPICH", "MVAPICH")

    def network_between_nodes_env(self, prefix: str) -> dict[str, str]:
        # whichever network module the build has (MPICH's own shared memory serves one node), OFI where it has
        # both: UCX's addresses take several PMI-2 segments in MPI_Init's exchange, and Slurm's PMI-2 plugin
        # drops such a segment now and then, and then every rank waits in MPI_Init (6 launches of 6 on the test
        # cluster with MPIR_CVAR_DEBUG_SUMMARY=1; OFI's tcp address is 16 bytes: 0 of 6)
        env = {"UCX_TLS": "tcp,self", "FI_PROVIDER": "tcp"}
        if "ofi" in _mpich_devices(prefix):
            env["MPIR_CVAR_CH4_NETMOD"] = "ofi"
        return env

    # MPIR_CVAR_<COLL>_INTRA_ALGORITHM: an integer variable without an MPI_T enumeration whose description lists
    # the choices, one a line after the first ("binomial   - Force Binomial Tree"); the environment takes the name.
    # An algorithm's parameters are the variables named after it, MPIR_CVAR_<COLL>_<ALGORITHM>_<PARAMETER>
    # (MPIR_CVAR_ALLREDUCE_RECURSIVE_MULTIPLYING_KVAL): forced through the control, MPICH runs it with their
    # values, while a selection file must give them (`k=2`; KVAL is `k`), or they are 0.
    algorithm_cvar_match = ("MPIR_CVAR_",)
    _CHOICE = re.compile(r"^\s*([A-Za-z0-9_]+)\s+-\s")

    def algorithms(self, cvars: list[dict], collective: str) -> list[Algorithm]:
        var = f"MPIR_CVAR_{collective.upper()}_INTRA_ALGORITHM"
        cvar = _cvar(cvars, var, self.name)
        names = [m.group(1) for line in str(cvar.get("description", "")).splitlines()[1:]
                 if (m := self._CHOICE.match(line))]
        if "auto" not in names:
            raise MpiguideError(f"{var}: its description lists no choices in the form MPICH uses ('auto - ...' "
                                f"and one 'name - text' a line): {str(cvar.get('description', ''))[:300]!r}")
        return [Algorithm(collective, n, n, var, params=self._params(cvars, collective, n))
                for n in names if n != "auto"]

    @staticmethod
    def _params(cvars: list[dict], collective: str, name: str) -> tuple[tuple[str, str], ...]:
        prefix = f"MPIR_CVAR_{collective.upper()}_{name.upper()}_"
        out = []
        for c in cvars:
            cname = str(c.get("name", ""))
            if cname.startswith(prefix) and "value" in c:
                key = cname[len(prefix):].lower()
                out.append(("k" if key == "kval" else key, str(c["value"])))
        return tuple(sorted(out))

    tuning_file = "coll_selection.json"
    tuning_names_placement = True  # comm_avg_ppn

    def write_tuning(self, choices: list[tuning_formats.Choice], prefix: Path, origin: str) -> tuning_formats.Written:
        base, names = tuning_formats.mpich_selection(tuning_formats.mpich_library(prefix))
        return tuning_formats.mpich_json(choices, base, names)

    def tuning_env(self, path: str) -> dict[str, str]:
        return tuning_formats.mpich_env(path)

    refusal_env = (("MPIR_CVAR_COLLECTIVE_FALLBACK", "print"),)
    refusal_marks = ("cannot be applied", "not usable for the provided arguments")
    refusal_detection = ("MPIR_CVAR_COLLECTIVE_FALLBACK=print: MPICH runs its own choice instead and prints "
                         "that the forced algorithm cannot be applied, which the driver notes per size")


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

    def network_between_nodes_env(self, prefix: str) -> dict[str, str]:
        return {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "tcp,sm,self"}

    # coll_tuned_<coll>_algorithm: an MPI_T enumeration, 0 "ignore" (the component's own decision) and one item
    # per algorithm; forcing one needs coll_tuned_use_dynamic_rules too. The environment takes the number.
    algorithm_cvar_match = ("coll_tuned_",)

    def algorithms(self, cvars: list[dict], collective: str) -> list[Algorithm]:
        var = f"coll_tuned_{collective}_algorithm"
        items = _cvar(cvars, var, self.name).get("enum") or []
        if not items or not all(isinstance(i, dict) and isinstance(i.get("value"), int) and "name" in i for i in items):
            raise MpiguideError(f"{var}: the library gives no enumeration of its algorithms")
        needs = (("OMPI_MCA_coll_tuned_use_dynamic_rules", "1"),)
        return [Algorithm(collective, str(i["name"]), str(i["value"]), f"OMPI_MCA_{var}", needs)
                for i in items if int(i["value"]) != 0]

    tuning_file = "coll_tuned_rules.conf"

    def write_tuning(self, choices: list[tuning_formats.Choice], prefix: Path, origin: str) -> tuning_formats.Written:
        return tuning_formats.openmpi_rules(choices, origin)

    def tuning_env(self, path: str) -> dict[str, str]:
        return tuning_formats.openmpi_env(path)

    refusal_detection = ("partly: some forced algorithms Open MPI refuses with an error (two_proc on more than 2 "
                         "processes), noted per size; others its tuned component replaces without a word in release "
                         "builds (a ring allreduce of fewer elements than processes), and such a point measures the "
                         "other algorithm")


class IntelMpi(Family):
    name = "impi"
    marker_files = ("bin/impi_info", "bin/mpiicc", "etc/impi")
    name_marks = ("impi", "intel")
    version_marks = ("Intel(R) MPI",)
    pmi_library_variable = "I_MPI_PMI_LIBRARY"  # without it every rank starts alone under srun

    def env(self, prefix: str) -> dict[str, str]:
        return {"I_MPI_ROOT": prefix}

    def network_between_nodes_env(self, prefix: str) -> dict[str, str]:
        return {"I_MPI_FABRICS": "shm:ofi", "FI_PROVIDER": "tcp"}

    # I_MPI_ADJUST_<COLL>: through MPI_T an integer variable MPIR_CVAR_USE_<COLL> whose description ends with the
    # range of its preset ids and names the environment variable ("... range: 0-32 @Alias:# I_MPI_ADJUST_ALLREDUCE
    # @Default:# -1"); 0 is the library's own choice. Intel names no preset (its manual lists algorithms, and
    # since 2021.14 says presets outnumber them), so an algorithm here is its id: preset<N>.
    algorithm_cvar_match = ("MPIR_CVAR_USE_",)
    _RANGE = re.compile(r"range:\s*0\s*-\s*(\d+)")

    def algorithms(self, cvars: list[dict], collective: str) -> list[Algorithm]:
        control = f"I_MPI_ADJUST_{collective.upper()}"
        found = [c for c in cvars if re.search(rf"@Alias:#\s*{control}(\s|$)", str(c.get("description", "")))]
        if not found:
            raise MpiguideError(f"the Intel MPI library lists no control variable for {control} (MPI_T: none of its "
                                "MPIR_CVAR_USE_* variables names it as an alias): it cannot be told which algorithm "
                                "to use for this collective")
        description = str(found[0]["description"])
        m = self._RANGE.search(description)
        if not m or int(m.group(1)) < 1:
            raise MpiguideError(f"{found[0].get('name')} ({control}): its description gives no range of preset "
                                f"ids in the form Intel MPI uses ('range: 0-N'): {description[:300]!r}")
        return [Algorithm(collective, f"preset{i}", str(i), control) for i in range(1, int(m.group(1)) + 1)]

    tuning_file = "i_mpi_adjust.env"

    def write_tuning(self, choices: list[tuning_formats.Choice], prefix: Path, origin: str) -> tuning_formats.Written:
        return tuning_formats.impi_adjust(choices, origin)

    def tuning_env(self, path: str) -> dict[str, str]:
        return tuning_formats.env_file_env(path)

    def ignored_rule(self, log: str, collective: str, value: str) -> str | None:
        # at MPI_Init: "Incorrect algorithm: ALLREDUCE=99, will be ignored" (an id it does not have), "Incorrect
        # adjust value: ALLREDUCE=<the setting>, ..." (a setting it cannot read)
        var = collective.upper()
        return next((line.strip() for line in log.splitlines()
                     if f"Incorrect algorithm: {var}={value}," in line or f"Incorrect adjust value: {var}=" in line),
                    None)

    refusal_detection = ("not detectable: every listed preset id is one the library has (an id it does not have, or a "
                         "rule it cannot read, it ignores at MPI_Init and says so), and a preset it cannot apply to a "
                         "call it replaces without a word, so such a point measures the other algorithm")


def _cvar(cvars: list[dict], name: str, family: str) -> dict:
    found = [c for c in cvars if c.get("name") == name]
    if not found:
        raise MpiguideError(f"the {family} library lists no control variable {name} (MPI_T): it cannot be told "
                            "which algorithm to use for this collective")
    return found[0]


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
