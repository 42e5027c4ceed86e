"""The front end of the commands, shared by the CLI and the suites' own
commands: the common options, planning and starting a run, executing its
launches with progress output, resuming, dry runs, writing and printing a
suite's report, and the commands on runs already made (compare, import).
The consoles and the progress display live here, not in mpiguide.core (an
import contract keeps rich out of it). Nothing here knows which suite it
runs."""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from mpiguide.core import adaptive, build, compare, launch, reprompi, runner
from mpiguide.core import stacks as stackmod
from mpiguide.core.catalog import ESTIMATE_DEFAULTS
from mpiguide.core.errors import MpiguideError
from mpiguide.core.runner import Launch, RunDir
from mpiguide.core.stats import SAMPLE_MODES
from mpiguide.core.suite import Registry, Suite

# markup=False: commands, paths and messages are printed exactly as they are.
console = Console(stderr=True, markup=False, highlight=False, soft_wrap=True)
out = Console(markup=False, highlight=False, soft_wrap=True)

DEFAULT_TIMEOUT = 1800.0
DEFAULT_RUNS = 5


# ---------------------------------------------------------------- options

def add_run_options(p: argparse.ArgumentParser, suite: Suite) -> None:
    """The options every measurement job takes: stacks, launches, measurement, verdicts, launching."""
    g = p.add_argument_group("where and how often")
    g.add_argument("--stacks", default=stackmod.DEFAULT_STACK, help="comma-separated stacks (default mpich)")
    g.add_argument("--runs", type=int, default=DEFAULT_RUNS,
                   help=f"launches (mpiexec calls) per configuration grid ({DEFAULT_RUNS})")
    g.add_argument("--output", metavar="DIR", help="run directory (default results/<run-id>)")
    g.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help=f"seconds before a launch is killed ({DEFAULT_TIMEOUT:g})")
    g.add_argument("--dry-run", action="store_true", help="print the exact commands and stop")
    m = p.add_argument_group("measurement")
    m.add_argument("--sync", choices=("barrier", "dissem"), default="barrier",
                   help="synchronization before each repetition: MPI_Barrier or mpiguide's dissemination barrier")
    m.add_argument("--order-seed", type=int, default=None, metavar="N",
                   help="seed of the random order of launches in a round and of sides in a launch (default: drawn "
                        "at random; meta.json records it, and the same seed repeats the run's orders)")
    d = ESTIMATE_DEFAULTS
    if suite.fixed_nrep:
        m.add_argument("--nrep", default=str(suite.fixed_nrep),
                       help=f"timed repetitions per launch (default {suite.fixed_nrep})")
        p.set_defaults(**d)
    else:
        m.add_argument("--nrep", default="rule", help="rule (100/50/20 by size), a number, or estimate (Hunold and "
                       "Carpen-Amarie 2018, Section 4.2)")
        m.add_argument("--rse-calib", type=float, default=d["rse_calib"],
                       help="estimate: RSE target at the smallest size")
        m.add_argument("--rse-batch", type=float, default=d["rse_batch"], help="estimate: RSE after b1 that skips b2")
        m.add_argument("--b1", type=int, default=d["b1"], help="estimate: first batch size")
        m.add_argument("--b2", type=int, default=d["b2"], help="estimate: second batch size")
        m.add_argument("--nrep-min", type=int, default=d["nrep_min"], help="estimate: K, the least nrep")
        m.add_argument("--nrep-max", type=int, default=d["nrep_max"], help="estimate: the largest nrep")
        m.add_argument("--calib-max", type=float, default=d["calib_max"],
                       help="estimate: seconds of calibration at most")
    a = p.add_argument_group("guideline verdicts")
    add_verdict_options(a, default_samples=suite.default_samples)
    a.add_argument("--until-decided", action="store_true",
                   help="after --runs rounds, measure again only the INCONCLUSIVE points that more launches can "
                        "decide, until none is left or --max-runs / --budget is reached (the verdicts' error "
                        "rate allows for the extra looks)")
    a.add_argument("--max-runs", type=int, help="--until-decided: rounds of launches at most (default 2 x --runs)")
    a.add_argument("--budget", metavar="DURATION",
                   help="--until-decided: no new round once the run's launches took this long (20m, 1h, 90s)")
    a.add_argument("--looks", type=int, help="--until-decided: times the run chooses from its data what to measure "
                   f"again, the planned rounds' end included (default {adaptive.DEFAULT_LOOKS}; each is judged at "
                   "alpha / looks)")
    lg = p.add_argument_group("launching")
    lg.add_argument("--launcher", choices=launch.LAUNCHERS, default="local", help="local mpiexec (default), "
                    "hostfile, srun, or template")
    lg.add_argument("--placement", "--layout", dest="placement", metavar="NODESxPPN",
                    help="nodes x processes per node, e.g. 2x1 or 1x2 (--layout is the old name)")
    lg.add_argument("--hostfile", help="hostfile for --launcher hostfile")
    lg.add_argument("--partition", help="Slurm partition for --launcher srun")
    lg.add_argument("--launcher-template", metavar="TEMPLATE",
                    help="custom launch line with {mpiexec} {np} {nodes} {ppn} {hostfile} {prog} {args}")


