"""The suite protocol and the registry: every suite implements the protocol, one that does not is refused, and
a suite the CLI has never heard of runs, resumes and reports through the same commands."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from conftest import read_launches, run_cli, synthetic_meta
from mpiguide import cli
from mpiguide.core import runner
from mpiguide.core.measurements import Measured
from mpiguide.core.suite import LaunchTemplate, Registry, Report, Suite, check_suite
from mpiguide.suites import SUITES


def test_every_registered_suite_implements_the_protocol():
    assert SUITES.names() == ["pingpong", "dtbench", "ddt", "coll", "apps", "calls", "app"]
    for suite in SUITES:
        assert check_suite(suite) is suite


@pytest.mark.parametrize("name", SUITES.names())
def test_every_suite_is_a_job_of_mpiguide_run(name, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", name, "--help"])
    assert exc.value.code == 0
    assert SUITES.get(name).title.split()[0] in " ".join(capsys.readouterr().out.split())


class Toy(Suite):
    """A suite of one ping-pong launch whose report counts the repetitions it got."""

    name = "toy"
    title = "Toy suite"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--size", type=int, default=8)

    def params(self, args: argparse.Namespace) -> dict:
        return {"size": args.size}

    def launches(self, params: dict) -> list[LaunchTemplate]:
        return [LaunchTemplate("pp", "mg_pingpong", 2, ["--sizes", str(params["size"]), "--variants", "sendrecv"])]

    def report(self, runs: list[runner.RunDir], out: Path) -> Report:
        rows, _ = Measured.load(runs[0]).tables()
        path = out / "report.html"
        path.write_text(f"<p>{len(rows)} repetitions</p>")
        return Report(path, [f"toy: {len(rows)} repetitions"])


def test_a_suite_that_does_not_implement_the_protocol_is_refused():
    class NoReport(Suite):
        name, title = "noreport", "No report"

        def add_arguments(self, parser):
            pass

        def params(self, args):
            return {}

        def launches(self, params):
            return []

    with pytest.raises(TypeError, match="report"):
        NoReport()
    with pytest.raises(TypeError, match="is not a Suite"):
        check_suite(object())
    bad = Toy()
    bad.name = "Bad Name"
    with pytest.raises(TypeError, match="name"):
        check_suite(bad)
    bad = Toy()
    bad.default_samples = "means"
    with pytest.raises(TypeError, match="default_samples"):
        check_suite(bad)
    bad = Toy()
    bad.fixed_nrep = 0
    with pytest.raises(TypeError, match="fixed_nrep"):
        check_suite(bad)
    with pytest.raises(TypeError, match="two suites are named 'toy'"):
        Registry([Toy(), Toy()], default="toy")
    with pytest.raises(TypeError, match="default suite 'other'"):
        Registry([Toy()], default="other")


def test_a_new_suite_runs_resumes_and_reports_through_the_generic_commands(mpich_build, tmp_path, monkeypatch):
    monkeypatch.setattr(cli, "SUITES", Registry([*SUITES, Toy()], default="pingpong"))
    run = tmp_path / "toy"
    res = run_cli(["run", "toy", "--size", "64", "--runs", "2", "--nrep", "7", "--stacks", "mpich", "--output",
                   str(run)])
    assert res.rc == 0, res.text
    assert "toy: 14 repetitions" in res.text and f"report: {run / 'report.html'}" in res.text
    assert json.loads((run / "meta.json").read_text())["params"] == {"size": 64}
    launches = read_launches(run)
    assert [x["args"][:4] for x in launches] == [["--sizes", "64", "--variants", "sendrecv"]] * 2
    res = run_cli(["analyze", str(run)])
    assert res.rc == 0 and "toy: 14 repetitions" in res.text
    res = run_cli(["run", "--resume", str(run)])
    assert res.rc == 0 and f"run {run}: 0 launch(es) to go of 2" in res.text


def test_runs_written_before_the_placement_rename_still_open(tmp_path):
    """launches.json entries said `layout`, ddt entries `launch_layout`: both still mean the placement."""
    meta = synthetic_meta()
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    entry = {"id": "fake-pp-r0", "stack": "fake", "template": "pp", "phase": "measure", "run_index": 0, "nprocs": 2,
             "driver": "mg_pingpong", "args": [], "raw": "raw/fake/fake-pp-r0.txt", "layout": "2x1"}
    (tmp_path / "launches.json").write_text(json.dumps({"launches": [entry]}))
    rd = runner.RunDir.open(tmp_path)
    assert rd.launches[0].placement == "2x1"
    rd.save()
    assert read_launches(tmp_path)[0]["placement"] == "2x1" and "layout" not in read_launches(tmp_path)[0]
    ddt = SUITES.get("ddt")
    entries = [{"key": "t01-pingpong-np2", "pattern": "pingpong", "nprocs": 2, "layouts": ["tiled"], "A": [2],
                "sizes": [3200], "modes": ["datatype"], "launch_layout": "2x1"}]
    (template,) = ddt.launches({"type": "int", "entries": entries})
    assert template.placement == "2x1"
