"""Stacks: install / list / add / env / remove in a temporary MPIGUIDE_HOME, broken and unknown stacks."""

from __future__ import annotations

import json
import shutil

import pytest

from mpiguide.core import families
from mpiguide.core import stacks as stackmod


def stack_line(output: str, name: str) -> str:
    lines = [line for line in output.splitlines() if line.split()[:1] == [name]]
    assert len(lines) == 1, output
    return lines[0]


def write_entry(home, name: str, prefix, source: str = "prefix", family: str = "mpich",
                version: str = "MPICH Version: 9.9\nsecond line"):
    entry = home / "stacks" / name / "stack.json"
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_text(json.dumps({"name": name, "family": family, "prefix": str(prefix), "source": source,
                                 "library_version": version, "compiler": "cc", "extra": {}}))
    return entry


def fake_prefix(path, mpicc: str = "#!/bin/sh\nexit 0\n", mpiexec: str = "#!/bin/sh\nexit 0\n"):
    (path / "bin").mkdir(parents=True)
    for tool, text in (("mpicc", mpicc), ("mpiexec", mpiexec)):
        (path / "bin" / tool).write_text(text)
        (path / "bin" / tool).chmod(0o755)
    return path


@pytest.mark.mpi
@pytest.mark.network  # pip install mpich from PyPI
def test_install_list_add_env_remove(temp_home, cli):
    res = cli(["stack", "install", "mpich"])
    assert res.rc == 0, res.text
    prefix = temp_home / "stacks" / "mpich" / "prefix"
    assert "installed stack 'mpich' (pip:mpich==" in res.text
    assert "MPICH Version:" in res.text
    assert (prefix / "bin" / "mpiexec").is_file() and (prefix / "bin" / "mpicc").is_file()
    entry = json.loads((temp_home / "stacks" / "mpich" / "stack.json").read_text())
    assert entry["family"] == "mpich"
    assert entry["prefix"] == str(prefix)
    assert entry["source"].startswith("pip:mpich==") and entry["source"] != "pip:mpich==?"
    assert entry["library_version"].startswith("MPICH Version:")
    assert entry["compiler"] and entry["compiler"] != "?"

    res = cli(["stack", "install", "mpich"])
    assert res.rc == 2
    assert "stack 'mpich' is already installed; remove it first: mpiguide stack remove mpich" in res.text
    res = cli(["stack", "install", "mpich", "--if-missing"])
    assert res.rc == 0
    assert "stack 'mpich' is installed: MPICH Version:" in res.text

    res = cli(["stack", "list"])
    assert res.rc == 0
    line = stack_line(res.out, "mpich")
    assert "(default)" in line and " ok " in line
    assert "MPICH Version:" in line
    assert entry["source"] in line and str(prefix) in line
    res = cli(["stack", "list", "-v"])
    assert entry["library_version"].splitlines()[1] in res.out  # the full version string

    res = cli(["stack", "add", "copy", "--prefix", str(prefix)])
    assert res.rc == 0, res.text
    assert f"added stack 'copy' (mpich, {prefix.resolve()}): MPICH Version:" in res.text
    copy = stackmod.load("copy")
    assert (copy.family, copy.source, copy.prefix, copy.managed) == ("mpich", "prefix", str(prefix.resolve()), False)
    assert copy.library_version == entry["library_version"]
    res = cli(["stack", "add", "copy", "--prefix", str(prefix)])
    assert res.rc == 2
    assert "stack 'copy' exists already; pick another name or pass --force to replace it" in res.text

    res = cli(["stack", "env", "copy"])
    assert res.rc == 0
    # programs that srun starts (no mpiexec to set it up) find the stack's libraries too
    lib = f"{prefix.resolve()}/lib"
    assert res.out.splitlines() == [f"export PATH={prefix.resolve()}/bin:\"$PATH\"",
                                    f"export MPICC={prefix.resolve()}/bin/mpicc",
                                    f"export LD_LIBRARY_PATH={lib}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"]

    res = cli(["stack", "list"])
    assert stack_line(res.out, "copy").split()[:3] == ["copy", "mpich", "ok"]

    res = cli(["stack", "remove", "copy"])
    assert res.rc == 0
    assert f"removed stack 'copy' (left {prefix.resolve()} untouched)" in res.text
    assert (prefix / "bin" / "mpiexec").is_file()
    assert not (temp_home / "stacks" / "copy").exists()
    assert stackmod.load("mpich") is not None

    res = cli(["stack", "remove", "mpich"])
    assert res.rc == 0
    assert "removed stack 'mpich' (removed its files)" in res.text
    assert not (temp_home / "stacks" / "mpich").exists()

    res = cli(["stack", "list"])
    assert res.rc == 0
    assert "no stacks yet" in res.text
    res = cli(["stack", "remove", "mpich"])
    assert res.rc == 2
    assert "unknown stack 'mpich' (no stacks are installed yet); install it with: mpiguide stack install mpich" \
        in res.text


