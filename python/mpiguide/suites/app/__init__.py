"""A user's own MPI program (docs/app-tuning.md): `mpiguide app record` records what it calls and where its
time goes (libmpiguide-tune's record mode), `mpiguide app tune` measures exactly those calls with every
alternative the library has and writes profiles from decided gains, `mpiguide app validate` runs the program
natively and under the tuned library, interleaved round by round, and shows the end-to-end speedup with its
interval (and that the output did not change); `mpiguide app run` does all three. `mpiguide run app` is the
validation alone, with profiles of one's own."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from mpiguide.core import stacks as stackmod
from mpiguide.core import stats
from mpiguide.core.errors import MpiguideError
from mpiguide.core.options import parse_choice_list
from mpiguide.core.runner import RunDir
from mpiguide.core.suite import POINT_COLUMNS, AppChoice, AppPlan, CommandContext, LaunchTemplate, Report, Suite
from mpiguide.suites.app import analysis, inprogram, job, report, workflow


class AppSuite(Suite):
    """One template per side (the program natively, recorded, tuned, with each library's own tuning file), all
    sides of a round back to back in a random order."""

    name = "app"
    title = "A user's MPI program, natively and under libmpiguide-tune (mpiguide app)"
    fixed_nrep = 1  # the program runs once per launch: the launch is the repetition
    simulation_refusal = "it runs a user's program on a real MPI library"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        g = parser.add_argument_group("the program")
        g.add_argument("--np", type=int, default=2, help="processes of the program (default 2)")
        g.add_argument("--sides", default="native,tuned",
                       help=f"what to run side by side: {', '.join(job.SIDES)} (default native,tuned)")
        g.add_argument("--profiles", metavar="DIR", help="the tuned side's profiles: DIR/<stack>/ where it exists, "
                       "else DIR (mpiguide app tune writes them to its directory's profiles/)")
        job.add_output_options(g)
        g.add_argument("program", nargs=argparse.REMAINDER, metavar="-- PROGRAM [ARGS]",
                       help="the MPI program and its arguments, after --")

    def params(self, args: argparse.Namespace) -> dict:
        sides = parse_choice_list(args.sides, job.SIDES, "side")
        if "file" in sides:
            raise MpiguideError("--sides file: a library's own tuning file comes from mpiguide app tune; run "
                                "mpiguide app validate on its directory")
        profiles = None
        if {"tuned", "tuned-record"} & set(sides):
            if not args.profiles:
                raise MpiguideError("the tuned side needs --profiles DIR (mpiguide app tune writes them)")
            base = Path(args.profiles).resolve()
            if not base.is_dir():
                raise MpiguideError(f"--profiles {args.profiles}: no such directory")
            per_stack = all((base / s).is_dir() for s in stackmod.parse_stack_list(args.stacks))
            profiles = str(base / "{stack}") if per_stack else str(base)
            check_profiles_fit(base, args.np)
        return job.program_params(args, sides, profiles)

    def launches(self, params: dict) -> list[LaunchTemplate]:
        return job.templates(params)

    def describe_plan(self, params: dict, runs: int, stacks: int, nrep: str | int) -> str:
        return (f"{' '.join(params['program'])} on {params['np']} process(es): {', '.join(params['sides'])}, "
                f"{runs} round(s) on {stacks} stack(s)")

    def report(self, runs: list[RunDir], out: Path) -> Report:
        (rd,) = runs
        doc, lines = report.run_document(rd, out)
        return Report(doc.write(out), lines)

    def verdict_points(self, rd: RunDir) -> pd.DataFrame:
        """`SIDE ⪯ native` per stack: VIOLATED where the side is shown slower than the native program."""
        s = analysis.load(rd).speedups
        verdict = {analysis.SLOWER: stats.VIOLATED, analysis.FASTER: stats.PASS}
        rows = [dict(stack=x.stack, guideline=f"{x.side} ⪯ native", point=f"np{rd.meta['params']['np']}",
                     verdict=verdict.get(x.verdict, stats.INCONCLUSIVE), factor=1 / x.speedup, p_value=x.p_value,
                     ratio=1 / x.speedup, se_log=x.se_log, df=x.df) for x in s.itertuples()]
        return pd.DataFrame(rows, columns=POINT_COLUMNS)

    def add_commands(self, commands_: argparse._SubParsersAction, context: CommandContext) -> None:
        workflow.add_commands(commands_, context, self)

    # ---- tuning an application: the calls no benchmark rebuilds, measured in the program itself

    def app_plan(self, calls: pd.DataFrame, options: dict) -> list[AppPlan]:
        if "program" not in options:  # (a suite's own run of a record has no program to run)
            return []
        p = inprogram.plan(calls, options.get("type_shapes", {}), options["program"])
        return [p] if p else []

    def app_choose(self, rds: list[RunDir], threshold: float, out: Path, origin: str) -> AppChoice:
        return inprogram.choose(rds, threshold, out, origin)


def check_profiles_fit(base: Path, np_: int) -> None:
    """Collective profiles are keyed by the communicator's size: a set made for other process counts only
    would leave the tuned side native (a record of another run, not this one)."""
    counts = {int(p.stem.rsplit("_p", 1)[1]) for p in base.rglob("*_p*.prof") if p.stem.rsplit("_p", 1)[1].isdigit()}
    if counts and np_ not in counts:
        raise MpiguideError(f"--profiles {base}: its collective profiles are for {', '.join(map(str, sorted(counts)))} "
                            f"process(es), not the --np {np_} of this run: the tuned library would run them natively "
                            "(tune again at this process count: mpiguide app run --np ...)")
