"""SimGrid SMPI (core.smpi): the platform files, and mg_collbench built with smpicc run on 16 simulated ranks,
every collective natively and with every mock-up, under each library's modelled collective selection: the
driver's own checks compare every result with the native call's."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from mpiguide.core import smpi
from mpiguide.core.errors import MpiguideError
from mpiguide.suites.coll.catalog import MOCKUPS

NP = 16


def test_platform_files():
    flat = smpi.Platform("c", 4, cores=2).xml()
    assert '<cluster id="c" prefix="c-" suffix="" radical="0-3" speed="1Gf" core="2" bw="10GBps" lat="1us" ' \
           'bb_bw="100GBps" bb_lat="1us"/>' in flat
    assert 'topology="FAT_TREE" topo_parameters="2;4,4;1,4;1,1"' in smpi.Platform("f", 16, topology="fattree").xml()
    assert 'topology="TORUS" topo_parameters="2,2,4"' in smpi.Platform("t", 16, topology="torus", dims=(2, 2, 4)).xml()


@pytest.mark.parametrize(("platform", "message"), [
    (smpi.Platform("x", 0), "nodes=0 (at least 1)"),
    (smpi.Platform("x", 6, topology="fattree"), "needs nodes a multiple of the radix (nodes=6)"),
    (smpi.Platform("x", 8, topology="torus", dims=(2, 2, 3)), "torus dims 2x2x3 must multiply to nodes=8"),
    (smpi.Platform("x", 8, topology="ring"), "topology=ring (one of flat, fattree, torus)"),
    (smpi.Platform("x", 8, bandwidth="fast"), "bandwidth 'fast': expected a number and a unit"),
])
def test_impossible_platforms_are_refused(platform, message):
    with pytest.raises(MpiguideError, match=re.escape(message)):
        platform.xml()


def test_hostfile_places_ranks_per_node(tmp_path):
    _, hosts = smpi.Platform("c", 3, cores=2).write(tmp_path)
    assert hosts.read_text().split() == ["c-0", "c-0", "c-1", "c-1", "c-2", "c-2"]
    _, hosts = smpi.Platform("c", 3, cores=2).write(tmp_path, ppn=1)
    assert hosts.read_text().split() == ["c-0", "c-1", "c-2"]


def test_unknown_selector(tmp_path):
    t = smpi.Tools(Path("smpicc"), Path("smpirun"))
    with pytest.raises(MpiguideError, match="collective selector 'lam': choose one of mpich, ompi, impi, mvapich2"):
        smpi.command(t, tmp_path / "p.xml", tmp_path / "h", 4, "lam", tmp_path / "x", [])


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    try:
        t = smpi.tools(say=lambda _: None)
    except MpiguideError as exc:
        pytest.skip(f"SimGrid SMPI cannot be installed here: {exc}")
    return t, smpi.build_drivers(t, ["mg_collbench"]), tmp_path_factory.mktemp("platforms")


# SMPI 3.32's models of Open MPI's and Intel MPI's MPI_Reduce_scatter give other results than their own
# MPI_Allreduce and MPI_Reduce when most blocks are empty (8 bytes over 16 ranks); the driver finds that
# and leaves those configurations out. Real MPICH and Open MPI agree at 16 ranks (checked by hand).
REDUCE_SCATTER_MOCKUPS = {name for ms in MOCKUPS.values() for name, _, formula in ms if "Reduce_scatter +" in formula}


@pytest.mark.parametrize("topology", ["flat", "fattree"])
@pytest.mark.parametrize("selector", smpi.SELECTORS)
def test_every_collective_and_mockup_on_16_simulated_ranks(simulated, selector, topology):
    t, tree, where = simulated
    xml, hosts = smpi.Platform(topology, NP, topology=topology).write(where)
    sizes = [8, 1024, 100000]
    argv, env = smpi.command(t, xml, hosts, NP, selector, tree / "mg_collbench",
                             ["--sizes", ",".join(map(str, sizes)), "--check-only"])
    res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    # reduce_scatter_block's size is the whole vector: only sizes of NP equal blocks
    configs = sum((1 + len(ms)) * sum(c != "reduce_scatter_block" or m % NP == 0 for m in sizes)
                  for c, ms in MOCKUPS.items())
    summary = re.search(r"collbench: (\d+) configurations compared with the native calls, (\d+) differ", res.stderr)
    assert summary, res.stdout[-2000:] + res.stderr[-2000:]
    differ = re.findall(r"#@error\[(\w+) (\w+) (\d+)\]=rank \d+: result differs from the native call", res.stdout)
    assert (int(summary.group(1)), int(summary.group(2))) == (configs, len(differ))
    assert all(impl in REDUCE_SCATTER_MOCKUPS and size == "8" for _, impl, size in differ), differ
    assert res.returncode == (3 if differ else 0), res.stderr[-2000:]
