"""Bad input: every mistake ends with exit code 2 and a message that says what is wrong (no traceback)."""

from __future__ import annotations

import json

import pytest

from conftest import read_launches
from mpiguide import __version__
from mpiguide.cli import main
from mpiguide.core.errors import MpiguideError
from mpiguide.core.options import parse_sizes


def dry_run(cli, tmp_path, *extra: str):
    return cli(["run", "pingpong", "--stacks", "mpich", "--runs", "1", "--dry-run", "--output",
                str(tmp_path / "o"), *extra])


def test_unknown_option_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "pingpong", "--bogus"])
    assert exc.value.code == 2
    assert "error: unrecognized arguments: --bogus" in capsys.readouterr().err


def test_unknown_option_with_the_default_job(cli):
    res = cli(["run", "--bogus"])
    assert res.rc == 2
    assert "unrecognized arguments: --bogus" in res.err


def test_unknown_job(cli):
    res = cli(["run", "nosuchjob"])
    assert res.rc == 2
    assert "unrecognized arguments: nosuchjob" in res.err


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"mpiguide {__version__}"


@pytest.mark.parametrize(("extra", "message"), [
    (["--sizes", "4,abc"], "bad size 'abc' in '4,abc': use positive byte counts like 4,1k,1m"),
    (["--sizes", "0"], "bad size '0' in '0'"),
    (["--sizes", "4,,8"], "bad size '' in '4,,8'"),
    (["--sizes", "-4"], "bad size '-4' in '-4'"),
    (["--sizes", "6"], "size 6 is not a multiple of the element size 4 bytes"),
    (["--sizes", "12", "--datatype", "double"], "size 12 is not a multiple of the element size 8 bytes"),
    (["--variants", "send_recv,foo"], "unknown variant 'foo': choose from send_recv, sendrecv, isend_irecv"),
    (["--variants", ","], "unknown variant ',': choose from send_recv, sendrecv, isend_irecv"),
    (["--runs", "0"], "bad --runs 0: at least 1 launch per configuration"),
    (["--nrep", "0"], "bad --nrep '0': use rule, estimate or a positive number"),
    (["--nrep", "many"], "bad --nrep 'many': use rule, estimate or a positive number"),
    (["--order-seed", "0"], "bad --order-seed 0: must be between 1 and 2^31 - 1"),
    (["--tolerance", "-0.1"], "bad --tolerance -0.1: a fraction such as 0.05 for 5%"),
    (["--alpha", "0.5"], "bad --alpha 0.5: a significance level below 0.5, such as 0.05"),
])
def test_bad_run_options(cli, tmp_path, extra, message):
    res = dry_run(cli, tmp_path, *extra)
    assert res.rc == 2
    assert f"mpiguide: error: {message}" in res.text
    assert res.out.strip() == ""  # no command was printed


@pytest.mark.parametrize(("stacks", "message"), [
    ("mpich,mpich", "--stacks lists a stack twice: mpich,mpich"),
    (" , ", "--stacks needs at least one stack name"),
])
def test_bad_stack_lists(cli, tmp_path, stacks, message):
    res = cli(["run", "pingpong", "--stacks", stacks, "--dry-run", "--output", str(tmp_path / "o")])
    assert res.rc == 2
    assert message in res.text


def test_unknown_datatype_is_an_argparse_error(cli, tmp_path):
    res = dry_run(cli, tmp_path, "--datatype", "float")
    assert res.rc == 2
    assert "argument --datatype: invalid choice: 'float'" in res.err


@pytest.mark.parametrize(("text", "unit", "sizes"), [
    ("4,1k,1m", 1, [4, 1024, 1048576]), ("6", 2, [6]), (" 8 , 2K ", 8, [8, 2048]),
])
def test_parse_sizes(text, unit, sizes):
    assert parse_sizes(text, unit) == sizes


def test_parse_sizes_error_names_the_item():
    with pytest.raises(MpiguideError, match=r"bad size '1\.5k' in '1\.5k'"):
        parse_sizes("1.5k")


