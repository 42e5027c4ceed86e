"""SimGrid SMPI: mpiguide's MPI drivers run unchanged on a modelled platform, all ranks in one process, with
the collective selection logic of a chosen MPI library (`smpi/coll-selector`). What comes out is a
prediction of the model, never a measurement.

This module holds what every simulated run needs: the SMPI tools (Debian's libsimgrid-dev, installed as
root where missing, as the test cluster's Slurm tools are), the drivers built with smpicc (core.build), the
platform files of the cluster shapes mpiguide offers, and the smpirun command line of one launch.

Each rank gets its own copy of a driver's globals (SMPI's dlopen privatization), the tuning library's state
included, so the drivers link libmpiguide-tune statically, as they do anyway."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

from mpiguide.core import build, packages
from mpiguide.core.errors import MpiguideError

PACKAGE = "libsimgrid-dev"  # smpicc, smpirun and the library (SimGrid 3.32 on Debian 12)
# The MPI libraries whose collective selection SMPI reproduces (--cfg=smpi/coll-selector).
SELECTORS = ("mpich", "ompi", "impi", "mvapich2")
# Each rank's copy of the program needs static TLS for its thread-local variables (the tuning library has
# some), more than glibc keeps spare for dlopen: "cannot allocate memory in static TLS block".
STATIC_TLS = "glibc.rtld.optional_static_tls=67108864"
TOPOLOGIES = ("flat", "fattree", "torus")


@dataclass(frozen=True)
class Tools:
    smpicc: Path
    smpirun: Path


def tools(say=print) -> Tools:
    """smpicc and smpirun, installed first where they are missing and this is root."""
    if not (shutil.which("smpicc") and shutil.which("smpirun")):
        packages.apt_install([PACKAGE], "simulating MPI runs with SimGrid SMPI", say)
    found = [shutil.which(t) for t in ("smpicc", "smpirun")]
    if not all(found):
        raise MpiguideError(f"SimGrid SMPI's smpicc and smpirun are not on the PATH after installing {PACKAGE}")
    return Tools(Path(found[0]), Path(found[1]))


def build_drivers(t: Tools, drivers: list[str]) -> Path:
    """The tree with the drivers built by smpicc."""
    return build.ensure_simulated(str(t.smpicc), drivers)


@dataclass(frozen=True)
class Platform:
    """A cluster of `nodes` hosts with `cores` each. flat: every node on one switch (its links of `bandwidth`
    and `latency`, a backbone of backbone_factor times the bandwidth); fattree: a two-level fat tree of
    `radix`-port switches; torus: a 3D torus of `dims` (their product is the number of nodes)."""

    name: str
    nodes: int
    cores: int = 1
    topology: str = "flat"
    speed: str = "1Gf"  # per core, flops per second: SMPI charges the drivers' computation at this speed
    bandwidth: str = "10GBps"
    latency: str = "1us"
    backbone_factor: int = 10
    radix: int = 4
    dims: tuple[int, int, int] = (0, 0, 0)

    def check(self) -> None:
        bad = []
        if self.nodes < 1:
            bad.append(f"nodes={self.nodes} (at least 1)")
        if self.cores < 1:
            bad.append(f"cores={self.cores} (at least 1)")
        if self.topology not in TOPOLOGIES:
            bad.append(f"topology={self.topology} (one of {', '.join(TOPOLOGIES)})")
        if self.topology == "fattree" and (self.radix < 2 or self.nodes % self.radix):
            bad.append(f"a fat tree of {self.radix}-port switches needs nodes a multiple of the radix (nodes="
                       f"{self.nodes})")
        if self.topology == "torus" and (min(self.dims) < 1 or self.dims[0] * self.dims[1] * self.dims[2]
                                         != self.nodes):
            bad.append(f"torus dims {'x'.join(map(str, self.dims))} must multiply to nodes={self.nodes}")
        if bad:
            raise MpiguideError(f"platform {self.name}: " + "; ".join(bad))

    def hosts(self) -> list[str]:
        return [f"{self.name}-{i}" for i in range(self.nodes)]

    def xml(self) -> str:
        """The SimGrid platform file (DTD 4.1): one <cluster> of the topology."""
        self.check()
        attrs = {"id": self.name, "prefix": f"{self.name}-", "suffix": "", "radical": f"0-{self.nodes - 1}",
                 "speed": self.speed, "core": str(self.cores), "bw": self.bandwidth, "lat": self.latency}
        if self.topology == "flat":
            value, unit = _split_unit(self.bandwidth)
            attrs.update(bb_bw=f"{value * self.backbone_factor:g}{unit}", bb_lat=self.latency)
        elif self.topology == "fattree":
            # levels; down links per level; up links per level; parallel links per level
            attrs.update(topology="FAT_TREE",
                         topo_parameters=f"2;{self.radix},{self.nodes // self.radix};1,{self.radix};1,1")
        else:
            attrs.update(topology="TORUS", topo_parameters=",".join(map(str, self.dims)))
        fields = " ".join(f"{k}={quoteattr(v)}" for k, v in attrs.items())
        return ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                f"<platform version=\"4.1\">\n  <cluster {fields}/>\n</platform>\n")

    def write(self, directory: Path, ppn: int | None = None) -> tuple[Path, Path]:
        """platform.xml and a hostfile placing ppn ranks on each node in turn (default: its cores)."""
        directory.mkdir(parents=True, exist_ok=True)
        xml, hostfile = directory / f"{self.name}.xml", directory / f"{self.name}.hosts"
        xml.write_text(self.xml())
        per = ppn or self.cores
        hostfile.write_text("".join(f"{h}\n" * per for h in self.hosts()))
        return xml, hostfile


def _split_unit(text: str) -> tuple[float, str]:
    digits = len(text) - len(text.lstrip("0123456789."))
    if digits == 0:
        raise MpiguideError(f"bandwidth {text!r}: expected a number and a unit, e.g. 10GBps")
    return float(text[:digits]), text[digits:]


def command(t: Tools, xml: Path, hostfile: Path, np: int, selector: str, exe: Path,
            args: list[str]) -> tuple[list[str], dict[str, str]]:
    """The smpirun command line of one simulated launch, and its environment."""
    if selector not in SELECTORS:
        raise MpiguideError(f"collective selector {selector!r}: choose one of {', '.join(SELECTORS)}")
    argv = [str(t.smpirun), "-np", str(np), "-platform", str(xml), "-hostfile", str(hostfile),
            "--cfg=smpi/privatization:1", f"--cfg=smpi/coll-selector:{selector}", "--log=root.thres:warning",
            str(exe), *args]
    return argv, {**os.environ, "GLIBC_TUNABLES": STATIC_TLS}
