"""One source of truth across C and Python: the catalogs the Python side reads from the C sources are what the
built drivers print with --list (their catalogs, defaults and options). A test here fails as soon as the two
drift apart."""

from __future__ import annotations

import pytest

from mpiguide.cli import build_parser
from mpiguide.core import runner
from mpiguide.core.catalog import ESTIMATE_DEFAULTS, LAYOUT_NAMES, c_table, driver_list
from mpiguide.core.errors import MpiguideError
from mpiguide.core.options import int_list, parse_sizes
from mpiguide.front.commands import measurement_settings
from mpiguide.suites import SUITES
from mpiguide.suites import apps as apps_suite
from mpiguide.suites import coll as coll_suite
from mpiguide.suites import dtbench as dtbench_suite
from mpiguide.suites import pingpong as pingpong_suite
from mpiguide.suites.apps import job as apps
from mpiguide.suites.coll.catalog import COLLECTIVES, FORMS, MOCKUPS, NEIGHBORHOODS, POOL_DEFAULTS
from mpiguide.suites.ddt import expectations as ddt
from mpiguide.suites.dtbench import report as dtreport

ESTIMATING_DRIVERS = ("mg_pingpong", "mg_dtbench", "mg_ddtbench", "mg_ddtexchange", "mg_collbench", "mg_callbench")
# What a suite cannot plan without: calls measures a record's calls, app runs a user's program
VEC = "vector(count=4, block=2, stride=3, int)"
RECORD = ("#@mpiguide_record=1\n#@library_version=Fake MPI 1.0\n#@nprocs=2\n#@mode=off\n#@clock=tsc\n"
          f"#@type[t0.0]={VEC}\n#@type[t1.0]={VEC}\n"
          "rank op comm_size bytes impl strategy calls seconds send_type recv_type datatype reduce_op\n"
          "0 MPI_Send 2 32 - native 10 0.1 t0.0 - - -\n1 MPI_Recv 2 32 - native 10 0.3 - t1.0 - -\n#@end=ok\n")


def required_args(suite: str, tmp_path) -> list[str]:
    if suite == "calls":
        (tmp_path / "record.txt").write_text(RECORD)
        return ["--record", str(tmp_path / "record.txt")]
    if suite == "app":
        return ["--sides", "native", "--", "/bin/true"]
    return []


@pytest.fixture(scope="module")
def lists(mpich_stack, mpich_build) -> dict[str, dict]:
    drivers = (*ESTIMATING_DRIVERS, "mg_stencil", "mg_dtexplain")
    return {d: driver_list(mpich_stack, d) for d in drivers}


def _bytes(text: str) -> int:
    """A pool size as the Python side writes it (64M, 256k)."""
    return parse_sizes(text.lower())[0]


def test_every_driver_names_itself(lists):
    assert {d: v["driver"] for d, v in lists.items()} == {d: d for d in lists}


@pytest.mark.parametrize("driver", ESTIMATING_DRIVERS)
def test_measurement_defaults(lists, driver):
    assert lists[driver]["measurement"] == {"sync": "barrier", "nrep": "rule", **ESTIMATE_DEFAULTS}


def test_layout_catalog(lists):
    for driver in ("mg_dtbench", "mg_ddtbench", "mg_dtexplain"):
        assert tuple(lists[driver]["layouts"]) == LAYOUT_NAMES, driver


def test_pingpong(lists):
    pp = lists["mg_pingpong"]
    assert tuple(pp["variants"]) == pingpong_suite.VARIANTS
    assert pp["datatypes"] == pingpong_suite.DATATYPES


def test_engine_bench(lists):
    dt = lists["mg_dtbench"]
    assert tuple(dt["methods"]) == dtreport.METHODS and tuple(dt["directions"]) == dtreport.DIRECTIONS
    assert set(dtbench_suite.BASIC_TYPES) <= set(dt["types"])
    assert dt["defaults"]["A"] == int_list(dtbench_suite.DEFAULT_A, "A")
    assert dt["defaults"]["sizes"] == int_list(dtbench_suite.DEFAULT_SIZES, "sizes")
    assert dt["defaults"]["commit_blocks"] == int_list(dtbench_suite.DEFAULT_COMMIT, "commit")
    assert set(dtreport.HARD) <= set(LAYOUT_NAMES)


def test_expectation_tests(lists):
    d = lists["mg_ddtbench"]
    assert tuple(d["patterns"]) == ddt.PATTERNS and tuple(d["modes"]) == ddt.MODES
    assert d["types"] == ddt.BASIC_TYPES


