"""Debian packages mpiguide installs itself where it may (as root, with apt-get): the Slurm tools of the test
cluster, SimGrid for simulated platforms."""

from __future__ import annotations

import os
import shutil
import subprocess

from mpiguide.core.errors import MpiguideError

APT_LOCK_WAIT_S = 600


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
    # Another apt-get (unattended upgrades on a fresh machine, or one started alongside) may hold the locks for a
    # while: the install waits for dpkg's; an update that finds the package lists locked goes on with the lists
    # the other one is refreshing (apt-get update cannot wait for that lock).
    wait = ["-o", f"DPkg::Lock::Timeout={APT_LOCK_WAIT_S}"]
    for cmd in (["apt-get", *wait, "update", "-q"], ["apt-get", *wait, "install", "-y", "-q", *packages]):
        res = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if res.returncode != 0:
            text = (res.stdout + res.stderr).strip()
            if cmd[3] == "update" and "Could not get lock" in text:
                say("apt-get update: another apt-get holds the package lists; going on with them")
                continue
            tail = "\n".join(text.splitlines()[-10:])
            raise MpiguideError(f"{' '.join(cmd)} failed:\n{tail}")
