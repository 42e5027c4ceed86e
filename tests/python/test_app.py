"""Tuning an application (`mpiguide app`; docs/app-tuning.md): record files read and added up, the plan of
what each suite measures of a record (and why the rest is left), the validation's speedup and output check on
simulated launches with known times, and the whole chain on a real program (mg_stencil) on MPICH."""

from __future__ import annotations

import argparse
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from conftest import only_row, run_cli, save_synthetic_run, synthetic_meta
from mpiguide.core import rawfile, record, runner
from mpiguide.core.errors import MpiguideError
from mpiguide.suites import SUITES
from mpiguide.suites.app import analysis, inprogram, job
from mpiguide.suites.calls import plan as callplan

VEC = "vector(count=4, block=2, stride=3, int)"
HEAD = ("#@mpiguide_record=1\n#@library_version=Fake MPI 1.0\n#@nprocs=2\n#@mode=off\n#@clock=tsc\n"
        "#@host[0]=n0\n#@host[1]=n1\n#@wall_s[0]=2.0\n#@mpi_s[0]=0.5\n#@wall_s[1]=2.5\n#@mpi_s[1]=1.0\n"
        f"#@type[t0.0]={VEC}\n#@type[t1.0]={VEC}\n")
COLUMNS = "rank op comm_size bytes impl strategy calls seconds send_type recv_type datatype reduce_op\n"
ROWS = ("0 MPI_Allreduce 2 8 default - 100 0.2 - - double sum\n"
        "1 MPI_Allreduce 2 8 default - 100 0.4 - - double sum\n"
        "0 MPI_Send_c 2 32 - native 10 0.1 t0.0 - - -\n"
        "1 MPI_Recv 2 32 - native 10 0.3 - t1.0 - -\n"
        "0 MPI_Waitall -1 -1 - - 5 0.2 - - - -\n"
        "1 MPI_Waitall -1 -1 - - 5 0.3 - - - -\n")


def write_record(path: Path, text: str = HEAD + COLUMNS + ROWS + "#@end=ok\n") -> Path:
    path.write_text(text)
    return path


def test_a_record_adds_up_over_the_ranks(tmp_path):
    r = record.parse(write_record(tmp_path / "r.txt"))
    assert r.nprocs == 2 and r.wall == 2.5 and r.mpi == pytest.approx(0.75) and r.hosts == {0: "n0", 1: "n1"}
    assert r.mpi_share == pytest.approx((0.5 / 2 + 1.0 / 2.5) / 2)
    calls = r.calls()
    allreduce = only_row(calls, op="MPI_Allreduce")
    assert allreduce["ranks"] == 2 and allreduce["calls"] == 200 and allreduce["calls_per_rank"] == 100
    assert allreduce["seconds"] == pytest.approx(0.6) and allreduce["seconds_per_rank"] == pytest.approx(0.3)
    assert allreduce["share"] == pytest.approx(0.6 / 1.5) and allreduce["datatype"] == "double"
    # the _c entry point counts as its int form; a row's type names become their text
    send = only_row(calls, op="MPI_Send")
    assert send["send_type"] == VEC and send["recv_type"] == record.NONE
    assert calls["seconds"].is_monotonic_decreasing
    ops = r.by_operation().set_index("op")
    assert ops.loc["MPI_Send", "bytes"] == 320 and ops.loc["MPI_Waitall", "bytes"] == 0


@pytest.mark.parametrize("text, message", [
    (HEAD + COLUMNS + ROWS, "is cut short (no #@end line): the program did not reach MPI_Finalize"),
    ("#@nprocs=2\n" + COLUMNS + "#@end=ok\n", "is not a record of libmpiguide-tune"),
    (HEAD + "rank op bytes\n#@end=ok\n", ":14: not a record's column line"),
    (HEAD + COLUMNS + "0 MPI_Send 2 32 - native 10 0.1 t0.0 -\n#@end=ok\n", ":15: 10 fields where a record row has 12"),
    (HEAD + COLUMNS + "0 MPI_Send 2 32 - native ten 0.1 - - - -\n#@end=ok\n", "a field that is not a number"),
    (HEAD + COLUMNS + "0 MPI_Send 2 32 - native 10 0.1 t9.9 - - -\n#@end=ok\n", "name the type t9.9"),
])
def test_a_bad_record_is_named_with_where(tmp_path, text, message):
    path = write_record(tmp_path / "bad.txt", text)
    with pytest.raises(MpiguideError, match=message.replace("(", r"\(").replace(")", r"\)")):
        record.parse(path)


