"""Collective guideline tuning (Hunold and Carpen-Amarie 2018; mg_collbench and
libmpiguide-tune): every collective natively and with each of its mock-ups, the
guidelines COLL-GL1..22, monotony and split-robustness; each collective's
nonblocking and persistent forms (COLL-NB, COLL-PERS) and the neighbourhood
collectives against their point-to-point exchange (COLL-NBR), measured and
reported, never tuned; and `mpiguide tune`, which writes profiles and validates
the tuned library (docs/tuning.md)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import pandas as pd

from mpiguide.core import build, launch
from mpiguide.core import stacks as stackmod
from mpiguide.core.errors import MpiguideError
from mpiguide.core.options import add_thread_level, int_list, parse_choice_list, parse_sizes, thread_level_args
from mpiguide.core.runner import RunDir
from mpiguide.core.suite import (
    POINT_COLUMNS,
    POINT_MORE,
    POINT_TEMPLATE,
    TEMPLATE_SEP,
    AppChoice,
    AppPlan,
    CommandContext,
    LaunchTemplate,
    Report,
    Suite,
)
from mpiguide.front.tuneflow import add_tune_options
from mpiguide.suites.coll import algorithms, analysis, app, profiles, report, selection, simulate, workflow
from mpiguide.suites.coll.catalog import CHOSEN_FORMS, COLLECTIVES, NEIGHBORHOODS, POOL_DEFAULTS
from mpiguide.suites.coll.reprompi import CollImporter

# the sizes of Hunold and Carpen-Amarie (2018), Figure 4
DEFAULT_SIZES = "1,2,4,8,32,64,100,512,1024,4096,8192,16000,32768,50000,100000"
DATATYPES = {"byte": 1, "int": 4, "double": 8}
OPS = ("bor", "sum", "max")
# what --collectives may name: the library's nine, then mg_collbench's neighbourhood collectives (the default: all)
ALL_COLLECTIVES = (*COLLECTIVES, *NEIGHBORHOODS)


def parse_pool(text: str, what: str) -> str:
    """A pool capacity as libmpiguide-tune reads it: bytes with an optional k, M or G suffix (0 allowed)."""
    item = text.strip()
    digits = item[:-1] if item[-1:].lower() in ("k", "m", "g") else item
    if not digits.isdigit():
        raise MpiguideError(f"bad {what} '{text}': bytes with an optional k, M or G suffix, such as 64M")
    return item


def _template(params: dict, coll: str, np_: int, placement: str | None, sizes: list[int]) -> LaunchTemplate:
    """One collective on np_ processes (at placement, None: the run's) at these sizes, with every mock-up."""
    args = ["--collectives", coll, "--sizes", ",".join(map(str, sizes)), "--datatype", params["datatype"],
            "--op", params["op"], "--root", str(params["root"]), "--msg-pool", params["msg_pool"],
            "--int-pool", params["int_pool"]]
    if params.get("forms"):
        args += ["--forms", ",".join(params["forms"])]
    if params.get("profiles"):
        args += ["--profiles", params["profiles"]]
    args += thread_level_args(params)
    key = selection.main_key(coll, np_, placement)
    return LaunchTemplate(key, "mg_collbench", np_, args, placement=placement, block=key)


def _with_sizes(template: LaunchTemplate, sizes: list[int]) -> LaunchTemplate:
    args = list(template.args)
    args[args.index("--sizes") + 1] = ",".join(map(str, sizes))
    return dataclasses.replace(template, args=args)


class CollSuite(Suite):
    """One launch template per (processes, collective), so that t_nrep1 (Hunold and Carpen-Amarie 2018) is
    calibrated per collective; with --algorithms, one more per algorithm of the library in the same block
    (suites.coll.selection)."""

    name = "coll"
    many_placements = True  # --placement 2x1,1x2: each collective measured at each (analysis: placement)
    title = "Collectives against their mock-ups (Hunold and Carpen-Amarie 2018, COLL-GL1..22)"
    simulation_refusal = None  # mpiguide sim coll: suites.coll.simulate
    reprompi = CollImporter()

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        g = parser.add_argument_group("collectives")
        g.add_argument("--collectives", default=",".join(ALL_COLLECTIVES),
                       help="collectives to measure: the nine of libmpiguide-tune and the neighbourhood collectives "
                            f"{', '.join(NEIGHBORHOODS)} (MPI_Neighbor_allgather on a periodic 2D Cartesian grid and "
                            "on the complete graph, against their point-to-point exchange: COLL-NBR) (default: all)")
        g.add_argument("--forms", default=",".join(CHOSEN_FORMS), metavar="LIST|none",
                       help="also measure each collective's nonblocking form (MPI_IX + MPI_Wait: COLL-NB) and "
                            "persistent form (MPI-4: MPI_X_init once, MPI_Start + MPI_Wait per call: COLL-PERS), "
                            "interleaved with the blocking call; never chosen by a profile (default "
                            f"{','.join(CHOSEN_FORMS)}; none to leave them out)")
        g.add_argument("--sizes", default=DEFAULT_SIZES, help="message sizes in bytes, k/m = KiB/MiB "
                       "(default: 1 B to 100 kB as in Hunold and Carpen-Amarie 2018, Figure 4); "
                       "reduce_scatter_block: the whole vector")
        g.add_argument("--np", help="processes, e.g. 2,4 (default: the cores, 2 to 16)")
        g.add_argument("--datatype", default="byte", choices=sorted(DATATYPES),
                       help="element type (default byte, as Hunold and Carpen-Amarie 2018)")
        g.add_argument("--op", default="bor", choices=OPS, help="reduction operation (default bor)")
        g.add_argument("--root", type=int, default=0, help="root of the rooted collectives (default 0)")
        g.add_argument("--msg-pool", default=POOL_DEFAULTS["msg_pool"],
                       help="the memory limit: message pool of the library; a mock-up that needs more is not "
                            f"used (default {POOL_DEFAULTS['msg_pool']})")
        g.add_argument("--int-pool", default=POOL_DEFAULTS["int_pool"],
                       help=f"int-vector pool of the library (default {POOL_DEFAULTS['int_pool']})")
        add_thread_level(g)
        g.add_argument("--algorithms", default="none", metavar="all|none|NAMES",
                       help="also measure the library's own algorithms of each collective (COLL-SEL: the "
                            "default against each), each forced in launches of its own beside the default's: all "
                            "that the library lists (`mpiguide algorithms`), or comma-separated names (default "
                            "none; reading the listings builds the stacks' drivers)")

    def params(self, args: argparse.Namespace) -> dict:
        text = getattr(args, "placement", None)
        # one placement is the run's (front.commands.launch_spec); several give each launch its own
        placements = launch.parse_placements(text) if text else []
        placements = placements if len(placements) > 1 else []
        if placements and args.np:
            raise MpiguideError(f"--np {args.np} and --placement {text}: each placement fixes its launches' "
                                "processes (nodes x ppn); give one or the other")
        if placements:
            nps = sorted({nodes * ppn for nodes, ppn in map(launch.parse_placement, placements)})
        else:
            nps = int_list(args.np, "--np") if args.np else [launch.default_np()]
        if min(nps) < 2:
            raise MpiguideError(f"bad --np '{args.np}': collectives need at least 2 processes")
        if args.root < 0 or args.root >= min(nps):
            raise MpiguideError(f"bad --root {args.root}: a rank below the smallest --np ({min(nps)})")
        if args.op == "bor" and args.datatype == "double":
            raise MpiguideError("--op bor needs --datatype byte or int")
        forms = [] if args.forms.strip() == "none" else parse_choice_list(args.forms, CHOSEN_FORMS, "form")
        return {"collectives": parse_choice_list(args.collectives, ALL_COLLECTIVES, "collective"), "forms": forms,
                "sizes": sorted(set(parse_sizes(args.sizes, DATATYPES[args.datatype]))), "np": nps,
                "datatype": args.datatype, "op": args.op, "root": args.root,
                "msg_pool": parse_pool(args.msg_pool, "--msg-pool"),
                "int_pool": parse_pool(args.int_pool, "--int-pool"),
                "placements": placements, "profiles": None, "algorithms": self._algorithms(args),
                "thread_level": getattr(args, "thread_level", None)}

    @staticmethod
    def _algorithms(args: argparse.Namespace) -> dict:
        wanted = selection.parse_choice(getattr(args, "algorithms", "none"))
        if wanted is None:
            return {}
        colls = [c for c in parse_choice_list(args.collectives, ALL_COLLECTIVES, "collective") if c in COLLECTIVES]
        return selection.read(stackmod.parse_stack_list(args.stacks), colls, wanted)

    def launches(self, params: dict) -> list[LaunchTemplate]:
        out = []
        for np_, placement in selection.shapes(params):
            for coll in params["collectives"]:
                main = _template(params, coll, np_, placement, params["sizes"])
                out += [main, *selection.templates(params, coll, np_, main)]
        return out

    def narrow(self, params: dict, template: LaunchTemplate, points: pd.DataFrame) -> LaunchTemplate:
        """The sizes of the points (both sizes of a MONOTONY or SPLIT point); the whole template where a point's
        size is not one of the run's (reduce_scatter_block rounds its size down to whole elements per process)."""
        wanted = set(points["msize"].astype(int)) | set(points["reference_msize"].astype(int))
        if not wanted <= set(params["sizes"]):
            return template
        return _with_sizes(template, [m for m in params["sizes"] if m in wanted])

    def describe_plan(self, params: dict, runs: int, stacks: int, nrep: str | int) -> str:
        shapes = selection.shapes(params)
        where = (f"at {', '.join(params['placements'])} (nodes x processes per node)" if params.get("placements")
                 else f"on {', '.join(map(str, params['np']))} processes")
        forms = f" and the {' and '.join(params['forms'])} form" if params.get("forms") else ""
        return (f"{len(params['collectives'])} collective(s) x {len(params['sizes'])} size(s) x every mock-up{forms}, "
                f"{where}: {len(params['collectives']) * len(shapes)} launch template(s), {runs} run(s) on "
                f"{stacks} stack(s)")

    def report(self, runs: list[RunDir], out: Path) -> Report:
        (rd,) = runs
        r = analysis.load(rd)
        verdicts = analysis.guideline_verdicts(r)
        return Report(report.write_coll(r, verdicts, out), report.console_summary(verdicts))

    def verdict_points(self, rd: RunDir) -> pd.DataFrame:
        """The guideline verdicts and, of a validation run, its checks of each fix (analysis.validation_checks),
        each with the launch templates of its two sides."""
        r = analysis.load(rd)
        v = pd.concat([analysis.guideline_verdicts(r).assign(reference=analysis.DEFAULT),
                       analysis.validation_checks(r)], ignore_index=True)
        at = v["placement"].map(lambda p: f" {p}" if p else "")
        versus = v["reference"].map(lambda ref: "" if ref == analysis.DEFAULT else f" vs {ref}")
        point = (v["collective"] + " " + v["impl"] + versus + " np" + v["nprocs"].astype(str) + at + " m="
                 + v["msize"].astype(str) + " vs m=" + v["reference_msize"].astype(str))
        template = [TEMPLATE_SEP.join(dict.fromkeys(selection.impl_template(c, n, s, side, p or None)
                                                    for side in (ref, impl)))
                    for c, n, s, p, impl, ref in zip(v["collective"], v["nprocs"], v["stack"], v["placement"],
                                                      v["impl"], v["reference"], strict=True)]
        return v.assign(point=point, template=template)[[*POINT_COLUMNS, POINT_TEMPLATE, POINT_MORE, "msize",
                                                         "reference_msize"]]

    def app_plan(self, calls: pd.DataFrame, options: dict) -> list[AppPlan]:
        return app.plan(calls, options, self.name)

    def app_choose(self, rds: list[RunDir], threshold: float, out: Path, origin: str) -> AppChoice:
        return app.choose(rds, threshold, out, origin)

    def add_simulation_arguments(self, parser: argparse.ArgumentParser) -> None:
        simulate.add_arguments(parser)

    def simulate(self, args: argparse.Namespace) -> int:
        return simulate.run(args)

    def add_simulation_commands(self, jobs: argparse._SubParsersAction) -> None:
        for name, short, description, add, func in (
                ("check", "a measured coll run against the model's prediction of it",
                 "Simulate the grid of a measured coll run (mpiguide run coll) with the selector of each stack's "
                 "family and set every configuration's prediction beside its measurement: where the model can be "
                 "trusted.", simulate.add_check_arguments, simulate.check),
                ("compare", "two simulations of mpiguide sim coll: which predictions changed",
                 "Set the predicted COLL-GL points of two simulations side by side (another platform, scale or "
                 "SimGrid version): each point's factors and whether its predicted verdict changed. Predictions "
                 "only; measured runs are compared with mpiguide compare.",
                 simulate.add_compare_arguments, simulate.compare)):
            p = jobs.add_parser(name, help=short, description=description)
            add(p)
            p.set_defaults(func=func)

    def add_commands(self, commands: argparse._SubParsersAction, context: CommandContext) -> None:
        p = commands.add_parser("tune", help="measure collectives and their mock-ups, find guideline violations, "
                                "write profiles for libmpiguide-tune and validate the tuned library (Hunold and "
                                "Carpen-Amarie 2018)",
                                description="Measure every collective natively and with each mock-up (forced "
                                "mode), check COLL-GL1..22, monotony and split-robustness, write profiles where a "
                                "mock-up is faster by the threshold, then measure again with the tuned library. "
                                "Defaults follow Hunold and Carpen-Amarie (2018): dissemination barrier, nrep "
                                "estimation, 5 launches.")
        flow = workflow.CollTune(self)
        add_tune_options(p, flow.command, flow.alternative)
        context.add_run_options(p, self)
        self.add_arguments(p)
        p.set_defaults(func=flow.run, sync="dissem", nrep="estimate")
        pr = commands.add_parser("profiles", help="tuning profiles: convert between mpiguide's format and "
                                 "PGMPITuneLib's")
        prs = pr.add_subparsers(dest="profiles_command", required=True, metavar="ACTION")
        p = prs.add_parser("convert", help="write every collective profile of a directory in the other format",
                           description="Every collective profile of SRC (*.prof, *.prf) in the format of --to, into "
                           "--output; datatype profiles have no PGMPITuneLib form and are left out. libmpiguide-tune "
                           "reads both formats as they are (docs/tuning.md).")
        p.add_argument("src", metavar="SRC", help="a profile directory (e.g. DIR/validate/profiles/mpich)")
        p.add_argument("--to", required=True, choices=profiles.FORMATS, help="the format to write")
        p.add_argument("--output", metavar="DIR", help="where to write (default SRC-<format>)")
        p.set_defaults(func=self._convert_command)
        p = prs.add_parser("from-online", help="profiles of what a program's run chose in online mode",
                           description="The keys that settled in a run of libmpiguide-tune's online mode "
                           "(MPIGUIDE_TUNE_MODE=online with MPIGUIDE_TUNE_REPORT=REPORT) as profiles in mpiguide's "
                           "format, for tuned mode's later runs: each message size the run settled on a mock-up "
                           "becomes a one-size range, each datatype key's choice a rule (docs/tuning.md, Online "
                           "selection).")
        p.add_argument("reports", metavar="REPORT", nargs="+",
                       help="the report file of the online run (rank 0's), or every rank's (MPIGUIDE_TUNE_REPORT "
                       "with %%r: the datatype keys are each rank's own)")
        p.add_argument("--output", metavar="DIR", help="where to write (default the first REPORT's name + -profiles)")
        p.set_defaults(func=self._from_online_command)
        p = commands.add_parser("algorithms", help="the collective algorithms each MPI library offers, as the library "
                                "lists them (MPI_T), and how each is forced",
                                description="Per stack and collective, the algorithms the MPI library itself lists "
                                "at run time through its MPI_T control variables (MPICH: "
                                "MPIR_CVAR_<COLL>_INTRA_ALGORITHM; Open MPI: coll_tuned_<coll>_algorithm; Intel "
                                "MPI: the preset ids of I_MPI_ADJUST_<COLL>), its "
                                "default left out, and the environment that forces one (builds the stack's drivers "
                                "first).")
        p.add_argument("--stacks", default=stackmod.DEFAULT_STACK, help="comma-separated stacks (default "
                       f"{stackmod.DEFAULT_STACK})")
        p.add_argument("--collectives", default=",".join(COLLECTIVES),
                       help=f"comma-separated, of {', '.join(COLLECTIVES)} (default: all)")
        p.add_argument("--json", action="store_true", help="print one JSON object: stack -> collective -> "
                       "[{name, value, env}]")
        p.set_defaults(func=self._algorithms_command)

    def _algorithms_command(self, args: argparse.Namespace) -> int:
        colls = parse_choice_list(args.collectives, COLLECTIVES, "--collectives")
        found = {}
        for name in stackmod.parse_stack_list(args.stacks):
            stack = stackmod.get(name)
            stack.adapter.check_lists_algorithms()
            build.ensure_built(stack)
            found[name] = algorithms.algorithms(stack, colls)
            if not args.json:
                print("\n".join(algorithms.console_lines(stack, found[name])))
        if args.json:
            print(algorithms.to_json(found))
        return 0

    def _from_online_command(self, args: argparse.Namespace) -> int:
        reports = [Path(r) for r in args.reports]
        first = reports[0]
        out = Path(args.output) if args.output else first.resolve().with_name(f"{first.name}-profiles")
        done = profiles.from_online(reports, out)
        for note in done.notes:
            print(f"note: {note}")
        if not done.written:
            print(f"no profile written: every settled key of {', '.join(args.reports)} chose the native call")
        else:
            print(f"wrote {len(done.written)} profile(s) to {out}: MPIGUIDE_TUNE_MODE=tuned "
                  f"MPIGUIDE_TUNE_PROFILES={out} runs with them")
        return 0

    def _convert_command(self, args: argparse.Namespace) -> int:
        """0: every profile of SRC converted; 1: some could not be read (the others are written); 2: none
        converted."""
        src = Path(args.src)
        out = Path(args.output) if args.output else src.resolve().with_name(f"{src.resolve().name}-{args.to}")
        done = profiles.convert(src, args.to, out)
        for note in done.left_out:
            print(f"left out: {note}")
        for problem in done.skipped:
            print(f"skipped: {problem}", file=sys.stderr)
        if not done.written:
            why = (f"{len(done.skipped)} file(s) could not be read (skipped: above)" if done.skipped else
                   f"it holds no collective profile (*.prof, *.prf) in another format than {args.to}'s" + (
                       " (left out: above)" if done.left_out else ""))
            raise MpiguideError(f"nothing converted from {src} to {args.to}'s format: {why}")
        print(f"wrote {len(done.written)} profile(s) in {args.to}'s format to {out}" + (
            f"; {len(done.skipped)} file(s) could not be read (skipped: above)" if done.skipped else ""))
        return 1 if done.skipped else 0
