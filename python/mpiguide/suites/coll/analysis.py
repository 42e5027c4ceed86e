"""Collective guideline tuning (Hunold and Carpen-Amarie 2018): from the raw
files of `coll` runs (mg_collbench) to guideline verdicts, the mock-up chosen at
each size (written as profiles by mpiguide.suites.coll.profiles), and the
validation of the tuned library.

Guidelines checked on the native collective of each stack:
  COLL-GLn     MPI_X ⪯ mock-up n: the collective is no slower than the
               composition that emulates it (Hunold and Carpen-Amarie 2018,
               Section 3.1, one per mock-up);
  MONOTONY     MPI_X(m) ⪯ MPI_X(m'), for consecutive measured sizes m < m':
               more data never takes less time (PGMPI, Hunold and Carpen-Amarie
               2018, Section 2);
  SPLIT        MPI_X(m) ⪯ k x MPI_X(m/k), for measured sizes m = k m': one call
               is no slower than k calls on the pieces (PGMPI, Hunold and
               Carpen-Amarie 2018, Section 2); the k calls are estimated as k
               times the measured single call;
  COLL-SEL     MPI_X ⪯ the library's own algorithm a, forced (with
               --algorithms; suites.coll.selection): the library's default
               choice is no slower than any algorithm it offers;
and on the forms of a call (--forms; the self-consistent guidelines of Träff,
Gropp and Thakur 2010 carried to MPI-3's nonblocking and MPI-4's persistent
collectives), measured and reported, never chosen by a profile:
  COLL-NB      MPI_X ⪯ MPI_IX + MPI_Wait: the blocking call is no slower than
               its nonblocking form completed at once;
  COLL-PERS    MPI_X_init + MPI_Start + MPI_Wait ⪯ MPI_X: the persistent form,
               its _init amortized over the calls (outside the timing), is no
               slower than the blocking call;
  COLL-NBR     MPI_Neighbor_allgather ⪯ MPI_Irecv + MPI_Isend + MPI_Waitall on
               mg_collbench's neighbourhood collectives (a periodic 2D Cartesian
               grid, the complete graph): the neighbourhood collective is no
               slower than the point-to-point exchange it stands for.
Verdicts use the statistics of mpiguide.core.stats: per-launch ratios (the native call and its mock-ups share
each launch; an algorithm's launches pair with the default's of the same round and block), every family of
checks judged together.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import pandas as pd

from mpiguide.core import stats
from mpiguide.core.errors import MpiguideError
from mpiguide.core.measurements import Measured, stack_versions, unfinished
from mpiguide.core.pairing import decide, decide_gains, paired
from mpiguide.core.runner import RunDir
from mpiguide.core.tuning import repaired
from mpiguide.suites.coll import selection
from mpiguide.suites.coll.catalog import COLLECTIVES, FORMS, NEIGHBORHOODS

DEFAULT = "default"
TUNED = "tuned"
# where a collective runs: placement is NODESxPPN where the run measures several (params["placements"]), else ""
WHERE = ["stack", "nprocs", "placement", "collective"]
CONFIG = [*WHERE, "msize"]  # one call of one collective; impl varies
KEYS = [*WHERE, "impl", "msize"]
VERDICT_COLUMNS = [*WHERE, "guideline", "relation", "impl", "msize", "reference_msize", "factor", *stats.VERDICT_FIELDS]
# impl: what the profile or file uses (DEFAULT: the library's own choice); best: the fastest candidate measured
CHOICE_COLUMNS = [*CONFIG, "impl", "default_s", "best", "best_s", "gain", "low", "high", "p_value", "decision"]
FORM_GUIDELINES = tuple(dict.fromkeys(FORMS.values()))  # COLL-NB, COLL-PERS, COLL-NBR
FORM_FIRST = ("COLL-PERS",)  # the guidelines whose form is the side that must be no slower
FORM_COLUMNS = ["collective", "impl", "guideline", "formula"]


@dataclass
class CollResult:
    """One `coll` run: tidy rows plus what the driver noted."""

    rd: RunDir
    measurements: pd.DataFrame
    summary: pd.DataFrame
    mockups: pd.DataFrame  # impl, guideline (n of COLL-GLn), formula; mock-ups only
    skipped: pd.DataFrame  # KEYS, reason
    errors: pd.DataFrame
    versions: dict[str, str] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    forms: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=FORM_COLUMNS))  # the #@form notes
    inits: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=[*KEYS, "init_s"]))  # persistent

    @property
    def settings(self) -> dict:
        return self.rd.meta["analysis"]

    @cached_property
    def medians(self) -> pd.DataFrame:
        """Per configuration (KEYS): its per-launch medians as one Series indexed by launch id, in column
        `medians` (configurations measured in one launch are paired on it)."""
        if self.measurements.empty:
            return pd.DataFrame(columns=[*KEYS, "medians"])
        rows = [(*key, stats.per_launch(part)) for key, part in self.measurements.groupby(KEYS, sort=True)]
        return pd.DataFrame(rows, columns=[*KEYS, "medians"])

    @cached_property
    def failed_checks(self) -> set[tuple[str, str, str, int]]:
        """(stack, collective, impl, msize) of every configuration whose data check failed: never a side of a
        verdict or a candidate of a choice (they are reported as errors)."""
        return {(e.stack, *e.config.split()[:2], int(e.config.split()[2])) for e in self.errors.itertuples()
                if len(e.config.split()) == 3}

    @cached_property
    def round_medians(self) -> pd.DataFrame:
        """As medians, indexed by round (`launch`): sides measured in launches of their own (the library's
        algorithms) pair with the default round by round."""
        if self.measurements.empty:
            return pd.DataFrame(columns=[*KEYS, "medians"])
        rows = [(*key, stats.per_launch(part, "launch")) for key, part in self.measurements.groupby(KEYS, sort=True)]
        return pd.DataFrame(rows, columns=[*KEYS, "medians"])


def mpi_name(collective: str) -> str:
    if collective in NEIGHBORHOODS:
        return NEIGHBORHOODS[collective][0]
    return "MPI_" + collective.capitalize()


def call_name(collective: str) -> str:
    """The MPI name, with the topology of a neighbourhood collective: what a relation names."""
    return mpi_name(collective) + (f" ({NEIGHBORHOODS[collective][1]})" if collective in NEIGHBORHOODS else "")


def load(rd: RunDir) -> CollResult:
    if rd.job != "coll":
        raise MpiguideError(f"{rd.path} is a '{rd.job}' run, not a collective (coll) run")
    measured = Measured.load(rd)
    df, errors = measured.tables()
    params = rd.meta["params"]
    template_of = {x.id: x.template for x in rd.launches}
    names = selection.labels(params)

    def impl_of(x, impl: str) -> str:
        """An algorithm launch's rows and notes are its algorithm's, not the default's."""
        return names.get((x.stack, x.template), impl)

    df = selection.relabel(df, params)
    if not df.empty:
        df.insert(df.columns.get_loc("nprocs") + 1, "placement", df["launch_id"].map(
            {x.id: _placement(x) for x in rd.launches}))
    if not errors.empty and names:
        errors["config"] = [_relabelled(c, names.get((s, template_of.get(lid, "")))) for s, lid, c in
                            zip(errors["stack"], errors["launch_id"], errors["config"], strict=True)]
    mockups = {}
    for _, impl, value in measured.notes("mockup"):
        number, _, formula = value.partition(" ")
        if impl != DEFAULT:  # mock-up names are unique over all collectives
            mockups[impl] = (impl, int(number), formula)
    skipped = []
    for x, label, reason in measured.notes("skip"):
        coll, impl, msize = label.split()
        skipped.append((x.stack, x.nprocs, _placement(x), coll, impl_of(x, impl), int(msize), reason))
    refused = set()
    for x, label, printed in measured.notes("printed"):
        coll, impl, msize = label.split()
        if (x.stack, x.template) in names and selection.refused(params, x.stack, printed):
            key = (x.stack, x.nprocs, _placement(x), coll, impl_of(x, impl), int(msize))
            refused.add(key)
            skipped.append((*key, f"not applicable: the library ran another algorithm and said so ({printed[:160]})"))
    if refused and not df.empty:  # timed as whatever the library ran instead: in no round a point of its own
        keep = [key not in refused for key in zip(*(df[k] for k in KEYS), strict=True)]
        df = df[keep].reset_index(drop=True)
    forms = {}
    for _, key, value in measured.notes("form"):
        coll, impl = key.split()
        guideline, _, formula = value.partition(" ")
        forms[(coll, impl)] = (coll, impl, guideline, formula)
    inits = [(x.stack, x.nprocs, _placement(x), *label.split()[:2], int(label.split()[2]), float(value))
             for x, label, value in measured.notes("init")]
    mk = pd.DataFrame(list(mockups.values()), columns=["impl", "guideline", "formula"])
    sk = pd.DataFrame(skipped, columns=[*KEYS, "reason"]).drop_duplicates(subset=KEYS).reset_index(drop=True)
    summary = stats.summarize(df, KEYS) if not df.empty else pd.DataFrame()
    return CollResult(rd, df, summary, mk, sk, errors, stack_versions(rd), [x.id for x in unfinished(rd)],
                      pd.DataFrame(list(forms.values()), columns=FORM_COLUMNS),
                      pd.DataFrame(inits, columns=[*KEYS, "init_s"]).drop_duplicates(subset=KEYS))