def calls_frame(rows: list[dict]) -> pd.DataFrame:
    base = dict(comm_size=2, impl="-", strategy="native", send_type=record.NONE, recv_type=record.NONE,
                datatype="-", reduce_op="-", ranks=2, calls=10, calls_per_rank=5, seconds_per_rank=0.1, share=0.1)
    return pd.DataFrame([{**base, **r} for r in rows], columns=record.CALL_COLUMNS)


def test_the_calls_with_derived_types_a_record_plans():
    """Each side of a point-to-point call as its pattern on 2 processes; a collective on its communicator's
    size; alike shapes once; the costliest first; what cannot be rebuilt, with why."""
    calls = calls_frame([
        dict(op="MPI_Sendrecv", bytes=32, send_type=VEC, recv_type=VEC, seconds=3.0),
        dict(op="MPI_Isend", bytes=32, send_type=VEC, seconds=1.0),  # the Sendrecv's send side again
        dict(op="MPI_Bcast", comm_size=4, bytes=64, send_type=VEC, seconds=2.0),
        dict(op="MPI_Alltoallv", bytes=64, send_type=VEC, seconds=5.0),
        dict(op="MPI_Gather", comm_size=1, bytes=32, send_type=VEC, seconds=0.5),
        dict(op="MPI_Send", bytes=32, send_type="?", seconds=0.1),
        dict(op="MPI_Allreduce", bytes=8, seconds=9.0),  # no derived type: not the calls suite's
    ])
    shapes, taken, left = callplan.plan(calls)
    assert list(zip(shapes["pattern"], shapes["nprocs"], shapes["bytes"], strict=True)) == [
        ("send", 2, 32), ("recv", 2, 32), ("bcast", 4, 64)]
    assert shapes["seconds"].tolist() == [4.0, 3.0, 2.0] and shapes["key"].tolist() == ["s0", "s1", "s2"]
    assert set(taken["op"]) == {"MPI_Sendrecv", "MPI_Isend", "MPI_Bcast"}
    reasons = dict(zip(left["op"], left["reason"], strict=True))
    assert "counts per rank" in reasons["MPI_Alltoallv"] and "one process" in reasons["MPI_Gather"]
    assert "could not describe" in reasons["MPI_Send"] and "MPI_Allreduce" not in reasons
    few, taken2, left2 = callplan.plan(calls, max_shapes=1)
    assert len(few) == 1 and "below the 1 shapes" in " ".join(left2["reason"])
    text = callplan.shapes_text(shapes)
    assert f"s0\tsend\t32\t{VEC}\t-\n" in text and f"s2\tbcast\t64\t{VEC}\t-\n" in text


def test_the_collectives_a_record_plans():
    """The nine collectives with predefined types: one coll run per reduction datatype and operation that
    mg_collbench measures (the others join the byte/bor run); the rest left with why."""
    calls = calls_frame([
        dict(op="MPI_Allreduce", bytes=8, datatype="double", reduce_op="sum", seconds=1.0),
        dict(op="MPI_Allreduce", comm_size=4, bytes=64, datatype="int", reduce_op="max", seconds=1.0),
        dict(op="MPI_Bcast", bytes=100, seconds=1.0),
        dict(op="MPI_Allreduce", bytes=4, datatype="float", reduce_op="sum", seconds=1.0),
        dict(op="MPI_Reduce", bytes=8, datatype="int", reduce_op="min", seconds=1.0),
        dict(op="MPI_Barrier", bytes=0, seconds=1.0),
    ])
    plans = SUITES.get("coll").app_plan(calls, {"stacks": ["mpich"]})
    runs = {(p.params["datatype"], p.params["op"]): p for p in plans}
    assert set(runs) == {("byte", "bor"), ("double", "sum"), ("int", "max")}
    assert runs[("byte", "bor")].params["collectives"] == ["bcast"] and runs[("byte", "bor")].params["sizes"] == [100]
    assert runs[("int", "max")].params["np"] == [4] and runs[("int", "max")].params["sizes"] == [64]
    assert set(runs[("double", "sum")].taken["key"]) == {"allreduce np2 m=8"}
    left = pd.concat([p.left for p in plans])
    reasons = dict(zip(left["op"] + " " + left["datatype"], left["reason"], strict=True))
    assert "reduces float" in reasons["MPI_Allreduce float"] and "operation is min" in reasons["MPI_Reduce int"]
    assert not SUITES.get("coll").app_plan(calls_frame([dict(op="MPI_Send", bytes=8, seconds=1.0)]), {})


