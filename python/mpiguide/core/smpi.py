"""SimGrid SMPI: mpiguide's MPI drivers run unchanged on a modelled platform, all ranks in one process, with
the collective selection logic of a chosen MPI library (`smpi/coll-selector`). What comes out is a
prediction of the model, never a measurement.

This module holds what every simulated run needs: the SMPI tools (Debian's libsimgrid-dev, installed as
root where missing, as the test cluster's Slurm tools are) and their version, the drivers built with smpicc
(core.build), the platform files of the cluster shapes mpiguide offers, the smpirun command line of one
launch, and the calibration of a platform on measured ping-pong times (docs/simulation.md).

Each rank gets its own copy of a driver's globals (SMPI's dlopen privatization), the tuning library's state
included, so the drivers link libmpiguide-tune statically, as they do anyway."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

from mpiguide.core import build, packages
from mpiguide.core.errors import MpiguideError
from mpiguide.core.paths import data_home

PACKAGE = "libsimgrid-dev"  # smpicc, smpirun and the library (SimGrid 3.32 on Debian 12)
# The MPI libraries whose collective selection SMPI reproduces (--cfg=smpi/coll-selector).
SELECTORS = ("mpich", "ompi", "impi", "mvapich2")
# mpiguide's MPI family -> the selector that models it
SELECTOR_OF_FAMILY = {"mpich": "mpich", "openmpi": "ompi", "impi": "impi"}
# Each rank's copy of the program needs static TLS for its thread-local variables (the tuning library has
# some), more than glibc keeps spare for dlopen: "cannot allocate memory in static TLS block".
STATIC_TLS = "glibc.rtld.optional_static_tls=67108864"
TOPOLOGIES = ("flat", "fattree", "torus", "dragonfly")
# dragonfly: groups of DRAGONFLY_CHASSIS chassis of DRAGONFLY_ROUTERS routers, DRAGONFLY_NODES nodes each
DRAGONFLY_CHASSIS, DRAGONFLY_ROUTERS, DRAGONFLY_NODES = 2, 2, 4
DRAGONFLY_GROUP = DRAGONFLY_CHASSIS * DRAGONFLY_ROUTERS * DRAGONFLY_NODES


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


def version(t: Tools) -> str:
    """"SimGrid 3.32", as smpirun says it (the model that made a prediction is named with it)."""
    try:
        out = subprocess.run([str(t.smpirun), "-version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    first = out.strip().splitlines()[0] if out.strip() else ""
    return first.replace("SimGrid version", "SimGrid").strip() or "SimGrid (version unknown)"


def build_drivers(t: Tools, drivers: list[str]) -> Path:
    """The tree with the drivers built by smpicc."""
    return build.ensure_simulated(str(t.smpicc), drivers)


@dataclass(frozen=True)
class Platform:
    """A cluster of `nodes` hosts with `cores` each. flat: every node on one switch (its links of `bandwidth`
    and `latency`, a backbone of backbone_factor times the bandwidth); fattree: a two-level fat tree of
    `radix`-port switches; torus: a 3D torus of `dims` (their product is the number of nodes); dragonfly:
    groups of DRAGONFLY_GROUP nodes (2 chassis of 2 routers of 4 nodes), one link between any two groups."""

    name: str
    nodes: int
    cores: int = 1
    topology: str = "flat"
    speed: str = "1Gf"  # per core, flops per second: SMPI charges the drivers' computation at this speed
    bandwidth: str = "10GBps"
    latency: str = "1us"
    backbone_factor: int = 10
    backbone_latency: str | None = None  # flat: the backbone's latency (None: the links')
    # SMPI's piecewise latency and bandwidth factors (its model of MPI protocols over a real network); off for
    # a platform calibrated on measured MPI times, which contain those costs already
    model_factors: bool = True
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
        if self.topology == "dragonfly" and self.nodes % DRAGONFLY_GROUP:
            bad.append(f"a dragonfly of groups of {DRAGONFLY_GROUP} nodes needs nodes a multiple of "
                       f"{DRAGONFLY_GROUP} (nodes={self.nodes})")
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
            attrs.update(bb_bw=f"{value * self.backbone_factor:g}{unit}", bb_lat=self.backbone_latency or self.latency)
        elif self.topology == "fattree":
            # levels; down links per level; up links per level; parallel links per level
            attrs.update(topology="FAT_TREE",
                         topo_parameters=f"2;{self.radix},{self.nodes // self.radix};1,{self.radix};1,1")
        elif self.topology == "torus":
            attrs.update(topology="TORUS", topo_parameters=",".join(map(str, self.dims)))
        else:
            # groups,links between two groups; chassis,links; routers,links; nodes per router
            attrs.update(topology="DRAGONFLY", topo_parameters=f"{self.nodes // DRAGONFLY_GROUP},1;"
                         f"{DRAGONFLY_CHASSIS},1;{DRAGONFLY_ROUTERS},1;{DRAGONFLY_NODES}")
        fields = " ".join(f"{k}={quoteattr(v)}" for k, v in attrs.items())
        return ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                f"<platform version=\"4.1\">\n  <cluster {fields}/>\n</platform>\n")

    def cfg(self) -> list[str]:
        """smpirun options the platform needs besides its file."""
        return [] if self.model_factors else ["--cfg=smpi/lat-factor:0:1", "--cfg=smpi/bw-factor:0:1"]

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
            args: list[str], cfg: list[str] | None = None) -> tuple[list[str], dict[str, str]]:
    """The smpirun command line of one simulated launch (cfg: the platform's options, Platform.cfg), and its
    environment."""
    if selector not in SELECTORS:
        raise MpiguideError(f"collective selector {selector!r}: choose one of {', '.join(SELECTORS)}")
    argv = [str(t.smpirun), "-np", str(np), "-platform", str(xml), "-hostfile", str(hostfile),
            "--cfg=smpi/privatization:1", f"--cfg=smpi/coll-selector:{selector}", *(cfg or []),
            # SMPI would charge the CPU time measured between MPI calls on this (loaded, 2-core) machine: no
            # local computation is charged, so that the same launch predicts the same times
            "--cfg=smpi/simulate-computation:no",
            "--log=root.thres:warning", str(exe), *args]
    return argv, {**os.environ, "GLIBC_TUNABLES": STATIC_TLS}


# ---------------------------------------------------------------- calibration

def calibration_path() -> Path:
    """Where `mpiguide sim calibrate` keeps this machine's fit by default."""
    return data_home() / "smpi" / "calibration.json"


@dataclass(frozen=True)
class Fit:
    """The network of one ping-pong: a message of m bytes takes latency + m / bandwidth one way."""

    latency_s: float
    bandwidth_Bps: float
    worst_error: float  # the largest |fitted / measured - 1| over the sizes fitted
    points: int  # message sizes fitted
    source: str = ""  # where the measurements came from

    def one_way(self, size: float) -> float:
        return self.latency_s + size / self.bandwidth_Bps

    def describe(self) -> str:
        return (f"latency {self.latency_s * 1e6:.3g} us, bandwidth {self.bandwidth_Bps / 1e9:.3g} GB/s "
                f"(within {self.worst_error:.1%} of the measured times at all {self.points} sizes"
                f"{'; ' + self.source if self.source else ''})")

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(self), indent=1) + "\n")

    @classmethod
    def load(cls, path: Path) -> Fit:
        try:
            return cls(**json.loads(Path(path).read_text()))
        except (OSError, ValueError, TypeError) as exc:
            raise MpiguideError(f"{path}: not a calibration of mpiguide sim calibrate ({exc})") from None


