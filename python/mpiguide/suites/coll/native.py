"""The library's own tuning file, from a `mpiguide tune --algorithms` measurement: per stack, the algorithm
each collective should use where one of the library's own is shown faster than its default by the threshold
(analysis.choose_native), written in the library's format (core.tuning_formats, through the stack's family),
and tried before the validation run measures it: one check-only launch per collective, process count and
algorithm with the file, at the sizes where it selects that algorithm, which must end well and give MPI's
results (mg_collbench compares them with the definition). Where the launch fails, those sizes go back to the
library's own choice in the file, and the report says why.
Each stack's directory (validate/native/<stack>/) holds the file and native.json: what the file carries,
what it left out and why, and the environment that makes the library read it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from mpiguide.core import build, launch, rawfile, runner, tuning_formats
from mpiguide.core import stacks as stackmod
from mpiguide.core.runner import RunDir, write_json
from mpiguide.core.tuning_formats import Choice, Written
from mpiguide.suites.coll import analysis, selection

SUMMARY = "native.json"


def choices_of(params: dict, chosen: pd.DataFrame, stack: str) -> list[Choice]:
    """A stack's choices as the writers take them: the chosen algorithm's name and control value, or None and
    the fastest algorithm measured there as its stand-in (for a format that has no "the library's choice")."""
    algs = {(coll, a["name"]): a for coll, found in params["algorithms"][stack]["collectives"].items()
            for a in found}

    def algorithm(coll: str, impl: str) -> tuple[str, str] | None:
        if not isinstance(impl, str) or not impl.startswith(selection.PREFIX):
            return None
        name = impl[len(selection.PREFIX):]
        return name, algs[(coll, name)]["value"]

    out = []
    for c in chosen[chosen["stack"] == stack].itertuples():
        picked = algorithm(c.collective, c.impl)
        params = tuple(sorted(algs[(c.collective, picked[0])].get("params", {}).items())) if picked else ()
        out.append(Choice(c.collective, int(c.nprocs), int(c.msize), *(picked or (None, None)),
                          stand_in=None if picked else algorithm(c.collective, c.best), params=params,
                          placement=c.placement))
    return out


PROBE_TIMEOUT = 120  # seconds; a check-only launch takes a few: a library that hangs on the file loses only this


def _probe(stack: stackmod.Stack, spec: launch.LaunchSpec, env: dict[str, str], choices: list[Choice],
           out: Path) -> str | None:
    """One check-only launch of the choices' collective and sizes with the file: None if it ends well and every
    size runs and gives MPI's results, else what went wrong (MPICH crashes or hangs on an algorithm with a
    parameter that no variable of the library is named after, such as the k of k_reduce_scatter_allgather; Open
    MPI refuses an algorithm number it does not have, which mg_collbench notes as a skip; Intel MPI ignores a
    rule it cannot read, and says so at MPI_Init: Family.ignored_rule)."""
    coll, nprocs = choices[0].collective, choices[0].nprocs
    stem = out / f"probe-{selection.main_key(coll, nprocs, choices[0].placement or None)}-{choices[0].name}"
    argv = launch.command(spec, stack, nprocs, str(build.driver_path(stack, "mg_collbench")),
                          ["--collectives", coll, "--impls", "default", "--check-only", "--output", f"{stem}.txt",
                           "--sizes", ",".join(str(c.msize) for c in choices)])
    with stack.launch_env() as base:
        rc = runner.run_once(argv, {**base, **launch.environment(spec, stack, base),
                                    **tuning_formats.with_env_file(env)}, PROBE_TIMEOUT, Path(f"{stem}.log"))
    log = Path(f"{stem}.log").read_text(errors="replace")
    ignored = stack.adapter.ignored_rule(log, coll, str(choices[0].value))
    if ignored:  # the library read the file but not this rule
        return f"the library ignored the file's rule: {ignored[:300]}"
    if rc == 0:
        raw = rawfile.parse(Path(f"{stem}.txt"))
        # a size the library refused (its error noted as a skip) or computed wrongly is no choice to keep
        bad = {**raw.errors, **raw.notes.get("skip", {})}
        if raw.complete and not bad:
            return None
        if not raw.complete:
            return "a check-only launch with the file ended without finishing its output"
        label, why = next(iter(bad.items()))
        return f"with the file, {label}: {why}"[:400]
    tail = " | ".join(log.strip().splitlines()[-3:])
    how = f"did not end within {PROBE_TIMEOUT} s" if rc is None else f"ended with status {rc}"
    return f"a check-only launch with the file {how}: {tail[-300:]}"


def write(measured: analysis.CollResult, threshold: float, rd_v: RunDir, origin: str) -> list[Path]:
    """Every stack's tuning file under rd_v/native/, whole or not at all; the paths written."""
    final = rd_v.path / "native"
    params = measured.rd.meta["params"]
    if final.is_dir() or not selection.labels(params):
        return []
    tmp = rd_v.path / "native.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    chosen = analysis.choose_native(measured, threshold)
    across = analysis.across_placements(measured, threshold, chosen)
    spec = launch.LaunchSpec.from_dict(rd_v.meta["launch"])
    written = []
    for name in params["algorithms"]:
        stack = stackmod.get(name)
        family = stack.adapter
        out = tmp / name
        out.mkdir(parents=True)
        path = out / family.tuning_file
        choices = choices_of(params, chosen if family.tuning_names_placement else across, name)
        doc = family.write_tuning(choices, Path(stack.prefix), origin)
        env = family.tuning_env(str((final / name / family.tuning_file).resolve()))
        rejected = []
        for group in _groups(doc):
            path.write_text(doc.text)
            where = spec.with_placement(_placement(params, group[0]))
            why = _probe(stack, where, family.tuning_env(str(path.resolve())), group, out)
            if why:  # those points go back to the library's own choice, with no stand-in either
                rejected.append((group, why))
                points = {(c.collective, c.nprocs, c.msize, c.placement) for c in group}
                choices = [c if (c.collective, c.nprocs, c.msize, c.placement) not in points and
                           (c.collective, c.nprocs, c.msize, "") not in points
                           else Choice(c.collective, c.nprocs, c.msize, placement=c.placement) for c in choices]
                doc = family.write_tuning(choices, Path(stack.prefix), origin)
        path.write_text(doc.text)
        if tuning_formats.ENV_FILE in env:  # the settings themselves are what a user sets
            env = tuning_formats.read_env_file(path)
        write_json(out / SUMMARY, _summary(doc, rejected, env))
        written.append(final / name / family.tuning_file)
    tmp.rename(final)
    return written


