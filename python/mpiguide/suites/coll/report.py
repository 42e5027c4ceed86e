"""Reports of collective runs: one `coll` run (guideline verdicts, matrix,
charts), or the whole `mpiguide tune` workflow (measurement, profiles,
validation of the tuned library)."""

from __future__ import annotations

import shlex
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.ticker import FormatStrFormatter

from mpiguide.core import stats
from mpiguide.core.charts import grouped_bars, per_group, plt
from mpiguide.core.document import Document, Heatmap, fields, host_text, worst_cells, write_csvs
from mpiguide.core.measurements import Measured, oversubscription
from mpiguide.suites.coll import analysis as tune
from mpiguide.suites.coll import native, selection
from mpiguide.suites.coll.profiles import read_profile


def relative_charts(r: tune.CollResult, out: Path, prefix: str) -> list[Path]:
    """In the style of Hunold and Carpen-Amarie (2018), Figure 4: per stack, processes and collective, the
    run-time of each mock-up (and of the tuned library) relative to the native call at each message size; error
    bars from the smallest to the largest launch median; 1 = as fast as native."""

    def draw(key: tuple, part: pd.DataFrame):
        stack, nprocs, placement, coll = key
        native = part[part["impl"] == tune.DEFAULT].set_index("msize")["mean_s"]
        part = part[(part["impl"] != tune.DEFAULT) & part["msize"].isin(native.index)]
        if native.empty or part.empty:
            return None
        sizes = sorted(native.index)
        base = native.reindex(sizes).to_numpy()
        impls = sorted(set(part["impl"]), key=lambda i: (i == tune.TUNED, i))
        series = []
        for i, impl in enumerate(impls):
            d = part[part["impl"] == impl].set_index("msize").reindex(sizes)
            style = {"color": "black", "alpha": 0.8} if impl == tune.TUNED else {"color": f"C{i % 10}"}
            series.append((impl, d["mean_s"] / base, d["min_s"] / base, d["max_s"] / base, style))
        fig, ax = plt.subplots(figsize=(max(6.0, 0.55 * len(sizes) * max(1, len(impls) / 2) + 2), 3.8))
        grouped_bars(ax, series, capsize=1.5)
        ax.axhline(1.0, color="grey", linewidth=1)
        ax.set_xticks(range(len(sizes)), [str(m) for m in sizes], rotation=45, fontsize=7)
        ax.set_xlabel("message size [bytes]")
        ax.set_ylabel(f"run-time relative to {tune.mpi_name(coll)}")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(FormatStrFormatter("%g"))
        ax.tick_params(axis="y", which="minor", labelsize=6)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=6)
        at = f" at {placement} (nodes x ppn)" if placement else ""
        ax.set_title(f"{tune.mpi_name(coll)}, {nprocs} processes{at}, {stack}", fontsize=9)
        return fig, f"{prefix}{selection.main_key(coll, nprocs, placement or None)}-{stack}.png"

    s = r.summary.sort_values(tune.WHERE, kind="stable") if not r.summary.empty else r.summary
    return per_group(s, tune.WHERE, out, draw)


def _run_table(r: tune.CollResult, extra: dict[str, str]) -> pd.DataFrame:
    meta = r.rd.meta
    p, m, host = meta["params"], meta["measurement"], meta["host"]
    nrep = m["nrep"] if m["nrep"] != "estimate" else (
        f"estimated as in Hunold and Carpen-Amarie 2018 (RSE {m['rse_calib']} at 1 B, b1 = {m['b1']}, "
        f"b2 = {m['b2']}, K = {m['nrep_min']})")
    values = {
        "run": meta["run_id"],
        "collectives": ", ".join(p["collectives"]), "processes": ", ".join(map(str, p["np"])),
        "message sizes [bytes]": ", ".join(map(str, p["sizes"])),
        "datatype, op, root": f"{p['datatype']}, {p['op']}, {p['root']}",
        "library pools": f"message {p['msg_pool']}, int {p['int_pool']}",
        "launches (mpiexec calls)": str(meta["runs"]), "synchronization": m["sync"], "repetitions": str(nrep),
        "host": host_text(host),
        "verdicts": "the ratio per launch (the native call and its mock-ups share each launch), all checks of the "
                    "run as one family (docs/measurement.md): "
                    + stats.error_rate_text(r.settings["tolerance"], r.settings["alpha"], r.settings.get("looks", 1)),
        **extra,
    }
    crowded = oversubscription(Measured.load(r.rd))
    if crowded:
        values["oversubscribed"] = crowded
    return fields(values)


