"""Online mode's report turned into profiles (`mpiguide profiles from-online`; docs/tuning.md, Online
selection): known reports give known profiles, bad ones are refused with file:line, and on MPICH a real
program's online run gives profiles that a tuned run then follows call for call."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli
from mpiguide.core import launch
from mpiguide.core.errors import MpiguideError
from mpiguide.suites.coll import profiles

REPORT = """#@tune_alg[MPI_Allreduce 8 default]=100
#@tune_online[MPI_Allreduce 4 8 int sum]=chosen=allreduce_as_reduce_bcast calls=900 explore_calls=20 \
explorations=1 times=default:2e-06,allreduce_as_reduce_bcast:1e-06 served=default:30,allreduce_as_reduce_bcast:870
#@tune_online[MPI_Allreduce 4 8 double sum]=chosen=default calls=50 explore_calls=20 explorations=1 \
times=default:2e-06,allreduce_as_reduce_bcast:3e-06 served=default:40,allreduce_as_reduce_bcast:10
#@tune_online[MPI_Allreduce 4 16 int max]=chosen=allreduce_as_reduce_bcast calls=80 explore_calls=20 \
explorations=1 times=default:2e-06,allreduce_as_reduce_bcast:1e-06 served=default:30,allreduce_as_reduce_bcast:50
#@tune_online[MPI_Bcast 4 64]=chosen=- calls=5 explore_calls=0 explorations=0 times=default:-1 served=default:5
#@tune_online[MPI_Bcast 2 64]=chosen=default calls=500 explore_calls=20 explorations=1 \
times=default:1e-06,bcast_as_allgatherv:2e-06 served=default:490,bcast_as_allgatherv:10
#@tune_online[MPI_Allgather 4 1024]=chosen=allgather_as_alltoall calls=300 explore_calls=40 explorations=2 \
times=default:5e-06,allgather_as_alltoall:4e-06 served=default:40,allgather_as_alltoall:260
#@tune_config[mode]=online
"""


def test_the_settled_keys_become_one_size_ranges(tmp_path):
    report = tmp_path / "report.txt"
    report.write_text(REPORT)
    done = profiles.from_online(report, tmp_path / "p")
    assert sorted(p.name for p in done.written) == ["allgather_p4.prof", "allreduce_p4.prof"]
    assert profiles.read_profile(tmp_path / "p" / "allreduce_p4.prof") == (
        "allreduce", 4, [(8, 8, "allreduce_as_reduce_bcast"), (16, 16, "allreduce_as_reduce_bcast")])
    assert profiles.read_profile(tmp_path / "p" / "allgather_p4.prof") == (
        "allgather", 4, [(1024, 1024, "allgather_as_alltoall")])
    # Bcast on 2 settled on the native call: no profile; on 4 it never settled: a note
    assert any("1 key(s) never settled" in n for n in done.notes)
    # two reductions of 8 bytes chose differently: the one of more calls decides, said so
    conflict = [n for n in done.notes if "at 8 bytes" in n]
    assert len(conflict) == 1 and "takes allreduce_as_reduce_bcast" in conflict[0] and "int sum, 900" in conflict[0]


@pytest.mark.parametrize("line, message", [
    ("#@tune_online[MPI_Allreduce 4]=chosen=default calls=1", "report.txt:2: not a #@tune_online line"),
    ("#@tune_online[MPI_Nope 4 8]=chosen=default calls=1", "report.txt:2: not a #@tune_online line"),
    ("#@tune_online[MPI_Bcast 4 8]=chosen=bcast_as_magic calls=1", "report.txt:2: bcast has no implementation"),
    ("#@tune_online[MPI_Bcast 4 8]=calls=1", "report.txt:2: not a #@tune_online line"),
])
def test_a_bad_line_is_named_with_where(tmp_path, line, message):
    report = tmp_path / "report.txt"
    report.write_text("#@tune_config[mode]=online\n" + line + "\n")
    with pytest.raises(MpiguideError, match=re.escape(message)):
        profiles.from_online(report, tmp_path / "p")
    assert not (tmp_path / "p").exists()


def test_a_report_without_online_keys_is_refused(tmp_path):
    report = tmp_path / "report.txt"
    report.write_text("#@tune_alg[MPI_Allreduce 8 default]=100\n#@tune_config[mode]=tuned\n")
    res = run_cli(["profiles", "from-online", str(report)])
    assert res.rc == 2 and "holds no #@tune_online line" in res.text and "MPIGUIDE_TUNE_MODE=online" in res.text


def test_the_command_writes_beside_the_report_by_default(tmp_path):
    report = tmp_path / "report.txt"
    report.write_text(REPORT)
    res = run_cli(["profiles", "from-online", str(report)])
    assert res.rc == 0, res.text
    out = tmp_path / "report.txt-profiles"
    assert "wrote 2 profile(s)" in res.text and f"MPIGUIDE_TUNE_PROFILES={out}" in res.text
    assert (out / "allreduce_p4.prof").is_file()
    again = run_cli(["profiles", "from-online", str(report)])  # never over profiles already there
    assert again.rc == 2 and "exists" in again.text


def tune_alg(report: Path) -> dict[tuple[str, int, str], int]:
    out = {}
    for line in report.read_text().splitlines():
        m = re.match(r"#@tune_alg\[(MPI_\w+) (\d+) (\w+)\]=(\d+)$", line)
        if m:
            out[(m[1], int(m[2]), m[3])] = int(m[4])
    return out


def run_preloaded(stack, build_dir: Path, env: dict[str, str], args: list[str]) -> subprocess.CompletedProcess:
    """tune_preload_app on 2 processes with libmpiguide-tune preloaded into the ranks alone (through env(1),
    as a user would, so that mpiexec itself runs without it)."""
    assigns = [f"LD_PRELOAD={build_dir / 'libmpiguide-tune.so'}", *(f"{k}={v}" for k, v in env.items())]
    argv = launch.command(launch.LaunchSpec(), stack, 2, "env", [*assigns, str(build_dir / "tune_preload_app"), *args])
    return subprocess.run(argv, env=stack.env(), capture_output=True, text=True, timeout=600)


def test_a_real_online_run_gives_profiles_a_tuned_run_follows(mpich_stack, mpich_build, tmp_path):
    """tune_preload_app (Allreduce, Bcast, Allgather of 1 to 1000 ints, checking its results) 60 times over,
    the library preloaded in online mode; the profiles of its report; the program again in tuned mode with
    them: every size a profile names ran its mock-up, and the program's results stayed right in both."""
    report = tmp_path / "online.txt"
    env = {"MPIGUIDE_TUNE_MODE": "online", "MPIGUIDE_TUNE_REPORT": str(report)}
    res = run_preloaded(mpich_stack, mpich_build, env, ["--repeat", "60"])
    assert res.returncode == 0 and "tune_preload_app: ok" in res.stdout, res.stdout + res.stderr
    keys = profiles.read_online(report)
    assert {k.collective for k in keys} == {"allreduce", "bcast", "allgather"}
    assert all(k.nprocs == 2 and k.chosen is not None for k in keys if k.calls >= 60)
    done = profiles.from_online(report, tmp_path / "profiles")
    ranges = {(c, lo, impl) for path in done.written for c, _, rs in [profiles.read_profile(path)]
              for lo, _, impl in rs}
    settled = {(k.collective, k.nbytes, k.chosen) for k in keys if k.chosen not in (None, "default")}
    assert ranges == settled
    tuned = tmp_path / "tuned.txt"
    env = {"MPIGUIDE_TUNE_MODE": "tuned", "MPIGUIDE_TUNE_REPORT": str(tuned),
           "MPIGUIDE_TUNE_PROFILES": str(tmp_path / "profiles")}
    res = run_preloaded(mpich_stack, mpich_build, env, ["--repeat", "2"])
    assert res.returncode == 0 and "tune_preload_app: ok" in res.stdout, res.stdout + res.stderr
    ran = tune_alg(tuned)
    for coll, nbytes, impl in ranges:
        assert ran.get((f"MPI_{coll.capitalize()}", nbytes, impl), 0) >= 2, (coll, nbytes, impl, ran)