def test_the_measurements_run_at_the_programs_thread_level(tmp_path):
    """A record of a program at MPI_THREAD_MULTIPLE (mpi4py's default): every driver the plan launches starts
    MPI at that level, since a library's calls may cost otherwise at another; a record without the line
    (or at single) leaves the drivers' MPI_Init as it is."""
    assert record.parse(write_record(tmp_path / "old.txt")).thread_level == "single"
    multiple = record.parse(write_record(tmp_path / "r.txt", HEAD + "#@thread_level=multiple\n" + COLUMNS + ROWS
                                         + "#@end=ok\n"))
    assert multiple.thread_level == "multiple"
    calls = multiple.calls()
    for name in ("coll", "calls"):
        suite = SUITES.get(name)
        for level, args in (("multiple", ["--thread-level", "multiple"]), (None, [])):
            [p] = [p for p in suite.app_plan(calls, {"stacks": ["mpich"], "thread_level": level}) if p.params]
            for t in suite.launches(p.params):
                assert t.args[-len(args) or len(t.args):] == args and ("--thread-level" in t.args) == bool(args)


# ---------------------------------------------------------------- the validation on simulated launches

PROGRAM = ["/bin/true", "input.dat"]


def write_app_run(path: Path, times, outputs, runs: int = 5, stacks=("lib",), sides=("native", "tuned"),
                  masks=(), metric=None, **more) -> Path:
    """An app run whose launch of side S in round i took times(stack, side, i) seconds and printed
    outputs(stack, side, i); more: further parameters of the run."""
    params = {"program": PROGRAM, "np": 2, "sides": list(sides), "profiles": "/nonexistent/{stack}",
              "stacks": list(stacks), "masks": list(masks), "metric": metric, "check": None, "file_env": {},
              "placement": None, **more}
    meta = synthetic_meta(run_id=path.name, runs=runs)
    meta.update(job="app", title="app", params=params, stacks_order=list(stacks))
    meta["stacks"] = {s: {**meta["stacks"]["fake"], "name": s} for s in stacks}
    meta["measurement"]["nrep"] = 1
    launches = runner.plan(SUITES.get("app"), params, list(stacks), runs, meta["measurement"])
    (path / "logs").mkdir(parents=True)
    for x in launches:
        side = job.side_of(x.template)
        (path / "logs" / f"{x.id}.log").write_text("env ... the command\n" + outputs(x.stack, side, x.run_index))
    save_synthetic_run(path, meta, launches, lambda x: "")
    for x in launches:
        rawfile.write_program_raw(path / x.raw, x.template, x.driver, 2, times(x.stack, job.side_of(x.template),
                                                                                x.run_index))
    return path


def same_output(stack, side, i):
    return f"result 42\nelapsed {0.1 * i:.3f} s\n"


def test_the_tuned_program_is_shown_faster_paired_by_round(tmp_path):
    """Rounds run at speeds up to 40% apart (the machine), the tuned program 20% faster in each: paired by
    round, x1.25 is shown with an interval around it; masked timing lines do not count as another output."""
    def times(stack, side, i):
        return (1 + 0.2 * (i % 3)) * (0.8 * (1 + 0.01 * (i % 3 - 1)) if side == "tuned" else 1.0)
    rd = runner.RunDir.open(write_app_run(tmp_path / "v", times, same_output, masks=[r"^elapsed "]))
    r = analysis.load(rd)
    assert r.output_ok and len(r.launches) == 10
    s = only_row(r.speedups, stack="lib", side="tuned")
    assert s["speedup"] == pytest.approx(1.25, rel=0.01) and s["verdict"] == analysis.FASTER
    assert s["low"] < 1.25 < s["high"] and s["rounds"] == 5


