"""The datatype engine bench (mg_dtbench, one process): mpiguide's engine
against each stack's MPI_Pack/MPI_Unpack, a hand-written loop, memcpy and a
memory-traffic bound, for every description of the layouts of Carpen-Amarie
et al. (2016); and `mpiguide dt explain`, what the engine makes of one type."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pandas as pd

from mpiguide.core import build, launch
from mpiguide.core import stacks as stackmod
from mpiguide.core.catalog import LAYOUT_NAMES
from mpiguide.core.errors import MpiguideError
from mpiguide.core.guidelines import Analysis, GuidelineSuite
from mpiguide.core.options import int_list, parse_choice_list
from mpiguide.core.suite import CommandContext, Guideline, LaunchTemplate
from mpiguide.suites.dtbench import report

METHODS = report.METHODS
DIRECTIONS = report.DIRECTIONS
DEFAULT_A = "2,10,100,1000,1024,10000"
DEFAULT_SIZES = "3200,2560000,64000000"
DEFAULT_COMMIT = "10,1000,1000000"
BASIC_TYPES = ("int", "char", "short", "double")


class DtBenchSuite(GuidelineSuite):
    name = "dtbench"
    title = "Datatype engine: pack/unpack vs MPI_Pack, hand-written loops and memcpy (one process)"
    simulation_refusal = ("it times the datatype engine's packing in this machine's memory; SMPI models the "
                          "network, not that")
    guidelines = [
        Guideline("ENG-MPI", {"method": "engine"}, {"method": "mpi"},
                  "mpiguide's engine is no slower than the stack's MPI_Pack/MPI_Unpack "
                  "(for commit rows: decode+normalize+compile vs MPI_Type_commit)"),
        Guideline("ENG-HAND", {"method": "engine"}, {"method": "hand"},
                  "the engine is no slower than a hand-written loop for the layout"),
        Guideline("NORM-MPI", {"method": "normalized"}, {"method": "mpi"},
                  "MPI_Pack of mpiguide's normalized type is no slower than of the description as given"),
    ]

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        g = parser.add_argument_group("engine bench")
        g.add_argument("--layouts", help="';'-separated layout specs without A, e.g. 'tiled;tiled-struct S1=1 S2=1' "
                       "(default: every description of docs/layouts.md)")
        g.add_argument("--A", dest="blocksizes", default=DEFAULT_A, help=f"blocksizes A (default {DEFAULT_A})")
        g.add_argument("--sizes", default=DEFAULT_SIZES,
                       help=f"data sizes m in bytes (default {DEFAULT_SIZES}: 3.2 kB, 2.56 MB, 64 MB)")
        g.add_argument("--methods", default=",".join(METHODS), help=f"default {','.join(METHODS)}")
        g.add_argument("--directions", default=",".join(DIRECTIONS), help="pack,unpack (default both)")
        g.add_argument("--commit-blocks", default=DEFAULT_COMMIT,
                       help=f"blocks of the types whose commit cost is measured (default {DEFAULT_COMMIT}; "
                            "'none' to skip)")
        g.add_argument("--type", dest="basic", default="int", choices=BASIC_TYPES,
                       help="basic element type (default int)")

    def params(self, args: argparse.Namespace) -> dict:
        layouts = None
        if args.layouts:
            layouts = [s.strip() for s in args.layouts.split(";") if s.strip()]
            bad = [s for s in layouts if s.split()[0] not in LAYOUT_NAMES]
            if bad or not layouts:
                raise MpiguideError(f"unknown layout '{(bad or [args.layouts])[0]}': choose from "
                                    + ", ".join(LAYOUT_NAMES))
            if any(w.startswith("A=") for s in layouts for w in s.split()):
                raise MpiguideError("give A with --A, not inside --layouts")
        commit = [] if args.commit_blocks == "none" else int_list(args.commit_blocks, "--commit-blocks")
        return {
            "layouts": layouts,
            "A": int_list(args.blocksizes, "--A"),
            "sizes": int_list(args.sizes, "--sizes"),
            "methods": parse_choice_list(args.methods, METHODS, "method"),
            "directions": parse_choice_list(args.directions, DIRECTIONS, "direction"),
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

    def extend(self, a: Analysis) -> None:
        a.extra["dt_ratios"] = report.ratios(a.summary, report.load_info(a.measured))

    def tables(self, a: Analysis) -> dict[str, pd.DataFrame]:
        if a.summary.empty:
            return {}
        opts = a.rd.meta["analysis"]  # with adaptive looks, each judged at alpha / looks (docs/measurement.md)
        return report.report_tables(a.summary, a.extra.get("dt_ratios", pd.DataFrame()),
                                    report.estimates(a.measurements), opts["alpha"] / opts.get("looks", 1))

    def console_tables(self, a: Analysis) -> dict[str, pd.DataFrame]:
        picked = {k: v for k, v in self.tables(a).items() if k.startswith(("Engine goals", "Commit cost"))}
        return {k: (v.T if k.startswith("Commit cost") else v) for k, v in picked.items()}

    def charts(self, a: Analysis, out):
        return report.engine_chart(a, out)

    def add_commands(self, commands: argparse._SubParsersAction, context: CommandContext) -> None:
        dt = commands.add_parser("dt", help="the datatype engine: explain a type, benchmark the engine")
        ds = dt.add_subparsers(dest="dt_command", required=True, metavar="ACTION")
        p = ds.add_parser("explain", help="what the engine makes of a type: normal form, loop program, bytes touched",
                          description="TYPE is the notation of docs/dt-notation.md, e.g. "
                          "'vector(count=4, block=2, stride=6, int)', or a layout of docs/layouts.md, "
                          "e.g. 'tiled A=2 B=4'.")
        p.add_argument("type", metavar="TYPE")
        p.add_argument("--stack", default=stackmod.DEFAULT_STACK,
                       help="stack whose MPI decodes the type (default mpich)")
        p.add_argument("--count", type=int, help="elements of TYPE communicated (default 1)")
        p.add_argument("--n", type=int, help="elements of a layout (default 1000)")
        p.add_argument("--bytes", type=int, help="data bytes of a layout instead of --n")
        p.set_defaults(func=explain)
        p = ds.add_parser("bench", help=self.title, description=f"{self.title}. Same as `mpiguide run dtbench`.")
        context.add_run_options(p, self)
        self.add_arguments(p)
        p.set_defaults(func=context.run_command, job=self.name, resume=None)


def explain(args: argparse.Namespace) -> int:
    """`mpiguide dt explain TYPE`: mg_dtexplain's text on stdout; its complaint as the error."""
    stack = stackmod.get(args.stack)
    build.ensure_built(stack)
    argv = [str(build.driver_path(stack, "mg_dtexplain")), args.type]
    for opt in ("count", "n", "bytes"):
        value = getattr(args, opt)
        if value is not None:
            if value < 1:
                raise MpiguideError(f"bad --{opt} {value}: a positive integer")
            argv += [f"--{opt}", str(value)]
    cmd = launch.command(launch.LaunchSpec(), stack, 1, argv[0], argv[1:])
    with stack.launch_env() as env:
        res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    sys.stdout.write(res.stdout)
    if res.returncode != 0:
        message = res.stderr.strip().removeprefix("mg_dtexplain: ")
        raise MpiguideError(message or f"mg_dtexplain failed with status {res.returncode}")
    return 0