def add_verdict_options(p, default_samples: str | None = None) -> None:
    """--samples, --tolerance, --alpha: defaults for a new run, or (None) the run's own when reporting again."""
    new = default_samples is not None
    p.add_argument("--samples", choices=SAMPLE_MODES, default=default_samples,
                   help="test on the per-launch medians or on all repetitions"
                        + (f" (default {default_samples})" if new else " (default: the run's)"))
    p.add_argument("--tolerance", type=float, default=0.05 if new else None,
                   help="slowdown tolerated before a violation" + (" (0.05)" if new else " (default: the run's)"))
    p.add_argument("--alpha", type=float, default=0.05 if new else None,
                   help="significance level" + (" (0.05)" if new else " (default: the run's)"))


def measurement_settings(args: argparse.Namespace, suite: Suite) -> dict:
    """The validated synchronization and repetition settings of a new run."""
    nrep = args.nrep
    if suite.fixed_nrep and not nrep.isdigit():
        raise MpiguideError(f"bad --nrep '{nrep}': the {suite.name} job times a whole loop a fixed number of times; "
                            f"give that number (default {suite.fixed_nrep})")
    if nrep not in ("rule", "estimate"):
        if not nrep.isdigit() or int(nrep) < 1:
            raise MpiguideError(f"bad --nrep '{nrep}': use rule, estimate or a positive number")
        nrep = int(nrep)
    # The same bounds the drivers enforce, checked before anything is launched.
    checks = [("--rse-calib", args.rse_calib, 0 < args.rse_calib < 1, "between 0 and 1"),
              ("--rse-batch", args.rse_batch, 0 < args.rse_batch < 1, "between 0 and 1"),
              ("--b1", args.b1, args.b1 >= 2, "at least 2"), ("--b2", args.b2, args.b2 >= 0, "at least 0"),
              ("--nrep-min", args.nrep_min, args.nrep_min >= 1, "at least 1"),
              ("--nrep-max", args.nrep_max, args.nrep_max >= 1, "at least 1"),
              ("--calib-max", args.calib_max, args.calib_max > 0, "positive")]
    seed = getattr(args, "order_seed", None)
    checks.append(("--order-seed", seed, seed is None or 1 <= seed < 2**31, "between 1 and 2^31 - 1"))
    for opt, value, ok, rule in checks:
        if not ok:
            raise MpiguideError(f"bad {opt} {value}: must be {rule}")
    # the order of the launches of a round and of the sides inside a launch: random, recorded, reproducible
    return {"sync": args.sync, "nrep": nrep, **{k: getattr(args, k) for k in ESTIMATE_DEFAULTS},
            "order_seed": seed if seed is not None else random.randrange(1, 2**31)}


def check_verdict_options(tolerance: float | None, alpha: float | None) -> None:
    if tolerance is not None and not 0 <= tolerance < 10:
        raise MpiguideError(f"bad --tolerance {tolerance}: a fraction such as 0.05 for 5%")
    if alpha is not None and not 0 < alpha < 0.5:  # the interval is 1 - 2 alpha
        raise MpiguideError(f"bad --alpha {alpha}: a significance level below 0.5, such as 0.05")


def check_timeout(timeout: float) -> None:
    if timeout <= 0:
        raise MpiguideError(f"bad --timeout {timeout}: seconds, more than 0")


def launch_spec(args: argparse.Namespace, suite: Suite) -> launch.LaunchSpec:
    placements = launch.parse_placements(args.placement) if args.placement else []
    if len(placements) > 1 and not suite.many_placements:
        raise MpiguideError(f"--placement {args.placement}: the {suite.name} job takes one placement per run "
                            "(the ddt job takes several)")
    # a job that takes several gives each launch its own; the run's is the first
    nodes, ppn = launch.parse_placement(placements[0]) if placements else (1, None)
    launcher = "template" if args.launcher_template and args.launcher == "local" else args.launcher
    if args.partition and launcher != "srun":
        raise MpiguideError(f"--partition {args.partition} is for --launcher srun (mpiguide batch takes it too)")
    return launch.LaunchSpec(launcher=launcher, nodes=nodes, ppn=ppn, hostfile=args.hostfile,
                             template=args.launcher_template, partition=args.partition)


