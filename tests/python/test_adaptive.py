"""--until-decided (core/adaptive.py) on synthetic runs with known answers: rounds of launches of the undecided
points only (each template narrowed to them), until every point is decided or out of reach, --max-runs or
--budget; the looks' level; resume after an interruption. No MPI: runner.execute is replaced by one that writes
known raw files. The run's console (what the loop says) writes to stderr."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import SUITES, VARIANTS, raw_text, synthetic_meta
from mpiguide.core import adaptive, runner, stats
from mpiguide.core.errors import MpiguideError
from mpiguide.front import commands

# PP-GL2 (Send/Recv no slower than Isend/Irecv) at 64 B on stack "noisy": Send/Recv 2x slower in every launch
# but the second (1.2x). Every other ratio of either stack is exactly 1 in every launch: decided at once.
RATIOS = [2.0, 1.2] + [2.0] * 14
PP = SUITES.get("pingpong")


def times(stack: str, variant: str, size: int, k: int) -> float:
    slow = stack == "noisy" and size == 64 and variant == "send_recv"
    return 1e-6 * (RATIOS[k] if slow else 1.0)


def fake_execute(rd, on_start, on_done, timeout, signals, on_stop=None, interrupt_at: int | None = None):
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


def new_run(tmp_path, max_runs: int | None, budget: str | None = None, looks: int | None = None) -> runner.RunDir:
    """A planned (not yet run) adaptive pingpong run of 2 rounds on stacks calm and noisy."""
    adapt, looks = adaptive.settings(True, 2, max_runs, budget, looks)
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


def test_a_look_after_every_round_stops_when_decided(tmp_path, monkeypatch, capfd):
    """max-runs 8 with --looks 7: a look after every round, each at alpha / 7. The per-launch log ratios log 2,
    log 1.2, log 2, ... first clear 1.05 at that level with 6 launches (t on 5 degrees of freedom, the family's 8
    points adjusted together): 4 extra rounds, of the noisy stack's template only."""
    monkeypatch.setattr(runner, "execute", fake_execute)
    rd = new_run(tmp_path, 8, looks=7)
    assert rd.meta["analysis"]["looks"] == 7 and adaptive.look_rounds(rd) == [2, 3, 4, 5, 6, 7]
    assert commands.execute(rd, PP, 60, "resume") == 0
    assert launched(rd) == {"calm": 2, "noisy": 6}
    assert "--until-decided: every guideline point is decided (6 round(s))" in capfd.readouterr().err
    v = gl2_64(rd)
    assert v["verdict"] == stats.VIOLATED and v["n_a"] == 6
    # the extra rounds are the noisy stack's template, rounds 2 to 5, each once
    extra = sorted(x.run_index for x in rd.launches if x.run_index >= 2)
    assert extra == [2, 3, 4, 5] and {x.stack for x in rd.launches if x.run_index >= 2} == {"noisy"}


def test_two_looks_measure_the_block_to_its_end(tmp_path, monkeypatch, capfd):
    """max-runs 14, the default 2 looks (alpha / 2 each): the planned rounds end the first look, whose undecided
    point (about 9 more launches by its estimate, within the 12 rounds left) gets every extra round: the data
    decide it earlier, but stopping there would be a look more."""
    monkeypatch.setattr(runner, "execute", fake_execute)
    rd = new_run(tmp_path, 14)
    assert rd.meta["analysis"]["looks"] == 2 and adaptive.look_rounds(rd) == [2]
    assert commands.execute(rd, PP, 60, "resume") == 0
    assert launched(rd) == {"calm": 2, "noisy": 14}
    assert "--until-decided: --max-runs 14 reached with 0 point(s) undecided" in capfd.readouterr().err
    assert gl2_64(rd)["verdict"] == stats.VIOLATED and gl2_64(rd)["n_a"] == 14


def test_points_out_of_reach_are_not_launched_again(tmp_path, monkeypatch, capfd):
    """max-runs 3 (K = 2): after the two planned launches the noisy point needs about 9 more by its own
    estimate, more than the one round left, so no round is launched and the run says why."""
    monkeypatch.setattr(runner, "execute", fake_execute)
    rd = new_run(tmp_path, 3)
    assert rd.meta["analysis"]["looks"] == 2
    assert commands.execute(rd, PP, 60, "resume") == 0
    assert launched(rd) == {"calm": 2, "noisy": 2}
    assert ("--until-decided: the 2 undecided point(s) are out of reach: on the tolerance, or needing more launches "
            "than --max-runs 3 leaves (2 round(s))") in capfd.readouterr().err
    v = gl2_64(rd)
    assert v["verdict"] == stats.INCONCLUSIVE and v["n_a"] == 2 and v["more"] > 1


def test_budget_stops_the_loop(tmp_path, monkeypatch, capfd):
    """Launches of 0.1 s each: the 4 planned ones and one extra round spend 0.5 s, the budget."""
    monkeypatch.setattr(runner, "execute", fake_execute)
    rd = new_run(tmp_path, 14, "0.5s")
    assert commands.execute(rd, PP, 60, "resume") == 0
    assert launched(rd) == {"calm": 2, "noisy": 3}
    assert "--budget of 0.5 s spent (0.5 s of launches) with 2 point(s) undecided" in capfd.readouterr().err