def _violations(verdicts: pd.DataFrame, k: int = 15) -> pd.DataFrame:
    v = verdicts[verdicts["verdict"] == stats.VIOLATED]
    cols = tune.placed(v, ["stack", "nprocs", "placement", "guideline", "relation", "msize", "reference_msize",
                           "factor", "p_value"])
    return v.sort_values("factor", ascending=False).head(k)[cols].set_index("stack")


def _common_sections(doc: Document, r: tune.CollResult, verdicts: pd.DataFrame) -> None:
    doc.section("Stacks", pd.DataFrame({"MPI_Get_library_version": r.versions}))
    doc.section("Cross-stack matrix of guideline violations (native collectives)", tune.matrix(verdicts),
                note="Per guideline and stack: violated sizes / tested sizes, then each violated message size "
                     "with its factor (the collective's time over the other side's). MONOTONY compares "
                     "consecutive sizes, SPLIT a size with k times its largest measured divisor.")
    doc.section("Verdicts per stack", tune.violation_counts(verdicts))
    doc.section("Largest violations", _violations(verdicts))
    forms = tune.forms_matrix(verdicts)
    if not forms.empty:
        doc.section("The forms of the calls: nonblocking, persistent, neighbourhood (COLL-NB, COLL-PERS, COLL-NBR)",
                    forms, colored=True,
                    note="Each collective against its nonblocking form (MPI_IX + MPI_Wait, which must be no faster), "
                         "its persistent form (MPI_X_init once, untimed; MPI_Start + MPI_Wait per call, which must be "
                         "no slower), and the neighbourhood collectives against the point-to-point exchange they "
                         "stand for; all measured interleaved with the blocking call in the same launches, checked "
                         "against it before they are timed, and never chosen by a profile (the library cannot turn "
                         "a blocking call into another form). Per guideline and stack: the sizes by verdict, the "
                         "worst factor (the side that must be no slower over the other).")
        setup = tune.persistent_setup(r)
        if not setup.empty:
            doc.section("What the persistent form's MPI_X_init costs", setup.set_index(
                tune.placed(setup, tune.CONFIG)),
                note="init_s: the _init call (the maximum over ranks), outside the timing; init_in_calls: it over "
                     "the blocking call's time; break_even_calls: calls after which a faster persistent form has "
                     "earned its _init back (empty where it is not faster).")
    found = selection.detection(r.rd.meta["params"])
    if not found.empty:
        doc.section("The library's own algorithms (COLL-SEL)", found,
                    note="Each algorithm the library lists for a collective, forced in launches of its own next to "
                         "the default's (one block per round), and paired with it round by round. Its results are "
                         "checked against MPI's definition of the call before it is timed; a different result is "
                         "a configuration error below, a refused algorithm a point not timed.")


def _tail_sections(doc: Document, results: list[tuple[str, tune.CollResult]]) -> None:
    for name, r in results:
        if not r.skipped.empty:
            t = r.skipped.groupby(tune.placed(r.skipped, [*tune.WHERE, "impl"])).agg(
                sizes=("msize", lambda s: ", ".join(map(str, sorted(s)))))
            doc.section(f"{name}: mock-ups and algorithms the library did not run (not applicable, or more "
                        "memory than the pool); not timed", t)
        if not r.errors.empty:
            doc.section(f"{name}: configurations whose result differed from the native call or from MPI's "
                        "definition of the call (not timed)",
                        r.errors.set_index("stack"))
        if r.failed:
            doc.section(f"{name}: launches not completed", pd.DataFrame({"launch": r.failed}))


