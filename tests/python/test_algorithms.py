"""The collective algorithms each MPI library lists for itself (MPI_T, through mg_mpit): the families' readers on
fixture listings, their errors on listings that do not read, and the live MPICH and Open MPI libraries."""

from __future__ import annotations

import json
import subprocess

import pytest

from mpiguide.core import build, families, launch, rawfile
from mpiguide.core.errors import MpiguideError
from mpiguide.core.stacks import Stack
from mpiguide.suites.coll import algorithms
from mpiguide.suites.coll.catalog import COLLECTIVES

# As MPICH 5.0.2 describes the variable (MPI_T_cvar_get_info), no enumeration attached.
MPICH_BCAST = {
    "name": "MPIR_CVAR_BCAST_INTRA_ALGORITHM", "datatype": "int",
    "description": "Variable to select bcast algorithm\n"
                   "auto - Internal algorithm selection (can be overridden with "
                   "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE)\n"
                   "binomial                                - Force Binomial Tree\n"
                   "nb                                      - Force nonblocking algorithm\n"
                   "scatter_recursive_doubling_allgather    - Force Scatter Recursive-Doubling Allgather\n"
                   "tree                                    - Force tree-based algorithm",
}
# As Open MPI 5.0.11 gives it: an enumeration whose 0 is the component's own choice.
OMPI_SCAN = {
    "name": "coll_tuned_scan_algorithm", "datatype": "int", "description": "Which scan algorithm is used.",
    "enum": [{"value": 0, "name": "ignore"}, {"value": 1, "name": "linear"},
             {"value": 2, "name": "recursive_doubling"}],
}

# As Intel MPI 2021.18 describes it: no enumeration; the range of preset ids and the environment variable's name
# in the description.
IMPI_SCAN = {
    "name": "MPIR_CVAR_USE_SCAN", "datatype": "char",
    "description": "Control selection of MPI_Scan algorithm presets.$ Arguments$ <presetid> - Preset identifier$ "
                   "range: 0-3 @Alias:# I_MPI_ADJUST_SCAN @Default:# -1",
}
IMPI_SCAN_LIST = {"name": "MPIR_CVAR_USE_SCAN_LIST", "description": "@Alias:# I_MPI_ADJUST_SCAN_LIST @Default:# -1"}


def test_mpich_reads_the_choices_of_the_description():
    algs = families.get("mpich").algorithms([MPICH_BCAST], "bcast")
    assert [a.name for a in algs] == ["binomial", "nb", "scatter_recursive_doubling_allgather", "tree"]
    assert all(a.collective == "bcast" and a.value == a.name for a in algs)
    assert algs[0].env == {"MPIR_CVAR_BCAST_INTRA_ALGORITHM": "binomial"}
    assert all(a.params == () for a in algs)


def test_mpich_parameters_are_the_variables_named_after_the_algorithm():
    """What a selection file must give an algorithm: the values of MPIR_CVAR_<COLL>_<ALGORITHM>_* (KVAL: k);
    a variable without a value (not readable, or bound) is no parameter."""
    cvars = [MPICH_BCAST, {"name": "MPIR_CVAR_BCAST_TREE_KVAL", "value": 2},
             {"name": "MPIR_CVAR_BCAST_TREE_TYPE", "value": "knomial_1"},
             {"name": "MPIR_CVAR_BCAST_TREE_PIPELINE_CHUNK_SIZE"},
             {"name": "MPIR_CVAR_IBCAST_TREE_KVAL", "value": 4}, {"name": "MPIR_CVAR_BCAST_NB_X", "value": 1}]
    algs = {a.name: a for a in families.get("mpich").algorithms(cvars, "bcast")}
    assert algs["tree"].params == (("k", "2"), ("type", "knomial_1"))
    assert algs["nb"].params == (("x", "1"),) and algs["binomial"].params == ()