def test_exchange_tests(lists):
    """Tests 12 and 13: mg_ddtexchange's patterns, their layout column, modes, element types and default grids."""
    x = lists["mg_ddtexchange"]
    assert tuple(x["patterns"]) == ddt.EXCHANGE_PATTERNS and tuple(x["modes"]) == ddt.EXCHANGE_MODES
    assert dict(zip(x["patterns"], x["layouts"], strict=True)) == ddt.EXCHANGE_LAYOUTS
    assert x["types"] == ddt.BASIC_TYPES and x["persistent_built"] is True  # MPICH 4+ has MPI-4's _init calls
    for n in (12, 13):
        t = ddt.TESTS[n]
        (pattern,) = t.paper.patterns
        assert list(t.paper.A) == x["defaults"]["A"][pattern] and list(t.paper.sizes) == x["defaults"]["sizes"]
        assert set(t.modes) <= set(x["modes"]) and t.layouts == (ddt.EXCHANGE_LAYOUTS[pattern],)


def test_collectives_and_library_defaults(lists):
    c = lists["mg_collbench"]
    assert tuple(x["name"] for x in c["collectives"]) == COLLECTIVES
    assert all(x["mpi_name"] == "MPI_" + x["name"].capitalize() for x in c["collectives"])
    numbers = sorted(m["guideline"] for x in c["collectives"] for m in x["mockups"])
    assert numbers == list(range(1, 23))  # the 22 mock-ups of Hunold and Carpen-Amarie (2018), each once
    assert {x["name"]: tuple((m["name"], m["guideline"], m["formula"]) for m in x["mockups"])
            for x in c["collectives"]} == MOCKUPS
    assert c["datatypes"] == coll_suite.DATATYPES and tuple(c["ops"]) == coll_suite.OPS
    assert {x["name"]: (x["mpi_name"], x["topology"]) for x in c["neighborhoods"]} == NEIGHBORHOODS
    assert {f["name"]: f["guideline"] for f in c["forms"]} == FORMS and c["persistent_built"] is True
    assert c["defaults"]["forms"] == "none"  # the suite asks for them (--forms), simulations do not
    lib = c["library_defaults"]
    assert (lib["msg_pool"], lib["int_pool"]) == (_bytes(POOL_DEFAULTS["msg_pool"]), _bytes(POOL_DEFAULTS["int_pool"]))


def test_stencil_applications(lists):
    s = lists["mg_stencil"]
    assert (tuple(s["apps"]), tuple(s["packings"]), tuple(s["modes"])) == (apps.APPS, apps.PACKINGS, apps.MODES)
    assert s["measurement"] == {"sync": "barrier", "nrep": apps.DEFAULT_NREP}
    assert s["defaults"]["nrep"] == apps_suite.AppsSuite.fixed_nrep


@pytest.mark.parametrize("suite", [s.name for s in SUITES])
def test_every_option_a_suite_passes_is_one_its_driver_lists(lists, suite, tmp_path):
    """The drivers' options table (their --list "options", also their --help) is what the Python side may pass:
    every option in the launches a suite plans (with the nrep estimation, whose options are the most). A user's
    program (the app suite) takes its own arguments, not ours."""
    s = SUITES.get(suite)
    nrep = [] if s.fixed_nrep else ["--nrep", "estimate"]
    args = build_parser().parse_args(["run", suite, *nrep, *required_args(suite, tmp_path)])
    launches = runner.plan(s, s.params(args), ["mpich"], 1, measurement_settings(args, s))
    assert launches, suite
    for x in launches:
        if x.program:
            continue
        known = {o["name"] for o in lists[x.driver]["options"]}
        passed = {a for a in x.args if a.startswith("--")} | {"--output"}  # the runner adds these
        passed |= {"--t1"} if x.needs_t1 else set()
        assert passed <= known, f"{x.driver} does not list {sorted(passed - known)}"


def test_a_c_table_that_changed_shape_is_named():
    assert c_table("src/x.c", r'\{"([a-z]+)", (\d+)', "things", text='{"ab", 1, "f"}, {"cd", 22,') == [
        ("ab", "1"), ("cd", "22")]
    with pytest.raises(MpiguideError, match=r"found no things in src/x.c: its table no longer has the form"):
        c_table("src/x.c", r'\{"([a-z]+)", (\d+)', "things", text="{ab, 1}")
    with pytest.raises(MpiguideError, match=r"cannot read things from .*src/nothing.c"):
        c_table("src/nothing.c", "x", "things")
