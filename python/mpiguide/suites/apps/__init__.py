"""The stencil applications (mg_stencil) of Adefemi (2025): Jacobi CFD, Game of
Life and image reconstruction with every halo-exchange variant, strong and weak
scaling, bitwise checks, and which packing wins where (docs/apps.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from mpiguide.core.errors import MpiguideError
from mpiguide.core.options import add_old_name, fmt_duration, int_list, parse_choice_list
from mpiguide.core.runner import RunDir
from mpiguide.core.suite import POINT_COLUMNS, CommandContext, LaunchTemplate, Report, Suite
from mpiguide.front import commands
from mpiguide.suites.apps import job as apps
from mpiguide.suites.apps import report


class AppsSuite(Suite):
    """One launch template per (application, scaling, processes); each launch checks and times every variant."""

    name = "apps"
    title = ("Stencil applications: halo exchange by manual packing vs derived datatypes, three communication modes "
             "(Adefemi 2025)")
    simulation_refusal = ("the stencil variants use neighborhood collectives on distributed graph "
                          "communicators (MPI_Dist_graph_create_adjacent), which SMPI 3.32 does not implement, "
                          "and derived-datatype halos, whose handling SMPI does not charge")
    fixed_nrep = apps.DEFAULT_NREP
    # mg_stencil interleaves the variants' repetitions; the variants share every launch, so the verdicts pair
    # them launch by launch, like every suite's (docs/measurement.md)
    default_samples = "medians"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        g = parser.add_argument_group("stencil applications")
        g.add_argument("--apps", default=",".join(apps.APPS), help="jacobi,life,image (default all three)")
        g.add_argument("--variants", default="all", help="all (default: every packing x mode the stack supports) "
                       "or packing:mode items, packing " + "|".join(apps.PACKINGS) + ", mode "
                       + "|".join(apps.MODES))
        np = g.add_argument("--np", default=",".join(map(str, apps.DEFAULT_RANKS)),
                            help="process counts (default 1,2,4; more than the cores is oversubscribed)")
        add_old_name(g, "--ranks", np)
        g.add_argument("--scaling", default=",".join(apps.SCALINGS),
                       help="strong (fixed global grid), weak (fixed block per rank) or both (default)")
        g.add_argument("--preset", choices=apps.PRESETS, default="machine",
                       help="grids and iterations: Adefemi 2025, Table I, scaled to a 2-core machine (machine, "
                            "default) or at full size (paper); see docs/apps.md")
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
        ranks = sorted(set(int_list(args.np, "--np")))
        placement = getattr(args, "placement", None)
        if placement and (args.ppn or len(ranks) > 1):
            raise MpiguideError(f"--placement {placement} fixes one process count, but this run has --np "
                                f"{args.np}: give the processes per node with --ppn instead")
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
                               apps.placement(nprocs, params.get("ppn")))
                for key, (app, scaling, nprocs) in apps.template_info(params).items()]

    def describe_plan(self, params: dict, runs: int, stacks: int, nrep: str | int) -> str:
        n = len(apps.template_info(params))
        seconds = apps.estimate_seconds(params, int(nrep)) * runs * stacks
        return (f"{len(params['apps'])} application(s) x {len(params['scalings'])} scaling(s) x "
                f"{len(params['ranks'])} process count(s) = {n} launch template(s), each with "
                f"{apps.variant_count(params)} variant(s), {runs} run(s) on {stacks} stack(s): about "
                f"{fmt_duration(seconds)} by a rough model of a 2-core machine")

    def report(self, runs: list[RunDir], out: Path) -> Report:
        (rd,) = runs
        r = report.load(rd)
        return Report(report.write(r, out), report.console_summary(r))

    def verdict_points(self, rd: RunDir) -> pd.DataFrame:
        return report.verdict_points(report.load(rd))[POINT_COLUMNS]

    def add_commands(self, commands_: argparse._SubParsersAction, context: CommandContext) -> None:
        ap = commands_.add_parser("apps", help="the stencil applications of Adefemi 2025: halo exchange by manual "
                                  "packing vs derived datatypes")
        aps = ap.add_subparsers(dest="apps_command", required=True, metavar="ACTION")
        p = aps.add_parser("run", help=self.title, description=f"{self.title}. Same as `mpiguide run apps`. "
                           "Every variant is checked bitwise before it is timed (docs/apps.md).")
        context.add_run_options(p, self)
        self.add_arguments(p)
        p.set_defaults(func=context.run_command, job=self.name, resume=None)
        p = aps.add_parser("report", help="rebuild the report of an apps run (winner matrices, scaling, memory)")
        p.add_argument("run", metavar="RUN", help="run id under results/ or a run directory")
        p.add_argument("--output", metavar="DIR", help="where to write (default: the run itself)")
        commands.add_verdict_options(p)
        p.set_defaults(func=self._report_command)

    def _report_command(self, args: argparse.Namespace) -> int:
        rd = commands.open_run(args.run, args.samples, args.tolerance, args.alpha)
        commands.write_report(self, [rd], Path(args.output) if args.output else rd.path)
        return 0