def _groups(doc: Written) -> list[list[Choice]]:
    """The choices of each collective, process count, placement and algorithm: one probe each, at their sizes,
    where the file selects that algorithm."""
    groups: dict[tuple[str, int, str, str], list[Choice]] = {}
    for c in doc.carried:
        if c.name:
            groups.setdefault((c.collective, c.nprocs, c.placement, c.name), []).append(c)
    return list(groups.values())


def _placement(params: dict, c: Choice) -> str | None:
    """Where a probe of c runs: its placement; for a choice that holds for every placement of the run, the
    first of them with its process count; None (the run's) where the run has one."""
    if c.placement:
        return c.placement
    return next((p for n, p in selection.shapes(params) if n == c.nprocs), None)


def _summary(doc: Written, rejected: list[tuple[list[Choice], str]], env: dict[str, str]) -> dict:
    def text(c: Choice) -> dict:
        where = {"placement": c.placement} if c.placement else {}  # none: every placement of the run
        return {"collective": c.collective, "nprocs": c.nprocs, **where, "msize": c.msize,
                "algorithm": c.name or "default"}

    return {"env": env,
            "carried": [text(c) for c in doc.carried],
            "left_out": [{**text(c), "why": why} for c, why in doc.left_out] +
                        [{**text(c), "why": f"the library failed with it: {why}"} for g, why in rejected for c in g]}


def summaries(rd_v: RunDir) -> dict[str, dict]:
    """Per stack, native.json of its tuning file (empty before the files are written)."""
    root = rd_v.path / "native"
    return {p.parent.name: json.loads(p.read_text()) for p in sorted(root.glob(f"*/{SUMMARY}"))}