def test_broken_added_stack(temp_home, cli, tmp_path, mpich_stack):
    fake = tmp_path / "fake-prefix"
    shutil.copytree(mpich_stack.prefix, fake, symlinks=True)
    res = cli(["stack", "add", "fake", "--prefix", str(fake)])
    assert res.rc == 0, res.text
    assert stackmod.load("fake").family == "mpich"
    (fake / "bin" / "mpiexec").unlink()

    expected = (f"mpiguide: error: stack 'fake' is broken: {fake}/bin/mpiexec is missing; check the installation, "
                "or re-add it: mpiguide stack add fake --prefix DIR --force")
    res = cli(["build", "--stacks", "fake"])
    assert res.rc == 2
    assert expected in res.text
    out = tmp_path / "run"
    res = cli(["run", "pingpong", "--stacks", "fake", "--runs", "1", "--sizes", "4", "--output", str(out)])
    assert res.rc == 2
    assert expected in res.text
    assert not out.exists()
    res = cli(["stack", "list"])
    assert res.rc == 0
    assert f"broken: {fake}/bin/mpiexec is missing" in stack_line(res.out, "fake")


def test_broken_installed_stack_says_reinstall(temp_home, cli, tmp_path):
    write_entry(temp_home, "mpich", tmp_path / "gone", source="pip:mpich==5.0.2")
    for argv in (["build"], ["run", "pingpong", "--runs", "1", "--output", str(tmp_path / "run")]):
        res = cli(argv)
        assert res.rc == 2
        assert (f"stack 'mpich' is broken: {tmp_path}/gone/bin/mpicc is missing; reinstall it: "
                "mpiguide stack remove mpich && mpiguide stack install mpich") in res.text
    assert not (tmp_path / "run").exists()


def test_unknown_stack(temp_home, cli, tmp_path):
    res = cli(["run", "pingpong", "--stacks", "nosuch", "--output", str(tmp_path / "run")])
    assert res.rc == 2
    assert ("mpiguide: error: unknown stack 'nosuch' (no stacks are installed yet); install one of mpich, openmpi, "
            "impi with 'mpiguide stack install NAME', or add an existing MPI with "
            "'mpiguide stack add nosuch --prefix DIR'") in res.text
    assert not (tmp_path / "run").exists()
    res = cli(["run", "pingpong", "--stacks", "openmpi", "--output", str(tmp_path / "run")])
    assert res.rc == 2
    assert "unknown stack 'openmpi' (no stacks are installed yet); install it with: mpiguide stack install openmpi" \
        in res.text


def test_unknown_stack_lists_the_installed_ones(cli, tmp_path, mpich_stack):
    res = cli(["run", "pingpong", "--stacks", "mpich,nosuch", "--output", str(tmp_path / "run")])
    assert res.rc == 2
    assert "unknown stack 'nosuch' (installed stacks: " in res.text
    installed = res.text.split("installed stacks: ", 1)[1].split(")", 1)[0].split(", ")
    assert "mpich" in installed
    assert "'mpiguide stack add nosuch --prefix DIR'" in res.text


def test_install_without_known_package(temp_home, cli):
    res = cli(["stack", "install", "foo"])
    assert res.rc == 2
    assert ("don't know which package installs stack 'foo': installable are mpich, openmpi, impi; use --package PKG "
            "for another name, or 'mpiguide stack add foo --prefix DIR' for an MPI that is already installed") \
        in res.text
    assert not (temp_home / "stacks").exists()


def test_install_invalid_name(temp_home, cli):
    res = cli(["stack", "install", "../evil", "--package", "mpich"])
    assert res.rc == 2
    assert "invalid stack name '../evil'" in res.text


