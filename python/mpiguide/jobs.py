"""Measurement jobs: which driver to launch with which arguments, and which
guidelines to check on the results. A job is the unit `mpiguide run JOB` runs;
later suites (datatype tests, collectives, stencils) register here too."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from mpiguide import apps, ddt, launch
from mpiguide.errors import MpiguideError


@dataclass(frozen=True)
class Guideline:
    """`A ⪯ B`: configurations selected by `a` should be no slower than those by `b`."""

    name: str
    a: dict[str, str]
    b: dict[str, str]
    text: str


@dataclass(frozen=True)
class LaunchTemplate:
    """One driver invocation (a whole configuration grid) per stack and launch."""

    key: str
    driver: str
    nprocs: int
    args: list[str]
    layout: str | None = None  # NODESxPPN for this template instead of the run's --layout


@dataclass
class Job:
    name: str
    title: str
    guidelines: list[Guideline]
    series: str  # plot: one line per value of this column
    x: str  # plot: x axis column
    ignore_keys: list[str] = field(default_factory=list)  # columns that never identify a configuration
    # A driver that times a whole loop a fixed number of times takes --sync and --nrep N only (no nrep rule
    # or estimation); its default N.
    fixed_nrep: int | None = None
    default_samples: str = "medians"  # what the verdicts test by default (stats.SAMPLE_MODES)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        raise NotImplementedError

    def params(self, args: argparse.Namespace) -> dict:
        """Validated, JSON-able parameters (stored in meta.json, used on resume)."""
        raise NotImplementedError

    def launches(self, params: dict) -> list[LaunchTemplate]:
        raise NotImplementedError

    def describe_plan(self, params: dict, runs: int, stacks: int, nrep: str | int) -> str:
        """A line printed before a run starts (size of the grid, expected duration); empty for none."""
        return ""


def parse_sizes(text: str, unit: int = 1) -> list[int]:
    """'4,1k,1m' -> [4, 1024, 1048576]; each a positive multiple of unit."""
    sizes = []
    for item in text.split(","):
        item = item.strip().lower()
        mult = {"k": 1024, "m": 1024 * 1024}.get(item[-1:], 1)
        digits = item[:-1] if mult > 1 else item
        if not digits.isdigit() or int(digits) == 0:
            raise MpiguideError(f"bad size '{item}' in '{text}': use positive byte counts like 4,1k,1m")
        size = int(digits) * mult
        if size % unit:
            raise MpiguideError(f"size {size} is not a multiple of the element size {unit} bytes")
        sizes.append(size)
    return sizes


def parse_choice_list(text: str, known: tuple[str, ...], what: str) -> list[str]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in items if x not in known]
    if bad or not items:
        raise MpiguideError(f"unknown {what} '{','.join(bad) or text}': choose from {', '.join(known)}")
    return items


PP_VARIANTS = ("send_recv", "sendrecv", "isend_irecv")
PP_DATATYPES = {"int": 4, "char": 1, "short": 2, "double": 8, "byte": 1}
PP_DEFAULT_SIZES = "4,16,64,256,1k,4k,16k,64k,256k,1m"


class PingPongJob(Job):
    def __init__(self) -> None:
        super().__init__(
            name="pingpong",
            title="Ping-pong latency (MPI_Send/MPI_Recv between two processes)",
            guidelines=[
                Guideline("PP-GL1", {"variant": "sendrecv"}, {"variant": "send_recv"},
                          "MPI_Sendrecv is no slower than MPI_Send followed by MPI_Recv"),
                Guideline("PP-GL2", {"variant": "send_recv"}, {"variant": "isend_irecv"},
                          "MPI_Send/MPI_Recv is no slower than MPI_Isend/MPI_Irecv with a wait"),
            ],
            series="variant",
            x="msize_bytes",
            ignore_keys=["count"],
        )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        g = parser.add_argument_group("ping-pong")
        g.add_argument("--sizes", default=PP_DEFAULT_SIZES,
                       help=f"message sizes in bytes, k/m = KiB/MiB (default {PP_DEFAULT_SIZES})")
        g.add_argument("--variants", default=",".join(PP_VARIANTS),
                       help=f"point-to-point variants (default {','.join(PP_VARIANTS)})")
        g.add_argument("--datatype", default="int", choices=sorted(PP_DATATYPES),
                       help="element type of the contiguous buffers (default int)")

    def params(self, args: argparse.Namespace) -> dict:
        sizes = parse_sizes(args.sizes, PP_DATATYPES[args.datatype])
        variants = parse_choice_list(args.variants, PP_VARIANTS, "variant")
        return {"sizes": sizes, "variants": variants, "datatype": args.datatype}

    def launches(self, params: dict) -> list[LaunchTemplate]:
        args = ["--sizes", ",".join(map(str, params["sizes"])), "--variants", ",".join(params["variants"]),
                "--datatype", params["datatype"]]
        return [LaunchTemplate("pp", "mg_pingpong", 2, args)]


# The layout descriptions of src/bench/layouts.c (first word of a spec).
DT_LAYOUT_NAMES = (
    "contiguous", "tiled", "block", "bucket", "alternating", "tiled-heterogeneous", "contiguous-subtype",
    "tiled-struct", "tiled-vector", "vector-tiled", "block-indexed", "alternating-indexed",
    "alternating-repeated", "alternating-struct", "rowcol-fully-indexed", "rowcol-contiguous-and-indexed",
    "rowcol-struct",
)
DT_METHODS = ("engine", "mpi", "normalized", "hand", "memcpy")
DT_DIRECTIONS = ("pack", "unpack")
DT_DEFAULT_A = "2,10,100,1000,1024,10000"
DT_DEFAULT_SIZES = "3200,2560000,64000000"
DT_DEFAULT_COMMIT = "10,1000,1000000"
# Descriptions that MPI libraries fail to normalize (000 Tests 5, 7, 10, 11).
DT_HARD = ("vector-tiled", "tiled-struct", "alternating-repeated", "rowcol-fully-indexed")


def _int_list(text: str, what: str, minimum: int = 1) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise MpiguideError(f"bad {what} '{text}': comma-separated integers") from None
    if not values or min(values) < minimum:
        raise MpiguideError(f"bad {what} '{text}': integers of at least {minimum}")
    return values


class DtBenchJob(Job):
    def __init__(self) -> None:
        super().__init__(
            name="dtbench",
            title="Datatype engine: pack/unpack vs MPI_Pack, hand-written loops and memcpy (one process)",
            guidelines=[
                Guideline("ENG-MPI", {"method": "engine"}, {"method": "mpi"},
                          "mpiguide's engine is no slower than the stack's MPI_Pack/MPI_Unpack "
                          "(for commit rows: decode+normalize+compile vs MPI_Type_commit)"),
                Guideline("ENG-HAND", {"method": "engine"}, {"method": "hand"},
                          "the engine is no slower than a hand-written loop for the layout"),
                Guideline("NORM-MPI", {"method": "normalized"}, {"method": "mpi"},
                          "MPI_Pack of mpiguide's normalized type is no slower than of the description as given"),
            ],
            series="method",
            x="A",
        )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        g = parser.add_argument_group("engine bench")
        g.add_argument("--layouts", help="';'-separated layout specs without A, e.g. 'tiled;tiled-struct S1=1 S2=1' "
                       "(default: every description of docs/layouts.md)")
        g.add_argument("--A", dest="blocksizes", default=DT_DEFAULT_A, help=f"blocksizes A (default {DT_DEFAULT_A})")
        g.add_argument("--sizes", default=DT_DEFAULT_SIZES,
                       help=f"data sizes m in bytes (default {DT_DEFAULT_SIZES}: 3.2 kB, 2.56 MB, 64 MB)")
        g.add_argument("--methods", default=",".join(DT_METHODS), help=f"default {','.join(DT_METHODS)}")
        g.add_argument("--directions", default=",".join(DT_DIRECTIONS), help="pack,unpack (default both)")
        g.add_argument("--commit-blocks", default=DT_DEFAULT_COMMIT,
                       help=f"blocks of the types whose commit cost is measured (default {DT_DEFAULT_COMMIT}; "
                            "'none' to skip)")
        g.add_argument("--type", dest="basic", default="int", choices=("int", "char", "short", "double"),
                       help="basic element type (default int)")

    def params(self, args: argparse.Namespace) -> dict:
        layouts = None
        if args.layouts:
            layouts = [s.strip() for s in args.layouts.split(";") if s.strip()]
            bad = [s for s in layouts if s.split()[0] not in DT_LAYOUT_NAMES]
            if bad or not layouts:
                raise MpiguideError(f"unknown layout '{(bad or [args.layouts])[0]}': choose from "
                                    + ", ".join(DT_LAYOUT_NAMES))
            if any(w.startswith("A=") for s in layouts for w in s.split()):
                raise MpiguideError("give A with --A, not inside --layouts")
        commit = [] if args.commit_blocks == "none" else _int_list(args.commit_blocks, "--commit-blocks")
        return {
            "layouts": layouts,
            "A": _int_list(args.blocksizes, "--A"),
            "sizes": _int_list(args.sizes, "--sizes"),
            "methods": parse_choice_list(args.methods, DT_METHODS, "method"),
            "directions": parse_choice_list(args.directions, DT_DIRECTIONS, "direction"),
            "commit_blocks": commit,
            "type": args.basic,
        }

    def launches(self, params: dict) -> list[LaunchTemplate]:
        args = ["--A", ",".join(map(str, params["A"])), "--sizes", ",".join(map(str, params["sizes"])),
                "--methods", ",".join(params["methods"]), "--directions", ",".join(params["directions"]),
                "--type", params["type"]]
        if params["layouts"]:
            args += ["--layouts", ";".join(params["layouts"])]
        args += ["--commit-blocks", ",".join(map(str, params["commit_blocks"]))] if params["commit_blocks"] \
            else ["--no-commit"]
        return [LaunchTemplate("dt", "mg_dtbench", 1, args)]


class DdtJob(Job):
    def __init__(self) -> None:
        super().__init__(name="ddt", title="Derived datatype expectation tests 1-11 (paper 000)", guidelines=[],
                         series="layout", x="A")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        g = parser.add_argument_group("expectation tests (mpiguide ddt list shows each test's grid)")
        g.add_argument("--tests", default="1-11", help="tests to run: 1-11 (default), 3,5-7, ...")
        g.add_argument("--grid", choices=ddt.GRIDS, default="paper",
                       help="paper: the grids of 000 Sections 2.4-3.2 (default); quick: fewer A, sizes, for a "
                            "first look")
        g.add_argument("--layouts", help="keep only these compared layouts (names such as tiled,block-indexed or "
                       "labels such as tiled:variant=2); each test keeps its references")
        g.add_argument("--A", dest="blocksizes", help="blocksizes A for every selected test (default: each test's)")
        g.add_argument("--sizes", help="data sizes m in bytes for every selected test (default: each test's)")
        g.add_argument("--patterns", help="pingpong,bcast,allgather for every selected test (default: each test's)")
        g.add_argument("--modes", help="keep only these modes: datatype,pack,engine,normalized (default: all a "
                       "test needs; datatype,pack gives the paper's comparisons only)")
        g.add_argument("--np", help="processes of the collective patterns, e.g. 2,4 (default: the cores, 2 to 16, "
                       "or the nodes x ppn of --layout); ping-pong always uses 2")
        g.add_argument("--type", dest="basic", default="int", choices=sorted(ddt.BASIC_TYPES),
                       help="basic element type of the layouts (default int)")

    def selection(self, args: argparse.Namespace) -> ddt.Selection:
        layout = getattr(args, "layout", None)
        if args.np:
            nps = _int_list(args.np, "--np")
            if min(nps) < 2:
                raise MpiguideError(f"bad --np '{args.np}': collectives need at least 2 processes")
        elif layout:
            nodes, ppn = launch.parse_layout(layout)
            nps = [nodes * ppn]
        else:
            nps = [ddt.default_np()]
        layouts = None
        if args.layouts:
            layouts = [x.strip() for x in args.layouts.split(",") if x.strip()]
            known = {w for t in ddt.TESTS.values() for s in t.layouts for w in (s.split()[0], ddt.label(s))}
            bad = [x for x in layouts if x not in known]
            if bad or not layouts:
                raise MpiguideError(f"unknown layout '{(bad or [args.layouts])[0]}' in --layouts: the tests use "
                                    + ", ".join(sorted(known)))
        sizes = parse_sizes(args.sizes, ddt.BASIC_TYPES[args.basic]) if args.sizes else None
        return ddt.Selection(
            tests=ddt.parse_tests(args.tests), grid=args.grid, layouts=layouts,
            A=_int_list(args.blocksizes, "--A") if args.blocksizes else None, sizes=sizes,
            patterns=parse_choice_list(args.patterns, ddt.PATTERNS, "pattern") if args.patterns else None,
            modes=parse_choice_list(args.modes, ddt.MODES, "mode") if args.modes else None,
            np=nps, basic=args.basic, layout=layout)

    def params(self, args: argparse.Namespace) -> dict:
        sel = self.selection(args)
        entries = ddt.plan_tests(sel)
        if not entries:
            raise MpiguideError("the options leave no test to run (each test needs one of its compared layouts "
                                "and the modes of its comparisons; see mpiguide ddt list)")
        return {"tests": sel.tests, "grid": sel.grid, "type": sel.basic, "entries": entries}

    def launches(self, params: dict) -> list[LaunchTemplate]:
        out = []
        for e in params["entries"]:
            args = ["--pattern", e["pattern"], "--layouts", ";".join(e["layouts"]),
                    "--A", ",".join(map(str, e["A"])), "--sizes", ",".join(map(str, e["sizes"])),
                    "--modes", ",".join(e["modes"]), "--type", params["type"]]
            out.append(LaunchTemplate(e["key"], "mg_ddtbench", e["nprocs"], args, e.get("launch_layout")))
        return out

    def describe_plan(self, params: dict, runs: int, stacks: int, nrep: str | int) -> str:
        configs, seconds = ddt.estimate(params["entries"], nrep)
        total = seconds * runs * stacks
        return (f"{len(params['tests'])} test(s), {len(params['entries'])} launch template(s), {configs} "
                f"configurations (layout x A x m x mode), {runs} run(s) on {stacks} stack(s): about "
                f"{ddt.fmt_duration(total)} by a rough model of a 2-core machine (slow datatype handling takes "
                "longer)")


COLLECTIVES = ("allgather", "allreduce", "alltoall", "bcast", "gather", "reduce", "reduce_scatter_block", "scan",
               "scatter")
COLL_DEFAULT_SIZES = "1,2,4,8,32,64,100,512,1024,4096,8192,16000,32768,50000,100000"  # 002 Figure 4
COLL_DATATYPES = {"byte": 1, "int": 4, "double": 8}
COLL_OPS = ("bor", "sum", "max")
POOL_DEFAULTS = {"msg_pool": "64M", "int_pool": "256k"}  # libmpiguide-tune's own defaults (docs/tuning.md)


def parse_pool(text: str, what: str) -> str:
    """A pool capacity as libmpiguide-tune reads it: bytes with an optional k, M or G suffix (0 allowed)."""
    item = text.strip()
    digits = item[:-1] if item[-1:].lower() in ("k", "m", "g") else item
    if not digits.isdigit():
        raise MpiguideError(f"bad {what} '{text}': bytes with an optional k, M or G suffix, such as 64M")
    return item


class CollJob(Job):
    """mg_collbench: every collective with its native call and each libmpiguide-tune mock-up (paper 002).
    One launch template per (processes, collective), so that 002's t_nrep1 is calibrated per collective.
    The guideline checks live in mpiguide.tune (they need the mock-up catalog the driver records)."""

    def __init__(self) -> None:
        super().__init__(name="coll", title="Collectives against their mock-ups (paper 002, COLL-GL1..22)",
                         guidelines=[], series="impl", x="msize")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        g = parser.add_argument_group("collectives")
        g.add_argument("--collectives", default=",".join(COLLECTIVES),
                       help="collectives to measure (default: all nine)")
        g.add_argument("--sizes", default=COLL_DEFAULT_SIZES, help="message sizes in bytes, k/m = KiB/MiB "
                       "(default 002 Figure 4: 1 B to 100 kB); reduce_scatter_block: the whole vector")
        g.add_argument("--np", help="processes, e.g. 2,4 (default: the cores, 2 to 16)")
        g.add_argument("--datatype", default="byte", choices=sorted(COLL_DATATYPES),
                       help="element type (default byte, as 002)")
        g.add_argument("--op", default="bor", choices=COLL_OPS, help="reduction operation (default bor)")
        g.add_argument("--root", type=int, default=0, help="root of the rooted collectives (default 0)")
        g.add_argument("--msg-pool", default=POOL_DEFAULTS["msg_pool"],
                       help="the memory limit: message pool of the library; a mock-up that needs more is not "
                            "used (default 64M)")
        g.add_argument("--int-pool", default=POOL_DEFAULTS["int_pool"],
                       help="int-vector pool of the library (default 256k)")

    def params(self, args: argparse.Namespace) -> dict:
        nps = _int_list(args.np, "--np") if args.np else [ddt.default_np()]
        if min(nps) < 2:
            raise MpiguideError(f"bad --np '{args.np}': collectives need at least 2 processes")
        if args.root < 0 or args.root >= min(nps):
            raise MpiguideError(f"bad --root {args.root}: a rank below the smallest --np ({min(nps)})")
        if args.op == "bor" and args.datatype == "double":
            raise MpiguideError("--op bor needs --datatype byte or int")
        return {"collectives": parse_choice_list(args.collectives, COLLECTIVES, "collective"),
                "sizes": sorted(set(parse_sizes(args.sizes, COLL_DATATYPES[args.datatype]))), "np": nps,
                "datatype": args.datatype, "op": args.op, "root": args.root,
                "msg_pool": parse_pool(args.msg_pool, "--msg-pool"),
                "int_pool": parse_pool(args.int_pool, "--int-pool"),
                "profiles": None}

    def launches(self, params: dict) -> list[LaunchTemplate]:
        out = []
        for np_ in params["np"]:
            for coll in params["collectives"]:
                args = ["--collectives", coll, "--sizes", ",".join(map(str, params["sizes"])),
                        "--datatype", params["datatype"], "--op", params["op"], "--root", str(params["root"]),
                        "--msg-pool", params["msg_pool"], "--int-pool", params["int_pool"]]
                if params.get("profiles"):
                    args += ["--profiles", params["profiles"]]
                out.append(LaunchTemplate(f"{coll}-p{np_}", "mg_collbench", np_, args))
        return out

    def describe_plan(self, params: dict, runs: int, stacks: int, nrep: str | int) -> str:
        n = len(params["collectives"]) * len(params["np"])
        return (f"{len(params['collectives'])} collective(s) x {len(params['sizes'])} size(s) x every mock-up, on "
                f"{', '.join(map(str, params['np']))} processes: {n} launch template(s), {runs} run(s) on "
                f"{stacks} stack(s)")


class AppsJob(Job):
    """mg_stencil: the three stencil applications of paper 003 with every halo-exchange variant, strong and
    weak scaling over the process counts. One launch template per (application, scaling, processes); each
    launch checks and times every variant (mpiguide.apps, docs/apps.md)."""

    def __init__(self) -> None:
        super().__init__(name="apps", title="Stencil applications: halo exchange by manual packing vs derived "
                         "datatypes, three communication modes (paper 003)", guidelines=[], series="variant",
                         x="nprocs", fixed_nrep=apps.DEFAULT_NREP,
                         # mg_stencil interleaves the variants' repetitions: each repetition of one variant
                         # has one of every other beside it in time, so all of them are comparable samples.
                         default_samples="reps")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        g = parser.add_argument_group("stencil applications")
        g.add_argument("--apps", default=",".join(apps.APPS), help="jacobi,life,image (default all three)")
        g.add_argument("--variants", default="all", help="all (default: every packing x mode the stack supports) "
                       "or packing:mode items, packing " + "|".join(apps.PACKINGS) + ", mode "
                       + "|".join(apps.MODES))
        g.add_argument("--ranks", default=",".join(map(str, apps.DEFAULT_RANKS)),
                       help="process counts (default 1,2,4; more than the cores is oversubscribed)")
        g.add_argument("--scaling", default=",".join(apps.SCALINGS),
                       help="strong (fixed global grid), weak (fixed block per rank) or both (default)")
        g.add_argument("--preset", choices=apps.PRESETS, default="machine",
                       help="grids and iterations: 003 Table I scaled to a 2-core machine (machine, default) or "
                            "at full size (paper); see docs/apps.md")
        g.add_argument("--strong-grid", metavar="NXxNY", help="global grid of strong scaling (default: preset)")
        g.add_argument("--weak-grid", metavar="NXxNY", help="block per rank of weak scaling (default: preset)")
        g.add_argument("--steps", type=int, help="iterations per repetition for every application "
                       "(default: preset)")
        g.add_argument("--image", metavar="FILE.pgm", help="image application: reconstruct this PGM image "
                       "(strong scaling; default: a generated image)")
        g.add_argument("--ppn", type=int, help="processes per node on a cluster: P processes run on ceil(P/ppn) "
                       "nodes (with --launcher srun, hostfile or template; default: one node)")
        g.add_argument("--sequential", action="store_true",
                       help="time one variant after the other instead of interleaving their repetitions (less "
                            "memory: one variant's grids at a time)")
        g.add_argument("--no-check", dest="check", action="store_false",
                       help="skip the bitwise checks against the serial run and the BASIC halos (they need the "
                            "whole grid on every rank)")

    def params(self, args: argparse.Namespace) -> dict:
        app_list = parse_choice_list(args.apps, apps.APPS, "application")
        scalings = parse_choice_list(args.scaling, apps.SCALINGS, "scaling")
        if args.steps is not None and args.steps < 1:
            raise MpiguideError(f"bad --steps {args.steps}: at least 1 iteration")
        ranks = sorted(set(_int_list(args.ranks, "--ranks")))
        layout = getattr(args, "layout", None)
        if layout and (args.ppn or len(ranks) > 1):
            raise MpiguideError(f"--layout {layout} fixes one process count, but this run has --ranks "
                                f"{args.ranks}: give the processes per node with --ppn instead")
        grid = {"strong": apps.parse_grid(args.strong_grid, "--strong-grid") if args.strong_grid else None,
                "weak": apps.parse_grid(args.weak_grid, "--weak-grid") if args.weak_grid else None}
        return {"apps": list(dict.fromkeys(app_list)), "scalings": list(dict.fromkeys(scalings)),
                "ranks": ranks, "ppn": apps.check_ppn(args.ppn, ranks),
                "variants": apps.parse_variants(args.variants), "preset": args.preset,
                "scales": apps.scales(args.preset, grid, args.steps), "check": args.check,
                "sequential": args.sequential,
                "image": apps.check_image(args.image, app_list, scalings) if args.image else None}

    def launches(self, params: dict) -> list[LaunchTemplate]:
        return [LaunchTemplate(key, "mg_stencil", nprocs, apps.launch_args(params, app, scaling),
                               apps.layout(nprocs, params.get("ppn")))
                for key, (app, scaling, nprocs) in apps.template_info(params).items()]

    def describe_plan(self, params: dict, runs: int, stacks: int, nrep: str | int) -> str:
        n = len(apps.template_info(params))
        seconds = apps.estimate_seconds(params, int(nrep)) * runs * stacks
        return (f"{len(params['apps'])} application(s) x {len(params['scalings'])} scaling(s) x "
                f"{len(params['ranks'])} process count(s) = {n} launch template(s), each with "
                f"{apps.variant_count(params)} variant(s), {runs} run(s) on {stacks} stack(s): about "
                f"{ddt.fmt_duration(seconds)} by a rough model of a 2-core machine")


JOBS: dict[str, Job] = {job.name: job for job in (PingPongJob(), DtBenchJob(), DdtJob(), CollJob(), AppsJob())}
DEFAULT_JOB = "pingpong"


def get_job(name: str) -> Job:
    try:
        return JOBS[name]
    except KeyError:
        raise MpiguideError(f"unknown job '{name}': choose one of {', '.join(JOBS)}") from None