def test_a_slower_side_is_called_slower_only_where_shown(tmp_path):
    def noisy(stack, side, i):  # the tuned side 2% slower but launches 30% apart at random
        return [1.0, 1.3, 0.9, 1.25, 1.05][i] * ([1.02, 0.99, 1.04, 0.97, 1.03][i] if side == "tuned" else 1.0)
    r = analysis.load(runner.RunDir.open(write_app_run(tmp_path / "n", noisy, same_output, masks=[r"^elapsed "])))
    assert only_row(r.speedups, side="tuned")["verdict"] == analysis.NO_DIFFERENCE

    def slow(stack, side, i):
        return (1 + 0.1 * i) * (1.5 if side == "tuned" else 1.0)
    r = analysis.load(runner.RunDir.open(write_app_run(tmp_path / "s", slow, same_output, masks=[r"^elapsed "])))
    assert only_row(r.speedups, side="tuned")["verdict"] == analysis.SLOWER


def test_another_output_fails_loudly(tmp_path):
    def outputs(stack, side, i):
        return f"result {41 if side == 'tuned' and i == 2 else 42}\n"
    r = analysis.load(runner.RunDir.open(write_app_run(tmp_path / "o", lambda *a: 1.0, outputs)))
    assert not r.output_ok and len(r.output_problems) == 1
    assert "lib-tuned-r2 (tuned) printed another output than the native program: line 1: 'result 42' natively, " \
           "'result 41' here" in r.output_problems[0]


def test_an_output_that_changes_by_itself_is_named(tmp_path):
    """Without the mask, the timing line differs between two native launches: the message says so and how
    to mask it, instead of blaming the library."""
    r = analysis.load(runner.RunDir.open(write_app_run(tmp_path / "t", lambda *a: 1.0, same_output)))
    assert len(r.output_problems) == 1
    assert "differs between its native launches" in r.output_problems[0] and "--mask" in r.output_problems[0]


def test_a_metric_the_program_prints(tmp_path):
    def outputs(stack, side, i):
        return f"solve time: {(0.5 if side == 'tuned' else 1.0) * (1 + 0.1 * i):.4f} s\nresult 42\n"
    def times(stack, side, i):  # the whole launch: 8 s besides the solve
        return 8.0 + (0.5 if side == "tuned" else 1.0) * (1 + 0.1 * i)
    r = analysis.load(runner.RunDir.open(write_app_run(tmp_path / "m", times, outputs,
                                                       masks=["solve time"], metric=r"solve time: ([0-9.]+)")))
    assert only_row(r.speedups, side="tuned")["speedup"] == pytest.approx(2.0, rel=1e-3)
    # the whole launches, beside: what a prediction over the run's wall time is checked against
    assert only_row(r.wall_speedups, side="tuned")["speedup"] == pytest.approx(9.2 / 8.6, rel=1e-3)
    assert analysis.metric("a 1\nb 2\n", r"^[ab] (\d)") == 2.0 and math.isnan(analysis.metric("x", r"y (\d)"))


def test_the_program_is_resolved_and_refused_clearly(tmp_path):
    assert job.resolve_program(["--", "true", "x"])[1:] == ["x"]
    with pytest.raises(MpiguideError, match="no program to run: give it after --"):
        job.resolve_program([])
    with pytest.raises(MpiguideError, match="the program ./nope does not exist"):
        job.resolve_program(["./nope"])
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    with pytest.raises(MpiguideError, match="is not an executable file"):
        job.resolve_program([str(plain)])
    # a virtual environment's python is a link that must stay one: it finds the environment by its own path
    link = tmp_path / "venv" / "bin" / "python"
    link.parent.mkdir(parents=True)
    link.symlink_to(shutil.which("true"))
    assert job.resolve_program([str(link), "app.py"]) == [str(link), "app.py"]


def test_the_sides_launch_what_they_say(tmp_path):
    params = {"program": PROGRAM, "np": 3, "sides": ["native", "tuned", "file", "record", "online"],
              "profiles": "/p/{stack}", "stacks": ["a", "b"], "masks": [], "metric": None, "check": None,
              "placement": None, "file_env": {"a": {"MPIR_CVAR_X": "/f.json"}}}
    t = {x.key: x for x in job.templates(params)}
    assert set(t) == {"native", "tuned-a", "tuned-b", "file-a", "record", "online"}
    assert t["online"].args == [f"LD_PRELOAD={job.LIBRARY}", "MPIGUIDE_TUNE_MODE=online", *PROGRAM]
    assert t["native"].driver == "/bin/true" and t["native"].args == ["input.dat"] and t["native"].program
    assert t["tuned-a"].args[:4] == [f"LD_PRELOAD={job.LIBRARY}", "MPIGUIDE_TUNE_MODE=tuned",
                                     "MPIGUIDE_TUNE_PROFILES=/p/{stack}", "MPIR_CVAR_X=/f.json"]
    assert t["tuned-b"].args[3:] == PROGRAM and t["tuned-a"].stack == "a"
    assert dict(t["file-a"].env) == {"MPIR_CVAR_X": "/f.json"} and t["file-a"].stack == "a"
    assert f"MPIGUIDE_TUNE_RECORD={job.RECORD}" in t["record"].args
    assert {x.block for x in t.values()} == {job.BLOCK}
    launches = runner.plan(SUITES.get("app"), params, ["a", "b"], 2, {"sync": "barrier", "nrep": 1})
    assert all(x.args == t[x.template].args for x in launches)  # no measurement options for a program


