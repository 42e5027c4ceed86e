"""`mpiguide compare BASE NEW`: two runs of one job (two versions of an MPI
library, before and after a change) side by side, for a maintainer's CI.

Two views, both from the runs' own data:

- guideline points: every verdict the suite computes (Suite.verdict_points),
  matched by stack pair, guideline and point: fixed (violated in BASE, not in
  NEW), still violated, newly violated (violated in NEW only, also where BASE
  did not measure it), passing, or measured on one side only (and not
  violated in NEW);
- configurations: every measured configuration of both runs, NEW against BASE
  with the suite's verdict test both ways (one-sided Mann-Whitney U, tolerance,
  alpha): slower (a regression), faster, same (within the tolerance both ways)
  or unclear; ratio = NEW / BASE of the mean launch medians.

Stacks are paired by name, or the single stack of each run with each other
(an MPICH 4 run against an MPICH 5 run), or as `--stacks BASE:NEW,...` says;
BASE and NEW may be one run holding both stacks."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree as ET

import numpy as np
import pandas as pd

from mpiguide.core import stats
from mpiguide.core.commands import make_dir, open_run, out
from mpiguide.core.document import Document, Heatmap, fields, write_csvs
from mpiguide.core.errors import MpiguideError
from mpiguide.core.measurements import NOT_MEASURED, Measured, stack_versions
from mpiguide.core.runner import RunDir, resolve_run
from mpiguide.core.suite import Suite

FIXED, STILL, NEW, PASSING, BASE_ONLY, NEW_ONLY = ("fixed", "still violated", "newly violated", "passing",
                                                   "only in base", "only in new")
STATUSES = (NEW, STILL, FIXED, PASSING, BASE_ONLY, NEW_ONLY)
SLOWER, FASTER, SAME, UNCLEAR = "slower", "faster", "same", "unclear"
FAIL_ON = {"regression": "a configuration significantly slower in NEW",
           "violation": "a guideline point newly violated in NEW"}
POINT_RESULT = ["base_stack", "new_stack", "guideline", "point", "base_verdict", "new_verdict", "base_factor",
                "new_factor", "new_p_value", "status"]
CONFIG_RESULT = ["base_stack", "new_stack", "config", "base_s", "new_s", "ratio", "p_value", "change"]


@dataclass
class Comparison:
    job: str
    pairs: list[tuple[str, str]]
    points: pd.DataFrame  # POINT_RESULT
    configs: pd.DataFrame  # CONFIG_RESULT
    tolerance: float
    alpha: float
    notes: list[str] = field(default_factory=list)

    def newly_violated(self) -> pd.Series:
        """Points violated in NEW and not in BASE (also those BASE did not measure)."""
        return self.points["status"] == NEW

    def failures(self, fail_on: list[str]) -> list[str]:
        """What makes `--fail-on` fail, one line per kind."""
        out = []
        if "regression" in fail_on and (n := int((self.configs["change"] == SLOWER).sum())):
            out.append(f"{n} configuration(s) significantly slower in NEW")
        if "violation" in fail_on and (n := int(self.newly_violated().sum())):
            out.append(f"{n} guideline point(s) newly violated in NEW")
        return out


def parse_fail_on(text: str | None) -> list[str]:
    kinds = [k.strip() for k in (text or "").split(",") if k.strip()]
    bad = [k for k in kinds if k not in FAIL_ON]
    if bad:
        raise MpiguideError(f"--fail-on {text}: unknown {', '.join(bad)} (choose from {', '.join(FAIL_ON)}, "
                            "comma-separated)")
    return kinds


def stack_pairs(base: RunDir, new: RunDir, spec: str | None) -> list[tuple[str, str]]:
    """(base stack, new stack) pairs: from spec "A:B,C:D", else the stacks both runs have, else the one stack
    of each run."""
    b_stacks, n_stacks = base.meta["stacks_order"], new.meta["stacks_order"]
    if spec:
        pairs = []
        for item in spec.split(","):
            a, sep, b = item.strip().partition(":")
            if not sep or not a or not b:
                raise MpiguideError(f"--stacks {spec}: '{item}' is not BASE_STACK:NEW_STACK")
            if a not in b_stacks:
                raise MpiguideError(f"--stacks {spec}: BASE ({base.path}) has no stack '{a}' (it has "
                                    f"{', '.join(b_stacks)})")
            if b not in n_stacks:
                raise MpiguideError(f"--stacks {spec}: NEW ({new.path}) has no stack '{b}' (it has "
                                    f"{', '.join(n_stacks)})")
            pairs.append((a, b))
        return pairs
    common = [s for s in b_stacks if s in n_stacks]
    if common and base.path.resolve() != new.path.resolve():
        return [(s, s) for s in common]
    if len(b_stacks) == 1 and len(n_stacks) == 1 and base.path.resolve() != new.path.resolve():
        return [(b_stacks[0], n_stacks[0])]
    raise MpiguideError(f"say which stacks to compare: --stacks BASE_STACK:NEW_STACK (BASE has "
                        f"{', '.join(b_stacks)}; NEW has {', '.join(n_stacks)})")


def _violated(v: str) -> bool:
    return v == stats.VIOLATED


def compare_points(base: pd.DataFrame, new: pd.DataFrame, pairs: list[tuple[str, str]]) -> pd.DataFrame:
    """Every guideline point of either side, by stack pair (POINT_RESULT)."""
    rows = []
    key = ["guideline", "point"]
    for b_stack, n_stack in pairs:
        b = base[base["stack"] == b_stack].drop_duplicates(key).set_index(key)
        n = new[new["stack"] == n_stack].drop_duplicates(key).set_index(key)
        for k in b.index.union(n.index, sort=False):
            in_b, in_n = k in b.index, k in n.index
            bv = b.at[k, "verdict"] if in_b else ""
            nv = n.at[k, "verdict"] if in_n else ""
            if not in_n:
                status = BASE_ONLY
            elif _violated(nv):
                status = STILL if _violated(bv) else NEW
            elif not in_b:
                status = NEW_ONLY
            else:
                status = FIXED if _violated(bv) else PASSING
            rows.append(dict(base_stack=b_stack, new_stack=n_stack, guideline=k[0], point=k[1], base_verdict=bv,
                             new_verdict=nv, base_factor=b.at[k, "factor"] if in_b else math.nan,
                             new_factor=n.at[k, "factor"] if in_n else math.nan,
                             new_p_value=n.at[k, "p_value"] if in_n else math.nan, status=status))
    return pd.DataFrame(rows, columns=POINT_RESULT)


def _config_label(keys: list[str], values: tuple) -> str:
    return " ".join(f"{k}={v}" for k, v in zip(keys, values, strict=True))


def compare_configs(base: pd.DataFrame, new: pd.DataFrame, pairs: list[tuple[str, str]], samples: str,
                    tolerance: float, alpha: float) -> pd.DataFrame:
    """Every configuration measured in both runs: NEW against BASE (CONFIG_RESULT)."""
    if base.empty or new.empty:
        return pd.DataFrame(columns=CONFIG_RESULT)
    keys = [c for c in base.columns if c in new.columns and c not in (*NOT_MEASURED, "stack")]
    rows = []
    for b_stack, n_stack in pairs:
        b = dict(iter(base[base["stack"] == b_stack].groupby(keys, sort=True)))
        n = dict(iter(new[new["stack"] == n_stack].groupby(keys, sort=True)))
        for k in (x for x in b if x in n):
            slower, faster = stats.both_ways(n[k], b[k], samples, tolerance, alpha)
            change = SLOWER if slower.verdict == stats.VIOLATED else FASTER if faster.verdict == stats.VIOLATED \
                else SAME if slower.verdict == faster.verdict == stats.PASS else UNCLEAR
            p = slower.p_value if change != FASTER else faster.p_value
            rows.append(dict(base_stack=b_stack, new_stack=n_stack, config=_config_label(keys, k),
                             base_s=b[k].groupby("launch")["time_s"].median().mean(),
                             new_s=n[k].groupby("launch")["time_s"].median().mean(), ratio=slower.ratio,
                             p_value=p, change=change))
    return pd.DataFrame(rows, columns=CONFIG_RESULT)


def point_summary(points: pd.DataFrame) -> pd.DataFrame:
    """Per stack pair and guideline: how many points have each status."""
    if points.empty:
        return pd.DataFrame(columns=["pair", "guideline", *STATUSES]).set_index(["pair", "guideline"])
    pair = points["base_stack"] + " -> " + points["new_stack"]
    counts = points.assign(pair=pair).groupby(["pair", "guideline", "status"], sort=False).size()
    out = counts.unstack("status", fill_value=0)
    return out.reindex(columns=[s for s in STATUSES if s in out.columns])


def config_summary(configs: pd.DataFrame) -> pd.DataFrame:
    """Per stack pair: configurations by change, and the NEW/BASE ratios (geometric mean, range)."""
    rows = []
    for (b, n), part in configs.groupby(["base_stack", "new_stack"], sort=False):
        counts = part["change"].value_counts()
        r = part["ratio"].to_numpy(dtype=float)
        rows.append({"pair": f"{b} -> {n}", "configurations": len(part),
                     **{c: int(counts.get(c, 0)) for c in (SLOWER, FASTER, SAME, UNCLEAR)},
                     "ratio_geomean": float(np.exp(np.log(r).mean())) if len(r) else math.nan,
                     "ratio_min": float(r.min()) if len(r) else math.nan,
                     "ratio_max": float(r.max()) if len(r) else math.nan})
    return pd.DataFrame(rows).set_index("pair") if rows else pd.DataFrame()


def compare(suite: Suite, base: RunDir, new: RunDir, pairs_spec: str | None, tolerance: float | None,
            alpha: float | None) -> Comparison:
    if base.job != new.job:
        raise MpiguideError(f"BASE ({base.path}) is a '{base.job}' run and NEW ({new.path}) a '{new.job}' run: "
                            "compare runs of one job")
    pairs = stack_pairs(base, new, pairs_spec)
    opts = new.meta["analysis"]
    tol = opts["tolerance"] if tolerance is None else tolerance
    alp = opts["alpha"] if alpha is None else alpha
    notes = []
    b_pts, n_pts = suite.verdict_points(base), suite.verdict_points(new)
    if b_pts is None:
        notes.append(f"the {base.job} suite computes no guideline verdicts: configurations only")
        points = pd.DataFrame(columns=POINT_RESULT)
    else:
        points = compare_points(b_pts, n_pts, pairs)
    b_df, _ = Measured.load(base).tables()
    n_df, _ = Measured.load(new).tables()
    configs = compare_configs(b_df, n_df, pairs, opts["samples"], tol, alp)
    return Comparison(base.job, pairs, points, configs, tol, alp, notes)


def write_junit(c: Comparison, path: Path) -> None:
    """One test case per guideline point; a point violated in NEW fails (type newly-violated or
    still-violated, with its factor and p-value); one measured in BASE only is skipped."""
    root = ET.Element("testsuites", name=f"mpiguide compare {c.job}")
    for (b, n, guideline), part in c.points.groupby(["base_stack", "new_stack", "guideline"], sort=False):
        suite = ET.SubElement(root, "testsuite", name=f"{c.job} {n} {guideline}", tests=str(len(part)),
                              failures=str(int(part["new_verdict"].eq(stats.VIOLATED).sum())),
                              skipped=str(int((part["status"] == BASE_ONLY).sum())))
        for p in part.itertuples():
            case = ET.SubElement(suite, "testcase", classname=f"mpiguide.{c.job}.{n}.{guideline}", name=p.point)
            if p.status == BASE_ONLY:
                ET.SubElement(case, "skipped", message=f"measured in BASE ({b}) only")
            elif p.new_verdict == stats.VIOLATED:
                kind = "still-violated" if p.status == STILL else "newly-violated"
                msg = (f"{p.status}: factor x{p.new_factor:.3g}, p={p.new_p_value:.3g} (BASE {b}: "
                       f"{p.base_verdict or 'not measured'}"
                       + (f", x{p.base_factor:.3g})" if not math.isnan(p.base_factor) else ")"))
                ET.SubElement(case, "failure", type=kind, message=msg).text = msg
    ET.indent(root)
    try:
        ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    except OSError as exc:
        raise MpiguideError(f"cannot write the JUnit file {path}: {exc.strerror}") from exc


STATUS_COLORS = ((NEW, "#f4b6b6"), (STILL, "#f6cf9a"), (FIXED, "#9fdc9f"), (PASSING, "#dff3df"),
                 (NEW_ONLY, "#e6e6e6"), (BASE_ONLY, "#f2f2f2"))


def status_heatmap(c: Comparison) -> Heatmap:
    """Guideline x stack pair: the most pressing status (newly violated first), how many points have it."""
    p = c.points.assign(pair=c.points["base_stack"] + " -> " + c.points["new_stack"])
    rank = {s: len(STATUSES) - i for i, s in enumerate(STATUSES)}
    cells = []
    for (guideline, pair), part in p.groupby(["guideline", "pair"], sort=True):
        worst = max(part["status"], key=rank.get)
        hit = part[part["status"] == worst]
        n = part["status"].value_counts()
        cells.append(dict(guideline=guideline, pair=pair, verdict=worst, count=len(hit), points=len(part),
                          factor=hit["new_factor"].max(),
                          counts=", ".join(f"{int(n[s])} {s}" for s in (NEW, STILL, FIXED) if n.get(s))))
    return Heatmap(pd.DataFrame(cells, columns=["guideline", "pair", "verdict", "count", "points", "factor", "counts"]),
                   ["guideline"], ["pair"],
                   "Per guideline and stack pair, coloured by the most pressing status of its points (newly "
                   "violated, still violated, fixed, passing); the text counts the points that changed or stay "
                   "violated, of all.",
                   colors=STATUS_COLORS, text=lambda x: f"{x.counts or 'all passing'} (of {x.points})")


def write_report(c: Comparison, base: RunDir, new: RunDir, fail_on: list[str], out: Path) -> Path:
    write_csvs(out, {"points": c.points, "configurations": c.configs, "point_summary": point_summary(c.points),
                     "configuration_summary": config_summary(c.configs)},
               keep_index=("point_summary", "configuration_summary"))
    doc = Document(f"mpiguide compare: {c.job}")
    doc.heatmap(status_heatmap(c))
    doc.section("Runs", fields({
        "BASE": f"{base.path} ({base.meta['run_id']})", "NEW": f"{new.path} ({new.meta['run_id']})",
        "stack pairs": ", ".join(f"{b} -> {n}" for b, n in c.pairs),
        "BASE libraries": "; ".join(f"{b}: {stack_versions(base).get(b, '?')}" for b, _ in c.pairs),
        "NEW libraries": "; ".join(f"{n}: {stack_versions(new).get(n, '?')}" for _, n in c.pairs),
        "configurations": f"NEW against BASE both ways, one-sided Mann-Whitney U ({new.meta['analysis']['samples']}), "
                          f"tolerance {c.tolerance}, alpha {c.alpha}",
        "fail on": ", ".join(fail_on) or "nothing (exit 0)", **({"notes": "; ".join(c.notes)} if c.notes else {})}))
    doc.section("Guideline points per stack pair and guideline", point_summary(c.points))
    doc.section("Configurations per stack pair", config_summary(c.configs),
                note="slower / faster: significantly, by more than the tolerance; same: within the tolerance both "
                     "ways; ratio = NEW / BASE time.")
    for title, status in (("Newly violated", NEW), ("Fixed", FIXED), ("Still violated", STILL)):
        part = c.points[c.points["status"] == status]
        doc.section(f"{title} guideline points ({len(part)})", part.set_index(["base_stack", "new_stack"]))
    slow = c.configs[c.configs["change"] == SLOWER].sort_values("ratio", ascending=False)
    doc.section(f"Configurations slower in NEW ({len(slow)})", slow.set_index(["base_stack", "new_stack"]))
    return doc.write(out)


def console_lines(c: Comparison) -> list[str]:
    lines = []
    for (b, n), part in c.points.groupby(["base_stack", "new_stack"], sort=False):
        counts = part["status"].value_counts()
        lines.append(f"{b} -> {n}: guideline points: " + ", ".join(f"{s} {int(counts.get(s, 0))}" for s in
                                                                    (NEW, STILL, FIXED, PASSING))
                     + "".join(f", {s} {int(counts[s])}" for s in (BASE_ONLY, NEW_ONLY) if counts.get(s)))
    summary = config_summary(c.configs)
    for pair, row in summary.iterrows():
        n = {k: int(row[k]) for k in ("configurations", SLOWER, FASTER, SAME, UNCLEAR)}
        lines.append(f"{pair}: {n['configurations']} configuration(s): slower {n[SLOWER]}, faster "
                     f"{n[FASTER]}, same {n[SAME]}, unclear {n[UNCLEAR]}; NEW/BASE geometric mean "
                     f"x{row['ratio_geomean']:.3f} (x{row['ratio_min']:.3f} to x{row['ratio_max']:.3f})")
    worst = c.points[c.newly_violated()].sort_values("new_factor", ascending=False).head(5)
    for p in worst.itertuples():
        lines.append(f"  newly violated: {p.new_stack} {p.guideline} {p.point}: x{p.new_factor:.2f} "
                     f"(p={p.new_p_value:.2g}; BASE {p.base_verdict or 'not measured'})")
    return lines


def run_of(ref: str, samples: str | None, tolerance: float | None, alpha: float | None) -> RunDir:
    """A run directory or run id; a tune directory (mpiguide tune, mpiguide ddt tune) stands for its
    measurement run. Verdict options apply to this comparison only (meta.json is not changed)."""
    path = resolve_run(ref)
    if (path / "tune.json").is_file() and (path / "measure").is_dir():
        path = path / "measure"
    return open_run(str(path), samples, tolerance, alpha, save=False)


def command(args, suites) -> int:
    """mpiguide compare BASE NEW: exit 1 when --fail-on finds something, 2 on errors."""
    fail_on = parse_fail_on(args.fail_on)
    new = run_of(args.new, args.samples, args.tolerance, args.alpha)
    # both sides judged alike: a point must not change status because the runs were set up differently
    a = new.meta["analysis"]
    base = run_of(args.base, a["samples"], a["tolerance"], a["alpha"])
    c = compare(suites.get(base.job), base, new, args.stacks, args.tolerance, args.alpha)
    out_dir = Path(args.output) if args.output else Path("results") / (time.strftime("%Y%m%d-%H%M%S") + "-compare")
    make_dir(out_dir)
    path = write_report(c, base, new, fail_on, out_dir)
    if args.junit:
        write_junit(c, Path(args.junit))
    for line in console_lines(c):
        out.print(line, highlight=False, soft_wrap=True)
    out.print(f"report: {path}" + (f"; JUnit: {args.junit}" if args.junit else ""), highlight=False)
    failures = c.failures(fail_on)
    for f in failures:
        out.print(f"FAIL (--fail-on): {f}", highlight=False)
    return 1 if failures else 0
