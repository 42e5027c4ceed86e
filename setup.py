"""The C sources ship inside the Python package (mpiguide/csrc), so that an
installed mpiguide builds its drivers and libraries without the checkout
(`mpiguide build`, docs/install.md). Everything else is in pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# What the C build needs (CMakeLists.txt reads nothing else); the C tests stay in the checkout.
C_SOURCES = ("CMakeLists.txt", "cmake", "include", "src")


class BuildPyWithCSources(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):  # the attribute is new in setuptools 64
            return  # an editable install builds from the checkout itself
        dest = Path(self.build_lib) / "mpiguide" / "csrc"
        shutil.rmtree(dest, ignore_errors=True)
        for name in C_SOURCES:
            src = HERE / name
            if not src.exists():
                raise SystemExit(f"setup.py: {src} is missing: build the package from a checkout or an sdist")
            if src.is_dir():
                shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.o"))
            else:
                dest.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / name)


setup(cmdclass={"build_py": BuildPyWithCSources})