# ---------------------------------------------------------------- the whole chain, for real

STENCIL_ARGS = ["--app", "jacobi", "--variants", "ddt:nonblocking,basic:nonblocking", "--nx", "64", "--ny", "64",
                "--steps", "20", "--nrep", "2", "--check"]
MASKS = ["--mask", r"^[a-z]+ [a-z]+ [a-z-]+ ", "--mask", "^#@"]  # its timing rows and notes


def test_app_run_records_tunes_and_validates_a_real_program(mpich_build, tmp_path):
    """On a 2 x 2 grid, where the halo columns' vector types go to real neighbours (on 1 x 2 they all go to
    MPI_PROC_NULL, which moves nothing and is not measured)."""
    out = tmp_path / "app"
    res = run_cli(["app", "run", "--stacks", "mpich", "--np", "4", "--runs", "2", "--output", str(out), *MASKS,
                   "--online", "--", str(mpich_build / "mg_stencil"), *STENCIL_ARGS])
    assert res.rc == 0, res.text
    assert "in the recorded MPI calls" in res.text and "app report:" in res.text
    assert "outputs: every launch printed what the native program prints (6 launch(es))" in res.text
    rec = analysis.records(runner.RunDir.open(out / "record"))["mpich"]
    assert rec.nprocs == 4 and "MPI_Allreduce" in set(rec.rows["op"])
    taken = pd.read_csv(out / "plan_taken.csv")
    assert {"coll", "calls"} <= set(taken["suite"])
    assert (out / "profiles" / "mpich").is_dir() and (out / "report.html").is_file()
    v = analysis.load(runner.RunDir.open(out / "validate"))
    assert set(v.launches["side"]) == {"native", "tuned", "online"} and v.output_ok
    assert only_row(v.speedups, side="tuned")["rounds"] == 2 and only_row(v.speedups, side="online")["rounds"] == 2
    assert analysis.records(runner.RunDir.open(out / "record-tuned"), "tuned-record")["mpich"].nprocs == 4
    # the report is rebuilt alone
    again = run_cli(["app", "report", str(out)])
    assert again.rc == 0 and "app report:" in again.text


def test_app_run_until_decided_goes_on_with_the_validation_alone(mpich_build, tmp_path):
    """--until-decided adds rounds to the comparison with the native program (at most --max-runs), never to the
    recording, which has no native side to decide against."""
    out = tmp_path / "app"
    res = run_cli(["app", "run", "--stacks", "mpich", "--np", "2", "--runs", "2", "--until-decided", "--max-runs",
                   "4", "--output", str(out), *MASKS, "--", str(mpich_build / "mg_stencil"), *STENCIL_ARGS])
    assert res.rc == 0, res.text
    assert len(runner.RunDir.open(out / "record").launches) == 1
    assert len(runner.RunDir.open(out / "record-tuned").launches) == 1
    v = analysis.load(runner.RunDir.open(out / "validate"))
    assert 2 <= only_row(v.speedups, side="tuned")["rounds"] <= 4 and "--until-decided: " in res.text


def test_app_record_of_a_failing_program_says_so(mpich_build, tmp_path):
    res = run_cli(["app", "record", "--stacks", "mpich", "--np", "2", "--output", str(tmp_path / "f"), "--",
                   str(mpich_build / "mg_stencil"), "--app", "nope"])
    assert res.rc == 2 and "launch(es) failed" in res.text and "mpiguide run app --sides native" in res.text