def make_dir(path: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MpiguideError(f"cannot create {path}: {exc.strerror}") from exc


# ---------------------------------------------------------------- planning

class Plan:
    """A new run of a suite, validated from the command line and not started yet."""

    def __init__(self, suite: Suite, args: argparse.Namespace, params: dict | None = None, runs: int | None = None,
                 nrep: str | int | None = None):
        """params, runs, nrep: the run's own where a workflow plans it (mpiguide app tune), else the command
        line's."""
        runs = args.runs if runs is None else runs
        if runs < 1:
            raise MpiguideError(f"bad --runs {runs}: at least 1 launch per configuration")
        check_verdict_options(args.tolerance, args.alpha)
        self.suite = suite
        self.params = suite.params(args) if params is None else params
        self.stacks = stackmod.parse_stack_list(args.stacks)
        self.runs = runs
        # a workflow's own nrep is checked by the same rules
        self.measurement = measurement_settings(args if nrep is None else
                                                argparse.Namespace(**{**vars(args), "nrep": str(nrep)}), suite)
        adapt, looks = adaptive.settings(getattr(args, "until_decided", False), runs,
                                         getattr(args, "max_runs", None), getattr(args, "budget", None),
                                         getattr(args, "looks", None))
        self.analysis = {"samples": args.samples, "tolerance": args.tolerance, "alpha": args.alpha, "looks": looks,
                         "adaptive": adapt}
        self.spec = launch_spec(args, suite)
        self.launches = runner.plan(suite, self.params, self.stacks, runs, self.measurement)
        for x in self.launches:
            self.spec.with_placement(x.placement).validate(x.nprocs)
        self.command = args.argv

    def location(self, output: str | None) -> tuple[str, Path]:
        """A new run id, and the run directory: `output`, or results/<run id>."""
        run_id = runner.new_run_id(self.suite.name)
        return run_id, Path(output) if output else Path("results") / run_id

    def describe(self) -> str:
        return self.suite.describe_plan(self.params, self.runs, len(self.stacks), self.measurement["nrep"])

    def dry_run(self, run_dir: Path, what: str = "launch(es)") -> int:
        for name in self.stacks:
            dry_stack(name)
        console.print(f"dry run: {len(self.launches)} {what}; nothing is built or run")
        print_dry_run(self.launches, self.spec, run_dir)
        return 0

    def require_stacks(self) -> None:
        """Installs the default stack on first use; fails on unknown or broken ones."""
        for name in self.stacks:
            stackmod.get(name)

    def create(self, run_dir: Path, run_id: str) -> RunDir:
        """The run directory with meta.json and launches.json (the stacks checked first)."""
        self.require_stacks()
        meta = runner.new_meta(self.suite, self.params, self.stacks, self.runs, self.measurement, self.analysis,
                               self.spec, run_id, self.command)
        return RunDir.create(run_dir, meta, self.launches)


def dry_stack(name: str) -> stackmod.Stack:
    """The stack as it is, or as the default would be once installed."""
    stack = stackmod.load(name)
    if stack is not None:
        return stack
    if name == stackmod.DEFAULT_STACK:
        return stackmod.Stack(name=name, family="mpich", prefix=str(stackmod.managed_prefix(name)),
                              source="pip:mpich (installed on first use)")
    raise stackmod.unknown_stack_error(name)


def print_dry_run(launches: list[Launch], spec: launch.LaunchSpec, run_dir: Path) -> None:
    for x in launches:
        stack = dry_stack(x.stack)
        exe = x.driver if x.program else build.build_dir(stack) / x.driver
        args = runner.expand_args(run_dir, x)
        if x.needs_t1:
            args += ["--t1", "<max t_nrep1 of the calibration launches>"]
        argv = launch.command(spec.with_placement(x.placement), stack, x.nprocs, str(exe),
                              args if x.program else [*args, "--output", str(run_dir / x.raw)])
        extra = {**launch.environment(spec, stack, stack.env()), **runner.expand_env(run_dir, x, read_files=False)}
        out.print(launch.describe(argv, stack, extra), highlight=False, soft_wrap=True)


# ---------------------------------------------------------------- executing

def _progress_callbacks(total_all: int):
    """Live bar on a terminal; one line per launch otherwise (CI logs)."""
    if console.is_terminal:
        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(), console=console)
        task = progress.add_task("starting", total=total_all)

        def on_start(x, k, n, elapsed):
            progress.update(task, description=f"{x.stack} {x.template} {x.phase} #{x.run_index}")

        def on_done(x, k, n, elapsed):
            progress.update(task, advance=1)
            if x.status != runner.OK:
                progress.console.print(f"{x.id}: {x.status} {x.message}", style="red", markup=False)
        return progress, on_start, on_done

    def on_start_plain(x, k, n, elapsed):
        pass

    def on_done_plain(x, k, n, elapsed):
        left = elapsed / k * (n - k)
        console.print(f"[{k}/{n}] {x.id}: {x.status} ({x.seconds or 0:.1f} s; about {left:.0f} s left)"
                      + (f" {x.message}" if x.status != runner.OK else ""), highlight=False)
    return None, on_start_plain, on_done_plain