def test_install_failing_pip_cleans_up(temp_home, cli):
    res = cli(["stack", "install", "x", "--package", "not a requirement!!"])
    assert res.rc == 2
    assert "pip could not install not a requirement!! for stack 'x'" in res.text
    assert not (temp_home / "stacks" / "x").exists()


def test_add_nonexistent_prefix(temp_home, cli):
    res = cli(["stack", "add", "x", "--prefix", "/nonexistent"])
    assert res.rc == 2
    assert ("/nonexistent does not look like an MPI installation: bin/mpicc and bin/mpiexec are needed") in res.text
    assert stackmod.load("x") is None


def test_add_prefix_whose_compiler_fails(temp_home, cli, tmp_path):
    prefix = fake_prefix(tmp_path / "bad", mpicc="#!/bin/sh\necho 'fatal: no C compiler here' >&2\nexit 1\n")
    res = cli(["stack", "add", "bad", "--prefix", str(prefix)])
    assert res.rc == 2
    assert f"stack 'bad': {prefix}/bin/mpicc cannot compile an MPI program: fatal: no C compiler here" in res.text
    assert stackmod.load("bad") is None


def test_add_unknown_family_is_rejected_by_the_parser(temp_home, cli, tmp_path):
    res = cli(["stack", "add", "x", "--prefix", str(fake_prefix(tmp_path / "p")), "--family", "lam"])
    assert res.rc == 2
    assert "invalid choice: 'lam'" in res.err


def test_unreadable_registry_entry(temp_home, cli):
    entry = temp_home / "stacks" / "junk" / "stack.json"
    entry.parent.mkdir(parents=True)
    entry.write_text("{not json")
    res = cli(["stack", "list"])
    assert res.rc == 2
    assert f"stack registry entry {entry} is unreadable" in res.text
    assert "remove that folder" in res.text


@pytest.mark.parametrize(("tools", "family"), [
    (["ompi_info"], "openmpi"), (["prterun"], "openmpi"), (["impi_info"], "impi"), (["mpiicc"], "impi"),
    (["mpichversion"], "mpich"), ([], "other"),
])
def test_detect_family(tmp_path, tools, family):
    (tmp_path / "bin").mkdir()
    for t in tools:
        (tmp_path / "bin" / t).write_text("")
    assert families.from_prefix(tmp_path) == family


@pytest.mark.parametrize(("text", "family"), [
    ("Open MPI v5.0.5, package: Open MPI", "openmpi"), ("Intel(R) MPI Library 2021.13 for Linux* OS", "impi"),
    ("MVAPICH Version: 3.0", "mpich"), ("MPICH Version: 4.2.3", "mpich"), ("Some Vendor MPI 1.0", "other"),
])
def test_family_from_version(text, family):
    assert families.from_version(text) == family


@pytest.mark.parametrize(("names", "family"), [
    (["mpicc.openmpi", "mpiexec.openmpi"], "openmpi"), (["mpicc.mpich"], "mpich"), (["mpicc.impi"], "impi"),
    (["mpicc", "mpiexec"], None),
])
def test_family_from_wrapper_names(tmp_path, names, family):
    assert families.from_names(*(tmp_path / n for n in names)) == family


def test_family_adapters_hold_the_launch_details():
    """What differs between families, per adapter; an unknown family gets MPICH-style defaults."""
    ompi, impi, mpich, other = (families.get(n) for n in ("openmpi", "impi", "mpich", "weird"))
    assert (ompi.srun_mpi, impi.srun_mpi, mpich.srun_mpi, other.srun_mpi) == ("pmix", "pmi2", "pmi2", "pmi2")
    assert ompi.hostfile_flags("h", 2) == ["--hostfile", "h", "--map-by", "ppr:2:node"]
    assert other.hostfile_flags("h", 2) == mpich.hostfile_flags("h", 2) == ["-f", "h", "-ppn", "2"]
    assert ompi.oversubscribe_flags() == ["--oversubscribe"] and impi.oversubscribe_flags() == []
    assert impi.env("/opt/impi") == {"I_MPI_ROOT": "/opt/impi"} and impi.pmi_library_variable == "I_MPI_PMI_LIBRARY"
    assert ompi.session_dir_env("/tmp/s") == {"PRTE_MCA_prte_local_tmpdir_base": "/tmp/s"}
    assert other.network_between_nodes_env("/opt/x") == {} and "FI_PROVIDER" in mpich.network_between_nodes_env("/x")
    assert other.name == "other" and families.FAMILIES == ("mpich", "openmpi", "impi", "other")