def test_a_program_with_nothing_to_tune(mpich_build, tmp_path):
    """The ping-pong of MPI_INT sends: no collective, no derived type: nothing to measure, said so."""
    out = tmp_path / "pp"
    res = run_cli(["app", "run", "--stacks", "mpich", "--np", "2", "--runs", "2", "--output", str(out), "--",
                   str(mpich_build / "mg_pingpong"), "--sizes", "4", "--nrep", "3"])
    assert res.rc == 0, res.text
    assert "nothing to measure: the program calls nothing libmpiguide-tune can change" in res.text
    assert not (out / "validate").exists()


def test_run_app_needs_profiles_for_the_tuned_side(tmp_path):
    res = run_cli(["run", "app", "--stacks", "mpich", "--output", str(tmp_path / "x"), "--", "true"])
    assert res.rc == 2 and "the tuned side needs --profiles DIR" in res.text
    args = argparse.Namespace(np=0)
    with pytest.raises(MpiguideError, match="bad --np 0"):
        job.program_params(args, ["native"], None)


def test_profiles_of_another_process_count_are_refused(tmp_path):
    from mpiguide.suites.app import check_profiles_fit
    (tmp_path / "mpich").mkdir()
    (tmp_path / "mpich" / "allreduce_p4.prof").write_text("x")
    check_profiles_fit(tmp_path, 4)
    with pytest.raises(MpiguideError, match="its collective profiles are for 4 process"):
        check_profiles_fit(tmp_path, 8)
    check_profiles_fit(tmp_path / "mpich", 4)


def test_the_later_steps_run_on_the_recorded_stacks():
    from mpiguide.suites.app import workflow
    args = argparse.Namespace(stacks="mpich")  # the default: not given
    workflow._use_recorded_stacks(args, {"stacks": ["openmpi", "impi"]})
    assert args.stacks == "openmpi,impi"
    with pytest.raises(MpiguideError, match="was recorded on openmpi; a record of one library"):
        workflow._use_recorded_stacks(argparse.Namespace(stacks="impi"), {"stacks": ["openmpi"]})


def test_the_prediction_is_amdahl_over_the_decided_gains_with_their_band():
    from types import SimpleNamespace

    from mpiguide.suites.app import report as app_report
    taken = pd.DataFrame([dict(suite="coll", key="allreduce 8", op="MPI_Allreduce", comm_size=2, bytes=8,
                               send_type="-", recv_type="-", seconds_per_rank=4.0, calls_per_rank=100),
                          dict(suite="calls", key="send vec", op="MPI_Send", comm_size=2, bytes=32,
                               send_type="t", recv_type="-", seconds_per_rank=3.0, calls_per_rank=100)])
    decisions = pd.DataFrame([dict(stack="lib", suite="coll", key="allreduce 8", choice="allreduce_as_reduce_bcast",
                                   gain=0.5, low=0.4, high=0.6, decision="faster"),
                              dict(stack="lib", suite="calls", key="send vec", choice="native", gain=0.3, low=0.1,
                                   high=0.5, decision="unclear")])
    pred = app_report._prediction({"lib": SimpleNamespace(wall=10.0, mpi=9.0)}, taken, decisions)
    x = pred.iloc[0]
    assert x.saved_s == pytest.approx(2.0) and x.predicted_speedup == pytest.approx(1.25)
    assert x.low == pytest.approx(10 / 8.4) and x.high == pytest.approx(10 / 7.6)

    # after validation, over the native launches' wall time (mean 12 s): x1.2, x12/10.4 to x12/9.6
    launches = pd.DataFrame([dict(stack="lib", side=side, seconds=t) for side, t in
                             [("native", 11.0), ("native", 13.0), ("tuned", 10.0), ("tuned", 10.0)]])
    inside = pd.DataFrame([dict(stack="lib", side="tuned", speedup=1.2, low=1.15, high=1.17)])
    outside = inside.assign(speedup=1.5, low=1.45, high=1.55)

    def check(wall, metric=None):
        validated = SimpleNamespace(launches=launches, wall_speedups=wall,
                                    speedups=wall if metric is None else metric)
        return app_report._prediction_check({"lib": SimpleNamespace(wall=10.0, mpi=9.0)}, taken, decisions,
                                            validated)[0]
    assert check(inside) == ("lib: the measured speedup x1.200 (x1.150 to x1.170) meets the prediction x1.154 "
                             "to x1.250 (2 s saved of the native launch's 12 s)")
    assert "is outside the prediction" in check(outside)
    # with --metric, the whole launch is what is compared, not the metric's own speedup
    assert check(inside, metric=outside).startswith("lib: the measured whole-launch speedup x1.200 (x1.150 to "
                                                     "x1.170) meets the prediction")


