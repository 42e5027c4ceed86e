"""Adaptive launches (`--until-decided`): after the planned rounds of launches, more rounds for the launch
templates whose guideline points are still INCONCLUSIVE, until every point is decided, the run has
`--max-runs` rounds, or its launches have used `--budget` seconds.

Each round is another look at the data, and looking until something is significant inflates the error rate;
so the run's verdicts are judged at alpha / K from the start, K being the number of looks the run may take
(its planned rounds count as the first look, each possible extra round as one more: K = 1 + max_runs - runs).
By the union bound the chance of a wrong decision over all looks stays within the documented rate
(docs/measurement.md). The settings live in the run's meta.json, so `run --resume` and batch jobs go on
where the loop stopped."""

from __future__ import annotations

import re

from mpiguide.core import runner, stats
from mpiguide.core.errors import MpiguideError
from mpiguide.core.runner import Launch, RunDir
from mpiguide.core.suite import Suite

_UNITS = {"s": 1, "m": 60, "h": 3600}


def parse_budget(text: str) -> float:
    """'20m', '1h', '90s' or '90' (seconds) as seconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text or "")
    if not m or float(m[1]) <= 0:
        raise MpiguideError(f"bad --budget '{text}': a duration such as 20m, 1h or 90s")
    return float(m[1]) * _UNITS[m[2] or "s"]


def settings(until_decided: bool, runs: int, max_runs: int | None, budget: str | None) -> tuple[dict | None, int]:
    """The adaptive settings of a new run (None without --until-decided) and its number of looks."""
    if not until_decided:
        if max_runs is not None or budget is not None:
            raise MpiguideError("--max-runs and --budget go with --until-decided")
        return None, 1
    limit = 2 * runs if max_runs is None else max_runs
    if limit < runs:
        raise MpiguideError(f"bad --max-runs {limit}: at least --runs ({runs})")
    return {"max_runs": limit, "budget_s": parse_budget(budget) if budget is not None else None}, 1 + limit - runs


def rounds(rd: RunDir) -> int:
    """The rounds of launches the run holds (measurement launches)."""
    return 1 + max((x.run_index for x in rd.launches if x.phase == runner.MEASURE), default=-1)


def spent(rd: RunDir) -> float:
    """Seconds the run's launches took so far."""
    return sum(x.seconds or 0.0 for x in rd.launches)


def undecided(suite: Suite, rd: RunDir) -> set[tuple[str, str | None]]:
    """(stack, template) of every INCONCLUSIVE guideline point; template None where the suite's points do not
    name it (then every template of the stack)."""
    points = suite.verdict_points(rd)
    if points is None or points.empty:
        return set()
    open_ = points[points["verdict"] == stats.INCONCLUSIVE]
    if "template" in open_.columns:
        return set(zip(open_["stack"], open_["template"], strict=True))
    return {(s, None) for s in open_["stack"]}


def stop_reason(suite: Suite, rd: RunDir) -> tuple[str | None, set]:
    """Why the loop ends now (None: it goes on), and the undecided (stack, template) pairs."""
    cfg = rd.meta["analysis"].get("adaptive")
    if not cfg:
        return "not adaptive", set()
    todo = undecided(suite, rd)
    if not todo:
        return "every guideline point is decided", todo
    if rounds(rd) >= cfg["max_runs"]:
        return f"--max-runs {cfg['max_runs']} reached with {len(todo)} launch template(s) undecided", todo
    if cfg.get("budget_s") is not None and spent(rd) >= cfg["budget_s"]:
        return (f"--budget of {cfg['budget_s']:g} s spent ({spent(rd):.3g} s of launches) with {len(todo)} launch "
                "template(s) undecided"), todo
    return None, todo


def next_round(suite: Suite, rd: RunDir, todo: set[tuple[str, str | None]]) -> list[Launch]:
    """One more round of launches of the undecided templates, appended to the run and saved."""
    m = rd.meta
    launches = runner.plan(suite, m["params"], m["stacks_order"], 1, m["measurement"], first_round=rounds(rd))
    whole = {s for s, t in todo if t is None}
    # in estimate mode the calibration launches of the first round serve every round (Launch.needs_t1)
    new = [x for x in launches if x.stack in whole or (x.stack, x.template) in todo]
    rd.launches += new
    rd.save()
    return new
