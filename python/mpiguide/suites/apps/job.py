"""The stencil applications of Adefemi (2025), Jacobi CFD, Game of Life and lattice
image reconstruction, as a measurement job: which grids, how many iterations, which
halo-exchange variants, on how many processes, and the launches of `mg_stencil`
that measure them. The analysis and the report are in mpiguide.suites.apps.report.

Scaling (Adefemi 2025, Section III, Table I):
  strong  a fixed global grid, ranks 1, 2, 4, ...: speedup T(1) / T(P)
  weak    a fixed local block per rank (global = local x process grid): efficiency T(1) / T(P)

Parameter sets (`--preset`, docs/apps.md):
  machine  Table I scaled down so that all three applications, both scalings and
           every variant run on a 2-core machine in minutes (default)
  paper    Table I's iteration counts on grids of a real node; Adefemi (2025) gives the
           Life landscape (1024) but no grid for the CFD and image codes: mpiguide uses 1024 x 1024
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from mpiguide.core.errors import MpiguideError

APPS = ("jacobi", "life", "image")
PACKINGS = ("basic", "ddt", "subarray", "normalized")  # the order of mg_stencil's --variants all
MODES = ("nonblocking", "neighbor", "persistent", "neighbor-persistent")
SCALINGS = ("strong", "weak")
PRESETS = ("machine", "paper")
DEFAULT_RANKS = (1, 2, 4)
DEFAULT_NREP = 5  # timed repetitions of `steps` iterations per launch


@dataclass(frozen=True)
class Scale:
    """Strong: the global grid; weak: the block of one rank. steps: iterations per repetition."""

    nx: int
    ny: int
    steps: int


PRESET_SCALES: dict[str, dict[str, dict[str, Scale]]] = {
    # About 50-100 ms per repetition of one variant on one process here; Life's kernel is ~5x slower per cell.
    "machine": {
        "jacobi": {"strong": Scale(512, 512, 500), "weak": Scale(256, 256, 500)},
        "life": {"strong": Scale(512, 512, 100), "weak": Scale(256, 256, 200)},
        "image": {"strong": Scale(512, 512, 300), "weak": Scale(256, 256, 300)},
    },
    # Adefemi (2025), Table I: CFD 10,000 iterations; Life landscape 1024, 11,520 iterations (its weak series
    # grows the landscape with the ranks: a 1024 x 1024 block per rank here); image 1000 iterations strong,
    # 300-900 weak.
    "paper": {
        "jacobi": {"strong": Scale(1024, 1024, 10000), "weak": Scale(512, 512, 10000)},
        "life": {"strong": Scale(1024, 1024, 11520), "weak": Scale(1024, 1024, 11520)},
        "image": {"strong": Scale(1024, 1024, 1000), "weak": Scale(512, 512, 600)},
    },
}

# Seconds per cell and iteration of one variant on one process of this machine (MPICH, 2 cores), for the
# duration estimate printed before a run.
_CELL_SECONDS = {"jacobi": 0.6e-9, "life": 4.7e-9, "image": 0.9e-9}


def parse_variants(text: str) -> list[str] | None:
    """'all' -> None (every variant the stack's build supports); else packing:mode items."""
    if text.strip() == "all":
        return None
    items = [x.strip() for x in text.split(",") if x.strip()]
    known = [f"{p}:{m}" for p in PACKINGS for m in MODES]
    bad = [x for x in items if x not in known]
    if bad or not items:
        raise MpiguideError(f"unknown variant '{(bad or [text])[0]}' in --variants: use all or packing:mode "
                            f"with packing {', '.join(PACKINGS)} and mode {', '.join(MODES)} (e.g. ddt:neighbor)")
    return list(dict.fromkeys(items))


def parse_grid(text: str, what: str) -> tuple[int, int]:
    """'512x256' -> (512, 256) columns x rows; '512' -> (512, 512)."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:[x×]\s*(\d+))?\s*", text)
    if not m or int(m[1]) < 1 or (m[2] is not None and int(m[2]) < 1):
        raise MpiguideError(f"bad {what} '{text}': NXxNY in cells (columns x rows), e.g. 512x512, or one number")
    return int(m[1]), int(m[2] or m[1])


def template_key(app: str, scaling: str, nprocs: int) -> str:
    return f"{app}-{scaling}-p{nprocs}"


def template_info(params: dict) -> dict[str, tuple[str, str, int]]:
    """Launch template key -> (application, scaling, processes)."""
    return {template_key(a, s, n): (a, s, n) for a in params["apps"] for s in params["scalings"]
            for n in params["ranks"]}


def scales(preset: str, grid: dict[str, tuple[int, int] | None], steps: int | None) -> dict:
    """Per application and scaling [nx, ny, steps]: the preset's, with --strong-grid/--weak-grid/--steps on top."""
    out: dict[str, dict[str, list[int]]] = {}
    for app, by_scaling in PRESET_SCALES[preset].items():
        out[app] = {}
        for scaling, s in by_scaling.items():
            nx, ny = grid.get(scaling) or (s.nx, s.ny)
            out[app][scaling] = [nx, ny, steps or s.steps]
    return out


def check_image(path: str, apps: list[str], scalings: list[str]) -> str:
    """The absolute path of --image (launches may run elsewhere); its content is checked by mg_stencil."""
    if "image" not in apps:
        raise MpiguideError(f"--image {path}: only for the image application (add image to --apps)")
    if "weak" in scalings:
        raise MpiguideError(f"--image {path} fixes the global grid, so weak scaling of the image application is "
                            "not possible: add --scaling strong")
    p = Path(path)
    if not p.is_file():
        raise MpiguideError(f"--image {path}: no such file")
    return str(p.resolve())


def check_ppn(ppn: int | None, ranks: list[int]) -> int | None:
    """--ppn: every process count must fill whole nodes (or fit on one)."""
    if ppn is None:
        return None
    if ppn < 1:
        raise MpiguideError(f"bad --ppn {ppn}: processes per node, at least 1")
    bad = [n for n in ranks if n > ppn and n % ppn]
    if bad:
        raise MpiguideError(f"--ppn {ppn}: {bad[0]} processes do not fill whole nodes; use process counts up to "
                            f"{ppn} or multiples of it")
    return ppn


def placement(nprocs: int, ppn: int | None) -> str | None:
    """NODESxPPN of a launch of nprocs processes (None: the run's launcher decides, one node)."""
    if ppn is None:
        return None
    return f"{max(1, nprocs // ppn)}x{min(nprocs, ppn)}"


def launch_args(params: dict, app: str, scaling: str) -> list[str]:
    nx, ny, steps = params["scales"][app][scaling]
    variants = ",".join(params["variants"]) if params["variants"] else "all"
    args = ["--app", app, "--variants", variants, "--steps", str(steps)]
    if app == "image" and params.get("image"):
        args += ["--image", params["image"]]
    elif scaling == "strong":
        args += ["--nx", str(nx), "--ny", str(ny)]
    else:
        args += ["--local-nx", str(nx), "--local-ny", str(ny)]
    args += ["--check"] if params["check"] else ["--no-check"]
    return args + (["--sequential"] if params.get("sequential") else [])


def variant_count(params: dict) -> int:
    return len(params["variants"]) if params["variants"] else len(PACKINGS) * len(MODES)


def estimate_seconds(params: dict, nrep: int) -> float:
    """A rough duration of one launch of every template on one stack (2 cores; oversubscribed launches are
    slower still): each variant runs `steps` iterations for its check and nrep x steps timed."""
    cores = os.cpu_count() or 1
    total = 0.0
    for app, scaling, nprocs in template_info(params).values():
        nx, ny, steps = params["scales"][app][scaling]
        cells = nx * ny * (nprocs if scaling == "weak" else 1)
        per_iteration = cells * _CELL_SECONDS[app] / min(nprocs, cores)
        serial = cells * steps * _CELL_SECONDS[app] if params["check"] else 0.0
        total += 0.5 + serial + variant_count(params) * per_iteration * steps * (nrep + params["check"])
    return total
