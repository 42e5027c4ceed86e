"""The course of tuning an application (docs/app-tuning.md), in one directory:

  DIR/app.json              the program, its processes, the stacks, the settings of each step
  DIR/record/               an app run: the program under record mode (records/<launch>.txt)
  DIR/measure/<suite>-<k>/  the runs that measure what the record calls (each suite's AppPlan)
  DIR/profiles/<stack>/     the tuned library's profiles chosen from decided gains
  DIR/validate/             an app run: native, tuned (and each library's own file) round by round
  DIR/record-tuned/         an app run: the program recorded under the tuned library
  DIR/report.html, .md      the chain from record to validation, and its tables

Each step is a function of the step before it and resumes where it stopped (every run in it does); the
suites are asked through the protocol (Suite.app_plan, Suite.app_choose) and never named here."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pandas as pd

from mpiguide.core import runner
from mpiguide.core import stacks as stackmod
from mpiguide.core.errors import MpiguideError
from mpiguide.core.options import THREAD_LEVELS
from mpiguide.core.record import CALL_COLUMNS
from mpiguide.core.runner import RunDir
from mpiguide.core.suite import AppPlan, CommandContext, Registry, Suite
from mpiguide.core.tuning import ONLINE_IRREGULAR
from mpiguide.front import commands
from mpiguide.suites.app import analysis, job, report

STATE = "app.json"
DEFAULT_THRESHOLD = 0.10
SUITE = "app"


def add_commands(sub: argparse._SubParsersAction, context: CommandContext, suite: Suite) -> None:
    ap = sub.add_parser("app", help="tune your own MPI program: record what it calls, measure exactly that, show "
                        "the gain on the program itself (docs/app-tuning.md)")
    aps = ap.add_subparsers(dest="app_command", required=True, metavar="ACTION")
    actions = (
        ("record", "run the program once per stack under record mode: where its MPI time goes", True, False),
        ("tune", "measure what the record calls, natively and with every alternative; write profiles", False, True),
        ("validate", "the program natively and under the tuned library, round by round: the speedup", False,
         True),
        ("run", "record, tune and validate in one directory", True, False),
    )
    suites = context.suites
    if suites is None:
        raise MpiguideError("mpiguide app needs the registry of suites (CommandContext.suites)")
    for name, text, takes_program, takes_dir in actions:
        p = aps.add_parser(name, help=text, description=f"{text}. docs/app-tuning.md")
        context.add_run_options(p, suite)
        if takes_dir:
            p.add_argument("dir", metavar="DIR", help="the directory of mpiguide app record (or run)")
        if name in ("tune", "run"):
            p.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD,
                           help="take an alternative where it is shown to save at least this fraction of the "
                                "native time (default 0.10)")
            p.add_argument("--algorithms", default="none", metavar="all|none|NAMES",
                           help="also measure each library's own collective algorithms and write its tuning file "
                                "(default none)")
            p.add_argument("--max-shapes", type=int, default=48,
                           help="measure at most this many call shapes with derived datatypes (default 48)")
        if takes_program:
            g = p.add_argument_group("the program")
            g.add_argument("--np", type=int, default=2, help="processes of the program (default 2)")
            job.add_output_options(g)
            g.add_argument("program", nargs=argparse.REMAINDER, metavar="-- PROGRAM [ARGS]",
                           help="the MPI program and its arguments, after --")
        if name in ("validate", "run"):
            p.add_argument("--online", action="store_true", help="also run the program in the library's online "
                           "mode (no profiles: it chooses inside each launch) as a side of the validation")
        if name == "run":
            p.add_argument("--resume", dest="app_resume", metavar="DIR", help="continue an app directory")
        p.set_defaults(func=lambda args: run_action(args, suite, suites))
    p = aps.add_parser("report", help="rebuild the report of an app directory")
    p.add_argument("dir", metavar="DIR")
    p.set_defaults(func=lambda args: print_report(Path(args.dir)))


# ---------------------------------------------------------------- the state

def read_state(path: Path) -> dict:
    if not (path / STATE).is_file():
        raise MpiguideError(f"{path} is not an app directory (no {STATE}); start one with mpiguide app record or "
                            "mpiguide app run")
    return runner.read_json(path / STATE)


def write_state(path: Path, state: dict) -> None:
    runner.write_json(path / STATE, state)


def _run(path: Path) -> RunDir | None:
    return RunDir.open(path) if (path / "meta.json").exists() else None


def _execute(rd: RunDir, suite: Suite, args: argparse.Namespace, app_dir: Path, adapt: bool = False) -> None:
    """adapt: --until-decided goes on with the run's undecided points (a run that compares sides with the native
    program, or a suite's measurement; not a recording)."""
    rc = commands.execute(rd, suite, args.timeout, f"mpiguide app run --resume {app_dir}", adapt=adapt)
    if rc == 130:
        raise SystemExit(130)
    if rc not in (0, 3):
        failed = [x for x in rd.launches if x.status != runner.OK]
        why = failed[0].message if failed else "see its launches.json"
        raise MpiguideError(f"{rd.path}: {len(failed)} launch(es) failed ({why}); the measured ones are kept: fix "
                            f"the cause and continue with mpiguide app run --resume {app_dir}")