def _interrupted_message(rd: RunDir, reason: str, resume_hint: str) -> str:
    left = Counter(x.status for x in rd.pending())
    return (f"the run stopped before its end: {reason}. {len(rd.launches) - left.total()} of {len(rd.launches)} "
            f"launches are done; {', '.join(f'{n} {status}' for status, n in left.items())} (launches.json says "
            f"why); no report yet (mpiguide analyze {rd.path} writes one of what was measured); continue with: "
            f"{resume_hint}")


def execute(rd: RunDir, suite: Suite, timeout: float, resume_hint: str, report: bool = True,
            adapt: bool = True) -> int:
    """Runs the pending launches and (report=True) writes the suite's report of the run. Returns 0, 1 (launches
    failed), 3 (every launch completed but some configurations failed their data check) or 130 (interrupted:
    Ctrl-C, SIGTERM, the end of the batch job's allocation). A run stopped by SIGTERM or by its allocation's
    end writes no report: it ends at once, with what it measured and what is left in launches.json."""
    todo = rd.pending()
    console.print(f"run {rd.path}: {len(todo)} launch(es) to go of {len(rd.launches)}")
    progress, on_start, on_done = _progress_callbacks(len(todo))
    interrupted, stopped = False, None

    def on_stop(reason: str) -> None:
        console.print(_interrupted_message(rd, reason, resume_hint), style="yellow")

    try:
        with runner.StopSignals() as signals:
            try:
                if progress:
                    with progress:
                        failed = runner.execute(rd, on_start, on_done, timeout, signals, on_stop)
                else:
                    failed = runner.execute(rd, on_start, on_done, timeout, signals, on_stop)
            except runner.RunInterrupted:  # already said by on_stop, while SIGTERM is still handled
                return 130
    except KeyboardInterrupt:
        interrupted = True
        failed = rd.pending()
    except runner.RunStopped as exc:
        stopped = str(exc)
        failed = [x for x in rd.launches if x.status != runner.OK]
    if adapt and not (interrupted or stopped or failed) and rd.meta["analysis"].get("adaptive"):
        return until_decided(rd, suite, timeout, resume_hint, report)
    if report:
        write_report(suite, [rd], rd.path)
    if stopped:
        console.print(f"the run stopped: {stopped}; once that is fixed, continue with: {resume_hint}",
                      style="red", highlight=False)
        return 1
    if interrupted:
        console.print(f"interrupted: {len(rd.launches) - len(failed)} of {len(rd.launches)} launches are "
                      f"kept; continue with: {resume_hint}", style="yellow")
        return 130
    if failed:
        console.print(f"{len(failed)} launch(es) did not complete (see report and logs/); "
                      f"retry them with: {resume_hint}")
        return 1
    return _data_checks(rd)


def data_checks_failed(rd: RunDir) -> list[runner.Launch]:
    """The completed launches that had configurations whose data check failed (exit code 3)."""
    return [x for x in rd.launches if x.status == runner.OK and x.returncode == 3]


def _data_checks(rd: RunDir) -> int:
    """3 (and says so) where a launch had configurations whose data check failed, else 0."""
    checked_bad = data_checks_failed(rd)
    if checked_bad:
        console.print(f"{len(checked_bad)} launch(es) had configurations whose data check failed; they were not "
                      "timed (see the report, config_errors.csv and logs/)", style="red")
        return 3
    return 0


