"""The derived-datatype expectation tests 1-11 of Carpen-Amarie et al. (2016)
(mg_ddtbench): ping-pong, MPI_Bcast and MPI_Allgather with a derived type, with
MPI_Pack and MPI_Unpack, with mpiguide's engine and with its normalized type;
and Tests 12-13 (mg_ddtexchange): a 3D FFT's transposition by MPI_Alltoallw and a
halo exchange by MPI_Neighbor_alltoallw with subarray types, against packing,
point-to-point messages and the calls' nonblocking and persistent forms;
verdicts for the guidelines DT-GL1..4 and the others, the cross-stack matrix and
the sources' findings next to this run's (docs/ddt.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from mpiguide.core import launch
from mpiguide.core.errors import MpiguideError
from mpiguide.core.options import fmt_duration, int_list, parse_choice_list, parse_sizes
from mpiguide.core.runner import RunDir
from mpiguide.core.suite import CommandContext, LaunchTemplate, Report, Suite
from mpiguide.front import commands
from mpiguide.front.tuneflow import add_tune_options
from mpiguide.suites.ddt import expectations as ex
from mpiguide.suites.ddt import report, workflow


class DdtSuite(Suite):
    name = "ddt"
    many_placements = True
    title = "Derived datatype expectation tests 1-11 (Carpen-Amarie et al. 2016)"
    simulation_refusal = ("SimGrid SMPI charges no time for its own datatype handling (packing and unpacking "
                          "cost nothing in the model), which is what these tests compare, and SMPI 3.32 lacks "
                          "MPI_Type_create_darray; a prediction would be misleading")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        g = parser.add_argument_group("expectation tests (mpiguide ddt list shows each test's grid)")
        g.add_argument("--tests", default=_paper_tests(), help=f"tests to run: {_paper_tests()} (default: the "
                       f"paper's), 3,5-7, 12-{max(ex.TESTS)} (beyond the paper: FFT transpose, halo exchange), all")
        g.add_argument("--grid", choices=ex.GRIDS, default="paper",
                       help="paper: the grids of Carpen-Amarie et al. 2016, Sections 2.4-3.2 (default); quick: "
                            "fewer A, sizes, for a first look")
        g.add_argument("--layouts", help="keep only these compared layouts (names such as tiled,block-indexed or "
                       "labels such as tiled:variant=2); each test keeps its references")
        g.add_argument("--A", dest="blocksizes", help="blocksizes A for every selected test (default: each test's)")
        g.add_argument("--sizes", help="data sizes m in bytes for every selected test (default: each test's)")
        g.add_argument("--patterns", help="pingpong,bcast,allgather for every selected test of the paper's; transpose "
                       "and halo are Tests 12 and 13's own (default: each test's)")
        g.add_argument("--modes", help="keep only these modes: datatype,pack,engine,normalized; Tests 12-13 also "
                       "manual,p2p,nonblocking,persistent (default: all a test needs; datatype,pack gives the paper's "
                       "comparisons only)")
        g.add_argument("--np", help="processes of the collective patterns, e.g. 2,4 (default: the cores, 2 to 16, "
                       "or the nodes x ppn of --placement); ping-pong always uses 2")
        g.add_argument("--type", dest="basic", default="int", choices=sorted(ex.BASIC_TYPES),
                       help="basic element type of the layouts (default int)")

    def selection(self, args: argparse.Namespace) -> ex.Selection:
        text = getattr(args, "placement", None)
        placements = launch.parse_placements(text) if text else []
        if args.np:
            nps = int_list(args.np, "--np")
            if min(nps) < 2:
                raise MpiguideError(f"bad --np '{args.np}': collectives need at least 2 processes")
            if placements:
                raise MpiguideError(f"--np {args.np} and --placement {text}: a placement fixes the collectives' "
                                    "processes (nodes x ppn); give one or the other")
        else:
            nps = [launch.default_np()]
        layouts = None
        if args.layouts:
            layouts = [x.strip() for x in args.layouts.split(",") if x.strip()]
            known = {w for t in ex.TESTS.values() for s in t.layouts for w in (s.split()[0], ex.label(s))}
            bad = [x for x in layouts if x not in known]
            if bad or not layouts:
                raise MpiguideError(f"unknown layout '{(bad or [args.layouts])[0]}' in --layouts: the tests use "
                                    + ", ".join(sorted(known)))
        sizes = parse_sizes(args.sizes, ex.BASIC_TYPES[args.basic]) if args.sizes else None
        return ex.Selection(
            tests=ex.parse_tests(args.tests), grid=args.grid, layouts=layouts,
            A=int_list(args.blocksizes, "--A") if args.blocksizes else None, sizes=sizes,
            patterns=parse_choice_list(args.patterns, ex.ALL_PATTERNS_ANY, "pattern") if args.patterns else None,
            modes=parse_choice_list(args.modes, ex.ALL_MODES, "mode") if args.modes else None,
            np=nps, basic=args.basic, placements=placements, every_mode=getattr(args, "every_mode", False))

    def params(self, args: argparse.Namespace) -> dict:
        sel = self.selection(args)
        entries = ex.plan_tests(sel)
        if not entries:
            raise MpiguideError("the options leave no test to run (each test needs one of its compared layouts "
                                "and the modes of its comparisons; see mpiguide ddt list)")
        return {"tests": sel.tests, "grid": sel.grid, "type": sel.basic, "entries": entries}

    def launches(self, params: dict) -> list[LaunchTemplate]:
        return [_template(e, params) for e in params["entries"]]

    def narrow(self, params: dict, template: LaunchTemplate, points: pd.DataFrame) -> LaunchTemplate:
        """The entry's grid cut to the A and m of the points, the layouts their comparisons read (all of a
        DT-GL4-BEST comparison's, the fastest being sought among them) and the modes of those."""
        entry = next(e for e in params["entries"] if e["key"] == template.key)
        by_text = {report.comparison_text(c): c for c in map(ex.Comparison.from_dict, entry["comparisons"])}
        wanted = [by_text[t] for t in points["comparison"].unique() if t in by_text]
        if not wanted:
            return template
        specs = {s for c in wanted for s in (c.compared[0], c.reference[0], *c.among)}
        modes = {m for c in wanted for m in (c.compared[1], c.reference[1])}
        A, sizes = set(points["A"].astype(int)), set(points["m"].astype(int))
        return _template({**entry, "layouts": [s for s in entry["layouts"] if s in specs],
                          "A": [a for a in entry["A"] if a in A], "sizes": [m for m in entry["sizes"] if m in sizes],
                          "modes": [m for m in entry["modes"] if m in modes]}, params)

    def describe_plan(self, params: dict, runs: int, stacks: int, nrep: str | int) -> str:
        configs, seconds = ex.estimate(params["entries"], nrep)
        total = seconds * runs * stacks
        return (f"{len(params['tests'])} test(s), {len(params['entries'])} launch template(s), {configs} "
                f"configurations (layout x A x m x mode), {runs} run(s) on {stacks} stack(s): about "
                f"{fmt_duration(total)} by a rough model of a 2-core machine (slow datatype handling takes "
                "longer)")

    def report(self, runs: list[RunDir], out: Path) -> Report:
        r = report.load(runs)
        return Report(report.write(r, out), report.console_lines(r))

    def verdict_points(self, rd: RunDir) -> pd.DataFrame:
        return report.verdict_points(report.load([rd]))

    def add_commands(self, commands_: argparse._SubParsersAction, context: CommandContext) -> None:
        dd = commands_.add_parser("ddt", help="the derived datatype expectation tests 1-11 of Carpen-Amarie et al. "
                                  "2016")
        dds = dd.add_subparsers(dest="ddt_command", required=True, metavar="ACTION")
        p = dds.add_parser("run", help=self.title, description=f"{self.title}. Same as `mpiguide run ddt`.")
        context.add_run_options(p, self)
        self.add_arguments(p)
        p.set_defaults(func=context.run_command, job=self.name, resume=None)
        p = dds.add_parser("report", help="verdicts, cross-stack matrix, charts and HTML of one or several ddt runs")
        p.add_argument("runs", nargs="+", metavar="RUN", help="run ids under results/ or run directories")
        p.add_argument("--output", metavar="DIR", help="where to write (default: the run itself for one run, "
                       "results/<time>-ddt-report for several)")
        commands.add_verdict_options(p)
        p.set_defaults(func=self._report_command)
        flow = workflow.DdtTune(self)
        p = dds.add_parser("tune", help="choose libmpiguide-tune's datatype strategies per stack from the tests, "
                           "write datatype profiles and validate the tuned library",
                           description="Measure the selected tests with every mode (datatype, MPI_Pack, engine, "
                           "normalized), choose per stack, operation, processes, normalized shape and size the "
                           "strategy of libmpiguide-tune (native, normalized or pack) that is faster by the "
                           "threshold, write datatype profiles, then run the tests again with the tuned library "
                           "and report the violations it repairs and its gains. Tests 12 and 13 (--tests 12,13) "
                           "tune MPI_Alltoallw and MPI_Neighbor_alltoallw, for which the library takes native or "
                           "normalized (it packs no w call by profile).")
        add_tune_options(p, flow.command, flow.alternative)
        context.add_run_options(p, self)
        self.add_arguments(p)
        p.set_defaults(func=flow.run, every_mode=True)
        p = dds.add_parser("list", help="the 11 tests: layouts, guideline, comparisons and grid")
        p.add_argument("--grid", choices=ex.GRIDS, default="paper")
        p.set_defaults(func=_list_command)

    def _report_command(self, args: argparse.Namespace) -> int:
        # the settings apply to this report only: the runs keep their own
        rds = [commands.open_run(ref, args.samples, args.tolerance, args.alpha, save=False) for ref in args.runs]
        out_dir = Path(args.output) if args.output else report.default_output(rds)
        commands.write_report(self, rds, out_dir)
        return 0