def _new_run(suite: Suite, args: argparse.Namespace, params: dict, path: Path, runs: int,
             nrep: str | int) -> RunDir:
    plan = commands.Plan(suite, args, params=params, runs=runs, nrep=nrep)
    run_id = runner.new_run_id(f"{suite.name}-{path.name}")
    return plan.create(path, run_id)


def _use_recorded_stacks(args: argparse.Namespace, state: dict) -> None:
    """The later steps run on the stacks the program was recorded on (--stacks may name them, or be left out)."""
    given = stackmod.parse_stack_list(args.stacks)
    if given != [stackmod.DEFAULT_STACK] and given != state["stacks"]:
        raise MpiguideError(f"--stacks {args.stacks}: this app directory was recorded on {','.join(state['stacks'])}; "
                            "a record of one library does not say what another calls: record again on those")
    args.stacks = ",".join(state["stacks"])


# ---------------------------------------------------------------- the steps

def record(args: argparse.Namespace, app: Suite, app_dir: Path) -> None:
    """The program under record mode, one launch per stack (DIR/record)."""
    state = read_state(app_dir)
    rd = _run(app_dir / "record")
    if rd is None:
        rd = _new_run(app, args, {**state["params"], "sides": ["record"], "profiles": None}, app_dir / "record", 1, 1)
    if rd.pending():
        commands.console.print("1/3 record: the program under record mode")
        try:
            _execute(rd, app, args, app_dir)
        except MpiguideError as exc:
            raise MpiguideError(f"{exc}. The program ran with libmpiguide-tune preloaded in record mode; to see "
                                "whether it fails natively too: mpiguide run app --sides native --np "
                                f"{state['params']['np']} -- {' '.join(state['params']['program'])}") from None


IN_PROGRAM = "app"  # the suite whose plan measures calls in the program itself (inprogram.py)


def plan(app_dir: Path, options: dict, suites: Registry) -> list[AppPlan]:
    """Every suite's share of the record's calls (the stacks' records together: a shape recorded on any is
    measured on all)."""
    records = analysis.records(RunDir.open(app_dir / "record"))
    level = max((r.thread_level for r in records.values()), key=THREAD_LEVELS.index)
    options = {**options, "thread_level": level if level != THREAD_LEVELS[0] else None,  # measured as it runs
               "type_shapes": {text: sb for r in records.values() for text, sb in r.shapes.items()},
               "program": read_state(app_dir)["params"]}  # for what only the program itself can measure
    calls = pd.concat([r.calls() for r in records.values()], ignore_index=True)
    calls = calls.groupby(CALL_COLUMNS[:9], sort=False, dropna=False).agg(
        ranks=("ranks", "max"), calls=("calls", "max"), calls_per_rank=("calls_per_rank", "max"),
        seconds=("seconds", "max"), seconds_per_rank=("seconds_per_rank", "max"), share=("share", "max")).reset_index()
    plans = [p for s in suites for p in s.app_plan(calls, options)]
    # a shape one suite measures is not left by another (a benchmark that cannot rebuild it, say), and where
    # the program itself could not measure it either, that is the reason given
    taken = _shape_keys([p.taken for p in plans])
    last_resort = _shape_keys([p.left for p in plans if p.suite == IN_PROGRAM])
    for p in plans:
        if not p.left.empty:
            drop = taken | (last_resort if p.suite != IN_PROGRAM else set())
            p.left = p.left[[k not in drop for k in _keys_of(p.left)]]
    unclaimed = _unclaimed(calls, plans)
    return plans + ([AppPlan("none", {}, pd.DataFrame(columns=[*CALL_COLUMNS, "key"]), unclaimed)]
                    if not unclaimed.empty else [])


