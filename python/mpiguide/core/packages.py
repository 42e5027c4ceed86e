"""Debian packages mpiguide installs itself where it may (as root, with apt-get): the Slurm tools of the test
cluster, SimGrid for simulated platforms."""

from __future__ import annotations

import os
import shutil
import subprocess

from mpiguide.core.errors import MpiguideError


def apt_install(packages: list[str], needed_by: str, say) -> None:
    """apt-get installs packages for needed_by ("the test cluster"); a clear error where that cannot be done."""
    if not shutil.which("apt-get"):
        raise MpiguideError(f"{needed_by} needs {', '.join(packages)}; install them with your package manager "
                            "(this machine has no apt-get)")
    if os.geteuid() != 0:
        raise MpiguideError(f"{needed_by} needs {', '.join(packages)}: install them (Debian: sudo apt-get install "
                            f"{' '.join(packages)})")
    say(f"installing {', '.join(packages)} (apt-get install; {needed_by} needs them)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", *packages]):
        res = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if res.returncode != 0:
            tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-10:])
            raise MpiguideError(f"{' '.join(cmd)} failed:\n{tail}")
