"""Builds the C code once per stack, in the tree core/paths.py gives it: <build root>/<stack>/
(<stack>-sanitize/ with AddressSanitizer and UndefinedBehaviorSanitizer)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shlex
import shutil
import subprocess
from pathlib import Path

from mpiguide.core.errors import MpiguideError
from mpiguide.core.paths import build_root, source_root
from mpiguide.core.stacks import Stack


def build_dir(stack: Stack, sanitize: bool = False) -> Path:
    return build_root() / (stack.name + ("-sanitize" if sanitize else ""))


def _run_step(cmd: list[str], env: dict[str, str], what: str, tree: str) -> None:
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if res.returncode != 0:
        tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-25:])
        raise MpiguideError(f"{what} failed for {tree} ({shlex.join(cmd)}):\n{tail}")


def _cached(cache: Path, key: str) -> str:
    """A value of CMakeCache.txt ("" if absent)."""
    for line in cache.read_text(errors="replace").splitlines():
        name, _, value = line.partition("=")
        if name.split(":")[0] == key:
            return value
    return ""


@contextlib.contextmanager
def _exclusive(out: Path):
    """One build of a tree at a time: the ranks of an mpi4py program (mpiguide.dt) or two commands may ask
    for the same tree at once, and concurrent cmake runs in one tree corrupt it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f".{out.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def ensure_built(stack: Stack, sanitize: bool = False) -> Path:
    """Configures (first time) and builds the stack's tree; incremental afterwards."""
    stack.require_usable()
    out = build_dir(stack, sanitize)
    with _exclusive(out):
        _build(stack, sanitize, out)
    return out


def _build(stack: Stack, sanitize: bool, out: Path) -> None:
    # ctest's launcher (build/<stack>/mg-mpiexec) is CMake's (cmake/mg_mpiexec.cmake); it exports the stack's
    # environment. MG_MPIEXEC is emptied for trees an older mpiguide configured with a launcher of its own.
    launch_env = ";".join(f"{k}={v}" for k, v in stack.env_additions().items())
    settings = {"CMAKE_C_COMPILER": str(stack.mpicc), "MG_MPI_FAMILY": stack.family, "MG_LAUNCH_ENV": launch_env,
                "MG_MPIEXEC": "", "MG_SANITIZE": "ON" if sanitize else "OFF"}
    _configure_and_build(out, settings, stack.env(), f"stack '{stack.name}'")


def _configure_and_build(out: Path, settings: dict[str, str], env: dict[str, str], tree: str,
                         targets: tuple[str, ...] = ()) -> None:
    """Configures out with settings where its cache differs (from scratch if it was configured from sources
    elsewhere), then builds targets (all by default)."""
    cache = out / "CMakeCache.txt"
    home = _cached(cache, "CMAKE_HOME_DIRECTORY") if cache.exists() else ""
    if home and Path(home).resolve() != source_root().resolve():
        shutil.rmtree(out / "CMakeFiles", ignore_errors=True)  # configured from sources elsewhere: start over
        cache.unlink()
    if not cache.exists() or any(_cached(cache, k) != v for k, v in settings.items()):
        _run_step(["cmake", "-S", str(source_root()), "-B", str(out), *(f"-D{k}={v}" for k, v in settings.items())],
                  env, "configuring the C build", tree)
    jobs = str(max(1, os.cpu_count() or 1))
    _run_step(["cmake", "--build", str(out), "-j", jobs, *(("--target", *targets) if targets else ())], env,
              "building the C code", tree)


SIMULATED = "smpi"  # the tree of the drivers built for SimGrid SMPI (core.smpi)


def ensure_simulated(smpicc: str, drivers: list[str]) -> Path:
    """The drivers built with SMPI's compiler in <build root>/smpi (no C tests: they need a real MPI)."""
    out = build_root() / SIMULATED
    with _exclusive(out):
        _configure_and_build(out, {"CMAKE_C_COMPILER": smpicc, "MG_TESTS": "OFF", "MG_MPIEXEC": "smpirun"},
                             dict(os.environ), "SimGrid SMPI", tuple(drivers))
    return out


def driver_path(stack: Stack, driver: str) -> Path:
    exe = build_dir(stack) / driver
    if not exe.exists():
        raise MpiguideError(f"driver {exe} is missing after the build; run: mpiguide build --stacks {stack.name}")
    return exe
