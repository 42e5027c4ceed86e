"""The libraries' own tuning files (core.tuning_formats): their text from known choices, and, on the installed
MPICH and Open MPI, that the library reads what was written and applies each rule from the message size on
where the writer put it, for every collective of the tuning suite, shown by the library itself: Open MPI
refuses an algorithm it does not have (99) with MPI_ERR_ARG (which mg_collbench notes as a skip), MPICH prints
the schedules of its nonblocking algorithm `nb` under MPIR_CVAR_COLL_SCHED_DUMP. Intel MPI (where installed)
shows no algorithm a call ran; there the test is that it accepts every rule written and says so of one it
cannot use."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from mpiguide.core import build, families, launch, rawfile, tuning_formats
from mpiguide.core.errors import MpiguideError
from mpiguide.core.stacks import Stack
from mpiguide.core.tuning_formats import Choice, impi_adjust, mpich_json, openmpi_rules
from mpiguide.suites.coll.catalog import COLLECTIVES

P = 3  # not a power of two
# Sizes with rules between them, multiples of P (reduce_scatter_block's vector) and above what MPICH's own
# MPI_Init gathers (its address exchange, an allgather of some 10 kB in all, would otherwise meet the rule).
BELOW, ABOVE = 333333, 333336


def _numbers(text: str) -> list[int]:
    """The numbers of an Open MPI rules file, comments left out (as Open MPI reads it)."""
    return [int(w) for line in text.splitlines() for w in line.split("#")[0].split()]


def test_openmpi_rules_from_known_choices():
    choices = [Choice("allgather", 2, 8), Choice("allgather", 2, 64, "ring", "4"),
               Choice("allgather", 2, 1024, "ring", "4"), Choice("allgather", 4, 8, "bruck", "2"),
               Choice("bcast", 2, 8), Choice("bcast", 2, 100)]
    w = openmpi_rules(choices, "test")
    # 1 collective (bcast keeps the default everywhere: no entry); allgather (id 0): process counts 2 and 4,
    # then 5 with the library's choice. p=2: default from 0, ring from 8 x 2 + 1 = 17 on (64 and 1024 merged)
    assert _numbers(w.text) == [1, 0, 3, 2, 2, 0, 0, 0, 0, 17, 4, 0, 0, 4, 1, 0, 2, 0, 0, 5, 1, 0, 0, 0, 0]
    assert len(w.carried) == 6 and not w.left_out
    scan = openmpi_rules([Choice("scan", 2, 8, "linear", "1"), Choice("scan", 2, 64)], "test")
    assert _numbers(scan.text) == [0] and len(scan.left_out) == 2
    assert "not by message size" in scan.left_out[0][1]
    uniform = openmpi_rules([Choice("scan", 2, 8, "linear", "1"), Choice("scan", 2, 64, "linear", "1")], "test")
    assert _numbers(uniform.text) == [1, 14, 2, 2, 1, 0, 1, 0, 0, 3, 1, 0, 0, 0, 0]
    with pytest.raises(MpiguideError, match="takes an algorithm number, not 'ring'"):
        openmpi_rules([Choice("bcast", 2, 8, "ring", "ring")], "test")


BASE = {"collective=bcast": {"comm_type=intra": {"avg_msg_size<=12288": {"algorithm=MPIR_Bcast_intra_binomial": {}},
                                                 "avg_msg_size=any": {"algorithm=MPIR_Bcast_intra_smp": {}}},
                             "comm_type=inter": {"algorithm=MPIR_Bcast_inter_remote_send_local_bcast": {}}},
        "collective=scan": {"algorithm=MPIR_Scan_intra_recursive_doubling": {}}}
NAMES = {"MPIR_Bcast_intra_binomial", "MPIR_Bcast_intra_smp", "MPIR_Bcast_allcomm_nb", "MPIR_Scan_allcomm_nb",
         "MPIR_Bcast_intra_scatter_ring_allgather"}


def test_mpich_json_from_known_choices():
    choices = [Choice("bcast", 4, 8), Choice("bcast", 4, 1024, "nb", "nb"),
               Choice("bcast", 4, 65536, "scatter_ring_allgather", "scatter_ring_allgather"),
               Choice("bcast", 4, 100000, "made_up", "made_up"), Choice("scan", 4, 8, "nb", "nb")]
    w = mpich_json(choices, BASE, NAMES)
    tree = json.loads(w.text)
    own = BASE["collective=bcast"]["comm_type=intra"]
    assert tree["collective=bcast"]["comm_type=inter"] == BASE["collective=bcast"]["comm_type=inter"]
    # the unknown name falls back to the library's own branch, and merges with nothing after it
    assert tree["collective=bcast"]["comm_type=intra"] == {
        "comm_size<=4": {"avg_msg_size<=8": own, "avg_msg_size<=1024": {"algorithm=MPIR_Bcast_allcomm_nb": {}},
                         "avg_msg_size<=65536": {"algorithm=MPIR_Bcast_intra_scatter_ring_allgather": {}},
                         "avg_msg_size=any": own},
        "comm_size=any": own}
    assert tree["collective=scan"] == {"comm_size<=4": {"algorithm=MPIR_Scan_allcomm_nb": {}},
                                       "comm_size=any": BASE["collective=scan"]}
    assert [(c.name, why) for c, why in w.left_out] == [
        ("made_up", "the library names no selection-file algorithm for made_up")]
    # an algorithm's parameters go with it (MPICH gives the others 0)
    w = mpich_json([Choice("bcast", 4, 8, "nb", "nb", params=(("k", "2"), ("tree_type", "kary")))], BASE, NAMES)
    assert json.loads(w.text)["collective=bcast"]["comm_type=intra"]["comm_size<=4"] == {
        "avg_msg_size=any": {"algorithm=MPIR_Bcast_allcomm_nb": {"k=2": {}, "tree_type=kary": {}}}}


def test_impi_adjust_from_known_choices():
    """Where a collective has a preset chosen, every measured point is written, the library's own choice by the
    fastest preset measured there (Intel MPI's basic logic would take its place otherwise)."""
    choices = [Choice("allreduce", 2, 8, stand_in=("preset3", "3")), Choice("allreduce", 2, 64, "preset7", "7"),
               Choice("allreduce", 2, 1024, "preset7", "7"), Choice("allreduce", 2, 65536, stand_in=("preset7", "7")),
               Choice("allreduce", 4, 8, "preset2", "2"), Choice("bcast", 2, 8, stand_in=("preset1", "1")),
               Choice("scan", 2, 8, "preset1", "1")]
    w = impi_adjust(choices, "test")
    assert w.text.splitlines()[1:] == [
        # 64 to 65536 merged, the last to the end; bcast keeps the library's own selection: no variable
        "I_MPI_ADJUST_ALLREDUCE=3:0-8@2-2;7:9-2147483647@2-2;2:0-2147483647@4-4",
        "I_MPI_ADJUST_SCAN=1:0-2147483647@2-2"]
    assert len(w.carried) == 7 and not w.left_out
    assert [c.name for c in w.carried if c.collective == "allreduce"] == ["preset3", "preset7", "preset7", "preset7",
                                                                          "preset2"]
    # a kept point without a measured preset: the collective keeps the library's selection, its choice left out
    w = impi_adjust([Choice("bcast", 2, 8), Choice("bcast", 2, 64, "preset2", "2")], "test")
    assert w.text.splitlines()[1:] == [] and [c.name for c in w.carried] == [None, None]
    (left,) = w.left_out
    assert left[0].msize == 64 and "replaces the library's own selection" in left[1] and "8 B on 2" in left[1]
    with pytest.raises(MpiguideError, match="takes a preset number, not 'ring'"):
        impi_adjust([Choice("bcast", 2, 8, "ring", "ring")], "test")


def test_placements_of_one_process_count_in_each_format():
    """MPICH's selection keys by processes per node (comm_avg_ppn): each placement its own branch, the most
    processes per node last as `any`. Open MPI's and Intel MPI's formats cannot: what all placements chose is
    written without placement, where they differ the library's own choice, the others left out with why."""
    choices = [Choice("bcast", 4, 8, "nb", "nb", placement="4x1"), Choice("bcast", 4, 1024, placement="4x1"),
               Choice("bcast", 4, 8, placement="2x2"), Choice("bcast", 4, 1024, placement="2x2"),
               Choice("bcast", 4, 8, "nb", "nb", placement="1x4"), Choice("bcast", 4, 1024, "nb", "nb",
                                                                         placement="1x4")]
    w = mpich_json(choices, BASE, NAMES)
    own = BASE["collective=bcast"]["comm_type=intra"]
    nb = {"algorithm=MPIR_Bcast_allcomm_nb": {}}
    assert json.loads(w.text)["collective=bcast"]["comm_type=intra"] == {
        "comm_size<=4": {"comm_avg_ppn<=1": {"avg_msg_size<=8": nb, "avg_msg_size=any": own},
                         "comm_avg_ppn<=2": own, "comm_avg_ppn=any": {"avg_msg_size=any": nb}},
        "comm_size=any": own}
    assert sorted((c.placement, c.msize, c.name) for c in w.carried) == sorted(
        (c.placement, c.msize, c.name) for c in choices) and not w.left_out

    numbers = {"nb": "7"}
    ompi = [Choice(c.collective, c.nprocs, c.msize, c.name, numbers.get(c.name), placement=c.placement)
            for c in choices]
    w = openmpi_rules(ompi, "test")
    assert _numbers(w.text) == [0]  # nowhere did all three placements choose nb
    assert sorted((c.placement, c.msize) for c, _ in w.left_out) == [("1x4", 8), ("1x4", 1024), ("4x1", 8)]
    assert "chose differently (4x1: nb, 2x2: default, 1x4: nb) and Open MPI's format has no condition" in \
        w.left_out[0][1]
    assert {(c.msize, c.name, c.placement) for c in w.carried} == {(8, None, ""), (1024, None, "")}
    agreed = [c for c in ompi if c.msize == 1024] + [Choice("bcast", 4, 8, "nb", "7", placement=p)
                                                      for p in ("4x1", "2x2", "1x4")]
    w = openmpi_rules(agreed, "test")
    assert "8 7 0 0  # nb" not in w.text and "0 7 0 0  # nb" in w.text  # nb from 0 B, the default from 9 B on
    assert {(c.msize, c.name, c.placement) for c in w.carried} == {(8, "nb", ""), (1024, None, "")}

    # Intel MPI: a point where the placements differ has no preset to stand in: the collective is left out
    intel = [Choice("bcast", 2, 8, "preset2", "2", placement="2x1"), Choice("bcast", 2, 8, placement="1x2",
                                                                           stand_in=("preset1", "1"))]
    w = impi_adjust(intel, "test")
    assert w.text.splitlines()[1:] == [] and {c.name for c in w.carried} == {None}
    assert {c.placement for c, _ in w.left_out} == {"2x1"}


def test_an_environment_file_is_read_into_the_launch_environment(tmp_path):
    path = tmp_path / "i_mpi_adjust.env"
    path.write_text("# comment\n\nI_MPI_ADJUST_BCAST=1:0-8@2-2;2:9-16@2-2\n")
    env = {"A": "1", **tuning_formats.env_file_env(str(path))}
    assert tuning_formats.with_env_file(env) == {"A": "1", "I_MPI_ADJUST_BCAST": "1:0-8@2-2;2:9-16@2-2"}
    assert tuning_formats.with_env_file({"A": "1"}) == {"A": "1"}
    path.write_text("I_MPI_ADJUST_BCAST=1\nexport X=2\n")
    with pytest.raises(MpiguideError, match=r"i_mpi_adjust.env:2: not a NAME=VALUE line: 'export X=2'"):
        tuning_formats.with_env_file(env)
    with pytest.raises(MpiguideError, match="cannot read the environment file .*missing.env"):
        tuning_formats.read_env_file(tmp_path / "missing.env")


def test_intel_mpi_says_which_rule_of_its_settings_it_ignores():
    impi = families.get("impi")
    wrong_id = "MPI startup(): Incorrect algorithm: ALLREDUCE=99, will be ignored"
    log = f"[0] MPI startup(): Intel(R) MPI Library\n{wrong_id}\nMPI startup(): Incorrect adjust value: BCAST=1:x-y\n"
    assert impi.ignored_rule(log, "allreduce", "99") == wrong_id
    assert impi.ignored_rule(log, "allreduce", "9") is None  # another rule's id
    assert impi.ignored_rule(log, "bcast", "1").startswith("MPI startup(): Incorrect adjust value: BCAST=")
    assert impi.ignored_rule(log, "gather", "99") is None
    assert families.get("mpich").ignored_rule(log, "allreduce", "99") is None


def test_a_launch_whose_environment_file_is_missing_fails_with_why(tmp_path):
    from mpiguide.core import runner

    x = runner.Launch(id="x", stack="mpich", template="t", phase=runner.MEASURE, run_index=0, nprocs=2,
                      driver="mg_collbench", args=[], raw="raw/x.txt",
                      env={tuning_formats.ENV_FILE: "{run_dir}/native/{stack}/i_mpi_adjust.env"})
    with pytest.raises(MpiguideError, match=f"cannot read the environment file {tmp_path}/native/mpich/"):
        runner.expand_env(tmp_path, x)
    assert runner.expand_env(tmp_path, x, read_files=False) == {
        tuning_formats.ENV_FILE: f"{tmp_path}/native/mpich/i_mpi_adjust.env"}


def test_a_launch_without_its_environment_file_fails_and_the_run_goes_on(mpich_stack, mpich_build, tmp_path):
    from mpiguide.core import runner

    x = runner.Launch(id="x", stack="mpich", template="t", phase=runner.MEASURE, run_index=0, nprocs=2,
                      driver="mg_collbench", args=[], raw="raw/x.txt",
                      env={tuning_formats.ENV_FILE: "{run_dir}/native/{stack}/i_mpi_adjust.env"})
    rd = runner.RunDir(tmp_path)
    with runner.StopSignals() as signals:
        runner.run_launch(rd, x, mpich_stack, launch.LaunchSpec(), 60, signals, lambda why: None)
    assert x.status == runner.FAILED and x.attempts == 0 and not (tmp_path / "raw").exists()
    assert x.message.startswith(f"cannot read the environment file {tmp_path}/native/mpich/i_mpi_adjust.env")


def _run(stack: Stack, coll: str, msize: int | str, env: dict[str, str], out: Path) -> subprocess.CompletedProcess:
    exe = build.build_dir(stack) / "mg_collbench"
    argv = launch.command(launch.LaunchSpec(), stack, P, str(exe), ["--collectives", coll, "--impls", "default",
                                                                    "--sizes", str(msize), "--check-only",
                                                                    "--output", str(out)])
    return subprocess.run(argv, env={**stack.env(), **tuning_formats.with_env_file(env)}, capture_output=True,
                          text=True)


def _canary(stack: Stack) -> tuple[str, str, str]:
    """An algorithm whose use the library shows (its name, its control's value) and what shows it."""
    return ("nb", "nb", "s->size") if stack.family == "mpich" else ("invalid", "99", "MPI_ERR_ARG")


@pytest.mark.parametrize("coll", COLLECTIVES)
def test_the_library_applies_the_written_rules_where_they_start(live_stack, coll, tmp_path):
    if live_stack.family == "impi":
        pytest.skip("Intel MPI shows no algorithm a call ran (test_intel_mpi_accepts_every_rule_written)")
    name, value, shown = _canary(live_stack)
    choices = [Choice(coll, P, BELOW), Choice(coll, P, ABOVE, name, value)]
    if coll == "scan":  # keyed by element size and processes: one rule for every size
        choices = [Choice(coll, P, BELOW, name, value)]
    written = live_stack.adapter.write_tuning(choices, Path(live_stack.prefix), "test")
    assert not written.left_out, written.left_out
    path = tmp_path / live_stack.adapter.tuning_file
    path.write_text(written.text)
    env = live_stack.adapter.tuning_env(str(path))
    if live_stack.family == "mpich":
        env["MPIR_CVAR_COLL_SCHED_DUMP"] = "1"
    for msize, applies in ((BELOW, coll == "scan"), (ABOVE, True)):
        if coll == "scan" and msize == ABOVE:
            continue
        out = tmp_path / f"{msize}.txt"
        res = _run(live_stack, coll, msize, env, out)
        # mg_collbench notes a call the library refuses (Open MPI's MPI_ERR_ARG) as a skip and goes on
        text = res.stdout + res.stderr + out.read_text()
        assert res.returncode == 0, (coll, msize, text[-1500:])
        assert (shown in text) == applies, (coll, msize, text[-1500:])
        assert not rawfile.parse(out).errors


@pytest.mark.parametrize("coll", COLLECTIVES)
def test_intel_mpi_accepts_every_rule_written(live_stack, coll, tmp_path):
    """Every preset Intel MPI lists for a collective, each from a size on: the library reads the settings
    without a word, and the calls give MPI's results on both sides of where a rule starts; a preset it does not
    have it ignores, saying so (what a check launch of mpiguide tune's file looks for)."""
    if live_stack.family != "impi":
        pytest.skip("Intel MPI's format")
    from mpiguide.suites.coll import algorithms

    found = algorithms.algorithms(live_stack, [coll])[coll]
    path = tmp_path / live_stack.adapter.tuning_file
    env = live_stack.adapter.tuning_env(str(path))
    for alg in found:
        path.write_text(live_stack.adapter.write_tuning(
            [Choice(coll, P, BELOW), Choice(coll, P, ABOVE, alg.name, alg.value)], Path(live_stack.prefix),
            "test").text)
        out = tmp_path / f"{alg.name}.txt"
        res = _run(live_stack, coll, f"{BELOW},{ABOVE}", env, out)
        text = res.stdout + res.stderr
        assert res.returncode == 0 and "Incorrect" not in text, (alg.name, text[-1500:])
        assert not rawfile.parse(out).errors, alg.name
    path.write_text(live_stack.adapter.write_tuning([Choice(coll, P, ABOVE, "none", "99")], Path(live_stack.prefix),
                                                    "test").text)
    res = _run(live_stack, coll, f"{ABOVE}", env, tmp_path / "99.txt")
    assert f"Incorrect algorithm: {coll.upper()}=99" in res.stdout + res.stderr


def test_the_written_files_name_only_what_the_library_has(live_stack):
    """Every algorithm the library lists for a collective, chosen at one size, is carried by the file or
    left out with a reason (MPICH: an algorithm its selection file has no name for)."""
    from mpiguide.suites.coll import algorithms

    found = algorithms.algorithms(live_stack, list(COLLECTIVES))
    choices = [Choice(c, P, 1024 * (i + 1), a.name, a.value) for c, algs in found.items()
               for i, a in enumerate(algs)]
    w = live_stack.adapter.write_tuning(choices, Path(live_stack.prefix), "test")
    assert len(w.carried) + len(w.left_out) >= len(choices) - len([c for c in choices if c.collective == "scan"])
    if live_stack.family == "mpich":
        json.loads(w.text)
        assert all("names no selection-file algorithm" in why or "not by message size" in why
                   for _, why in w.left_out)


def test_a_family_without_a_format_says_so(tmp_path):
    with pytest.raises(MpiguideError, match="cannot write the collective tuning format"):
        families.get("other").write_tuning([Choice("bcast", 2, 8)], tmp_path, "test")


def test_each_chosen_algorithm_is_tried_with_the_file_and_the_failing_ones_left_out(live_stack, tmp_path,
                                                                                     monkeypatch):
    """mpiguide tune's files (suites.coll.native) on the installed library: an algorithm the library runs from
    the file stays (MPICH: recursive_multiplying, with its k; Open MPI: ring); one it fails on goes back to the
    library's choice, with why (MPICH: its k_reduce_scatter_allgather, whose k no variable of the library names,
    so that the file gives none, stops with an internal error; Open MPI and Intel MPI: an algorithm number it
    does not have)."""
    from types import SimpleNamespace

    import pandas as pd

    from mpiguide.core import runner
    from mpiguide.suites.coll import algorithms, analysis, native

    mpich, impi = live_stack.family == "mpich", live_stack.family == "impi"
    # MPICH: an algorithm that needs its parameter (k) in the file, where it hangs without it
    good = {"mpich": ("recursive_multiplying",) * 2, "openmpi": ("ring", "4"), "impi": ("preset8", "8")}[
        live_stack.family]
    bad = ("k_reduce_scatter_allgather",) * 2 if mpich else ("invalid", "99")
    # Intel MPI's rules are a variable per collective, and a collective with a failing rule loses its variable
    # (it cannot keep the library's own choice beside a rule): its bad choice is another collective's
    bad_coll = "bcast" if impi else "allreduce"
    listed = {"allreduce": [good], bad_coll: [bad]} if impi else {"allreduce": [good, bad]}
    found = {a.name: a for a in algorithms.algorithms(live_stack, ["allreduce"])["allreduce"]}
    params = {"algorithms": {live_stack.name: {"family": live_stack.family, "collectives": {
        coll: [{"name": n, "value": v, "env": {}, "params": dict(found[n].params) if n in found else {}}
               for n, v in algs] for coll, algs in listed.items()}}}, "np": [P]}
    chosen = pd.DataFrame({"stack": live_stack.name, "nprocs": P, "placement": "",
                           "collective": ["allreduce", bad_coll],
                           "msize": [1026, 65535], "impl": [f"alg:{good[0]}", f"alg:{bad[0]}"],
                           "best": [f"alg:{good[0]}", f"alg:{bad[0]}"]})
    monkeypatch.setattr(analysis, "choose_native", lambda r, threshold: chosen)
    measured = SimpleNamespace(rd=SimpleNamespace(meta={"params": params}))
    rd_v = runner.RunDir(tmp_path / "validate")
    rd_v.path.mkdir()
    rd_v.meta = {"launch": launch.LaunchSpec().to_dict()}
    (path,) = native.write(measured, 0.1, rd_v, "test")
    summary = native.summaries(rd_v)[live_stack.name]
    assert sorted((c["collective"], c["msize"], c["algorithm"]) for c in summary["carried"]) == sorted(
        [("allreduce", 1026, good[0]), (bad_coll, 65535, "default")])
    (left,) = summary["left_out"]
    assert (left["collective"], left["msize"], left["algorithm"]) == (bad_coll, 65535, bad[0])
    # MPICH dies of SIGFPE; Open MPI refuses the call with MPI_ERR_ARG, which mg_collbench notes as a skip; Intel
    # MPI ignores the rule at MPI_Init and says so
    want = {"mpich": "ended with status", "openmpi": "MPI_ERR_ARG", "impi": "Incorrect algorithm: BCAST=99"}[
        live_stack.family]
    assert left["why"].startswith("the library failed with it:") and want in left["why"], left["why"]
    # the file kept names the good algorithm and the library runs it (MPI's results)
    res = _run(live_stack, "allreduce", 1026, live_stack.adapter.tuning_env(str(path)), tmp_path / "after.txt")
    assert res.returncode == 0 and not rawfile.parse(tmp_path / "after.txt").errors
    kept, gone = {"mpich": ("MPIR_Allreduce_intra_recursive_multiplying",
                            "MPIR_Allreduce_intra_k_reduce_scatter_allgather"),
                  "openmpi": (" 4 0 0", " 99 0 0"),
                  "impi": ("I_MPI_ADJUST_ALLREDUCE=8:0-2147483647@3-3", "BCAST")}[live_stack.family]
    assert kept in path.read_text() and gone not in path.read_text()
    if mpich:  # with its parameter, as the library has it set
        assert re.search(r'recursive_multiplying": \{\s*"k=2"', path.read_text())
