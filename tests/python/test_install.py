"""Installing mpiguide for other projects and other machines (docs/install.md):
the C libraries through `cmake --install` used by an outside CMake project and
an outside Makefile project with pkg-config, both run under mpiexec; and the
Python package built as an sdist and a wheel, installed into a clean venv
outside the checkout, building its C code from the copy it carries."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mpiguide
from mpiguide.core import launch

ROOT = Path(__file__).resolve().parents[2]
EXTERNAL = ROOT / "tests" / "external"


def sh(argv: list[str], env: dict | None = None, cwd: Path | None = None, timeout: int = 900):
    res = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, f"{' '.join(map(str, argv))} failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res


def run_consumer(stack, exe: Path) -> None:
    argv = launch.command(launch.LaunchSpec(), stack, 2, str(exe), [])
    res = sh(argv, env=stack.env(), timeout=300)
    assert "consumer: ok" in res.stdout, res.stdout + res.stderr


@pytest.fixture(scope="module")
def prefix(mpich_build, tmp_path_factory) -> Path:
    """`cmake --install build/mpich --prefix P`."""
    p = tmp_path_factory.mktemp("installed") / "prefix"
    sh(["cmake", "--install", str(mpich_build), "--prefix", str(p)])
    return p


def test_cmake_install_lays_out_the_libraries_drivers_and_packages(prefix, mpich_stack):
    libdir = next(d for d in (prefix / "lib", prefix / "lib64") if d.is_dir())
    for name in ("libmpiguide-dt.so", "libmpiguide-dt.a", "libmpiguide-tune.so", "libmpiguide-tune.a",
                 "cmake/mpiguide/mpiguideConfig.cmake", "cmake/mpiguide/mpiguideConfigVersion.cmake",
                 "cmake/mpiguide/mpiguideTargets.cmake", "pkgconfig/mpiguide-dt.pc", "pkgconfig/mpiguide-tune.pc"):
        assert (libdir / name).is_file(), name
    assert all((prefix / "include" / "mpiguide" / h).is_file() for h in ("dt.h", "tune.h"))
    for driver in ("mg_ddtbench", "mg_dtbench", "mg_collbench", "mg_pingpong", "mg_stencil", "mg_dtexplain"):
        assert os.access(prefix / "libexec" / "mpiguide" / driver, os.X_OK), driver
    # the shared libraries export their API only, and the package names the MPI it was built for
    nm = sh(["nm", "-D", "--defined-only", str(libdir / "libmpiguide-dt.so")]).stdout
    assert {line.split()[-1] for line in nm.splitlines() if " T " in line} <= {
        *(ROOT / "tests" / "c" / "exports_dt.txt").read_text().split()}
    config = (libdir / "cmake" / "mpiguide" / "mpiguideConfig.cmake").read_text()
    assert f'set(MPIGUIDE_MPI_C_COMPILER "{mpich_stack.mpicc}")' in config
    # installed drivers run from the prefix, and take the installed libraries (their RPATH points into it)
    res = sh([str(prefix / "libexec" / "mpiguide" / "mg_dtexplain"), "--list"], env=mpich_stack.env())
    assert '"driver": "mg_dtexplain"' in res.stdout.replace('":"', '": "')
    ldd = sh(["ldd", str(prefix / "libexec" / "mpiguide" / "mg_tuneoverhead_shared")], env=mpich_stack.env()).stdout
    assert re.search(rf"libmpiguide-tune\.so => {re.escape(str(libdir))}", ldd), ldd


def test_an_outside_cmake_project_builds_and_runs(prefix, mpich_stack, tmp_path):
    """Plain cc, find_package(mpiguide): the MPI comes with the package."""
    src = tmp_path / "cmake_project"
    shutil.copytree(EXTERNAL, tmp_path, dirs_exist_ok=True)
    out = tmp_path / "build"
    cc = shutil.which("gcc") or shutil.which("cc")
    sh(["cmake", "-S", str(src), "-B", str(out), f"-DCMAKE_PREFIX_PATH={prefix}", f"-DCMAKE_C_COMPILER={cc}"],
       env=mpich_stack.env())
    sh(["cmake", "--build", str(out)], env=mpich_stack.env())
    for exe in ("consumer_shared", "consumer_static"):
        run_consumer(mpich_stack, out / exe)
    # the shared one takes the installed libraries (no copy of them in the build tree)
    ldd = sh(["ldd", str(out / "consumer_shared")], env=mpich_stack.env()).stdout
    assert re.search(rf"libmpiguide-tune\.so => {re.escape(str(prefix))}", ldd), ldd


def test_an_outside_makefile_project_builds_with_pkg_config(prefix, mpich_stack, tmp_path):
    if not shutil.which("pkg-config"):
        pytest.skip("pkg-config is not installed (Debian: apt-get install pkgconf)")
    shutil.copytree(EXTERNAL, tmp_path, dirs_exist_ok=True)
    libdir = next(d for d in (prefix / "lib", prefix / "lib64") if d.is_dir())
    env = {**mpich_stack.env(), "PKG_CONFIG_PATH": str(libdir / "pkgconfig")}
    assert sh(["pkg-config", "--variable=mpicc", "mpiguide-dt"], env=env).stdout.strip() == str(mpich_stack.mpicc)
    sh(["make", "-C", str(tmp_path / "pkgconfig_project")], env=env)
    run_consumer(mpich_stack, tmp_path / "pkgconfig_project" / "consumer")


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> Path:
    """The sdist (python -m build), and the wheel built from it as pip and pipx do."""
    out = tmp_path_factory.mktemp("dist")
    sh([sys.executable, "-m", "build", "--sdist", "--outdir", str(out), str(ROOT)], timeout=1800)
    (sdist,) = out.glob("mpiguide-*.tar.gz")
    sh([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out), str(sdist)],
       timeout=1800)
    return out


def test_the_sdist_carries_the_c_sources(dists):
    import tarfile

    (sdist,) = dists.glob("mpiguide-*.tar.gz")
    names = tarfile.open(sdist).getnames()
    top = names[0].split("/")[0]
    for want in ("CMakeLists.txt", "cmake/install.cmake", "include/mpiguide/dt.h", "src/dt/whole.c",
                 "src/tune/intercept.c", "setup.py", "docs/install.md"):
        assert f"{top}/{want}" in names, want


def test_a_wheel_installed_outside_the_checkout_builds_and_runs(dists, mpich_stack, tmp_path):
    """A clean venv in a directory of its own: the wheel builds its C code for MPICH into the cache under
    MPIGUIDE_HOME, explains a type, runs a small ddt job into ./results of the working directory."""
    (wheel,) = dists.glob("mpiguide-*.whl")
    venv = tmp_path / "venv"
    sh([sys.executable, "-m", "venv", str(venv)])
    py = venv / "bin" / "python"
    sh([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)], timeout=1800)
    work = tmp_path / "work"
    work.mkdir()
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MPIGUIDE_", "VIRTUAL_ENV", "PYTHONPATH"))}
    env.update(MPIGUIDE_HOME=str(home), PATH=f"{venv / 'bin'}:{env['PATH']}")
    mg = str(venv / "bin" / "mpiguide")
    # the MPICH installed already, added by prefix (not a second download)
    sh([mg, "stack", "add", "mpich", "--prefix", mpich_stack.prefix], env=env, cwd=work)
    where = sh([str(py), "-c", "import mpiguide.core.paths as p; print(p.source_root()); print(p.build_root())"],
               env=env, cwd=work).stdout.split()
    assert str(venv) in where[0] and not where[0].startswith(str(ROOT))
    assert where[1].startswith(str(home / "build" / mpiguide.__version__))
    res = sh([mg, "build", "--stacks", "mpich"], env=env, cwd=work, timeout=1800)
    assert f"built {home / 'build'}" in res.stdout + res.stderr
    explain = sh([mg, "dt", "explain", "vector(count=3, block=2, stride=5, int)"], env=env, cwd=work).stdout
    assert "shape:       vector" in explain and "block:       8 bytes" in explain
    sh([mg, "ddt", "run", "--stacks", "mpich", "--tests", "5", "--A", "2", "--sizes", "3200", "--runs", "2",
        "--nrep", "5", "--output", "results/r"], env=env, cwd=work, timeout=1800)
    assert (work / "results" / "r" / "verdicts.csv").is_file() and (work / "results" / "r" / "report.html").is_file()
