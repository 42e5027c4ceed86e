"""rawfile.py: a real file of the ping-pong driver, and hand-written edge cases."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import run_driver
from mpiguide.core import rawfile
from mpiguide.core.errors import MpiguideError

COLUMNS = ["variant", "msize_bytes", "count", "rep", "time_s"]


# ---------------------------------------------------------------- a real file

def test_real_pingpong_header(pingpong_raw):
    raw = rawfile.parse(pingpong_raw)
    h = raw.header
    assert h["mpiguide_raw"] == "1"
    assert h["driver"] == "pingpong"
    assert h["nprocs"] == "2"
    assert h["nrep_method"] == "fixed"
    assert h["nrep"] == "3"
    assert "MPICH" in h["library_version"]
    assert "\n" not in h["library_version"]
    assert h["sync"] == "barrier"
    assert h["thread_level"] == "single"  # MPI_Init, without --thread-level
    assert h["datatype"] == "int"
    assert h["sizes"] == "4,64"
    assert h["variants"] == "send_recv,sendrecv,isend_irecv"
    assert h["end"] == "ok"
    assert raw.complete
    assert raw.errors == {}
    assert raw.estimates == {}


def test_a_driver_starts_mpi_at_the_thread_level_asked(mpich_stack, mpich_build, tmp_path):
    out = tmp_path / "multiple.txt"
    res = run_driver(mpich_stack, mpich_build, "mg_pingpong",
                     ["--sizes", "4", "--nrep", "2", "--thread-level", "multiple", "--output", str(out)])
    assert res.returncode == 0, res.stdout + res.stderr
    assert rawfile.parse(out).header["thread_level"] == "multiple"
    res = run_driver(mpich_stack, mpich_build, "mg_pingpong", ["--thread-level", "many"])
    assert res.returncode == 2 and "bad value 'many' for --thread-level" in res.stderr


def test_real_pingpong_rows(pingpong_raw):
    raw = rawfile.parse(pingpong_raw)
    assert raw.columns == COLUMNS
    assert raw.config_columns == ["variant", "msize_bytes", "count"]
    assert len(raw.rows) == 3 * 2 * 3  # 3 repetitions x 2 sizes x 3 variants
    df = raw.frame()
    assert list(df.columns) == COLUMNS
    assert pd.api.types.is_string_dtype(df["variant"])
    assert pd.api.types.is_integer_dtype(df["msize_bytes"])
    assert pd.api.types.is_integer_dtype(df["rep"])
    assert pd.api.types.is_float_dtype(df["time_s"])
    assert (df["time_s"] > 0).all()
    assert (df["count"] * 4 == df["msize_bytes"]).all()  # datatype int
    configs = list(dict.fromkeys(zip(df["variant"], df["msize_bytes"], strict=True)))
    assert configs == [(v, s) for s in (4, 64) for v in ("send_recv", "sendrecv", "isend_irecv")]
    reps = df.groupby(["variant", "msize_bytes"])["rep"].apply(sorted)
    assert len(reps) == 6
    assert all(r == [0, 1, 2] for r in reps)


# ---------------------------------------------------------------- hand-written files

HEADER = "#@mpiguide_raw=1\n#@driver=pingpong\n#@nprocs=2\n#@nrep_method=fixed\n#@nrep=2\n"
COLUMN_LINE = "variant msize_bytes count rep time_s\n"
ROWS = ("send_recv 4 1 0 1.500000000e-06\n"
        "send_recv 4 1 1 1.600000000e-06\n"
        "sendrecv 4 1 0 1.400000000e-06\n"
        "sendrecv 4 1 1 1.700000000e-06\n")


def write(tmp_path, text: str, name: str = "raw.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_complete_hand_written_file(tmp_path):
    raw = rawfile.parse(write(tmp_path, HEADER + COLUMN_LINE + ROWS + "#@end=ok\n"))
    assert raw.complete
    assert len(raw.rows) == 4
    assert raw.frame()["time_s"].tolist() == [1.5e-06, 1.6e-06, 1.4e-06, 1.7e-06]


def test_end_errors_counts_as_complete(tmp_path):
    raw = rawfile.parse(write(tmp_path, HEADER + COLUMN_LINE + ROWS + "#@end=errors\n"))
    assert raw.complete
    assert raw.header["end"] == "errors"


def test_truncated_at_line_boundary_is_incomplete(tmp_path):
    raw = rawfile.parse(write(tmp_path, HEADER + COLUMN_LINE + ROWS))
    assert not raw.complete
    assert len(raw.rows) == 4


def test_half_written_last_row_is_dropped(tmp_path):
    raw = rawfile.parse(write(tmp_path, HEADER + COLUMN_LINE + ROWS + "isend_irecv 4 1"))
    assert not raw.complete
    assert len(raw.rows) == 4
    assert [r[0] for r in raw.rows] == ["send_recv", "send_recv", "sendrecv", "sendrecv"]


def test_half_written_last_row_with_all_fields_is_dropped(tmp_path):
    raw = rawfile.parse(write(tmp_path, HEADER + COLUMN_LINE + ROWS + "isend_irecv 4 1 0 1.73799981e-0"))
    assert not raw.complete
    assert len(raw.rows) == 4
    assert raw.frame()["time_s"].max() < 1e-3


def test_short_row_in_the_middle_is_an_error_naming_the_line(tmp_path):
    text = HEADER + COLUMN_LINE + "send_recv 4 1 0\n" + ROWS + "#@end=ok\n"
    path = write(tmp_path, text)
    with pytest.raises(MpiguideError) as exc:
        rawfile.parse(path)
    assert f"{path}:7:" in str(exc.value)
    assert "4 fields where the column line has 5" in str(exc.value)


def test_malformed_header_line_names_file_and_line(tmp_path):
    path = write(tmp_path, "#@mpiguide_raw=1\n#@driver=pingpong\n#@nprocs 2\n" + COLUMN_LINE + ROWS)
    with pytest.raises(MpiguideError) as exc:
        rawfile.parse(path)
    msg = str(exc.value)
    assert f"{path}:3:" in msg
    assert "without '='" in msg
    assert "#@nprocs 2" in msg


def test_bad_column_line(tmp_path):
    path = write(tmp_path, HEADER + "variant msize_bytes time_s rep\n" + ROWS)
    with pytest.raises(MpiguideError, match=r":6: column line must end with 'rep time_s'"):
        rawfile.parse(path)


def test_file_without_magic_header(tmp_path):
    path = write(tmp_path, "#@driver=pingpong\n" + COLUMN_LINE + ROWS + "#@end=ok\n")
    with pytest.raises(MpiguideError) as exc:
        rawfile.parse(path)
    assert str(exc.value) == f"{path} is not an mpiguide raw file (no #@mpiguide_raw header)"


def test_empty_file_is_not_a_raw_file(tmp_path):
    with pytest.raises(MpiguideError, match="no #@mpiguide_raw header"):
        rawfile.parse(write(tmp_path, ""))


def test_missing_file(tmp_path):
    with pytest.raises(MpiguideError, match=r"cannot read raw file .*nothere\.txt: No such file or directory"):
        rawfile.parse(tmp_path / "nothere.txt")


def test_error_and_estimate_lines(tmp_path):
    text = (HEADER + "#@nrep_estimate=rse_calib=0.01,rse_batch=0.05,b1=5,b2=5,K=10,nrep_max=10000\n"
            + COLUMN_LINE
            + "#@estimate[send_recv 4 1]=nrep:120,l_min:1.500000000e-06,batch_reps:10,rse:0.012000\n"
            + ROWS
            + "#@error[isend_irecv 4 1]=received data differs from what was sent\n"
            + "# a comment line\n\n"
            + "#@end=errors\n")
    raw = rawfile.parse(write(tmp_path, text))
    assert raw.errors == {"isend_irecv 4 1": "received data differs from what was sent"}
    assert raw.estimates == {"send_recv 4 1": {"nrep": "120", "l_min": "1.500000000e-06", "batch_reps": "10",
                                               "rse": "0.012000"}}
    # Keyed lines do not leak into the header; '=' inside a value is kept.
    assert not any(k.startswith(("error", "estimate[")) for k in raw.header)
    assert raw.header["nrep_estimate"] == "rse_calib=0.01,rse_batch=0.05,b1=5,b2=5,K=10,nrep_max=10000"
    assert len(raw.rows) == 4
    assert raw.complete