class _Points(PP.__class__):
    """A suite whose run has the given verdict points."""

    def __init__(self, points: pd.DataFrame):
        self.points = points

    def verdict_points(self, rd):
        return self.points


def _open(more: list[float | None]) -> pd.DataFrame:
    return pd.DataFrame({"stack": "s", "guideline": "G", "point": [f"p{i}" for i in range(len(more))],
                         "verdict": stats.INCONCLUSIVE, "factor": 1.0, "p_value": 0.5, "more": more})


@pytest.mark.parametrize("more, rounds_done, spent, why", [
    ([], 3, 1.0, "every guideline point is decided"),
    ([1, None], 6, 1.0, "--max-runs 6 reached with 2 point(s) undecided"),
    ([1], 4, 10.0, "--budget of 10 s spent (10 s of launches) with 1 point(s) undecided"),
    ([None, 5], 2, 1.0, "the 2 undecided point(s) are out of reach"),
    ([None, 4], 3, 1.0, None),
])
def test_stop_reasons(tmp_path, more, rounds_done, spent, why):
    """Decided, --max-runs, --budget, out of reach (more launches than the rounds left after the look: 6 - 2),
    or on."""
    rd = new_run(tmp_path, 6, "10s")
    for x in rd.launches[:1]:
        x.seconds = spent
    rd.launches[0].run_index = rounds_done - 1
    reason, todo = adaptive.stop_reason(_Points(_open(more)), rd)
    assert (reason or "").startswith(why or "") and (reason is None) == (why is None)
    assert list(todo.get("more", [])) == [m for m in more if m is not None and m <= 6 - 2]


def test_resume_goes_on_with_the_loop(tmp_path, monkeypatch):
    """Ctrl-C during the first extra round keeps what was measured; resuming goes on to the same end as an
    uninterrupted run, with the same looks."""
    monkeypatch.setattr(runner, "execute", lambda *a: fake_execute(*a, interrupt_at=3))
    rd = new_run(tmp_path, 14)
    assert commands.execute(rd, PP, 60, "resume") == 130
    assert [x.run_index for x in rd.pending()] == [3]
    monkeypatch.setattr(runner, "execute", fake_execute)
    again = runner.RunDir.open(rd.path)
    assert commands.execute(again, PP, 60, "resume") == 0
    assert launched(again) == {"calm": 2, "noisy": 14} and gl2_64(again)["verdict"] == stats.VIOLATED
    assert json.loads((rd.path / "meta.json").read_text())["analysis"]["looks"] == 2


@pytest.mark.parametrize("args, message", [
    ((False, 3, 6, None), "--max-runs, --budget and --looks go with --until-decided"),
    ((False, 3, None, None, 2), "--max-runs, --budget and --looks go with --until-decided"),
    ((True, 3, 6, None, 5), "bad --looks 5: 2 to 1 "),
    ((True, 3, 6, None, 1), "bad --looks 1"),
    ((True, 3, 2, None), "bad --max-runs 2: at least --runs (3)"),
    ((True, 3, None, "soon"), "bad --budget 'soon': a duration such as 20m, 1h or 90s"),
    ((True, 3, None, "0m"), "bad --budget '0m'"),
])
def test_bad_adaptive_settings(args, message):
    with pytest.raises(MpiguideError, match=message.replace("(", r"\(").replace(")", r"\)")):
        adaptive.settings(*args)


def test_settings_and_budgets():
    assert adaptive.settings(False, 3, None, None) == (None, 1)
    assert adaptive.settings(True, 3, None, None) == ({"max_runs": 6, "budget_s": None, "looks": 2}, 2)
    assert adaptive.settings(True, 3, 9, None, 4) == ({"max_runs": 9, "budget_s": None, "looks": 4}, 4)
    assert adaptive.settings(True, 3, 3, "1h") == ({"max_runs": 3, "budget_s": 3600.0, "looks": 1}, 1)
    assert [adaptive.parse_budget(t) for t in ("90", "90s", "1.5m", "2h")] == [90, 90, 90, 7200]


@pytest.mark.parametrize("runs, max_runs, looks, rounds", [
    (3, 6, 2, [3]),  # one block of 3 extra rounds
    (3, 9, 4, [3, 5, 7]),  # 6 extra rounds in 3 blocks of 2
    (3, 8, 3, [3, 6]),  # 5 extra rounds: blocks of 3 and 2
    (3, 6, None, [3, 4, 5]),  # a run written before --looks: a look after every round
])
def test_look_rounds(runs, max_runs, looks, rounds):
    adapt = {"max_runs": max_runs, "budget_s": None, **({"looks": looks} if looks else {})}
    rd = runner.RunDir(None)
    rd.meta = {"runs": runs, "analysis": {"adaptive": adapt}}
    assert adaptive.look_rounds(rd) == rounds
