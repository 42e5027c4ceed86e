"""A user's program launched side by side (suites.app.job): per launch its time (wall time from start to
exit, or a figure it prints: --metric) and its output; the sides against the native program, paired round by
round (every side of a round runs back to back: what the machine does in a round cancels), with the
statistics of every mpiguide verdict; and whether every launch printed what the native program prints
(after masking the lines that change by themselves, such as timings), or passes the user's --check."""

from __future__ import annotations

import hashlib
import math
import re
import subprocess
import tempfile
from dataclasses import dataclass, field

import pandas as pd

from mpiguide.core import rawfile, record, stats
from mpiguide.core.errors import MpiguideError
from mpiguide.core.runner import MEASURE, OK, Launch, RunDir, launch_output
from mpiguide.suites.app.job import side_of

LAUNCH_COLUMNS = ["stack", "side", "template", "round", "launch_id", "seconds", "value", "output_sha", "check"]
SPEEDUP_COLUMNS = ["stack", "side", "rounds", "native_s", "side_s", "speedup", "low", "high", "verdict",
                   "p_value", "se_log", "df"]
FASTER, SLOWER, NO_DIFFERENCE = "faster", "slower", "no difference shown"
DEFAULT_MASKS = (r"^mpiguide-tune: ",)  # the library's own warnings: reported, not compared


@dataclass
class AppResult:
    rd: RunDir
    launches: pd.DataFrame  # LAUNCH_COLUMNS
    speedups: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SPEEDUP_COLUMNS))
    # of the whole launches' wall time, where --metric measures something else (else the same as speedups)
    wall_speedups: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SPEEDUP_COLUMNS))
    output_problems: list[str] = field(default_factory=list)  # loud: the program's output differed
    warnings: list[str] = field(default_factory=list)  # the library's warnings, once each

    @property
    def output_ok(self) -> bool:
        return not self.output_problems


def masked(text: str, masks: list[str]) -> str:
    """The output without the lines a mask matches (and without trailing blanks)."""
    pats = [re.compile(m) for m in [*DEFAULT_MASKS, *masks]]
    return "\n".join(line.rstrip() for line in text.splitlines() if not any(p.search(line) for p in pats))


def metric(text: str, pattern: str) -> float:
    """The last number the metric's pattern finds in the output (its first group, else the whole match);
    NaN where it finds none."""
    found = list(re.finditer(pattern, text, re.MULTILINE))
    if not found:
        return math.nan
    m = found[-1]
    try:
        return float(m.group(1) if m.groups() else m.group(0))
    except (TypeError, ValueError):
        return math.nan


def run_check(command: str, output: str) -> bool:
    """The user's --check command on a launch's output (its file name as the argument): exit status 0."""
    with tempfile.NamedTemporaryFile("w", suffix=".out") as f:
        f.write(output)
        f.flush()
        try:
            return subprocess.run(["sh", "-c", f'{command} "$1"', "check", f.name], capture_output=True,
                                  timeout=600).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False


def load(rd: RunDir) -> AppResult:
    p = rd.meta["params"]
    masks, pattern, check = p.get("masks", []), p.get("metric"), p.get("check")
    rows, warnings = [], {}
    for x in rd.launches:
        if x.phase != MEASURE or x.status != OK:
            continue
        raw = rawfile.parse(rd.path / x.raw)
        seconds = float(raw.frame()["time_s"].iloc[0]) if raw.lines else math.nan
        out = launch_output(rd, x)
        for line in out.splitlines():
            if line.startswith("mpiguide-tune: "):
                warnings.setdefault(line, x.id)
        value = metric(out, pattern) if pattern else seconds
        text = masked(out, masks)
        rows.append(dict(stack=x.stack, side=side_of(x.template), template=x.template, round=x.run_index,
                         launch_id=x.id, seconds=seconds, value=value,
                         output_sha=hashlib.sha256(text.encode()).hexdigest()[:16],
                         check=run_check(check, out) if check else None))
    r = AppResult(rd, pd.DataFrame(rows, columns=LAUNCH_COLUMNS),
                  warnings=[f"{line} (first in {lid})" for line, lid in warnings.items()])
    r.output_problems = output_problems(r, bool(check), pattern)
    r.speedups = speedups(r)
    r.wall_speedups = speedups(r, "seconds") if pattern else r.speedups
    return r


