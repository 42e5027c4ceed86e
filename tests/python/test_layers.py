"""The Python layers of docs/architecture.md, as import-linter contracts in pyproject.toml: the CLI on the
suites and the cluster tools, they on the front end's commands, all on the core; the core without a terminal;
suites independent of each other; the test cluster reached only from the front end and the cluster tools."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    pytest.importorskip("importlinter", reason="import-linter is a dev dependency: pip install -e '.[dev]'")
    return subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
                           "lint_imports_command()"], cwd=root, capture_output=True, text=True,
                          env={"PYTHONPATH": str(root / "python"), "PATH": "/usr/bin:/bin"})


def test_import_contracts_hold():
    res = lint_imports(ROOT)
    assert res.returncode == 0 and "0 broken" in res.stdout, res.stdout + res.stderr
    assert "Contracts: 4 kept" in res.stdout


@pytest.mark.parametrize(("module", "line", "contract"), [
    ("core/stats.py", "from mpiguide.front import commands", "the CLI on the suites"),
    ("core/stats.py", "import rich.console", "the core has no terminal"),
    ("front/tuneflow.py", "import mpiguide.suites.coll", "the CLI on the suites"),
    ("suites/pingpong/report.py", "from mpiguide.suites.coll import catalog", "suites know nothing of each other"),
])
def test_a_lower_layer_importing_a_higher_one_breaks_a_contract(tmp_path, module, line, contract):
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    shutil.copytree(ROOT / "python" / "mpiguide", tmp_path / "python" / "mpiguide",
                    ignore=shutil.ignore_patterns("csrc", "__pycache__"))
    path = tmp_path / "python" / "mpiguide" / module
    path.write_text(path.read_text() + f"\n{line}  # noqa\n")
    res = lint_imports(tmp_path)
    assert res.returncode != 0 and " broken" in res.stdout and "0 broken" not in res.stdout, res.stdout
    assert "Broken contracts" in res.stdout and contract in res.stdout.split("Broken contracts")[-1], res.stdout
