"""The C side on its own: `cmake --preset <family>` finds the family's compiler wrapper, builds, and ctest runs
the MPI tests through the launcher CMake writes (no mpiguide involved); bad presets say what to do."""

from __future__ import annotations

import os
import subprocess

from conftest import REPO


def cmake(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["cmake", *args], cwd=REPO, capture_output=True, text=True, timeout=900,
                          env={**os.environ, **(env or {})})


def test_mpich_preset_builds_and_its_ctest_launches(mpich_stack, tmp_path):
    tree = tmp_path / "b"
    res = cmake("--preset", "mpich", "-B", str(tree), f"-DMG_MPI_PREFIX={mpich_stack.prefix}")
    assert res.returncode == 0, res.stdout + res.stderr
    cache = (tree / "CMakeCache.txt").read_text()
    assert f"MG_MPICC:FILEPATH={mpich_stack.prefix}/bin/mpicc" in cache
    assert f"MG_MPIEXEC_PROGRAM:FILEPATH={mpich_stack.prefix}/bin/mpiexec" in cache
    assert "mpich's mpiexec" in (tree / "mg-mpiexec").read_text()
    res = cmake("--build", str(tree), "-j2", "--target", "mg_pingpong", "test_bench_core")
    assert res.returncode == 0, res.stdout + res.stderr
    res = subprocess.run(["ctest", "--test-dir", str(tree), "-R", "^(pingpong_np2|bench_core_np4)$"],
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0 and "100% tests passed, 0 tests failed out of 2" in res.stdout, res.stdout


def test_a_preset_without_its_mpi_says_what_to_give(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "MPIGUIDE_HOME": str(tmp_path / "home"), "MG_MPI_PREFIX": ""}
    res = cmake("--preset", "impi", "-B", str(tmp_path / "b"), f"-DMG_MPI_PREFIX={tmp_path / 'none'}", env=env)
    assert res.returncode != 0
    assert "MG_MPI_FAMILY=impi: no MPI compiler wrapper (mpiicx, mpiicc, mpicc)" in " ".join(res.stderr.split())
    res = cmake("-S", str(REPO), "-B", str(tmp_path / "c"), "-DMG_MPI_FAMILY=lam", env=env)
    assert res.returncode != 0
    assert "MG_MPI_FAMILY=lam: choose one of mpich, openmpi, impi" in " ".join(res.stderr.split())