def test_odd_size_is_fine_for_char(cli, tmp_path):
    res = dry_run(cli, tmp_path, "--sizes", "6,1k", "--datatype", "char")
    assert res.rc == 0, res.text
    assert "--sizes 6,1024 --variants send_recv,sendrecv,isend_irecv --datatype char" in res.out


# ---------------------------------------------------------------- analyze / resume on bad run directories

def test_analyze_nonexistent_directory(cli):
    res = cli(["analyze", "/nonexistent/run"])
    assert res.rc == 2
    assert "mpiguide: error: " in res.text and "/nonexistent/run" in res.text
    assert "Traceback" not in res.text


def test_analyze_nonexistent_directory_says_does_not_exist(cli):
    res = cli(["analyze", "/nonexistent"])
    assert res.rc == 2
    assert "does not exist" in res.text
    assert res.text.count("/nonexistent") == 1


def test_resume_nonexistent_directory(cli):
    res = cli(["run", "--resume", "/nonexistent/run"])
    assert res.rc == 2
    assert "run directory /nonexistent/run does not exist" in res.text


def test_analyze_directory_without_meta(cli, tmp_path):
    (tmp_path / "somefile").write_text("x")
    res = cli(["analyze", str(tmp_path)])
    assert res.rc == 2
    assert f"{tmp_path}/meta.json is missing: is {tmp_path} an mpiguide run directory?" in res.text


def test_corrupt_launches_json(cli, small_run_copy):
    (small_run_copy / "launches.json").write_text('{"launches": [ {"id": "mpich-pp-r0", ')
    for argv in (["analyze", str(small_run_copy)], ["run", "--resume", str(small_run_copy)]):
        res = cli(argv)
        assert res.rc == 2
        assert f"cannot read {small_run_copy}/launches.json: " in res.text
        assert "Expecting" in res.text  # the JSON decoder's own words


def test_malformed_launches_json(cli, small_run_copy):
    (small_run_copy / "launches.json").write_text(json.dumps({"launches": [{"id": "x", "bogus": 1}]}))
    res = cli(["analyze", str(small_run_copy)])
    assert res.rc == 2
    assert f"{small_run_copy}/launches.json is malformed" in res.text


def test_missing_raw_file_of_an_ok_launch(cli, small_run_copy):
    (small_run_copy / "raw/mpich/mpich-pp-r1.txt").unlink()
    res = cli(["analyze", str(small_run_copy)])
    assert res.rc == 2
    assert f"cannot read raw file {small_run_copy}/raw/mpich/mpich-pp-r1.txt: No such file or directory" in res.text


def test_meta_json_without_keys(cli, small_run_copy):
    (small_run_copy / "meta.json").write_text("{}\n")
    res = cli(["analyze", str(small_run_copy)])
    assert res.rc == 2
    assert "meta.json" in res.text


def test_output_pointing_at_an_existing_run(cli, small_run_copy):
    before = (small_run_copy / "launches.json").read_text()
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "1", "--sizes", "4", "--output",
               str(small_run_copy)])
    assert res.rc == 2
    assert (f"{small_run_copy} already holds a run; continue it with: mpiguide run --resume {small_run_copy}"
            in res.text)
    assert (small_run_copy / "launches.json").read_text() == before
    assert [x["status"] for x in read_launches(small_run_copy)] == ["ok", "ok"]


def test_output_pointing_at_a_non_empty_folder(cli, tmp_path, mpich_stack):
    (tmp_path / "notes.txt").write_text("mine")
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "1", "--sizes", "4", "--output", str(tmp_path)])
    assert res.rc == 2
    assert f"{tmp_path} exists and is not empty; choose another --output" in res.text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_output_pointing_at_a_file(cli, tmp_path, mpich_stack):
    target = tmp_path / "afile"
    target.write_text("mine")
    res = cli(["run", "pingpong", "--stacks", "mpich", "--runs", "1", "--sizes", "4", "--output", str(target)])
    assert res.rc == 2
    assert str(target) in res.text
    assert target.read_text() == "mine"