def _template(e: dict, params: dict) -> LaunchTemplate:
    """The driver invocation of a planned entry (params["entries"])."""
    # the driver measures the layouts and modes of each (A, m) interleaved in a random order per repetition
    # (--order-seed, from the runner): the layout measured first used to be up to 1.6x slower
    driver = e.get("driver", "mg_ddtbench")
    layouts = [] if driver == "mg_ddtexchange" else ["--layouts", ";".join(e["layouts"])]
    args = ["--pattern", e["pattern"], *layouts,
            "--A", ",".join(map(str, e["A"])), "--sizes", ",".join(map(str, e["sizes"])),
            "--modes", ",".join(e["modes"]), "--type", params["type"]]
    if params.get("datatype_profiles"):  # the validation of mpiguide ddt tune
        driver, args = f"{driver}_tuned", [*args, "--datatype-profiles", params["datatype_profiles"]]
    # runs planned before the placement rename call it launch_layout
    return LaunchTemplate(e["key"], driver, e["nprocs"], args, e.get("placement", e.get("launch_layout")))


def _paper_tests() -> str:
    return f"{min(ex.PAPER_TESTS)}-{max(ex.PAPER_TESTS)}"


def _list_command(args: argparse.Namespace) -> int:
    out = commands.out
    for t in ex.TESTS.values():
        grid = t.paper if args.grid == "paper" else t.quick
        guideline = t.guideline or "characterizes (slowdown against the reference)"
        out.print(f"Test {t.number}: {t.title} ({t.origin}) - {guideline}")
        out.print(f"  references: {', '.join(ex.label(x) for x in t.references) or '-'}; compared: "
                  f"{', '.join(ex.label(x) for x in t.compared)}; modes: {', '.join(t.modes)}")
        sizes = ", ".join(str(m) for m in grid.sizes) + (" (n = 100, 10240 elements of MPI_INT)" if t.n_grid else "")
        a = "A" if not t.exchange else f"A ({t.a_label})"
        m = "m" if not t.exchange else "m (bytes of each process's local array)"
        out.print(f"  {args.grid} grid: {a} = {', '.join(map(str, grid.A))}; {m} = {sizes} bytes; patterns: "
                  f"{', '.join(grid.patterns)}")
        for c in t.comparisons():
            if c.guideline != "slowdown":
                out.print(f"  {c.guideline}: {report.comparison_text(c)}", highlight=False)
    return 0
