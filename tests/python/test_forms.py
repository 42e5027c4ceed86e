"""The forms of a call and the exchanges beyond the datatype paper (issue 45): the collective suite's nonblocking,
persistent and neighbourhood guidelines (COLL-NB, COLL-PERS, COLL-NBR) and the datatype suite's Tests 12 and 13
(the FFT transpose by MPI_Alltoallw, the halo exchange by MPI_Neighbor_alltoallw), judged on recorded raw data with
known outcomes; their plans and options. No test here launches MPI or depends on the machine's speed."""

from __future__ import annotations

import argparse

import pandas as pd
import pytest

from conftest import coll_params, only_row, synthetic_job_run, write_ddt_run
from mpiguide.core import stats
from mpiguide.core.errors import MpiguideError
from mpiguide.suites import SUITES
from mpiguide.suites.coll import analysis as tune
from mpiguide.suites.coll import profiles, selection
from mpiguide.suites.coll import report as tunereport
from mpiguide.suites.coll.catalog import COLLECTIVES, FORMS, NEIGHBORHOODS
from mpiguide.suites.coll.workflow import CollTune
from mpiguide.suites.ddt import expectations as ddt
from mpiguide.suites.ddt import report as ddtreport

COLL = SUITES.get("coll")
DDT = SUITES.get("ddt")
SIZES = [8, 1024, 65536]
CART = "neighbor_allgather_cart"


# ---------------------------------------------------------------- collectives: COLL-NB, COLL-PERS, COLL-NBR

def form_times(stack: str, coll: str, impl: str, m: int, launch: int) -> float:
    """good: the blocking call is the fastest of its forms but the persistent one, which is faster still, and the
    neighbourhood collective beats its point-to-point exchange. bad: the nonblocking form is twice as fast as the
    blocking call, the persistent one twice as slow, the neighbourhood collective three times slower than its
    point-to-point exchange, and the mock-up of allreduce (never chosen over the forms) half as fast."""
    t = 1e-5 * (1 + 0.01 * launch) * (1 + m / 1024)
    factor = {"good": {"nonblocking": 1.5, "persistent": 0.8, "p2p": 2.0, "allreduce_as_reduce_bcast": 2.0},
              "bad": {"nonblocking": 0.5, "persistent": 2.0, "p2p": 1 / 3, "allreduce_as_reduce_bcast": 2.0}}
    return t * factor[stack].get(impl, 1.0)


def write_forms_run(path, times=form_times, stacks=("good", "bad"), runs: int = 5, nrep: int = 4):
    """A finished coll run of allreduce and the Cartesian neighbourhood collective on 2 processes with both forms,
    the raw files as mg_collbench --forms nonblocking,persistent writes them (#@form and #@init notes)."""
    params = coll_params("--collectives", f"allreduce,{CART}", "--sizes", ",".join(map(str, SIZES)), "--np", "2")

    def raw_of(x) -> str:
        coll = x.template.split("-")[0]
        impls = ["default", "p2p"] if coll in NEIGHBORHOODS else ["default", "allreduce_as_reduce_bcast"]
        mpi = tune.mpi_name(coll)
        lines = ["#@mpiguide_raw=1", "#@driver=collbench", "#@nprocs=2", f"#@collectives={coll}"]
        if coll not in NEIGHBORHOODS:
            lines += [f"#@mockup[default]=0 {mpi}", "#@mockup[allreduce_as_reduce_bcast]=5 MPI_Reduce + MPI_Bcast"]
        forms = {"nonblocking": f"COLL-NB MPI_I{mpi[4:].lower()} + MPI_Wait",
                 "persistent": f"COLL-PERS {mpi}_init + MPI_Start + MPI_Wait"}
        if coll in NEIGHBORHOODS:
            forms["p2p"] = "COLL-NBR MPI_Irecv + MPI_Isend + MPI_Waitall"
        lines += [f"#@form[{coll} {impl}]={text}" for impl, text in forms.items()]
        lines.append("collective impl msize rep time_s")
        for m in SIZES:
            lines.append(f"#@init[{coll} persistent {m}]={2e-4:.9e}")
            for impl in [*impls, "nonblocking", "persistent"]:
                t = times(x.stack, coll, impl, m, x.run_index)
                lines += [f"{coll} {impl} {m} {i} {t * (1 + 1e-3 * i):.9e}" for i in range(nrep)]
        return "\n".join([*lines, "#@end=ok"]) + "\n"

    return synthetic_job_run(path, COLL, params, stacks, runs, nrep, raw_of)


@pytest.fixture(scope="module")
def forms_run(tmp_path_factory) -> tune.CollResult:
    from mpiguide.core.runner import RunDir
    return tune.load(RunDir.open(write_forms_run(tmp_path_factory.mktemp("forms") / "measure")))


