"""Turns a run directory's raw files into measurements.csv, summary.csv and
verdicts.csv. Everything here can be recomputed from the raw files alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from mpiguide import dtreport, rawfile, stats
from mpiguide.errors import MpiguideError
from mpiguide.jobs import Job
from mpiguide.runner import MEASURE, OK, RunDir

ID_COLUMNS = ["stack", "template", "nprocs"]


@dataclass
class Analysis:
    measurements: pd.DataFrame
    summary: pd.DataFrame
    verdicts: pd.DataFrame
    config_errors: pd.DataFrame
    keys: list[str]  # columns identifying one configuration
    dt_ratios: pd.DataFrame = field(default_factory=pd.DataFrame)  # engine bench only (dtreport.ratios)


def measured_raws(rd: RunDir) -> dict[str, rawfile.RawFile]:
    """The raw file of every successful measurement launch, by launch id."""
    return {x.id: rawfile.parse(rd.path / x.raw) for x in rd.launches if x.phase == MEASURE and x.status == OK}


def load_measurements(rd: RunDir, raws: dict[str, rawfile.RawFile] | None = None) -> tuple[pd.DataFrame,
                                                                                           pd.DataFrame]:
    """Tidy rows of every successful measurement launch, plus the failed data checks (raws: already parsed
    by measured_raws)."""
    raws = measured_raws(rd) if raws is None else raws
    frames, errors = [], []
    for x in rd.launches:
        if x.id not in raws:
            continue
        raw = raws[x.id]
        df = raw.frame()
        df.insert(0, "launch", x.run_index)
        for col, val in reversed(list(zip(ID_COLUMNS, (x.stack, x.template, x.nprocs), strict=True))):
            df.insert(0, col, val)
        df.insert(len(ID_COLUMNS) + 1, "launch_id", x.id)
        frames.append(df)
        for config, message in raw.errors.items():
            errors.append({"stack": x.stack, "launch_id": x.id, "config": config, "error": message})
    if not frames:
        return pd.DataFrame(), pd.DataFrame(errors, columns=["stack", "launch_id", "config", "error"])
    return pd.concat(frames, ignore_index=True), pd.DataFrame(errors, columns=["stack", "launch_id", "config", "error"])


def config_keys(job: Job, df: pd.DataFrame) -> list[str]:
    skip = {"launch", "launch_id", "rep", "time_s", *job.ignore_keys}
    return [c for c in df.columns if c not in skip]


def _select(df: pd.DataFrame, sel: dict[str, str]) -> pd.DataFrame:
    mask = pd.Series(True, index=df.index)
    for col, val in sel.items():
        mask &= df[col].astype(str) == str(val)
    return df[mask]


def verdicts(job: Job, df: pd.DataFrame, keys: list[str], samples: str, tolerance: float,
             alpha: float) -> pd.DataFrame:
    """Every guideline on every configuration where both sides were measured."""
    rows = []
    for g in job.guidelines:
        selector_cols = set(g.a) | set(g.b)
        if not selector_cols <= set(df.columns):
            continue
        match = [k for k in keys if k not in selector_cols]
        side_a, side_b = _select(df, g.a), _select(df, g.b)
        if side_a.empty or side_b.empty:
            continue
        groups_b = dict(iter(side_b.groupby(match, sort=True)))
        for key, part_a in side_a.groupby(match, sort=True):
            part_b = groups_b.get(key)
            if part_b is None:
                continue
            c = stats.compare_samples(part_a, part_b, samples, tolerance, alpha)
            row = dict(zip(match, key if isinstance(key, tuple) else (key,), strict=True))
            row.update(guideline=g.name, statement=g.text, a=_label(g.a), b=_label(g.b), verdict=c.verdict,
                       ratio=c.ratio, p_value=c.p_value, n_a=c.n_a, n_b=c.n_b)
            rows.append(row)
    return pd.DataFrame(rows)


def _label(sel: dict[str, str]) -> str:
    return ",".join(f"{v}" for v in sel.values())


def analyze(rd: RunDir) -> Analysis:
    job = rd.job
    opts = rd.meta["analysis"]
    df, errors = load_measurements(rd)
    if df.empty:
        empty = pd.DataFrame()
        return Analysis(df, empty, empty, errors, [])
    keys = config_keys(job, df)
    summary = stats.summarize(df, keys)
    ver = verdicts(job, df, keys, opts["samples"], opts["tolerance"], opts["alpha"])
    dt_ratios = dtreport.ratios(summary, dtreport.load_info(rd)) if job.name == "dtbench" else pd.DataFrame()
    return Analysis(df, summary, ver, errors, keys, dt_ratios)


# Columns that an empty table still names, so that every CSV can be read back.
EMPTY_COLUMNS = {
    "measurements": [*ID_COLUMNS, "launch", "launch_id", "rep", "time_s"],
    "summary": [*ID_COLUMNS, "mean_s", "min_s", "max_s", "launches", "nrep"],
    "verdicts": ["guideline", "statement", "a", "b", "verdict", "ratio", "p_value", "n_a", "n_b"],
}


def write_tables(rd: RunDir, a: Analysis) -> list[Path]:
    written = []
    for name, frame in (("measurements", a.measurements), ("summary", a.summary), ("verdicts", a.verdicts),
                        ("config_errors", a.config_errors), ("dt_ratios", a.dt_ratios)):
        path = rd.path / f"{name}.csv"
        if frame.empty and name in ("config_errors", "dt_ratios"):
            path.unlink(missing_ok=True)
            continue
        if frame.empty and frame.columns.empty:
            frame = pd.DataFrame(columns=EMPTY_COLUMNS[name])
        try:
            frame.to_csv(path, index=False, float_format="%.9g")
        except OSError as exc:
            raise MpiguideError(f"cannot write {path}: {exc.strerror}") from exc
        written.append(path)
    return written