# online mode chooses these collectives' algorithms in the run (docs/tuning.md, Online selection)
IRREGULAR = tuple(f"MPI_{name.capitalize()}" for name in ONLINE_IRREGULAR)


def _keys_of(frame: pd.DataFrame) -> list[tuple]:
    """The call shapes of rows of Record.calls, comparable across frames."""
    return list(map(tuple, frame[CALL_COLUMNS[:9]].astype(str).to_numpy()))


def _shape_keys(frames: list[pd.DataFrame]) -> set[tuple]:
    return {k for f in frames for k in _keys_of(f)}


def _unclaimed(calls: pd.DataFrame, plans: list[AppPlan]) -> pd.DataFrame:
    """The recorded calls that move data and no suite takes or leaves, each with why: nothing is left out of
    the report unsaid."""
    keys = _shape_keys([df for p in plans for df in (p.taken, p.left)])
    rest = calls[(calls["bytes"] > 0) & (calls["comm_size"] > 1)]
    rest = rest[[k not in keys for k in _keys_of(rest)]]
    why = rest["op"].map(lambda op: (
        "an irregular collective: the record keeps a rank's total bytes, not its counts per process, so it is "
        "not rebuilt; online mode chooses its algorithm in the run (--online)" if op in IRREGULAR else
        "libmpiguide-tune changes nothing of this call (predefined datatypes, no mock-up)"))
    return rest.assign(reason=why)[[*CALL_COLUMNS, "reason"]]


def tune(args: argparse.Namespace, app_dir: Path, suites: Registry) -> None:
    """Measure what the record calls (DIR/measure/*), then choose and write the profiles (DIR/profiles)."""
    state = read_state(app_dir)
    _use_recorded_stacks(args, state)
    if not 0 <= args.threshold < 1:
        raise MpiguideError(f"bad --threshold {args.threshold}: the fraction of time an alternative must save, such "
                            "as 0.1 for 10%")
    options = {"algorithms": args.algorithms, "max_shapes": args.max_shapes, "stacks": state["stacks"]}
    if "tune" not in state:
        plans = plan(app_dir, options, suites)
        state["tune"] = {"threshold": args.threshold, "options": options,
                         "runs": [{"suite": p.suite, "dir": f"measure/{p.suite}-{k}", "nprocs": p.nprocs}
                                  for k, p in enumerate(plans) if p.params]}
        pd.concat([p.taken.assign(suite=p.suite) for p in plans] or [pd.DataFrame()], ignore_index=True) \
            .to_csv(app_dir / "plan_taken.csv", index=False)
        pd.concat([p.left.assign(suite=p.suite) for p in plans] or [pd.DataFrame()], ignore_index=True) \
            .to_csv(app_dir / "plan_left.csv", index=False)
        for entry, p in zip(state["tune"]["runs"], [p for p in plans if p.params], strict=True):
            suite = suites.get(p.suite)
            _new_run(suite, args, p.params, app_dir / entry["dir"], args.runs, suite.fixed_nrep or "rule")
        write_state(app_dir, state)
    t = state["tune"]
    if not t["runs"]:
        commands.console.print("2/3 tune: nothing to measure: the program calls nothing libmpiguide-tune can change "
                               "(see plan_left.csv and the report)")
    for k, entry in enumerate(t["runs"], 1):
        rd = RunDir.open(app_dir / entry["dir"])
        if rd.pending():
            commands.console.print(f"2/3 tune: measure {k}/{len(t['runs'])}: {entry['suite']} ({entry['dir']})")
            _execute(rd, suites.get(entry["suite"]), args, app_dir, adapt=entry["suite"] != IN_PROGRAM)
    choose(app_dir, state, suites)