def test_the_catalog_names_the_forms_and_the_neighbourhoods():
    assert FORMS == {"nonblocking": "COLL-NB", "persistent": "COLL-PERS", "p2p": "COLL-NBR"}
    assert {n: v[0] for n, v in NEIGHBORHOODS.items()} == {CART: "MPI_Neighbor_allgather",
                                                          "neighbor_allgather_complete": "MPI_Neighbor_allgather"}
    assert tune.call_name(CART) == "MPI_Neighbor_allgather (cartesian)"


def test_forms_are_judged_each_in_its_direction(forms_run):
    v = tune.guideline_verdicts(forms_run)
    nb = only_row(v, stack="bad", collective="allreduce", guideline="COLL-NB", msize=1024)
    assert nb["relation"] == "MPI_Allreduce ⪯ MPI_Iallreduce + MPI_Wait"
    assert (nb["verdict"], round(nb["factor"], 6)) == (stats.VIOLATED, 2.0)
    pers = only_row(v, stack="bad", collective="allreduce", guideline="COLL-PERS", msize=1024)
    assert pers["relation"] == "MPI_Allreduce_init + MPI_Start + MPI_Wait ⪯ MPI_Allreduce"
    assert (pers["impl"], pers["verdict"], round(pers["factor"], 6)) == ("persistent", stats.VIOLATED, 2.0)
    nbr = only_row(v, stack="bad", collective=CART, guideline="COLL-NBR", msize=65536)
    assert nbr["relation"] == "MPI_Neighbor_allgather (cartesian) ⪯ MPI_Irecv + MPI_Isend + MPI_Waitall"
    assert (nbr["verdict"], round(nbr["factor"], 6)) == (stats.VIOLATED, 3.0)
    good = v[(v["stack"] == "good") & v["guideline"].isin(tune.FORM_GUIDELINES)]
    assert len(good) == 3 * len(SIZES) + 2 * len(SIZES) and set(good["verdict"]) == {stats.PASS}
    # the persistent form 20% faster than the blocking call: the factor is its time over the call's
    assert set(good[good["guideline"] == "COLL-PERS"]["factor"].round(6)) == {0.8}


def test_forms_are_one_more_family_of_the_matrix_and_counts(forms_run):
    v = tune.guideline_verdicts(forms_run)
    m = tune.matrix(v)
    rows = {g for g, *_ in m.index}
    assert {"COLL-NB", "COLL-PERS", "COLL-NBR", "COLL-GL5"} <= rows
    assert m.loc[("COLL-NB", "MPI_Allreduce ⪯ MPI_Iallreduce + MPI_Wait", 2), "bad"].startswith("3/3: 8 B x2.00")
    counts = tune.violation_counts(v)
    assert counts.loc[("bad", "COLL-NBR"), stats.VIOLATED] == 3
    fm = tune.forms_matrix(v)
    assert sorted(fm.columns) == ["bad", "good"]
    assert list(dict.fromkeys(fm.index.get_level_values("guideline"))) == ["COLL-NB", "COLL-PERS", "COLL-NBR"]
    cell = fm.loc[("COLL-PERS", "MPI_Allreduce_init + MPI_Start + MPI_Wait ⪯ MPI_Allreduce", 2), "bad"]
    assert cell.startswith("3 violated, 0 pass, 0 undecided; worst x2.00 at ")
    assert fm.loc[("COLL-NB", "MPI_Allreduce ⪯ MPI_Iallreduce + MPI_Wait", 2), "good"].startswith("0 violated, 3 pass")


def test_no_form_is_ever_chosen_for_a_profile(forms_run, tmp_path):
    """The nonblocking form is twice as fast as the blocking call on `bad`, the p2p exchange three times: the
    library cannot replace a blocking call by either, so the profiles keep the native call (the only mock-up
    is slower), and the neighbourhood collective gets no choice at all."""
    chosen = tune.choose(forms_run, 0.1)
    assert set(chosen["collective"]) == {"allreduce"}
    assert set(chosen["impl"]) == {tune.DEFAULT} and set(chosen["best"]) == {"allreduce_as_reduce_bcast"}
    assert profiles.write_profiles(chosen, tmp_path / "p", "test") == []
    assert not tune._mockup("nonblocking") and not tune._mockup("p2p") and tune._mockup("allreduce_as_reduce_bcast")