def test_a_nonblocking_shape_is_charged_with_its_cost_measured_alone():
    """An MPI_Irecv returns at once (0.01 s in 100 calls): its 100 calls cost 100 x 0.02 s natively measured
    alone, half of it saved; a blocking call keeps its recorded time; all saved at most the rank's MPI time."""
    from types import SimpleNamespace

    from mpiguide.suites.app import report as app_report
    taken = pd.DataFrame([dict(suite="calls", key="s0", op="MPI_Irecv", comm_size=2, bytes=32, send_type="-",
                               recv_type="t", seconds_per_rank=0.01, calls_per_rank=100),
                          dict(suite="calls", key="s1", op="MPI_Send", comm_size=2, bytes=32, send_type="t",
                               recv_type="-", seconds_per_rank=1.0, calls_per_rank=100)])
    decisions = pd.DataFrame([dict(stack="lib", suite="calls", key=k, choice="pack", gain=0.5, low=0.5, high=0.5,
                                   decision="pack", native_s=0.02) for k in ("s0", "s1")])
    pred = app_report._prediction({"lib": SimpleNamespace(wall=10.0, mpi=5.0)}, taken, decisions)
    assert pred.iloc[0].saved_s == pytest.approx(0.5 * 2.0 + 0.5 * 1.0)
    capped = app_report._prediction({"lib": SimpleNamespace(wall=10.0, mpi=1.2)}, taken, decisions)
    assert capped.iloc[0].saved_s == pytest.approx(1.2)
    without = app_report._prediction({"lib": SimpleNamespace(wall=10.0, mpi=5.0)}, taken,
                                     decisions.drop(columns="native_s"))
    assert without.iloc[0].saved_s == pytest.approx(0.5 * 0.01 + 0.5 * 1.0)


def test_every_recorded_transfer_is_planned_or_said_why_not():
    """What no suite takes or leaves (an MPI_Alltoallv of ints, a send of ints) is left with its reason; what a
    suite takes, calls that move nothing and calls of one process are not repeated."""
    from mpiguide.core.suite import AppPlan
    from mpiguide.suites.app import workflow
    calls = calls_frame([
        dict(op="MPI_Allreduce", bytes=8, datatype="int", reduce_op="sum", seconds=1.0),
        dict(op="MPI_Alltoallv", bytes=96, seconds=5.0),
        dict(op="MPI_Send", bytes=32, seconds=0.5),
        dict(op="MPI_Barrier", bytes=0, seconds=0.1),
        dict(op="MPI_Bcast", comm_size=1, bytes=8, seconds=0.1),
    ])
    plans = SUITES.get("coll").app_plan(calls, {"stacks": ["mpich"]})
    left = workflow._unclaimed(calls, plans)
    reasons = dict(zip(left["op"], left["reason"], strict=True))
    assert set(reasons) == {"MPI_Alltoallv", "MPI_Send"}
    assert "irregular collective" in reasons["MPI_Alltoallv"] and "--online" in reasons["MPI_Alltoallv"]
    assert "changes nothing" in reasons["MPI_Send"]
    assert workflow._unclaimed(calls, plans + [AppPlan("x", {}, left.drop(columns="reason"), left)]).empty


# ---------------------------------------------------------------- calls measured in the program itself

W_TYPE = "vector(count=64, block=8, stride=16, double)"


def test_what_no_benchmark_rebuilds_is_planned_in_the_program():
    """A w call with a derived type whose shape the record gives is measured in the program (natively and
    normalized, recorded); one whose shape it does not give, or that moves nothing, is left with why; a v call
    of predefined types is not its business."""
    calls = calls_frame([
        dict(op="MPI_Alltoallw", bytes=4096, send_type=W_TYPE, seconds=3.0),
        dict(op="MPI_Neighbor_alltoallw", bytes=512, recv_type=VEC, seconds=1.0),
        dict(op="MPI_Alltoallv", bytes=0, send_type=W_TYPE, seconds=0.1),
        dict(op="MPI_Allgatherv", bytes=64, seconds=2.0),
    ])
    program = {"program": PROGRAM, "np": 2, "masks": [], "metric": None, "check": None, "file_env": {},
               "placement": None, "stacks": ["lib"]}
    p = inprogram.plan(calls, {W_TYPE: ("vector", 64)}, program)
    assert p.suite == "app" and p.params["sides"] == ["record", "record-normalized"] and p.nprocs == [2]
    assert p.taken["op"].tolist() == ["MPI_Alltoallw"]
    (w,) = p.params["in_program"]
    assert (w["op"], w["bytes"], w["shape"], w["block"]) == ("MPI_Alltoallw", 4096, "vector", 64)
    reasons = dict(zip(p.left["op"], p.left["reason"], strict=True))
    assert "shape" in reasons["MPI_Neighbor_alltoallw"] and "no bytes" in reasons["MPI_Alltoallv"]
    assert "MPI_Allgatherv" not in reasons
    templates = {t.key: t for t in job.templates(p.params)}
    assert "MPIGUIDE_TUNE_FORCE=datatypes=normalized" in templates["record-normalized"].args
    assert not any(a.startswith("MPIGUIDE_TUNE_FORCE") for a in templates["record"].args)
    assert inprogram.plan(calls[calls["op"] == "MPI_Allgatherv"], {}, program) is None