@pytest.mark.parametrize("device, netmod", [("ch4:ucx ofi", "ofi"), ("ch4:ofi", "ofi"), ("ch4:ucx", None),
                                            (None, None)])
def test_mpich_between_nodes_takes_ofi_where_the_build_has_it(tmp_path, device, netmod):
    """Between the test cluster's nodes MPICH runs OFI's netmod where its build has it (UCX's long addresses
    are what Slurm's PMI-2 plugin drops), as mpichversion names the device; a build without OFI, or whose
    mpichversion says nothing, is left to its own choice."""
    say = f"MPICH Version:      5.0.2\nMPICH Device:       {device}\n" if device else ""
    prefix = fake_prefix(tmp_path / "mpich")
    (prefix / "bin" / "mpichversion").write_text(f"#!/bin/sh\nprintf '{say}'\n")
    (prefix / "bin" / "mpichversion").chmod(0o755)
    env = families.get("mpich").network_between_nodes_env(str(prefix))
    assert env.get("MPIR_CVAR_CH4_NETMOD") == netmod and env["FI_PROVIDER"] == "tcp"


def test_stack_env_prints_the_environment(temp_home, cli, tmp_path):
    prefix = fake_prefix(tmp_path / "ompi")
    write_entry(temp_home, "ompi", prefix, family="openmpi")
    res = cli(["stack", "env", "ompi"])
    assert res.rc == 0
    lines = res.out.splitlines()
    assert lines[-2:] == [f"export PATH={prefix}/bin:\"$PATH\"", f"export MPICC={prefix}/bin/mpicc"]
    assert "export OMPI_MCA_btl_base_warn_component_unused=0" in lines


def test_stack_env_lines_are_never_wrapped(temp_home, cli, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    prefix = fake_prefix(tmp_path / ("a-rather-long-folder-name-" * 3) / "mpi")
    write_entry(temp_home, "long", prefix)
    res = cli(["stack", "env", "long"])
    assert res.rc == 0
    assert res.out.splitlines() == [f"export PATH={prefix}/bin:\"$PATH\"", f"export MPICC={prefix}/bin/mpicc"]


def test_add_by_wrappers_where_two_mpis_share_a_prefix(temp_home, cli, tmp_path, mpich_stack):
    """Debian's layout: one bin/ with mpicc.mpich and mpicc.openmpi (bin/mpicc points at one of them). The
    stack takes the wrappers it is given, its family from their names, its version from running them."""
    shared = tmp_path / "usr" / "bin"
    shared.mkdir(parents=True)
    for tool in ("mpicc", "mpiexec"):
        w = shared / f"{tool}.mpich"
        w.write_text(f'#!/bin/sh\nexec {mpich_stack.mpicc.parent / tool} "$@"\n')
        w.chmod(0o755)
    (shared / "ompi_info").write_text("")  # an Open MPI beside it: the prefix alone would say openmpi
    res = cli(["stack", "add", "deb-mpich", "--mpicc", str(shared / "mpicc.mpich"), "--mpiexec",
               str(shared / "mpiexec.mpich")])
    assert res.rc == 0, res.text
    s = stackmod.load("deb-mpich")
    assert s.family == "mpich" and s.mpicc == shared / "mpicc.mpich" and s.mpiexec == shared / "mpiexec.mpich"
    assert s.prefix == str(tmp_path / "usr") and s.short_version == mpich_stack.short_version
    assert s.check() is None
    bad = cli(["stack", "add", "half", "--mpicc", str(shared / "mpicc.mpich")])
    assert bad.rc == 2 and "give both --mpicc and --mpiexec" in bad.text
    bad = cli(["stack", "add", "gone", "--mpicc", str(shared / "nope"), "--mpiexec", str(shared / "mpiexec.mpich")])
    assert bad.rc == 2 and f"--mpicc {shared / 'nope'} is not an executable file" in bad.text
    bad = cli(["stack", "add", "none"])
    assert bad.rc == 2 and "give --prefix" in bad.text