def fit_pingpong(sizes: list[float], round_trips: list[float], source: str = "") -> Fit:
    """Latency and bandwidth from ping-pong round-trip times (one per size, e.g. the medians): the one-way
    time (half the round trip) as latency + size / bandwidth, fitted by least squares of the relative
    errors, so that the small sizes decide the latency and the large ones the bandwidth."""
    if len(sizes) != len(round_trips):
        raise MpiguideError("calibration: as many times as message sizes are needed")
    if len(set(sizes)) < 2:
        raise MpiguideError(f"calibration needs ping-pong times at two message sizes or more (got "
                            f"{len(set(sizes))}); measure with e.g. mpiguide run pingpong --sizes 4,1k,64k,1m")
    if min(round_trips) <= 0:
        raise MpiguideError("calibration: ping-pong times must be positive")
    xs = [float(m) for m in sizes]
    ys = [t / 2 for t in round_trips]
    ws = [1 / y ** 2 for y in ys]
    sw = sum(ws)
    swx = sum(w * x for w, x in zip(ws, xs, strict=True))
    swxx = sum(w * x * x for w, x in zip(ws, xs, strict=True))
    swy = sum(w * y for w, y in zip(ws, ys, strict=True))
    swxy = sum(w * x * y for w, x, y in zip(ws, xs, ys, strict=True))
    det = sw * swxx - swx * swx
    slope = (sw * swxy - swx * swy) / det
    latency = (swy - slope * swx) / sw
    if slope <= 0 or latency <= 0:
        raise MpiguideError(f"calibration: the ping-pong times do not grow with the message size as latency + "
                            f"size / bandwidth (fitted {latency:.3g} s + m x {slope:.3g} s/B); measure larger "
                            "sizes or more repetitions")
    worst = max(abs((latency + slope * x) / y - 1) for x, y in zip(xs, ys, strict=True))
    return Fit(latency_s=latency, bandwidth_Bps=1.0 / slope, worst_error=worst, points=len(set(xs)), source=source)


def calibrated(fit: Fit, nodes: int, cores: int = 1, name: str = "calibrated") -> Platform:
    """A flat cluster whose route between two nodes (two node links and the backbone) has the fitted
    latency and bandwidth: each link half the latency, the backbone none and ten times the bandwidth."""
    if not (math.isfinite(fit.latency_s) and math.isfinite(fit.bandwidth_Bps)):
        raise MpiguideError(f"calibration {fit.source}: latency and bandwidth must be finite numbers")
    return Platform(name, nodes, cores=cores, topology="flat", bandwidth=f"{fit.bandwidth_Bps:.0f}Bps",
                    latency=f"{fit.latency_s / 2 * 1e6:.6f}us", backbone_latency="0us", model_factors=False)
