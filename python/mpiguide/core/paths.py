"""Where mpiguide finds its sources and keeps its stacks, builds and results."""

from __future__ import annotations

import os
from pathlib import Path

from mpiguide.core.errors import MpiguideError


def source_root() -> Path:
    """The checkout holding CMakeLists.txt (the package is installed editable from it)."""
    env = os.environ.get("MPIGUIDE_SOURCE")
    root = Path(env) if env else Path(__file__).resolve().parents[3]
    if not (root / "CMakeLists.txt").is_file():
        raise MpiguideError(
            f"cannot find the mpiguide C sources at {root} (no CMakeLists.txt); "
            "install mpiguide editable from its checkout (make venv) or set MPIGUIDE_SOURCE"
        )
    return root


def data_home() -> Path:
    """Installed stacks live here; MPIGUIDE_HOME overrides (tests use a temporary one)."""
    env = os.environ.get("MPIGUIDE_HOME")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "share") / "mpiguide"


def build_root() -> Path:
    env = os.environ.get("MPIGUIDE_BUILD")
    return Path(env) if env else source_root() / "build"