def heatmap(verdicts: pd.DataFrame) -> Heatmap:
    """Guideline and collective x stack and processes: the worst verdict, its worst factor."""
    v = verdicts.sort_values(["guideline", "collective"], kind="stable") if not verdicts.empty else verdicts
    if not v.empty:
        v = v.assign(procs=[f"p={n}" + (f" {p}" if p else "") for n, p in zip(v["nprocs"], v["placement"],
                                                                            strict=True)])
    return Heatmap(worst_cells(v, ["guideline", "collective"], ["stack", "procs"]), ["guideline", "collective"],
                   ["stack", "procs"], "Worst verdict per guideline (COLL-GLn: the native collective against a "
                   "mock-up; MONOTONY, SPLIT; COLL-SEL: the library's default against its own algorithms; COLL-NB, "
                   "COLL-PERS, COLL-NBR: against its nonblocking, persistent and point-to-point forms), "
                   "collective, stack and process count over the message sizes; the number: the largest factor "
                   "(native / other side) among the points with that verdict.")


def write_coll(r: tune.CollResult, verdicts: pd.DataFrame, out: Path) -> Path:
    """Report of one `coll` run (`mpiguide run coll`) with its guideline verdicts."""
    write_csvs(out, {"measurements": r.measurements, "summary": r.summary, "verdicts": verdicts,
                     "matrix": tune.matrix(verdicts), "forms": tune.forms_matrix(verdicts),
                     "persistent_init": tune.persistent_setup(r), "skipped": r.skipped, "config_errors": r.errors},
               keep_index=("matrix", "forms"), drop_empty=("forms", "persistent_init"))
    doc = Document("mpiguide: collectives against their mock-ups")
    doc.heatmap(heatmap(verdicts))
    doc.section("Run", _run_table(r, {}))
    _common_sections(doc, r, verdicts)
    doc.heading("Run-time relative to the native collective")
    doc.images(relative_charts(r, out / "plots", ""), out)
    _tail_sections(doc, [("run", r)])
    return doc.write(out)


def write_tune(t: tune.TuneAnalysis, profiles: list[Path], out: Path) -> Path:
    """Report of the tune workflow in `out`: measurement verdicts, profiles, and (once the validation run
    has data) tuned against default and against every mock-up."""
    m, v, verdicts, choices, g, rep = t.measured, t.validated, t.verdicts, t.choices, t.gains, t.repairs
    tables = {"verdicts": verdicts, "matrix": tune.matrix(verdicts), "choices": choices}
    if not tune.forms_matrix(verdicts).empty:
        tables.update(forms=tune.forms_matrix(verdicts), persistent_init=tune.persistent_setup(m))
    if not g.empty:
        tables.update(gains=g, repairs=rep)
    if not t.native_choices.empty:
        tables.update(native_choices=t.native_choices, fixes=fixes(t))
        if not t.native_gains.empty:
            tables.update(native_gains=t.native_gains, native_repairs=t.native_repairs)
    write_csvs(out, tables, keep_index=("matrix", "forms"))
    doc = Document("mpiguide tune: collective guidelines, profiles and the tuned library")
    doc.heatmap(heatmap(verdicts))
    doc.section("Run", _run_table(m, {
        "validation run": v.rd.meta["run_id"] if v is not None else "not yet",
        "profile rule": f"the fastest mock-up where it takes at least {t.threshold:.0%} less time than the native "
                        "call, shown so by its interval (the run's candidates judged together), and fits the pools"}))
    _common_sections(doc, m, verdicts)

    used = choices[choices["impl"] != tune.DEFAULT]
    written = [{"profile": p.relative_to(out).as_posix(),
                "ranges": "; ".join(f"{lo}-{hi}: {impl}" for lo, hi, impl in read_profile(p)[2])} for p in profiles]
    doc.section("Profiles written", pd.DataFrame(written),
        note=f"{len(used)} of {len(choices)} (stack, processes, collective, size) points use a mock-up; every "
             "decision is in choices.csv.")
    if g.empty:
        doc.text("The validation run has no data yet (mpiguide tune --resume continues it).")
    else:
        doc.section("Validation: the tuned library against the native call", _gain_summary(g),
                    note="Per stack, processes and collective, over the sizes with a profile range: the speedup "
                         "(native time over tuned time) as geometric mean and range, and the verdict of "
                         "'tuned ⪯ native' at every measured size.")
        doc.section("Validation: outcome of each measured COLL-GL violation", tune.repair_counts(rep),
                    note="repaired: the tuned library is no slower than the mock-up (tuned ⪯ mock-up passes); "
                         "profiled: the profile uses a mock-up at that size (left native: the gain was below "
                         "the threshold or not shown above it).")
        doc.section("Validation: the guidelines the native library violated, with the tuned library", rep,
                    note="Each COLL-GL violation of the measurement run, measured again: default_factor = native "
                         "over the mock-up now, tuned_factor = tuned over the mock-up, tuned_verdict tests "
                         "'tuned ⪯ mock-up' (repaired = it passes).")
        doc.heading("Validation: run-time relative to the native collective (tuned in black)")
        doc.images(relative_charts(v, out / "plots", "validate-"), out)
    if not t.native_choices.empty:
        _native_sections(doc, t)
    _tail_sections(doc, [("measurement", m)] + ([("validation", v)] if v is not None else []))
    return doc.write(out)


