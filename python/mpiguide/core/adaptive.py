"""Adaptive launches (`--until-decided`): after the planned rounds of launches, more rounds that measure again
only the guideline points still INCONCLUSIVE and within reach (each launch template narrowed to them by its
suite), until every point is decided or out of reach, the run has `--max-runs` rounds, or its launches have used
`--budget` seconds.

Choosing from the data which points to measure again is a look at the data, and looking until something is
significant inflates the error rate; so the run's verdicts are judged at alpha / K from the start, K being the
number of looks (`--looks`, default 2). The planned rounds end the first look; the extra rounds (max_runs - runs)
are split into K - 1 blocks, and the points of a block are chosen from the data of the rounds before it, so
rounds inside a block add no look. By the union bound the chance of a wrong decision over all looks stays within
the documented rate (docs/measurement.md). Each block's choice is recomputed from the rounds before it, and the
settings live in the run's meta.json, so `run --resume` and batch jobs go on where the loop stopped."""

from __future__ import annotations

import re

import pandas as pd

from mpiguide.core import runner, stats
from mpiguide.core.errors import MpiguideError
from mpiguide.core.runner import Launch, RunDir
from mpiguide.core.suite import POINT_COLUMNS, POINT_MORE, POINT_TEMPLATE, TEMPLATE_SEP, LaunchTemplate, Suite

_UNITS = {"s": 1, "m": 60, "h": 3600}
DEFAULT_LOOKS = 2  # measured on the test machine: each look more costs more decisions than its rounds bring


def parse_budget(text: str) -> float:
    """'20m', '1h', '90s' or '90' (seconds) as seconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text or "")
    if not m or float(m[1]) <= 0:
        raise MpiguideError(f"bad --budget '{text}': a duration such as 20m, 1h or 90s")
    return float(m[1]) * _UNITS[m[2] or "s"]


def settings(until_decided: bool, runs: int, max_runs: int | None, budget: str | None,
             looks: int | None = None) -> tuple[dict | None, int]:
    """The adaptive settings of a new run (None without --until-decided) and its number of looks."""
    if not until_decided:
        if max_runs is not None or budget is not None or looks is not None:
            raise MpiguideError("--max-runs, --budget and --looks go with --until-decided")
        return None, 1
    limit = 2 * runs if max_runs is None else max_runs
    if limit < runs:
        raise MpiguideError(f"bad --max-runs {limit}: at least --runs ({runs})")
    k = 1 if limit == runs else DEFAULT_LOOKS if looks is None else looks
    if limit > runs and not 2 <= k <= 1 + limit - runs:
        raise MpiguideError(f"bad --looks {k}: 2 to 1 + the extra rounds ({limit} - {runs}), one look per block "
                            "of extra rounds at least")
    return {"max_runs": limit, "budget_s": parse_budget(budget) if budget is not None else None, "looks": k}, k


def look_rounds(rd: RunDir) -> list[int]:
    """The rounds after which the run looks at its data to choose the next block's points: the planned rounds,
    then the end of every block but the last (runs written before --looks looked after every round)."""
    cfg, runs = rd.meta["analysis"]["adaptive"], rd.meta["runs"]
    extra = cfg["max_runs"] - runs
    blocks = max(1, cfg.get("looks", 1 + extra) - 1)
    sizes = [extra // blocks + (1 if i < extra % blocks else 0) for i in range(blocks)]
    out = [runs]
    for size in sizes[:-1]:
        out.append(out[-1] + size)
    return out


def rounds(rd: RunDir) -> int:
    """The rounds of launches the run holds (measurement launches)."""
    return 1 + max((x.run_index for x in rd.launches if x.phase == runner.MEASURE), default=-1)


def spent(rd: RunDir) -> float:
    """Seconds the run's launches took so far."""
    return sum(x.seconds or 0.0 for x in rd.launches)


def _as_of(rd: RunDir, n_rounds: int) -> RunDir:
    """The run as it stood after its first n_rounds rounds (a view, never saved)."""
    view = RunDir(rd.path)
    view.meta, view.launches = rd.meta, [x for x in rd.launches if x.run_index < n_rounds]
    return view


def _open(suite: Suite, rd: RunDir) -> pd.DataFrame:
    """The run's INCONCLUSIVE guideline points (verdict_points rows)."""
    points = suite.verdict_points(rd)
    if points is None or points.empty:
        return pd.DataFrame(columns=POINT_COLUMNS)
    return points[points["verdict"] == stats.INCONCLUSIVE]


def undecided(suite: Suite, rd: RunDir) -> tuple[pd.DataFrame, pd.DataFrame]:
    """At the run's last look: its INCONCLUSIVE points, and those of them that the extra rounds may decide,
    within reach of the rounds left by the verdict's own estimate of the launches it needs (a point on the
    tolerance, or needing more launches than --max-runs leaves, is not launched again)."""
    look = max(r for r in look_rounds(rd) if r <= rounds(rd))
    open_ = _open(suite, _as_of(rd, look))
    if POINT_MORE not in open_.columns:
        return open_, open_
    more = pd.to_numeric(open_[POINT_MORE], errors="coerce")
    return open_, open_[more.notna() & (more <= rd.meta["analysis"]["adaptive"]["max_runs"] - look)]


def stop_reason(suite: Suite, rd: RunDir) -> tuple[str | None, pd.DataFrame]:
    """Why the loop ends now (None: it goes on), and the points the next round measures again. Inside a block
    of rounds only --max-runs and --budget end it: stopping there on what the data show would be another look."""
    cfg = rd.meta["analysis"].get("adaptive")
    if not cfg:
        return "not adaptive", pd.DataFrame(columns=POINT_COLUMNS)
    open_, todo = undecided(suite, rd)
    if open_.empty:
        return "every guideline point is decided", todo
    if rounds(rd) >= cfg["max_runs"]:
        return f"--max-runs {cfg['max_runs']} reached with {len(_open(suite, rd))} point(s) undecided", todo
    if cfg.get("budget_s") is not None and spent(rd) >= cfg["budget_s"]:
        return (f"--budget of {cfg['budget_s']:g} s spent ({spent(rd):.3g} s of launches) with "
                f"{len(_open(suite, rd))} point(s) undecided"), todo
    if todo.empty:
        return (f"the {len(open_)} undecided point(s) are out of reach: on the tolerance, or needing more "
                f"launches than --max-runs {cfg['max_runs']} leaves"), todo
    return None, todo


def next_round(suite: Suite, rd: RunDir, todo: pd.DataFrame) -> list[Launch]:
    """One more round of launches, of each template narrowed to the points `todo` it measures (every template of
    a stack whose points name none), appended to the run and saved."""
    m = rd.meta

    def choose(stack: str, t: LaunchTemplate) -> LaunchTemplate | None:
        mine = todo[todo["stack"] == stack]
        if POINT_TEMPLATE in mine.columns:
            mine = mine[[t.key in str(keys).split(TEMPLATE_SEP) for keys in mine[POINT_TEMPLATE]]]
        return suite.narrow(m["params"], t, mine) if not mine.empty else None

    launches = runner.plan(suite, m["params"], m["stacks_order"], 1, m["measurement"], first_round=rounds(rd),
                           choose=choose)
    # in estimate mode the calibration launches of the first round serve every round (Launch.needs_t1)
    rd.launches += launches
    rd.save()
    return launches