def test_the_persistent_setup_is_reported_in_calls(forms_run):
    s = tune.persistent_setup(forms_run)
    row = only_row(s, stack="bad", collective="allreduce", msize=1024)
    blocking = 1e-5 * 2 * (1 + 0.01 * 2)  # the launches' mean factor 1.02, 1024 B: twice the base
    assert row["init_s"] == pytest.approx(2e-4)
    assert row["init_in_calls"] == pytest.approx(2e-4 / blocking, rel=0.01)
    assert pd.isna(row["break_even_calls"])  # the persistent form is slower: it never earns its init back
    good = only_row(s, stack="good", collective="allreduce", msize=1024)
    assert good["break_even_calls"] == pytest.approx(2e-4 / (0.2 * blocking), rel=0.01)


def test_the_report_shows_the_forms(forms_run, tmp_path):
    v = tune.guideline_verdicts(forms_run)
    html = tunereport.write_coll(forms_run, v, tmp_path).read_text()
    assert "The forms of the calls: nonblocking, persistent, neighbourhood" in html
    assert "What the persistent form&#x27;s MPI_X_init costs" in html or "MPI_X_init costs" in html
    assert (tmp_path / "forms.csv").exists() and (tmp_path / "persistent_init.csv").exists()
    lines = tunereport.console_summary(v)
    assert any(line.startswith("bad: 15 violation(s)") and "COLL-NB 6" in line and "COLL-NBR 3" in line
               for line in lines), lines


def test_forms_and_neighbourhoods_are_planned_but_never_validated():
    params = coll_params("--sizes", "8", "--np", "2")
    assert params["collectives"] == [*COLLECTIVES, *NEIGHBORHOODS] and params["forms"] == ["nonblocking",
                                                                                           "persistent"]
    t = {x.key: x for x in COLL.launches(params)}
    args = t["allreduce-p2"].args
    assert args[args.index("--forms") + 1] == "nonblocking,persistent"
    assert "--forms" not in coll_params("--sizes", "8", "--np", "2", "--forms", "none")["forms"]
    v = CollTune(COLL).validation_params(params, None, {"threshold": 0.1})
    assert v["forms"] == [] and v["collectives"] == list(COLLECTIVES)
    assert all("--forms" not in x.args for x in COLL.launches(v))


def test_the_algorithms_launches_measure_no_form():
    params = coll_params("--collectives", "bcast", "--sizes", "8", "--np", "2")
    params["algorithms"] = {"s": {"collectives": {"bcast": [{"name": "ring", "env": {"X": "1"}}]},
                                  "refusal_env": {}}}
    main, *algs = COLL.launches(params)
    assert "--forms" in main.args and algs and all("--forms" not in a.args for a in algs)
    assert algs[0].args[-3:] == ["--impls", "default", "--capture-output"]
    assert selection.impl_template("bcast", 2, "s", "nonblocking", None) == main.key


def test_bad_forms_are_refused():
    with pytest.raises(MpiguideError, match="form"):
        coll_params("--forms", "nonblocking,eager")


# ---------------------------------------------------------------- datatypes: Tests 12 and 13

def ddt_params(*argv: str) -> dict:
    p = argparse.ArgumentParser()
    DDT.add_arguments(p)
    p.add_argument("--placement", dest="placement")
    return DDT.params(p.parse_args(list(argv)))


def test_the_exchange_tests_are_planned_for_their_driver():
    params = ddt_params("--tests", "12-13", "--np", "2,4", "--grid", "quick")
    e = {x["key"]: x for x in params["entries"]}
    assert sorted(e) == ["t12-transpose-np2", "t12-transpose-np4", "t13-halo-np2", "t13-halo-np4"]
    assert e["t13-halo-np4"]["modes"] == list(ddt.EXCHANGE_MODES) and e["t12-transpose-np2"]["A"] == [2]
    t = {x.key: x for x in DDT.launches(params)}["t12-transpose-np4"]
    assert (t.driver, t.nprocs) == ("mg_ddtexchange", 4) and "--layouts" not in t.args
    assert t.args[t.args.index("--sizes") + 1] == "131072,1048576"
    assert "p2p" not in t.args[t.args.index("--modes") + 1]  # the transpose has no point-to-point comparison


def test_the_default_tests_stay_the_papers():
    params = ddt_params("--grid", "quick", "--np", "2")
    assert params["tests"] == list(range(1, 12))
    assert all(e["driver"] == "mg_ddtbench" for e in params["entries"])
    assert ddt_params("--tests", "all", "--np", "2")["tests"] == list(range(1, 14))


def test_patterns_and_modes_keep_each_test_to_its_own():
    params = ddt_params("--tests", "3,12,13", "--patterns", "transpose,bcast", "--modes", "datatype,manual,pack",
                        "--np", "2")
    assert {(e["test"], e["pattern"]) for e in params["entries"]} == {(3, "bcast"), (12, "transpose")}
    t12 = next(e for e in params["entries"] if e["test"] == 12)
    assert t12["modes"] == ["datatype", "manual", "pack"]
    assert {c["guideline"] for c in t12["comparisons"]} == {"DT-GL2/3-MAN", "DT-GL2/3"}