def fixes(t: tune.TuneAnalysis) -> pd.DataFrame:
    """Both kinds of fix side by side: per stack, processes, collective and size, the default's time, the best
    of the library's own algorithms and the best mock-up with their decided gains, and which to use: the
    library's own tuning file where one of its algorithms is enough (no extra library in the job), the tuned
    library's profile where only a mock-up wins."""
    key = tune.CONFIG
    cols = ["impl", "gain", "low", "high", "decision"]
    nat = t.native_choices.set_index(key)[cols].add_prefix("native_")
    mock = t.choices.set_index(key)[cols].add_prefix("mockup_")
    both = nat.join(mock, how="outer").join(t.native_choices.set_index(key)[["default_s"]])
    use = []
    for n, mk in zip(both["native_impl"], both["mockup_impl"], strict=True):
        if isinstance(n, str) and n != tune.DEFAULT:
            use.append(f"the library's tuning file ({n[len(selection.PREFIX):]})")
        elif isinstance(mk, str) and mk != tune.DEFAULT:
            use.append(f"libmpiguide-tune's profile ({mk})")
        else:
            use.append("the library's default")
    return both.assign(use=use).reset_index()[tune.placed(t.native_choices, list(both.index.names)) +
                                              [*both.columns, "use"]]


def _native_sections(doc: Document, t: tune.TuneAnalysis) -> None:
    v = t.validated
    both = fixes(t)
    doc.section("Both kinds of fix: the library's own algorithms and the mock-ups",
                both[both["use"] != "the library's default"].set_index(
                    tune.placed(both, ["stack", "nprocs", "placement", "collective", "msize"])),
                note="Where a point needs a fix: the best of the library's own algorithms (COLL-SEL) and the best "
                     "mock-up, each with the share of time it saves and its interval. Where one of the library's "
                     "algorithms is faster by the threshold, its own tuning file is the recommendation (no extra "
                     "library in the job); where only a mock-up is, the tuned library's profile. All points: "
                     "fixes.csv.")
    if v is None:
        return
    files = native.summaries(v.rd)
    rows = []
    for stack, summary in files.items():
        env = " ".join(f"{k}={shlex.quote(val)}" for k, val in summary["env"].items())  # Intel's has ';'s
        chosen = [c for c in summary["carried"] if c["algorithm"] != "default"]
        rows.append({"stack": stack, "use it with": f"env {env} mpiexec ...", "points with an algorithm":
                     len(chosen), "left out": len(summary["left_out"])})
    if rows:
        doc.section("The libraries' own tuning files (validate/native/<stack>/)", pd.DataFrame(rows).set_index("stack"),
                    note="Each file was tried with a check-only launch per collective before the validation run "
                         "(it must end well and give MPI's results); native.json beside it lists what it carries "
                         "and what it left out, and why.")
        left = [{"stack": s, **c} for s, summary in files.items() for c in summary["left_out"]]
        if left:
            doc.section("Left out of the libraries' tuning files", pd.DataFrame(left).set_index("stack"))
    if not t.native_gains.empty:
        doc.section("Validation: each library with its own tuning file against its default",
                    _gain_summary(t.native_gains),
                    note="No libmpiguide-tune in these launches. Per stack, processes and collective, over the sizes "
                         "where the file selects an algorithm: the speedup (default time over time with the file), "
                         "and the verdict of 'file ⪯ default' at every size (paired round by round).")
        doc.section("Validation: outcome of each measured COLL-SEL violation", tune.repair_counts(t.native_repairs),
                    note="repaired: with its tuning file the library is no slower than the algorithm the violation "
                         "named (file ⪯ algorithm passes).")