def _placement(x) -> str:
    """A launch's NODESxPPN where the run gives each its own, else "" (the run's placement)."""
    return x.placement or ""


def _relabelled(config: str, label: str | None) -> str:
    """A configuration label `collective impl msize` with impl replaced by label (None: as it is)."""
    parts = config.split()
    return " ".join([parts[0], label, *parts[2:]]) if label and len(parts) == 3 else config


def _mean(launches: pd.DataFrame) -> float:
    """The mean of a configuration's launch medians (stats.per_launch)."""
    return float(launches["median_s"].mean())


def _row(where: tuple, guideline: str, relation: str, impl: str, msize: int, ref: int) -> dict:
    return dict(zip(WHERE, where, strict=True), guideline=guideline, relation=relation, impl=impl, msize=msize,
                reference_msize=ref)


def guideline_verdicts(r: CollResult) -> pd.DataFrame:
    """COLL-GLn, MONOTONY, SPLIT, COLL-SEL and the forms' guidelines (COLL-NB, COLL-PERS, COLL-NBR) on the native
    collective (impl `default`) of every stack, judged together. factor: the time of the side that must be no
    slower over the other's (> 1: the guideline is violated by that factor); that side is the collective but
    in COLL-PERS, where it is the persistent form."""
    med = r.medians
    rows, estimates = [], []
    formulas = {m.impl: (m.guideline, m.formula) for m in r.mockups.itertuples()}
    for where, part in med.groupby(WHERE, sort=True):
        coll = where[-1]
        native_rows = part[part["impl"] == DEFAULT]
        for impl, mock_rows in part[part["impl"].isin(list(formulas))].groupby("impl", sort=True):
            number, formula = formulas[impl]
            for (m,), a, b in paired(native_rows, mock_rows, ["msize"]):
                rows.append(_row(where, f"COLL-GL{number}", f"{mpi_name(coll)} ⪯ {formula}", impl, m, m))
                estimates.append(stats.from_medians(a["medians"].iloc[0], b["medians"].iloc[0]))
        native = dict(zip(native_rows["msize"], native_rows["medians"], strict=True))
        sizes = sorted(native)
        for small, large in zip(sizes, sizes[1:], strict=False):
            rows.append(_row(where, "MONOTONY", f"{mpi_name(coll)}(m) ⪯ {mpi_name(coll)}(m') for m < m'", DEFAULT,
                             small, large))
            estimates.append(stats.from_medians(native[small], native[large]))
        for m in sizes:
            piece = max((d for d in sizes if d < m and m % d == 0), default=None)
            if piece is None:
                continue
            rows.append(_row(where, "SPLIT", f"{mpi_name(coll)}(m) ⪯ k x {mpi_name(coll)}(m/k)", DEFAULT, m, piece))
            estimates.append(stats.from_medians(native[m], native[piece], scale_b=m // piece))
        for f in r.forms[r.forms["collective"] == coll].itertuples():
            first = f.guideline in FORM_FIRST
            relation = f"{f.formula} ⪯ {call_name(coll)}" if first else f"{call_name(coll)} ⪯ {f.formula}"
            for (m,), a, b in paired(native_rows, part[part["impl"] == f.impl], ["msize"]):
                rows.append(_row(where, f.guideline, relation, f.impl, m, m))
                sides = (b, a) if first else (a, b)
                estimates.append(stats.from_medians(sides[0]["medians"].iloc[0], sides[1]["medians"].iloc[0]))
    _selection_checks(r, rows, estimates)
    for row, v in zip(rows, decide(estimates, r.settings, [row["stack"] for row in rows]), strict=True):
        row.update(stats.verdict_dict(v), factor=v.ratio)
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def _selection_checks(r: CollResult, rows: list[dict], estimates: list[stats.Estimate]) -> None:
    """COLL-SEL: the default against each of the library's algorithms, paired round by round (their launches
    share a block); points whose data check failed on the algorithm's side are left out (reported as errors)."""
    med = r.round_medians
    algs = med[med["impl"].str.startswith(selection.PREFIX)]
    if algs.empty:
        return
    native = med[med["impl"] == DEFAULT]
    for key, alg_rows in algs.groupby([*WHERE, "impl"], sort=True):
        where, impl = key[:-1], key[-1]
        coll = where[-1]
        mine = native[(native[WHERE] == pd.Series(where, index=WHERE)).all(axis=1)]
        for (m,), a, b in paired(mine, alg_rows, ["msize"]):
            if (where[0], coll, impl, m) in r.failed_checks:
                continue
            rows.append(_row(where, selection.GUIDELINE,
                             f"{mpi_name(coll)} ⪯ {impl[len(selection.PREFIX):]} (the library's own)", impl, m, m))
            estimates.append(stats.from_medians(a["medians"].iloc[0], b["medians"].iloc[0], stats.PAIRED_ROUND))


def _mockup(impl: str) -> bool:
    """A mock-up of the library: what a profile may choose (never a form of the call, never an algorithm)."""
    return (impl not in (DEFAULT, TUNED, selection.NATIVE_FILE, *FORMS)
            and not impl.startswith(selection.PREFIX))


def _library_algorithm(impl: str) -> bool:
    return impl.startswith(selection.PREFIX)


def choose(r: CollResult, threshold: float) -> pd.DataFrame:
    """Per stack, processes, collective and size: the fastest mock-up, and whether the profile uses it: the
    native call must be shown slower than it by more than the gain threshold (0.1 = the mock-up takes 10%
    less time), the candidates of the run judged as one family (docs/measurement.md), so a profile is written
    only from a decided gain. Mock-ups the library refused (skips: no such call, or more memory than the
    pool) and those with failed data checks are never candidates. A profile names no placement: where the run
    measured several, they must agree (agreed)."""
    return agreed(_choose(r, threshold, _mockup, r.medians, "mock-up"), "a profile")


def choose_native(r: CollResult, threshold: float) -> pd.DataFrame:
    """As choose, among the library's own algorithms (COLL-SEL; paired with the default round by round): what
    the library's own tuning file selects."""
    return _choose(r, threshold, _library_algorithm, r.round_medians, "algorithm")


def _choose(r: CollResult, threshold: float, candidate, med: pd.DataFrame, what: str) -> pd.DataFrame:
    rows, estimates, candidates = [], [], []
    for (stack, nprocs, placement, coll, m), part in med.groupby(CONFIG, sort=True):
        if coll not in COLLECTIVES:  # mg_collbench's neighbourhood collectives: no library to tune them
            continue
        times = {impl: t for impl, t in zip(part["impl"], part["medians"], strict=True)
                 if (impl == DEFAULT or candidate(impl)) and (stack, coll, impl, m) not in r.failed_checks}
        if DEFAULT not in times:
            continue
        native = times.pop(DEFAULT)
        base = dict(stack=stack, nprocs=nprocs, placement=placement, collective=coll, msize=m,
                    default_s=_mean(native))
        if not times:
            rows.append({**base, "impl": DEFAULT, "best": "", "best_s": math.nan, "gain": math.nan, "low": math.nan,
                         "high": math.nan, "p_value": math.nan, "decision": f"no {what} applies"})
            continue
        impl = min(times, key=lambda i: _mean(times[i]))
        best = _mean(times[impl])
        candidates.append((len(rows), impl))
        rows.append({**base, "best": impl, "best_s": best})
        estimates.append(stats.from_medians(native, times[impl]))
    gains = decide_gains(estimates, threshold, r.settings, [rows[i]["stack"] for i, _ in candidates])
    for (i, impl), g in zip(candidates, gains, strict=True):
        if g.verdict.verdict == stats.VIOLATED:
            decision, chosen = f"{impl}: {g.text}", impl
        elif g.verdict.verdict == stats.PASS:
            decision, chosen = f"native: best {what} {impl} {g.text}, below {threshold:.0%}", DEFAULT
        else:
            decision, chosen = f"native: {impl} {g.text}, not shown above {threshold:.0%}", DEFAULT
        rows[i].update(impl=chosen, gain=g.gain, low=g.low, high=g.high, p_value=g.verdict.p_value,
                       decision=decision)
    return pd.DataFrame(rows, columns=CHOICE_COLUMNS)


def agreed(chosen: pd.DataFrame, what: str) -> pd.DataFrame:
    """The choices as a fix that names no placement can carry them (the tuned library's profile; the tuning files
    of Open MPI and Intel MPI do it in core.tuning_formats): where the run measured several placements of a
    process count and they did not all choose the same, the library's own choice at each, with why."""
    if chosen.empty or chosen["placement"].nunique() < 2:
        return chosen
    out = chosen.copy()
    places = out.groupby("nprocs")["placement"].nunique()
    for (_, nprocs, _, _), part in out.groupby(["stack", "nprocs", "collective", "msize"], sort=False):
        if part["impl"].nunique() > 1 or len(part) < places[nprocs]:
            each = ", ".join(f"{p}: {i}" for p, i in zip(part["placement"], part["impl"], strict=True))
            why = (f"; the placements chose differently ({each}) and {what} names no placement"
                   if part["impl"].nunique() > 1 else f"; not every placement measured it, and {what} names none")
            changed = part.index[part["impl"] != DEFAULT]
            out.loc[changed, "decision"] = out.loc[changed, "decision"] + why
            out.loc[changed, "impl"] = DEFAULT
    return out


def across_placements(r: CollResult, threshold: float, chosen: pd.DataFrame) -> pd.DataFrame:
    """The library's own choices for a tuning file that names no placement (Open MPI's, Intel MPI's; MPICH's
    keys by processes per node) where the run measured a process count at several placements: per stack,
    process count, collective and size one row for all of them (placement ""): the algorithm shown to save more
    than the threshold at every placement, the one whose smallest gain is largest (every algorithm at every
    placement judged as one family); else the library's own choice, with best the algorithm whose slowest
    placement is fastest (Intel MPI's stand-in). Points measured at one placement keep chosen's rows."""
    if chosen.empty or chosen["placement"].nunique() < 2:
        return chosen
    med = r.round_medians
    points, tried, estimates = [], [], []  # tried: (point index, algorithm, placement, mean ratio alg / default)
    for (stack, nprocs, coll, m), part in med.groupby(["stack", "nprocs", "collective", "msize"], sort=True):
        per: dict[str, dict[str, pd.DataFrame]] = {}
        for q, at in part.groupby("placement", sort=True):
            times = {i: t for i, t in zip(at["impl"], at["medians"], strict=True)
                     if (i == DEFAULT or _library_algorithm(i)) and (stack, coll, i, m) not in r.failed_checks}
            if DEFAULT in times:
                per[q] = times
        if len(per) < 2:
            continue
        common = set.intersection(*(set(times) - {DEFAULT} for times in per.values()))
        points.append(dict(stack=stack, nprocs=nprocs, placement="", collective=coll, msize=m,
                           default_s=math.exp(sum(math.log(_mean(t[DEFAULT])) for t in per.values()) / len(per))))
        for alg in sorted(common):
            for q, times in per.items():
                tried.append((len(points) - 1, alg, q, _mean(times[alg]) / _mean(times[DEFAULT])))
                estimates.append(stats.from_medians(times[DEFAULT], times[alg]))
    if not points:
        return chosen
    gains = decide_gains(estimates, threshold, r.settings, [points[i]["stack"] for i, *_ in tried])
    by_point: dict[int, dict[str, list]] = {}
    for (i, alg, q, ratio), g in zip(tried, gains, strict=True):
        by_point.setdefault(i, {}).setdefault(alg, []).append((q, ratio, g))
    rows = []
    for i, point in enumerate(points):
        algs = by_point.get(i, {})
        shown = {a: min(x[2].gain for x in xs) for a, xs in algs.items()
                 if all(x[2].verdict.verdict == stats.VIOLATED for x in xs)}
        steady = min(algs, key=lambda a: max(x[1] for x in algs[a])) if algs else ""
        impl = max(shown, key=shown.get) if shown else DEFAULT
        mine = algs.get(impl if shown else steady, [])
        each = ", ".join(f"{q}: {x.text}" for q, _, x in mine)
        row = {**point, "impl": impl, "best": steady,
               "best_s": point["default_s"] * max((x[1] for x in mine), default=math.nan)}
        if mine:
            worst = min(mine, key=lambda x: x[2].gain)[2]
            row.update(gain=worst.gain, low=worst.low, high=worst.high,
                       p_value=max(x[2].verdict.p_value for x in mine))
        if shown:
            row["decision"] = f"{impl}: at every placement ({each})"
        elif algs:
            row["decision"] = (f"native: no algorithm shown to save above {threshold:.0%} at every placement; "
                               f"the steadiest, {steady}: {each}")
        else:
            row["decision"] = "no algorithm applies at every placement"
        rows.append(row)
    done = {(p["stack"], p["nprocs"], p["collective"], p["msize"]) for p in points}
    keep = [k not in done for k in zip(chosen["stack"], chosen["nprocs"], chosen["collective"], chosen["msize"],
                                       strict=True)]
    return pd.concat([chosen[keep], pd.DataFrame(rows, columns=CHOICE_COLUMNS)], ignore_index=True)


def as_written(chosen: pd.DataFrame, files: dict) -> pd.DataFrame:
    """The choices as the stacks' tuning files carry them: a point a file left out keeps the library's own
    choice, with why; a point where the file names an algorithm the measurement did not choose (Intel MPI's
    stand-ins) has it. A file's entry without a placement holds for every placement of the run."""
    if chosen.empty or not files:
        return chosen
    carried, left = {}, {}
    for stack, summary in files.items():
        for table, entries, value in ((carried, summary["carried"], "algorithm"), (left, summary["left_out"], "why")):
            for c in entries:
                table[(stack, c["collective"], int(c["nprocs"]), c.get("placement", ""), int(c["msize"]))] = c[value]

    def lookup(table: dict, key: tuple) -> str | None:
        return table.get(key, table.get((*key[:3], "", key[4])))

    out = chosen.copy()
    for i, r in out.iterrows():
        key = (r["stack"], r["collective"], int(r["nprocs"]), r["placement"], int(r["msize"]))
        algorithm, why = lookup(carried, key), lookup(left, key)
        if algorithm is None and why is not None:
            algorithm = "default"
        if algorithm is None:
            continue
        impl = DEFAULT if algorithm == "default" else selection.PREFIX + algorithm
        if impl != r["impl"]:
            why = why or (f"the file names {algorithm} (the fastest measured) where the default is kept"
                          if r["impl"] == DEFAULT else
                          f"the file names {algorithm} at every placement (its format names none)")
            out.loc[i, ["impl", "decision"]] = [impl, f"{r['decision']}; in the file: {why}"]
    return out


# ---------------------------------------------------------------- validation

REPAIR_COLUMNS = [*WHERE, "guideline", "relation", "impl", "msize", "measured_factor",
                  "profile", "default_factor", "tuned_factor", "tuned_verdict", "repaired"]
GAIN_COLUMNS = [*CONFIG, "profile", "default_s", "tuned_s", "speedup", "verdict",
                "low", "high", "p_value", "reason"]


def _by(v: CollResult, tuned: str) -> tuple[pd.DataFrame, str]:
    """The medians a fix is compared on, and how: the tuned library shares the launches of the default and the
    mock-ups; the library's own tuning file runs in launches of its own, paired by round."""
    return (v.medians, stats.PAIRED_LAUNCH) if tuned == TUNED else (v.round_medians, stats.PAIRED_ROUND)


def _by_config(choices: pd.DataFrame) -> dict[tuple, str]:
    """CONFIG -> the impl a fix uses there."""
    return {tuple(key): impl for *key, impl in zip(*(choices[k] for k in CONFIG), choices["impl"], strict=True)}


def _against(v: CollResult, fix: str, other: str):
    """(CONFIG key, the fix's launch medians, the other side's, how they pair) at each point both measured."""
    med, design = _by(v, fix)
    for key, a, b in paired(med[med["impl"] == fix], med[med["impl"] == other], CONFIG):
        yield key, a["medians"].iloc[0], b["medians"].iloc[0], design


def gains(v: CollResult, choices: pd.DataFrame, tuned: str = TUNED) -> pd.DataFrame:
    """Validation: the fix (`tuned`: the tuned library, or the library's own tuning file) against the native
    call at every size, judged together. speedup = default / fix; verdict of `fix ⪯ default` (the fix no
    slower than native)."""
    chosen = _by_config(choices)
    rows, estimates = [], []
    for key, fix, native, design in _against(v, tuned, DEFAULT):
        rows.append(dict(zip(CONFIG, key, strict=True), profile=chosen.get(key, DEFAULT),
                         default_s=_mean(native), tuned_s=_mean(fix)))
        estimates.append(stats.from_medians(fix, native, design))
    for row, x in zip(rows, decide(estimates, v.settings, [row["stack"] for row in rows]), strict=True):
        row.update(speedup=1 / x.ratio, verdict=x.verdict, low=x.low, high=x.high, p_value=x.p_value,
                   reason=x.reason)
    return pd.DataFrame(rows, columns=GAIN_COLUMNS)


def repairs(measured: pd.DataFrame, v: CollResult, choices: pd.DataFrame, tuned: str = TUNED) -> pd.DataFrame:
    """Every violation the fix addresses (the tuned library: COLL-GLn; the library's own file: COLL-SEL) of the
    measurement, checked again in the validation run: default against the other side (does the violation
    reproduce?) and the fix against it (`fix ⪯ other side`: repaired when it passes), the checks of the run
    judged together."""
    by, design = _by(v, tuned)
    med = by.set_index(KEYS)["medians"]
    chosen = _by_config(choices)
    rows, checks, estimates = [], [], []
    family = selection.GUIDELINE if tuned == selection.NATIVE_FILE else "COLL-GL"
    viol = measured[(measured["verdict"] == stats.VIOLATED) & measured["guideline"].str.startswith(family)]
    for w in viol.itertuples():
        key = (w.stack, w.nprocs, w.placement, w.collective)
        row = dict(stack=w.stack, nprocs=w.nprocs, placement=w.placement, collective=w.collective,
                   guideline=w.guideline, relation=w.relation, impl=w.impl, msize=w.msize, measured_factor=w.factor,
                   profile=chosen.get((*key, w.msize), DEFAULT), default_factor=math.nan, tuned_factor=math.nan,
                   tuned_verdict="not measured", repaired="?")
        other = med.get((*key, w.impl, w.msize))
        native, fix = med.get((*key, DEFAULT, w.msize)), med.get((*key, tuned, w.msize))
        if other is not None and native is not None:
            row["default_factor"] = stats.from_medians(native, other, design).ratio
        if other is not None and fix is not None:
            checks.append(len(rows))
            estimates.append(stats.from_medians(fix, other, design))
        rows.append(row)
    for i, c in zip(checks, decide(estimates, v.settings, [rows[i]["stack"] for i in checks]), strict=True):
        rows[i].update(tuned_factor=c.ratio, tuned_verdict=c.verdict, repaired=repaired(c.verdict))
    return pd.DataFrame(rows, columns=REPAIR_COLUMNS)


VALIDATION = "VALIDATION"


def validation_checks(v: CollResult) -> pd.DataFrame:
    """What a validation run's adaptive rounds (--until-decided) decide beside its guidelines, judged together:
    each fix it measured (the tuned library, the library's own tuning file) against the default, as gains
    judges it, and the file against each of the library's algorithms measured beside it, as repairs does.
    VERDICT_COLUMNS with impl the fix and `reference` the other side; empty for a run that measured no fix."""
    rows, estimates = [], []
    impls = set(v.measurements["impl"]) if not v.measurements.empty else set()
    for fix in (TUNED, selection.NATIVE_FILE):
        others = [DEFAULT, *sorted(i for i in impls if _library_algorithm(i))] if fix == selection.NATIVE_FILE \
            else [DEFAULT]
        for other in others if fix in impls else []:
            for key, a, b, design in _against(v, fix, other):
                rows.append(dict(zip(CONFIG, key, strict=True), guideline=VALIDATION, relation=f"{fix} ⪯ {other}",
                                 impl=fix, reference=other, reference_msize=key[-1]))
                estimates.append(stats.from_medians(a, b, design))
    for row, x in zip(rows, decide(estimates, v.settings, [row["stack"] for row in rows]), strict=True):
        row.update(stats.verdict_dict(x), factor=x.ratio)
    return pd.DataFrame(rows, columns=[*VERDICT_COLUMNS, "reference"])


@dataclass
class TuneAnalysis:
    """What the tune report shows, computed once: verdicts and choices of the measurement (mock-ups for the
    tuned library, and the library's own algorithms where the run measured them), and (once the validation run
    has data) the gains and repairs of each."""

    measured: CollResult
    verdicts: pd.DataFrame
    choices: pd.DataFrame
    threshold: float
    validated: CollResult | None = None
    gains: pd.DataFrame = field(default_factory=pd.DataFrame)
    repairs: pd.DataFrame = field(default_factory=pd.DataFrame)
    native_choices: pd.DataFrame = field(default_factory=pd.DataFrame)
    native_gains: pd.DataFrame = field(default_factory=pd.DataFrame)
    native_repairs: pd.DataFrame = field(default_factory=pd.DataFrame)


def analyze(m: CollResult, v: CollResult | None, threshold: float, files: dict | None = None) -> TuneAnalysis:
    """files: per stack, what its tuning file carries (native.summaries): the native choices are then what the
    files select, after their check launches and the format's limits, not what the measurement chose."""
    t = TuneAnalysis(m, guideline_verdicts(m), choose(m, threshold), threshold, v)
    if selection.labels(m.rd.meta["params"]):
        t.native_choices = as_written(choose_native(m, threshold), files or {})
    if v is not None and not v.measurements.empty:
        t.gains, t.repairs = gains(v, t.choices), repairs(t.verdicts, v, t.choices)
        if not t.native_choices.empty:
            t.native_gains = gains(v, t.native_choices, selection.NATIVE_FILE)
            t.native_repairs = repairs(t.verdicts, v, t.native_choices, selection.NATIVE_FILE)
    return t


# ---------------------------------------------------------------- summaries

def _size(m: int) -> str:
    return f"{m // 1000} kB" if m >= 1000 and m % 1000 == 0 else f"{m} B"


def placed(frame: pd.DataFrame, columns: list[str]) -> list[str]:
    """columns without "placement" unless the run measured several placements (the column is "" otherwise)."""
    several = "placement" in frame.columns and frame["placement"].astype(bool).any()
    return [c for c in columns if c != "placement" or several]


def matrix(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Cross-stack matrix: per guideline (and processes) one cell per stack: how many sizes violate it, out
    of those tested, and each violated size with its factor."""
    if verdicts.empty:
        return pd.DataFrame()
    rows = []
    where = placed(verdicts, ["nprocs", "placement"])
    for key, part in verdicts.groupby(["guideline", "relation", *where, "stack"], sort=False):
        bad = part[part["verdict"] == stats.VIOLATED].sort_values("msize")
        cell = f"{len(bad)}/{len(part)}"
        if len(bad):
            cell += ": " + ", ".join(f"{_size(int(m))} x{f:.2f}" for m, f in zip(bad["msize"], bad["factor"],
                                                                               strict=True))
        rows.append(dict(zip(["guideline", "relation", *where, "stack"], key, strict=True), cell=cell))
    frame = pd.DataFrame(rows)
    order = {g: (0 if g.startswith("COLL-GL") else 1, int(g[7:]) if g.startswith("COLL-GL") else 0, g)
             for g in frame["guideline"]}
    frame["_order"] = frame["guideline"].map(order)
    frame = frame.sort_values(["_order", "relation", *where], kind="stable")
    stacks = list(dict.fromkeys(verdicts["stack"]))
    out = frame.pivot_table(index=["_order", "guideline", "relation", *where], columns="stack", values="cell",
                            aggfunc="first").reindex(columns=stacks).fillna("-")
    out.index = out.index.droplevel(0)
    out.columns.name = None
    return out


def violation_counts(verdicts: pd.DataFrame) -> pd.DataFrame:
    if verdicts.empty:
        return pd.DataFrame()
    kind = verdicts["guideline"].where(~verdicts["guideline"].str.startswith("COLL-GL"), "COLL-GL1..22")
    t = verdicts.assign(kind=kind).pivot_table(index=["stack", "kind"], columns="verdict", values="factor",
                                               aggfunc="size", fill_value=0)
    t.columns.name = None
    return t


def repair_counts(rep: pd.DataFrame) -> pd.DataFrame:
    """Per stack: the measured COLL-GL violations by outcome with the tuned library, split by whether the
    profile uses a mock-up at that size."""
    if rep.empty:
        return pd.DataFrame()
    frame = rep.assign(profiled=(rep["profile"] != DEFAULT).map({True: "profiled", False: "left native"}))
    t = frame.pivot_table(index=["stack", "profiled"], columns="repaired", values="msize", aggfunc="size",
                          fill_value=0)
    t.columns.name = None
    return t


def forms_matrix(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The forms' guidelines (COLL-NB, COLL-PERS, COLL-NBR) per collective and processes, one cell per stack: how
    many sizes are violated, pass or stay undecided, and the worst factor with its size (a violated one where
    there is one)."""
    v = verdicts[verdicts["guideline"].isin(FORM_GUIDELINES)] if not verdicts.empty else verdicts
    if v.empty:
        return pd.DataFrame()
    where = placed(v, ["nprocs", "placement"])
    index = ["guideline", "relation", *where]
    order = {g: i for i, g in enumerate(FORM_GUIDELINES)}
    v = v.sort_values(["guideline", "collective", *where], key=lambda c: c.map(order) if c.name == "guideline" else c,
                      kind="stable")
    rows: dict[tuple, dict[str, str]] = {}
    for key, part in v.groupby([*index, "stack"], sort=False):
        counts = part["verdict"].value_counts()
        bad = part[part["verdict"] == stats.VIOLATED]
        w = (bad if len(bad) else part).sort_values("factor").iloc[-1]
        rows.setdefault(key[:-1], {})[key[-1]] = (
            f"{counts.get(stats.VIOLATED, 0)} violated, {counts.get(stats.PASS, 0)} pass, "
            f"{counts.get(stats.INCONCLUSIVE, 0)} undecided; worst x{w['factor']:.2f} at {_size(int(w['msize']))}")
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index = pd.MultiIndex.from_tuples(out.index, names=index)
    return out.reindex(columns=list(dict.fromkeys(verdicts["stack"]))).fillna("-")


def persistent_setup(r: CollResult) -> pd.DataFrame:
    """What the persistent form's MPI_X_init costs (the maximum over ranks, untimed in the measurement): per stack,
    processes, collective and size, its time, and how many calls of the blocking collective it is worth (the
    calls over which it is amortized before a faster persistent call gains anything)."""
    if r.inits.empty or r.summary.empty:
        return pd.DataFrame()
    native = r.summary[r.summary["impl"] == DEFAULT].set_index(CONFIG)["mean_s"]
    pers = r.summary[r.summary["impl"] == "persistent"].set_index(CONFIG)["mean_s"]
    out = r.inits.set_index(CONFIG)[["init_s"]].join(native.rename("blocking_s")).join(pers.rename("persistent_s"))
    out["init_in_calls"] = out["init_s"] / out["blocking_s"]
    gain = out["blocking_s"] - out["persistent_s"]
    out["break_even_calls"] = (out["init_s"] / gain).where(gain > 0)
    return out.reset_index()[placed(r.inits, CONFIG) + ["init_s", "blocking_s", "persistent_s", "init_in_calls",
                                                         "break_even_calls"]]
