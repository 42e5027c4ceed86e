"""An application's own calls with derived datatypes, rebuilt from its record (libmpiguide-tune's record
mode) and measured under each datatype strategy of the library with mg_callbench: native, normalized, pack
(docs/app-tuning.md). `mpiguide run calls --record FILE` measures a record's calls; `mpiguide app tune` runs
it as the datatype part of tuning an application."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from mpiguide.core import record as recordmod
from mpiguide.core.errors import MpiguideError
from mpiguide.core.options import add_thread_level, parse_choice_list, thread_level_args
from mpiguide.core.runner import RunDir
from mpiguide.core.suite import AppChoice, AppPlan, LaunchTemplate, Report, Suite
from mpiguide.suites.calls import analysis
from mpiguide.suites.calls import plan as planmod

STRATEGIES = analysis.STRATEGIES
NATIVE = analysis.NATIVE


class CallsSuite(Suite):
    """One launch template per process count: every call shape of that count in one mg_callbench launch, its
    strategies interleaved repetition by repetition (paired by launch)."""

    name = "calls"
    title = "An application's calls with derived datatypes under each datatype strategy (mg_callbench)"
    simulation_refusal = "it measures the datatype strategies of a real MPI library's calls, which SMPI does not charge"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        g = parser.add_argument_group("calls")
        g.add_argument("--record", metavar="FILE", help="a record of libmpiguide-tune's record mode "
                       "(MPIGUIDE_TUNE_RECORD; mpiguide app record writes one): its calls with derived datatypes "
                       "are measured (required)")
        g.add_argument("--strategies", default=",".join(STRATEGIES),
                       help="native,normalized,pack (default all; native is always measured)")
        g.add_argument("--max-shapes", type=int, default=planmod.DEFAULT_MAX_SHAPES,
                       help="measure at most this many call shapes, those the application spent most time in "
                            f"(default {planmod.DEFAULT_MAX_SHAPES})")
        add_thread_level(g)

    def params(self, args: argparse.Namespace) -> dict:
        if not args.record:
            raise MpiguideError("mpiguide run calls needs --record FILE (a record of the application: mpiguide "
                                "app record, or MPIGUIDE_TUNE_RECORD)")
        rec = recordmod.parse(args.record)
        level = args.thread_level or (rec.thread_level if rec.thread_level != "single" else None)  # the record's
        plans = self.app_plan(rec.calls(), {"strategies": args.strategies, "max_shapes": args.max_shapes,
                                            "thread_level": level})
        if not plans:
            raise MpiguideError(f"{args.record}: no call with a derived datatype that mg_callbench can rebuild")
        return {**plans[0].params, "record": str(Path(args.record).resolve()), "recorded_with": rec.library_version,
                "recorded_nprocs": rec.nprocs}

    @staticmethod
    def _params(shapes: pd.DataFrame, strategies: list[str], thread_level: str | None) -> dict:
        return {"shapes": shapes.to_dict("records"), "strategies": strategies,
                "nprocs": sorted({int(n) for n in shapes["nprocs"]}), "thread_level": thread_level}

    def launches(self, params: dict) -> list[LaunchTemplate]:
        return [LaunchTemplate(f"calls-p{n}", "mg_callbench", n,
                               ["--shapes", f"{{run_dir}}/shapes-p{n}.txt", "--strategies",
                                ",".join(params["strategies"]), *thread_level_args(params)])
                for n in params["nprocs"]]

    def inputs(self, params: dict) -> dict[str, str]:
        shapes = pd.DataFrame(params["shapes"])
        return {f"shapes-p{n}.txt": planmod.shapes_text(shapes[shapes["nprocs"] == n]) for n in params["nprocs"]}

    def describe_plan(self, params: dict, runs: int, stacks: int, nrep: str | int) -> str:
        return (f"{len(params['shapes'])} call shape(s) on {', '.join(map(str, params['nprocs']))} process(es), "
                f"{len(params['strategies'])} strateg(ies) each, {runs} launch(es) per stack on {stacks} stack(s)")

    def report(self, runs: list[RunDir], out: Path) -> Report:
        (rd,) = runs
        r = analysis.load(rd)
        doc, lines = analysis.document(r, rd.meta["params"].get("threshold", 0.10), out)
        return Report(doc.write(out), lines)

    # ---- tuning an application

    def app_plan(self, calls: pd.DataFrame, options: dict) -> list[AppPlan]:
        strategies = parse_choice_list(options.get("strategies", ",".join(STRATEGIES)), STRATEGIES, "strategy")
        if planmod.derived(calls).empty:
            return []
        shapes, taken, left = planmod.plan(calls, options.get("max_shapes", planmod.DEFAULT_MAX_SHAPES))
        if shapes.empty:  # every call with a derived type left, each with why
            return [AppPlan(self.name, {}, taken, left)]
        params = self._params(shapes, [NATIVE, *[s for s in strategies if s != NATIVE]], options.get("thread_level"))
        return [AppPlan(self.name, params, taken, left, params["nprocs"])]

    def app_choose(self, rds: list[RunDir], threshold: float, out: Path, origin: str) -> AppChoice:
        (rd,) = rds  # app_plan plans one run
        r = analysis.load(rd)
        choices = analysis.choose(r, threshold)
        files = analysis.write_profiles(choices, r.stacks, out, origin)
        calls = analysis.per_call(r, choices)
        decisions = calls.rename(columns={"call": "key", "strategy": "choice"})[
            ["stack", "key", "choice", "gain", "low", "high", "decision", "native_s"]]
        return AppChoice(decisions, files)

