"""The Python layers of docs/architecture.md, as import-linter contracts in pyproject.toml: the front end on the
suites and the cluster tools, they on the core; suites independent of each other; the test cluster reached only
from the front end and the cluster tools."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_hold():
    pytest.importorskip("importlinter", reason="import-linter is a dev dependency: pip install -e '.[dev]'")
    res = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
                          "lint_imports_command()"], cwd=ROOT, capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"})
    assert res.returncode == 0 and "0 broken" in res.stdout, res.stdout + res.stderr
    assert "Contracts: 3 kept" in res.stdout