def test_openmpi_reads_the_enumeration_and_needs_dynamic_rules():
    algs = families.get("openmpi").algorithms([OMPI_SCAN], "scan")
    assert [(a.name, a.value) for a in algs] == [("linear", "1"), ("recursive_doubling", "2")]
    assert algs[1].env == {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_scan_algorithm": "2"}


def test_intel_mpi_reads_the_range_of_preset_ids():
    algs = families.get("impi").algorithms([IMPI_SCAN_LIST, IMPI_SCAN], "scan")
    assert [(a.name, a.value) for a in algs] == [("preset1", "1"), ("preset2", "2"), ("preset3", "3")]
    assert algs[2].env == {"I_MPI_ADJUST_SCAN": "3"}


@pytest.mark.parametrize(("family", "cvars", "collective", "message"), [
    ("mpich", [MPICH_BCAST], "scan", "lists no control variable MPIR_CVAR_SCAN_INTRA_ALGORITHM"),
    ("mpich", [{**MPICH_BCAST, "description": "Variable to select bcast algorithm"}], "bcast",
     "MPIR_CVAR_BCAST_INTRA_ALGORITHM: its description lists no choices"),
    ("openmpi", [OMPI_SCAN], "bcast", "lists no control variable coll_tuned_bcast_algorithm"),
    ("openmpi", [{**OMPI_SCAN, "enum": []}], "scan", "coll_tuned_scan_algorithm: the library gives no enumeration"),
    ("openmpi", [{**OMPI_SCAN, "enum": [{"name": "linear"}]}], "scan", "gives no enumeration"),
    ("openmpi", [{**OMPI_SCAN, "enum": [{"value": "one", "name": "linear"}]}], "scan", "gives no enumeration"),
    ("impi", [IMPI_SCAN_LIST], "scan", "lists no control variable for I_MPI_ADJUST_SCAN"),
    ("impi", [IMPI_SCAN], "bcast", "lists no control variable for I_MPI_ADJUST_BCAST"),
    ("impi", [{**IMPI_SCAN, "description": "Control selection. @Alias:# I_MPI_ADJUST_SCAN"}], "scan",
     "gives no range of preset ids"),
    ("impi", [{**IMPI_SCAN, "description": "range: 0-0 @Alias:# I_MPI_ADJUST_SCAN"}], "scan",
     "gives no range of preset ids"),
    ("other", [], "bcast", "cannot list the collective algorithms of an MPI of family 'other'"),
])
def test_a_listing_that_does_not_read_is_an_error_that_names_it(family, cvars, collective, message):
    with pytest.raises(MpiguideError, match=message):
        families.get(family).algorithms(cvars, collective)


def test_unknown_collectives_are_refused_before_anything_runs():
    stack = Stack(name="x", family="mpich", prefix="/nonexistent", source="prefix")
    with pytest.raises(MpiguideError, match="unknown collective.s. bcst: choose from allgather"):
        algorithms.algorithms(stack, ["bcast", "bcst"], cvars=[MPICH_BCAST])


def test_console_and_json_say_how_an_algorithm_is_forced():
    mpich = Stack(name="m", family="mpich", prefix="/nonexistent", source="prefix")
    ompi = Stack(name="o", family="openmpi", prefix="/nonexistent", source="prefix")
    found_m = algorithms.algorithms(mpich, ["bcast"], cvars=[MPICH_BCAST])
    found_o = algorithms.algorithms(ompi, ["scan"], cvars=[OMPI_SCAN])
    text = "\n".join(algorithms.console_lines(mpich, found_m) + algorithms.console_lines(ompi, found_o))
    assert "bcast: binomial, nb, scatter_recursive_doubling_allgather, tree" in text
    assert "forced by: MPIR_CVAR_BCAST_INTRA_ALGORITHM=<name>" in text
    assert "scan: linear (1), recursive_doubling (2)" in text
    assert "forced by: OMPI_MCA_coll_tuned_use_dynamic_rules=1 OMPI_MCA_coll_tuned_scan_algorithm=<number>" in text
    data = json.loads(algorithms.to_json({"o": found_o}))
    assert data["o"]["scan"][0] == {"name": "linear", "value": "1",
                                    "env": {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                                            "OMPI_MCA_coll_tuned_scan_algorithm": "1"}, "params": {}}


# What each library lists for certain (names both have had for many releases).
KNOWN = {"mpich": {"bcast": "binomial", "allreduce": "recursive_doubling", "alltoall": "pairwise"},
         "openmpi": {"bcast": "binomial", "allreduce": "recursive_doubling", "alltoall": "pairwise"},
         "impi": {"bcast": "preset1", "allreduce": "preset2", "scan": "preset1"}}


def test_the_live_libraries_list_every_collective(live_stack, cli):
    found = algorithms.algorithms(live_stack, list(COLLECTIVES))
    assert set(found) == set(COLLECTIVES) and all(found[c] for c in COLLECTIVES)
    for coll, name in KNOWN[live_stack.family].items():
        assert name in [a.name for a in found[coll]], (coll, [a.name for a in found[coll]])
    listing = algorithms.listing(live_stack)
    assert listing["driver"] == "mg_mpit" and listing["library_version"].strip()
    res = cli(["algorithms", "--stacks", live_stack.name, "--collectives", "bcast,scan", "--json"])
    assert res.rc == 0, res.text
    data = json.loads(res.out)
    assert list(data[live_stack.name]) == ["bcast", "scan"]
    assert [a["name"] for a in data[live_stack.name]["bcast"]] == [a.name for a in found["bcast"]]


def test_every_forced_allreduce_algorithm_gives_what_mpi_defines(live_stack, tmp_path):
    """Each algorithm the library lists for MPI_Allreduce, forced as a COLL-SEL launch forces it, on 3 processes
    (not a power of two) and at counts below, at and above the process count: mg_collbench compares every
    result with MPI's definition of the call (an int sum and a double max, exact in any order) and would exit
    with 3 and an error note where one differs."""
    found = algorithms.algorithms(live_stack, ["allreduce"])["allreduce"]
    assert found
    exe = build.build_dir(live_stack) / "mg_collbench"
    for alg in found:
        env = {**live_stack.env(), **alg.env, **dict(live_stack.adapter.refusal_env)}
        for dtype, op in (("int", "sum"), ("double", "max")):
            out = tmp_path / f"{alg.name}-{dtype}.txt"
            argv = launch.command(launch.LaunchSpec(), live_stack, 3, str(exe),
                                  ["--collectives", "allreduce", "--impls", "default", "--datatype", dtype, "--op", op,
                                   "--sizes", "8,24,48000", "--check-only", "--capture-output", "--output", str(out)])
            res = subprocess.run(argv, env=env, capture_output=True, text=True)
            assert res.returncode == 0, (alg.name, dtype, res.stdout[-2000:], res.stderr[-2000:])
            raw = rawfile.parse(out)
            assert raw.complete and not raw.errors, (alg.name, dtype, raw.errors)


def test_a_forced_algorithm_the_library_refuses_is_a_skip_not_a_failed_launch(live_stack, tmp_path):
    """Each allgather algorithm forced on 4 processes: the launch ends well, and every size either gives MPI's
    result or is skipped with the library's words (Open MPI refuses two_proc, meant for 2 processes, with
    MPI_ERR_UNSUPPORTED_OPERATION)."""
    found = algorithms.algorithms(live_stack, ["allgather"])["allgather"]
    exe = build.build_dir(live_stack) / "mg_collbench"
    skipped = {}
    for alg in found:
        out = tmp_path / f"{alg.name}.txt"
        argv = launch.command(launch.LaunchSpec(), live_stack, 4, str(exe),
                              ["--collectives", "allgather", "--impls", "default", "--sizes", "8,4096",
                               "--check-only", "--output", str(out)])
        res = subprocess.run(argv, env={**live_stack.env(), **alg.env}, capture_output=True, text=True)
        assert res.returncode == 0, (alg.name, res.stderr[-1500:])
        raw = rawfile.parse(out)
        assert raw.complete and not raw.errors, (alg.name, raw.errors)
        skipped[alg.name] = raw.notes.get("skip", {})
    if live_stack.family == "openmpi":
        assert set(skipped["two_proc"]) == {"allgather default 8", "allgather default 4096"}
        assert all("MPI_ERR_UNSUPPORTED_OPERATION" in why for why in skipped["two_proc"].values())