def choose(app_dir: Path, state: dict, suites: Registry) -> None:
    """Profiles from every measurement run, whole or not at all (DIR/profiles), and the decisions."""
    final, tmp = app_dir / "profiles", app_dir / "profiles.partial"
    if (app_dir / "decisions.csv").exists() and final.is_dir():
        return
    shutil.rmtree(tmp, ignore_errors=True)
    t = state["tune"]
    by_suite: dict[str, list[RunDir]] = {}
    for entry in t["runs"]:
        by_suite.setdefault(entry["suite"], []).append(RunDir.open(app_dir / entry["dir"]))
    origin = f"chosen by mpiguide app tune from {app_dir} (threshold {t['threshold']:.0%})"
    decisions, env = [], {}
    for stack in state["stacks"]:
        (tmp / stack).mkdir(parents=True, exist_ok=True)
    for name, rds in by_suite.items():
        c = suites.get(name).app_choose(rds, t["threshold"], tmp, origin)
        decisions.append(c.decisions.assign(suite=name))
        for stack, e in c.env.items():
            env.setdefault(stack, {}).update(e)
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    out = pd.concat(decisions, ignore_index=True) if decisions else pd.DataFrame(
        columns=["stack", "key", "choice", "gain", "low", "high", "decision", "suite"])
    out.to_csv(app_dir / "decisions.csv", index=False)
    state["tune"]["file_env"] = env
    write_state(app_dir, state)
    used = out[out["choice"] != "native"]
    commands.console.print(f"profiles: {len(used)} of {len(out)} measured call shape(s) take an alternative; "
                           f"{final}")


def validate(args: argparse.Namespace, app: Suite, app_dir: Path) -> None:
    """The program natively, tuned (and with each library's own file) round by round, then once recorded under
    the tuned library."""
    state = read_state(app_dir)
    _use_recorded_stacks(args, state)
    if "tune" not in state or not (app_dir / "profiles").is_dir():
        raise MpiguideError(f"{app_dir} has no profiles yet: mpiguide app tune {app_dir} first")
    file_env = state["tune"].get("file_env", {})
    sides = ["native", "tuned", *(["file"] if file_env else []), *(["online"] if args.online else [])]
    params = {**state["params"], "sides": sides, "profiles": str((app_dir / "profiles").resolve() / "{stack}"),
              "file_env": file_env}
    rd = _run(app_dir / "validate")
    if rd is not None and args.online and "online" not in rd.meta["params"]["sides"]:
        raise MpiguideError(f"{app_dir / 'validate'} was run without the online side; move it away to validate "
                            "again with --online")
    rd = rd or _new_run(app, args, params, app_dir / "validate", args.runs, 1)
    if rd.pending():
        commands.console.print("3/3 validate: the program natively and under the tuned library, round by round")
        _execute(rd, app, args, app_dir, adapt=True)
    tr = _run(app_dir / "record-tuned") or _new_run(app, args, {**params, "sides": ["tuned-record"]},
                                                     app_dir / "record-tuned", 1, 1)
    if tr.pending():
        commands.console.print("the program recorded under the tuned library")
        _execute(tr, app, args, app_dir)


def start(args: argparse.Namespace, app: Suite) -> Path:
    """A new app directory with the program's parameters."""
    out = Path(args.output) if args.output else Path("results") / runner.new_run_id("app")
    if (out / STATE).exists():
        raise MpiguideError(f"{out} already holds an app directory; continue it with: mpiguide app run --resume "
                            f"{out}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise MpiguideError(f"{out} exists and is not an empty directory; choose another --output")
    params = job.program_params(args, ["record"], None)
    commands.make_dir(out)
    write_state(out, {"params": params, "stacks": params["stacks"], "command": args.argv})
    return out


def run_action(args: argparse.Namespace, app: Suite, suites: Registry) -> int:
    commands.check_timeout(args.timeout)
    action = args.app_command
    if action in ("record", "run"):
        resume = getattr(args, "app_resume", None)
        app_dir = Path(resume) if resume else start(args, app)
        record(args, app, app_dir)
        if action == "record":
            return print_report(app_dir)
        tune(args, app_dir, suites)
        if read_state(app_dir)["tune"]["runs"] or args.online:  # online mode may choose what nothing measured
            validate(args, app, app_dir)
        return print_report(app_dir)
    app_dir = Path(args.dir)
    if action == "tune":
        tune(args, app_dir, suites)
    else:
        validate(args, app, app_dir)
    return print_report(app_dir)


def print_report(app_dir: Path) -> int:
    state = read_state(app_dir)
    path, lines, rc = report.app_report(app_dir, state)
    for line in lines:
        commands.out.print(line, highlight=False, soft_wrap=True)
    commands.out.print(f"app report: {path}", highlight=False)
    return rc
