"""--until-decided (core/adaptive.py) on synthetic runs with known answers: rounds of launches of the undecided
launch templates only, until every point is decided, --max-runs or --budget; the looks' level; resume after an
interruption. No MPI: runner.execute is replaced by one that writes known raw files. The run's console (what
the loop says) writes to stderr."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import SUITES, VARIANTS, raw_text, synthetic_meta
from mpiguide.core import adaptive, commands, runner, stats
from mpiguide.core.errors import MpiguideError

# PP-GL2 (Send/Recv no slower than Isend/Irecv) at 64 B on stack "noisy": Send/Recv 2x slower in every launch
# but the second (1.2x). Every other ratio of either stack is exactly 1 in every launch: decided at once.
RATIOS = [2.0, 1.2] + [2.0] * 10
PP = SUITES.get("pingpong")


def times(stack: str, variant: str, size: int, k: int) -> float:
    slow = stack == "noisy" and size == 64 and variant == "send_recv"
    return 1e-6 * (RATIOS[k] if slow else 1.0)


def fake_execute(rd, on_start, on_done, timeout, signals, interrupt_at: int | None = None):
    """runner.execute for synthetic runs: each pending launch gets its known raw file (0.1 s each)."""
    for x in rd.pending():
        if interrupt_at is not None and x.run_index == interrupt_at:
            raise KeyboardInterrupt
        raw = rd.path / x.raw
        raw.parent.mkdir(parents=True, exist_ok=True)
        raw.write_text(raw_text([(v, s, times(x.stack, v, s, x.run_index)) for s in (4, 64) for v in VARIANTS], 3))
        x.status, x.returncode, x.attempts, x.seconds = runner.OK, 0, 1, 0.1
        rd.save()
    return []


def new_run(tmp_path, max_runs: int | None, budget: str | None = None) -> runner.RunDir:
    """A planned (not yet run) adaptive pingpong run of 2 rounds on stacks calm and noisy."""
    adapt, looks = adaptive.settings(True, 2, max_runs, budget)
    meta = synthetic_meta(runs=2, analysis={"samples": "medians", "tolerance": 0.05, "alpha": 0.05,
                                            "looks": looks, "adaptive": adapt})
    meta["stacks_order"] = ["calm", "noisy"]
    meta["stacks"] = {s: {**meta["stacks"]["fake"], "name": s} for s in ("calm", "noisy")}
    meta["measurement"]["order_seed"] = 5
    return runner.RunDir.create(tmp_path / "run", meta, runner.plan(PP, meta["params"], ["calm", "noisy"], 2,
                                                                     meta["measurement"]))


def gl2_64(rd: runner.RunDir) -> pd.Series:
    v = pd.read_csv(rd.path / "verdicts.csv")
    return v[(v["stack"] == "noisy") & (v["guideline"] == "PP-GL2") & (v["msize_bytes"] == 64)].iloc[0]


def launched(rd: runner.RunDir) -> dict[str, int]:
    counts: dict[str, int] = {}
    for x in rd.launches:
        counts[x.stack] = counts.get(x.stack, 0) + 1
    return counts


def test_rounds_until_every_point_is_decided(tmp_path, monkeypatch, capfd):
    """max-runs 8: K = 1 + 8 - 2 = 7 looks, each at alpha / 7. The per-launch log ratios log 2, log 1.2, log 2,
    ... first clear 1.05 at that level with 6 launches (t on 5 degrees of freedom, the family's 8 points
    adjusted together): 4 extra rounds, of the noisy stack's template only."""
    monkeypatch.setattr(runner, "execute", fake_execute)
    rd = new_run(tmp_path, 8)
    assert rd.meta["analysis"]["looks"] == 7
    assert commands.execute(rd, PP, 60, "resume") == 0
    assert launched(rd) == {"calm": 2, "noisy": 6}
    assert "--until-decided: every guideline point is decided (6 round(s))" in capfd.readouterr().err
    v = gl2_64(rd)
    assert v["verdict"] == stats.VIOLATED and v["n_a"] == 6
    # the extra rounds are the noisy stack's template, rounds 2 to 5, each once
    extra = sorted(x.run_index for x in rd.launches if x.run_index >= 2)
    assert extra == [2, 3, 4, 5] and {x.stack for x in rd.launches if x.run_index >= 2} == {"noisy"}


def test_max_runs_stops_the_loop_undecided(tmp_path, monkeypatch, capfd):
    """max-runs 3 (K = 2): one extra round; three launches cannot decide it, and the run says so."""
    monkeypatch.setattr(runner, "execute", fake_execute)
    rd = new_run(tmp_path, 3)
    assert commands.execute(rd, PP, 60, "resume") == 0
    assert launched(rd) == {"calm": 2, "noisy": 3}
    assert "--max-runs 3 reached with 1 launch template(s) undecided (3 round(s))" in capfd.readouterr().err
    v = gl2_64(rd)
    assert v["verdict"] == stats.INCONCLUSIVE and v["n_a"] == 3 and v["more"] > 0


def test_budget_stops_the_loop(tmp_path, monkeypatch, capfd):
    """Launches of 0.1 s each: the 4 planned ones and one extra round spend 0.5 s, the budget."""
    monkeypatch.setattr(runner, "execute", fake_execute)
    rd = new_run(tmp_path, 8, "0.5s")
    assert commands.execute(rd, PP, 60, "resume") == 0
    assert launched(rd) == {"calm": 2, "noisy": 3}
    assert "--budget of 0.5 s spent (0.5 s of launches) with 1 launch template(s) undecided" in capfd.readouterr().err


def test_resume_goes_on_with_the_loop(tmp_path, monkeypatch):
    """Ctrl-C during the first extra round keeps what was measured; resuming goes on to the same end as an
    uninterrupted run, with the same looks."""
    monkeypatch.setattr(runner, "execute", lambda *a: fake_execute(*a, interrupt_at=2))
    rd = new_run(tmp_path, 8)
    assert commands.execute(rd, PP, 60, "resume") == 130
    assert [x.run_index for x in rd.pending()] == [2]
    monkeypatch.setattr(runner, "execute", fake_execute)
    again = runner.RunDir.open(rd.path)
    assert commands.execute(again, PP, 60, "resume") == 0
    assert launched(again) == {"calm": 2, "noisy": 6} and gl2_64(again)["verdict"] == stats.VIOLATED
    assert json.loads((rd.path / "meta.json").read_text())["analysis"]["looks"] == 7


@pytest.mark.parametrize("args, message", [
    ((False, 3, 6, None), "--max-runs and --budget go with --until-decided"),
    ((True, 3, 2, None), "bad --max-runs 2: at least --runs (3)"),
    ((True, 3, None, "soon"), "bad --budget 'soon': a duration such as 20m, 1h or 90s"),
    ((True, 3, None, "0m"), "bad --budget '0m'"),
])
def test_bad_adaptive_settings(args, message):
    with pytest.raises(MpiguideError, match=message.replace("(", r"\(").replace(")", r"\)")):
        adaptive.settings(*args)


def test_settings_and_budgets():
    assert adaptive.settings(False, 3, None, None) == (None, 1)
    assert adaptive.settings(True, 3, None, None) == ({"max_runs": 6, "budget_s": None}, 4)
    assert adaptive.settings(True, 3, 3, "1h") == ({"max_runs": 3, "budget_s": 3600.0}, 1)
    assert [adaptive.parse_budget(t) for t in ("90", "90s", "1.5m", "2h")] == [90, 90, 90, 7200]
