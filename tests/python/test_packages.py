"""apt-get as mpiguide runs it to install what a feature needs (mpiguide.core.packages), with a stand-in apt-get."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mpiguide.core import packages
from mpiguide.core.errors import MpiguideError


def fake_apt(tmp_path: Path, monkeypatch, update_says: str, update_rc: int) -> Path:
    """An apt-get on PATH that logs its arguments; its update prints update_says and exits update_rc."""
    bin_dir, log = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    script = bin_dir / "apt-get"
    script.write_text(f"""#!/bin/sh
echo "$*" >> '{log}'
case "$*" in *" update "*) echo '{update_says}' >&2; exit {update_rc};; esac
exit 0
""")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    return log


def test_the_install_waits_for_dpkgs_lock_and_a_locked_update_is_passed_over(tmp_path, monkeypatch):
    log = fake_apt(tmp_path, monkeypatch, "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 1",
                   100)
    said = []
    packages.apt_install(["libsimgrid-dev"], "simulating", said.append)
    wait = f"-o DPkg::Lock::Timeout={packages.APT_LOCK_WAIT_S}"
    assert log.read_text().splitlines() == [f"{wait} update -q", f"{wait} install -y -q libsimgrid-dev"]
    assert any("another apt-get holds the package lists" in s for s in said)


def test_an_update_that_fails_otherwise_stops_the_install(tmp_path, monkeypatch):
    log = fake_apt(tmp_path, monkeypatch, "E: The repository is not signed.", 100)
    with pytest.raises(MpiguideError, match=r"update -q failed:\nE: The repository is not signed."):
        packages.apt_install(["libsimgrid-dev"], "simulating", lambda _: None)
    assert len(log.read_text().splitlines()) == 1