def output_problems(r: AppResult, checked: bool, pattern: str | None) -> list[str]:
    """Every way the launches' outputs disagree: with --check, the launches it failed; without, a native
    launch unlike another (the program's output changes by itself: mask it) and any launch unlike native."""
    df, out = r.launches, []
    if df.empty:
        return out
    if pattern and df["value"].isna().any():
        bad = df[df["value"].isna()]["launch_id"].tolist()
        out.append(f"--metric {pattern!r} found no number in the output of {len(bad)} launch(es): {', '.join(bad[:4])}")
    if checked:
        bad = df[df["check"] == False]["launch_id"].tolist()  # noqa: E712 (None: not checked)
        if bad:
            out.append(f"--check failed for {len(bad)} launch(es): {', '.join(bad[:6])}")
        return out
    for stack, part in df.groupby("stack", sort=False):
        native = part[part["side"] == "native"]
        shas = set(native["output_sha"])
        if len(shas) > 1:
            out.append(f"{stack}: the program's output differs between its native launches ("
                       f"{', '.join(native['launch_id'].head(2))}): it changes by itself; mask the lines that change "
                       "(--mask REGEX, e.g. --mask 'time|seconds') or give --check CMD")
            continue
        for x in part[(part["side"] != "native") & ~part["output_sha"].isin(shas)].itertuples():
            out.append(f"{stack}: {x.launch_id} ({x.side}) printed another output than the native program: "
                       f"{first_difference(r.rd, native['launch_id'].iloc[0], x.launch_id)}")
    return out


def first_difference(rd: RunDir, a: str, b: str) -> str:
    """Where two launches' (masked) outputs first differ, for the message."""
    masks = rd.meta["params"].get("masks", [])
    by_id = {x.id: x for x in rd.launches}
    la = masked(launch_output(rd, by_id[a]), masks).splitlines()
    lb = masked(launch_output(rd, by_id[b]), masks).splitlines()
    for i, (x, y) in enumerate(zip(la, lb, strict=False)):
        if x != y:
            return f"line {i + 1}: {x[:80]!r} natively, {y[:80]!r} here"
    return f"{len(la)} line(s) natively, {len(lb)} here"


def speedups(r: AppResult, column: str = "value") -> pd.DataFrame:
    """Per stack and side other than native: native / side of a launch's column (value: what is measured;
    seconds: its wall time), paired round by round, its interval (1 - 2 alpha) and verdict: faster or slower
    only where shown (tolerance 0), the family of every stack and side judged together."""
    df = r.launches.dropna(subset=[column]).assign(value=lambda d: d[column])
    if df.empty:
        return pd.DataFrame(columns=SPEEDUP_COLUMNS)
    opts = r.rd.meta["analysis"]
    rows, estimates = [], []
    for (stack, side), part in df[df["side"] != "native"].groupby(["stack", "side"], sort=False):
        native = df[(df["stack"] == stack) & (df["side"] == "native")].set_index("round")["value"]
        mine = part.groupby("round")["value"].median()
        both = mine.index.intersection(native.index)
        if len(both) == 0:
            continue
        e = stats.from_medians(mine[both], native[both], stats.PAIRED_ROUND)  # side / native
        estimates += [e, e.reversed()]
        rows.append(dict(stack=stack, side=side, rounds=len(both), native_s=float(native[both].mean()),
                         side_s=float(mine[both].mean())))
    verdicts = stats.decide(estimates, 0.0, opts.get("alpha", 0.05), opts.get("looks", 1),
                            [row["stack"] for row in rows for _ in (0, 1)]) if estimates else []
    for i, row in enumerate(rows):
        slower, faster = verdicts[2 * i], verdicts[2 * i + 1]
        verdict = SLOWER if slower.verdict == stats.VIOLATED else FASTER if faster.verdict == stats.VIOLATED \
            else NO_DIFFERENCE
        row.update(speedup=1 / slower.ratio if slower.ratio else math.nan,
                   low=1 / slower.high if slower.high else math.nan, high=1 / slower.low if slower.low else math.nan,
                   verdict=verdict, p_value=faster.p_value if verdict == FASTER else slower.p_value,
                   se_log=slower.se_log, df=slower.df)
    return pd.DataFrame(rows, columns=SPEEDUP_COLUMNS)


def launch_record(rd: RunDir, x: Launch) -> record.Record:
    """The record a launch of a recording side wrote beside its raw file."""
    path = (rd.path / x.raw).with_name(f"{x.id}.record")
    if not path.exists():
        raise MpiguideError(f"{x.id} left no record {path}: did the program call MPI_Finalize? (the library "
                            "writes the record there)")
    return record.parse(path)


def records(rd: RunDir, side: str = "record") -> dict[str, record.Record]:
    """The record of every successful launch of a recording side, by stack (the last launch's)."""
    return {x.stack: launch_record(rd, x) for x in rd.launches if x.status == OK and side_of(x.template) == side}