def native_summary(t: tune.TuneAnalysis) -> list[str]:
    """The terminal's lines on the libraries' own tuning files."""
    if t.native_choices.empty:
        return []
    lines = []
    for stack, part in t.native_choices.groupby("stack", sort=False):
        used = part[part["impl"] != tune.DEFAULT]
        lines.append(f"{stack}: its own tuning file selects an algorithm at {len(used)} of {len(part)} points")
    g, rep = t.native_gains, t.native_repairs
    if not g.empty:
        for stack, part in g.groupby("stack", sort=False):
            tuned = part[part["profile"] != tune.DEFAULT]["speedup"].to_numpy()
            slower = int((part["verdict"] == stats.VIOLATED).sum())
            mine = rep[rep["stack"] == stack] if not rep.empty else rep
            text = f"{stack}: with its tuning file: "
            if len(tuned):
                text += (f"x{np.exp(np.log(tuned).mean()):.2f} geometric mean over {len(tuned)} point(s) "
                         f"(x{tuned.min():.2f} to x{tuned.max():.2f}), ")
            text += (f"{(mine['repaired'] == 'yes').sum() if len(mine) else 0} of {len(mine)} COLL-SEL violations "
                     f"repaired, slower than the default at {slower} of {len(part)} points")
            lines.append(text)
    return lines


def _gain_summary(g: pd.DataFrame) -> pd.DataFrame:
    if g.empty:
        return g
    rows = []
    where = tune.placed(g, tune.WHERE)
    for key, part in g.groupby(where, sort=True):
        tuned = part[part["profile"] != tune.DEFAULT]
        sp = tuned["speedup"].to_numpy()
        counts = part["verdict"].value_counts()
        rows.append(dict(zip(where, key, strict=True), sizes_tuned=f"{len(tuned)}/{len(part)}",
                         speedup_geomean=float(np.exp(np.log(sp).mean())) if len(sp) else np.nan,
                         speedup_min=float(sp.min()) if len(sp) else np.nan,
                         speedup_max=float(sp.max()) if len(sp) else np.nan,
                         verdicts=", ".join(f"{k} {counts[k]}" for k in sorted(counts.index))))
    return pd.DataFrame(rows).set_index(where)


def console_summary(verdicts: pd.DataFrame, choices: pd.DataFrame | None = None, g: pd.DataFrame | None = None,
                    rep: pd.DataFrame | None = None) -> list[str]:
    """A few lines for the terminal."""
    lines = []
    for stack, part in verdicts.groupby("stack", sort=False):
        bad = part[part["verdict"] == stats.VIOLATED]
        kinds = bad["guideline"].where(~bad["guideline"].str.startswith("COLL-GL"), "COLL-GL").value_counts()
        worst = bad.sort_values("factor", ascending=False).head(1)
        text = f"{stack}: {len(bad)} violation(s) of {len(part)} checks"
        if len(bad):
            w = worst.iloc[0]
            text += (" (" + ", ".join(f"{k} {n}" for k, n in kinds.items()) + f"); worst {w['guideline']} "
                     f"{w['relation']} at {w['msize']} B, x{w['factor']:.2f}")
        lines.append(text)
    if choices is not None and not choices.empty:
        used = choices[choices["impl"] != tune.DEFAULT]
        lines.append(f"profiles: {len(used)} of {len(choices)} size points use a mock-up")
    if rep is not None and not rep.empty:
        for stack, part in rep.groupby("stack", sort=False):
            prof = part[part["profile"] != tune.DEFAULT]
            lines.append(f"{stack}: {(prof['repaired'] == 'yes').sum()} of {len(prof)} profiled COLL-GL violations "
                         f"repaired ({len(part) - len(prof)} more left native)")
    if g is not None and not g.empty:
        for stack, part in g[g["profile"] != tune.DEFAULT].groupby("stack", sort=False):
            sp = part["speedup"].to_numpy()
            lines.append(f"{stack}: tuned vs native over {len(sp)} tuned point(s): geometric mean x"
                         f"{np.exp(np.log(sp).mean()):.2f}, best x{sp.max():.2f}, worst x{sp.min():.2f}")
    return lines