def test_ddt_tune_measures_each_test_with_the_modes_it_tunes():
    """ddt tune: the paper's tests with the four modes, the exchanges with the library's strategies and the
    packing they are compared with (their nonblocking, persistent and point-to-point forms are no strategy)."""
    p = argparse.ArgumentParser()
    DDT.add_arguments(p)
    args = p.parse_args(["--tests", "3,12", "--np", "2"])
    args.every_mode = True
    modes = {e["test"]: e["modes"] for e in DDT.params(args)["entries"]}
    assert modes == {3: ["datatype", "pack", "engine", "normalized"],
                     12: ["datatype", "manual", "pack", "engine", "normalized"]}


def exchange_times(stack, test, layout, mode, A, m, launch, placement=None, pattern=None):
    """good: the subarray call is the fastest blocking way, its persistent form faster. bad: the call is 2.5x
    slower than packing by hand (DT-GL2/3-MAN), the nonblocking form 2x faster than the blocking call (COLL-NB),
    the persistent form 1.5x slower (COLL-PERS), the point-to-point messages 3x faster (COLL-NBR, halo only);
    MPI_Pack, the engine and the normalized type as fast as the call."""
    t = 1e-4 * (1 + 0.01 * launch) * (1 + m / 1e6)
    if stack == "good":
        return t * {"persistent": 0.9}.get(mode, 1.3 if mode != "datatype" else 1.0)
    return t * {"datatype": 2.5, "manual": 1.0, "nonblocking": 1.25, "persistent": 3.75, "p2p": 2.5 / 3}.get(mode, 2.5)


@pytest.fixture(scope="module")
def exchange_run(tmp_path_factory) -> ddtreport.DdtResult:
    from mpiguide.core.runner import RunDir
    params = ddt_params("--tests", "12-13", "--grid", "quick", "--np", "2")
    path = write_ddt_run(tmp_path_factory.mktemp("xchg") / "run", params, exchange_times, stacks=("good", "bad"))
    return ddtreport.load([RunDir.open(path)])


def test_the_exchange_tests_are_judged(exchange_run):
    v = exchange_run.verdicts
    man = only_row(v, stack="bad", test=12, guideline="DT-GL2/3-MAN", A=2, m=131072)
    assert (man["comparison"], man["verdict"], round(man["factor"], 6)) == ("pencils ⪯ pencils [manual]",
                                                                         stats.VIOLATED, 2.5)
    nb = only_row(v, stack="bad", test=13, guideline="COLL-NB", A=3, m=1048576)
    assert (nb["verdict"], round(nb["factor"], 6)) == (stats.VIOLATED, 2.0)
    pers = only_row(v, stack="bad", test=13, guideline="COLL-PERS", A=2, m=131072)
    assert (pers["compared_mode"], pers["reference_mode"], pers["verdict"], round(pers["factor"], 6)) == (
        "persistent", "datatype", stats.VIOLATED, 1.5)
    nbr = only_row(v, stack="bad", test=13, guideline="COLL-NBR", A=2, m=131072)
    assert (nbr["comparison"], nbr["verdict"], round(nbr["factor"], 6)) == ("halo ⪯ halo [p2p]", stats.VIOLATED, 3.0)
    assert set(v[v["test"] == 12]["guideline"]) == {"DT-GL2/3-MAN", "DT-GL2/3", "DT-GL2/3-ENG", "DT-GL4-NORM",
                                                   "COLL-NB", "COLL-PERS"}
    good = v[v["stack"] == "good"]
    assert set(good["verdict"]) == {stats.PASS}
    assert only_row(v, stack="bad", test=12, guideline="DT-GL2/3", A=2, m=131072)["verdict"] == stats.PASS


def test_the_exchange_tests_report(exchange_run, tmp_path):
    html = ddtreport.write(exchange_run, tmp_path).read_text()
    assert "Test 12: 3D FFT transpose: MPI_Alltoallw of subarrays (beyond the paper: Dalcin, Mortensen and Keyes " \
           "2019)" in html
    assert "Sources found" in html
    m = ddtreport.matrix(exchange_run)
    assert m.loc[(13, "COLL-NBR", "halo ⪯ halo [p2p]", "halo", 2, "1x2", 131072), "bad"].startswith("VIOLATED 2/2")
    assert any(p.name.startswith("t12-transpose-np2-m131072-") for p in (tmp_path / "plots").iterdir())