def until_decided(rd: RunDir, suite: Suite, timeout: float, resume_hint: str, report: bool) -> int:
    """--until-decided: rounds of launches narrowed to the undecided points, each run like the planned ones,
    until adaptive.stop_reason says why not; then the report."""
    while True:
        why, todo = adaptive.stop_reason(suite, rd)
        if why:
            console.print(f"--until-decided: {why} ({adaptive.rounds(rd)} round(s))", highlight=False)
            break
        new = adaptive.next_round(suite, rd, todo)
        if not new:  # the undecided points name no template of the plan: another round would change nothing
            console.print(f"--until-decided: no launch template measures the {len(todo)} undecided point(s) "
                          f"({adaptive.rounds(rd)} round(s))", highlight=False)
            break
        console.print(f"--until-decided: round {adaptive.rounds(rd)}: {len(new)} launch(es) for the {len(todo)} "
                      "undecided point(s) within reach", highlight=False)
        rc = execute(rd, suite, timeout, resume_hint, report=False, adapt=False)
        if rc not in (0, 3) or rd.pending():
            return rc
    if report:
        write_report(suite, [rd], rd.path)
    return _data_checks(rd)


def write_report(suite: Suite, rds: list[RunDir], out_dir: Path, label: str = "report") -> Path:
    """The suite's report of the runs in out_dir; prints its lines and where it is."""
    make_dir(out_dir)
    rep = suite.report(rds, out_dir)
    for line in rep.lines:
        out.print(line, highlight=False)
    out.print(f"{label}: {rep.path}", highlight=False)
    return rep.path


def open_run(ref: str, samples: str | None = None, tolerance: float | None = None, alpha: float | None = None,
             save: bool = True) -> RunDir:
    """The run of ref (a path or a run id under results/), its analysis settings updated with the given
    samples, tolerance and alpha (and saved in its meta.json unless save is False)."""
    rd = RunDir.open(runner.resolve_run(ref))
    check_verdict_options(tolerance, alpha)
    changed = {k: v for k, v in (("samples", samples), ("tolerance", tolerance), ("alpha", alpha)) if v is not None}
    rd.meta["analysis"].update(changed)
    if changed and save:
        runner.write_json(rd.path / "meta.json", rd.meta)
    return rd


# ---------------------------------------------------------------- commands on runs already made

def run_of(ref: str, samples: str | None, tolerance: float | None, alpha: float | None) -> RunDir:
    """A run directory or run id; a tune directory (mpiguide tune, mpiguide ddt tune) stands for its
    measurement run. Verdict options apply to this comparison only (meta.json is not changed)."""
    path = runner.resolve_run(ref)
    if (path / "tune.json").is_file() and (path / "measure").is_dir():
        path = path / "measure"
    return open_run(str(path), samples, tolerance, alpha, save=False)


def compare_command(args, suites: Registry) -> int:
    """mpiguide compare BASE NEW: exit 1 when --fail-on finds something, 2 on errors."""
    fail_on = compare.parse_fail_on(args.fail_on)
    new = run_of(args.new, args.samples, args.tolerance, args.alpha)
    # both sides judged alike: a point must not change status because the runs were set up differently
    a = new.meta["analysis"]
    base = run_of(args.base, a["samples"], a["tolerance"], a["alpha"])
    c = compare.compare(suites.get(base.job), base, new, args.stacks, args.tolerance, args.alpha, args.detect)
    out_dir = Path(args.output) if args.output else Path("results") / (time.strftime("%Y%m%d-%H%M%S") + "-compare")
    make_dir(out_dir)
    path = compare.write_report(c, base, new, fail_on, out_dir)
    if args.junit:
        compare.write_junit(c, Path(args.junit))
    for line in compare.console_lines(c):
        out.print(line, highlight=False, soft_wrap=True)
    out.print(f"report: {path}" + (f"; JUnit: {args.junit}" if args.junit else ""), highlight=False)
    failures = c.failures(fail_on)
    for f in failures:
        out.print(f"FAIL (--fail-on): {f}", highlight=False)
    return 1 if failures else 0


def import_reprompi_command(args, suites: Registry) -> int:
    """mpiguide import reprompi FILE...: the run, then its report."""
    out = Path(args.output) if args.output else Path("results") / (time.strftime("%Y%m%d-%H%M%S") + "-reprompi")
    rd, notes = reprompi.import_files([Path(p) for p in args.files], out, args.stack, args.library_version, suites)
    for n in notes:
        print(f"note: {n}")
    kinds = sorted({x.template for x in rd.launches})
    print(f"imported {len(rd.launches)} launch(es) of {', '.join(kinds)} into {rd.path} (a {rd.job} run, stack "
          f"'{args.stack}')")
    write_report(suites.get(rd.job), [rd], rd.path)
    return 0
