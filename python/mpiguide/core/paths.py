"""Where mpiguide finds its sources and keeps its stacks, builds and results.

Two ways of being installed: editable from a checkout (the C sources and the
build trees are in the checkout, build/<stack>/), or as a package (pip, pipx:
the C sources ship inside it, mpiguide/csrc, and the build trees go to a
per-user cache under MPIGUIDE_HOME). Results always go to ./results of the
working directory."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from mpiguide import __version__
from mpiguide.core.errors import MpiguideError

PACKAGE = Path(__file__).resolve().parents[1]  # .../mpiguide


def is_checkout(root: Path) -> bool:
    """Whether root is a checkout of mpiguide (sources, Python package, tests) rather than the package's copy
    of the C sources."""
    return (root / "CMakeLists.txt").is_file() and (root / "python" / "mpiguide").is_dir()


def _checkout() -> Path | None:
    """The checkout this package is installed editable from, if it is."""
    root = PACKAGE.parents[1]
    return root if is_checkout(root) else None


def source_root() -> Path:
    """The C sources (CMakeLists.txt, include/, src/): MPIGUIDE_SOURCE, the checkout, or the package's copy."""
    env = os.environ.get("MPIGUIDE_SOURCE")
    root = Path(env) if env else _checkout() or PACKAGE / "csrc"
    if not (root / "CMakeLists.txt").is_file():
        raise MpiguideError(
            f"cannot find the mpiguide C sources at {root} (no CMakeLists.txt); reinstall mpiguide "
            "(pip install mpiguide, or make venv in a checkout) or set MPIGUIDE_SOURCE to a checkout"
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
    """MPIGUIDE_BUILD, else the checkout's build/, else a cache under data_home() per version and
    installation (two installed versions never share build trees)."""
    env = os.environ.get("MPIGUIDE_BUILD")
    if env:
        return Path(env)
    src = source_root()
    if is_checkout(src):
        return src / "build"
    tag = hashlib.sha256(str(src).encode()).hexdigest()[:8]
    return data_home() / "build" / f"{__version__}-{tag}"