def write_in_program_run(path: Path, seconds) -> runner.RunDir:
    """The in-program run of the planned w call, 5 rounds, whose launch of side S in round i recorded
    seconds(side, i) per call of it (100 calls per rank) and a call of another shape."""
    w = {"key": "w0", "op": "MPI_Alltoallw", "comm_size": 2, "bytes": 4096, "impl": "-", "strategy": "native",
         "send_type": W_TYPE, "recv_type": "-", "datatype": "-", "reduce_op": "-", "shape": "vector", "block": 64}
    write_app_run(path, lambda *a: 1.0, same_output, sides=("record", "record-normalized"), in_program=[w])
    rd = runner.RunDir.open(path)
    for x in rd.launches:
        side = job.side_of(x.template)
        strategy = "native" if side == "record" else "normalized"
        t = seconds(side, x.run_index) * 100
        rows = "".join(f"{r} MPI_Alltoallw_c 2 4096 - {strategy} 100 {t:.9g} t{r}.0 - - -\n"
                       f"{r} MPI_Allreduce 2 8 default - 100 0.5 - - double sum\n" for r in (0, 1))
        head = HEAD.replace(f"#@type[t0.0]={VEC}\n#@type[t1.0]={VEC}\n", "".join(
            f"#@type[t{r}.0]={W_TYPE}\n#@shape[t{r}.0]=vector\n#@block[t{r}.0]=64\n" for r in (0, 1)))
        write_record((rd.path / x.raw).with_name(f"{x.id}.record"), head + COLUMNS + rows + "#@end=ok\n")
    return rd


def test_a_w_call_measured_in_the_program_takes_what_is_shown_faster(tmp_path):
    """Normalized takes half the time in every round, whose speeds differ by 40%: chosen, its gain shown with
    an interval, a profile rule for the type's shape written; a 2% difference in noisy rounds: native."""
    rd = write_in_program_run(tmp_path / "fast", lambda side, i: (1 + 0.2 * (i % 3)) * (
        0.5 * (1 + 0.01 * (i % 2)) if side == "record-normalized" else 1.0) * 1e-3)
    t = inprogram.launch_table(rd)
    assert len(t) == 5 and set(t["call"]) == {"w0"} and (t["normalized"] < t["native"]).all()
    assert t["native"].tolist()[0] == pytest.approx(1e-3) and set(t["pattern"]) == {"alltoallw"}
    c = inprogram.choose([rd], 0.10, tmp_path / "profiles", "a test")
    (d,) = c.decisions.to_dict("records")
    assert d["key"] == "w0" and d["choice"] == "normalized" and d["low"] < d["gain"] < d["high"]
    assert d["gain"] == pytest.approx(0.5, abs=0.01)
    prof = (tmp_path / "profiles" / "lib" / "dt_alltoallw_p2.prof").read_text()
    assert "datatypes alltoallw\nprocs 2\n" in prof and "\nvector 0 9223372036854775807 normalized" in prof

    rd = write_in_program_run(tmp_path / "same", lambda side, i: [1.0, 1.3, 0.9, 1.25, 1.05][i] * (
        [1.02, 0.99, 1.04, 0.97, 1.03][i] if side == "record-normalized" else 1.0) * 1e-3)
    c = inprogram.choose([rd], 0.10, tmp_path / "none", "a test")
    assert c.decisions["choice"].tolist() == ["native"] and not list((tmp_path / "none" / "lib").iterdir())
