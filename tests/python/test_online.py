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
#@tune_online[MPI_Alltoallv 4 0]=chosen=alltoallv_pairwise calls=60 explore_calls=12 explorations=1 over_budget=0 \
times=default:3e-05,alltoallv_pairwise:2e-05,alltoallv_linear:4e-05 \
served=default:21,alltoallv_pairwise:37,alltoallv_linear:2
#@tune_config[mode]=online
"""


def test_the_settled_keys_become_one_size_ranges(tmp_path):
    report = tmp_path / "report.txt"
    report.write_text(REPORT)
    done = profiles.from_online([report], tmp_path / "p")
    assert sorted(p.name for p in done.written) == ["allgather_p4.prof", "allreduce_p4.prof"]
    assert profiles.read_profile(tmp_path / "p" / "allreduce_p4.prof") == (
        "allreduce", 4, [(8, 8, "allreduce_as_reduce_bcast"), (16, 16, "allreduce_as_reduce_bcast")])
    assert profiles.read_profile(tmp_path / "p" / "allgather_p4.prof") == (
        "allgather", 4, [(1024, 1024, "allgather_as_alltoall")])
    # Bcast on 2 settled on the native call: no profile; on 4 it never settled: a note
    assert any("1 key(s) never settled" in n for n in done.notes)
    # an irregular collective's key: no profile (tuned mode has none for them), a note
    assert any("1 key(s) of irregular collectives (alltoallv)" in n for n in done.notes)
    # two reductions of 8 bytes chose differently: the one of more calls decides, said so
    conflict = [n for n in done.notes if "at 8 bytes" in n]
    assert len(conflict) == 1 and "takes allreduce_as_reduce_bcast" in conflict[0] and "int sum, 900" in conflict[0]


DT_REPORT = """#@tune_online_dt[MPI_Irecv 1024 vector 8 0]=chosen=pack calls=400 explore_calls=15 explorations=1 \
over_budget=0 times=native:2e-06,normalized:1.9e-06,pack:1e-06 served=native:21,normalized:5,pack:374
#@tune_online_dt[MPI_Recv 1024 vector 8 1]=chosen=normalized calls=100 explore_calls=15 explorations=1 \
over_budget=0 times=native:2e-06,normalized:1e-06,pack:1.2e-06 served=native:21,normalized:74,pack:5
#@tune_online_dt[MPI_Isend 1024 vector 8 0]=chosen=native calls=400 explore_calls=15 explorations=1 \
over_budget=0 times=native:1e-06,normalized:1.9e-06,pack:1.5e-06 served=native:390,normalized:5,pack:5
#@tune_online_dt[MPI_Send 192 resized/indexed 8 0]=chosen=normalized calls=60 explore_calls=15 explorations=1 \
over_budget=0 times=native:3e-06,normalized:1e-06,pack:2e-06 served=native:21,normalized:34,pack:5
#@tune_online_dt[MPI_Send 64 indexed 4 0]=chosen=- calls=3 explore_calls=0 explorations=0 over_budget=0 \
times=native:-1,normalized:-1,pack:-1 served=native:3,normalized:0,pack:0
"""


def test_the_settled_datatype_keys_become_datatype_profiles(tmp_path):
    """Per operation (the profiles key MPI_Isend as send, MPI_Irecv as recv), one rule per settled point that
    is not native, with its shape, size and block; two threads that chose differently at one point: the key of
    more calls decides, said so; a key that never settled: a note."""
    report = tmp_path / "report.txt"
    report.write_text(DT_REPORT)
    done = profiles.from_online([report], tmp_path / "p")
    assert sorted(p.name for p in done.written) == ["dt_recv_any.prof", "dt_send_any.prof"]
    recv = (tmp_path / "p" / "dt_recv_any.prof").read_text().splitlines()
    send = (tmp_path / "p" / "dt_send_any.prof").read_text().splitlines()
    assert recv[2:] == ["datatypes recv", "procs any", "# shape from_bytes to_bytes strategy [block from_bytes "
                        "to_bytes]", "vector 1024 1024 pack block 8 8"]
    assert send[-1] == "resized/indexed 192 192 normalized block 8 8" and "vector" not in "".join(send)
    conflict = [n for n in done.notes if "recv of vector" in n]
    assert len(conflict) == 1 and "the profile takes pack, of the most calls" in conflict[0]
    assert any("1 datatype key(s) never settled" in n for n in done.notes)


def test_every_ranks_report_is_read_and_the_key_of_most_calls_decides(tmp_path):
    """Reports of two ranks (MPIGUIDE_TUNE_REPORT with %r) whose receive keys of one point chose differently:
    one rule, the choice of the key of more calls, said so with both choices; given through the command, the
    profiles land beside the first report."""
    line = ("#@tune_online_dt[MPI_Irecv 4096 vector 8 0]=chosen={} calls={} explore_calls=15 explorations=1 "
            "over_budget=0 times=native:9e-06,normalized:8e-06,pack:2e-06 served=native:10,normalized:5,pack:{}\n")
    reports = [tmp_path / "online-0.txt", tmp_path / "online-1.txt"]
    reports[0].write_text(line.format("normalized", 300, 0))
    reports[1].write_text(line.format("pack", 900, 885))
    res = run_cli(["profiles", "from-online", *map(str, reports)])
    assert res.rc == 0, res.text
    recv = (tmp_path / "online-0.txt-profiles" / "dt_recv_any.prof").read_text().splitlines()
    assert recv[1] == "# from online mode's reports online-0.txt, online-1.txt"
    assert recv[-1] == "vector 4096 4096 pack block 8 8"
    assert "normalized (300 calls), pack (900 calls); the profile takes pack, of the most calls" in res.text


def test_sendrecv_and_collective_keys_become_rules_of_their_operation(tmp_path):
    """A sendrecv's key is named by its side (`MPI_Sendrecv:send`): its choice becomes a rule of that side's
    datatype profile; a blocking w collective's, of its own operation's (procs any)."""
    report = tmp_path / "report.txt"
    report.write_text(
        "#@tune_online_dt[MPI_Sendrecv:send 4096 vector 8 0]=chosen=pack calls=500 explore_calls=15 "
        "explorations=1 over_budget=0 times=native:9e-06,normalized:8e-06,pack:2e-06 served=native:10,"
        "normalized:5,pack:485\n"
        "#@tune_online_dt[MPI_Sendrecv_replace:recv 192 resized/indexed 8 0]=chosen=normalized calls=90 "
        "explore_calls=15 explorations=1 over_budget=0 times=native:3e-06,normalized:1e-06,pack:2e-06 "
        "served=native:10,normalized:75,pack:5\n"
        "#@tune_online_dt[MPI_Alltoallw 384 resized/indexed 8 0]=chosen=normalized calls=120 explore_calls=10 "
        "explorations=1 over_budget=0 times=native:5.7e-06,normalized:4.1e-06 served=native:10,normalized:110\n")
    done = profiles.from_online([report], tmp_path / "p")
    assert sorted(p.name for p in done.written) == ["dt_alltoallw_any.prof", "dt_recv_any.prof", "dt_send_any.prof"]
    w = (tmp_path / "p" / "dt_alltoallw_any.prof").read_text().splitlines()
    assert w[2:4] == ["datatypes alltoallw", "procs any"] and w[-1] == "resized/indexed 384 384 normalized block 8 8"
    send = (tmp_path / "p" / "dt_send_any.prof").read_text().splitlines()
    recv = (tmp_path / "p" / "dt_recv_any.prof").read_text().splitlines()
    assert send[-1] == "vector 4096 4096 pack block 8 8"
    assert recv[-1] == "resized/indexed 192 192 normalized block 8 8"


@pytest.mark.parametrize("line, message", [
    ("#@tune_online_dt[MPI_Bcast 8 vector 8 0]=chosen=pack calls=1", "report.txt:2: not a #@tune_online_dt line"),
    ("#@tune_online_dt[MPI_Send 8 vector 0]=chosen=pack calls=1", "report.txt:2: not a #@tune_online_dt line"),
    ("#@tune_online_dt[MPI_Send 8 vector 8 0]=chosen=squash calls=1", "report.txt:2: not a #@tune_online_dt line"),
    ("#@tune_online[MPI_Allreduce 4]=chosen=default calls=1", "report.txt:2: not a #@tune_online line"),
    ("#@tune_online[MPI_Nope 4 8]=chosen=default calls=1", "report.txt:2: not a #@tune_online line"),
    ("#@tune_online[MPI_Bcast 4 8]=chosen=bcast_as_magic calls=1", "report.txt:2: bcast has no implementation"),
    ("#@tune_online[MPI_Bcast 4 8]=calls=1", "report.txt:2: not a #@tune_online line"),
])
def test_a_bad_line_is_named_with_where(tmp_path, line, message):
    report = tmp_path / "report.txt"
    report.write_text("#@tune_config[mode]=online\n" + line + "\n")
    with pytest.raises(MpiguideError, match=re.escape(message)):
        profiles.from_online([report], tmp_path / "p")
    assert not (tmp_path / "p").exists()


def test_a_report_without_online_keys_is_refused(tmp_path):
    report = tmp_path / "report.txt"
    report.write_text("#@tune_alg[MPI_Allreduce 8 default]=100\n#@tune_config[mode]=tuned\n")
    res = run_cli(["profiles", "from-online", str(report)])
    assert res.rc == 2 and f"no #@tune_online line in {report}" in res.text and "MPIGUIDE_TUNE_MODE=online" in res.text


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
    done = profiles.from_online([report], tmp_path / "profiles")
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


def test_online_datatype_keys_give_profiles_a_tuned_run_follows(mpich_stack, mpich_build, tmp_path):
    """mg_stencil's derived-type halo exchange (MPI_Isend and MPI_Irecv of a vector, 4 processes: a 2 x 2 grid)
    with the library preloaded in online mode and a report per rank (%r): every rank's halo keys settle; the
    datatype profiles of the four reports; the stencil again in tuned mode with them: every rank's halo sides
    of that size take the profiles' strategy, and the stencil's own check against its serial run passes both
    times."""
    def stencil(env: dict[str, str]) -> None:
        assigns = [f"LD_PRELOAD={mpich_build / 'libmpiguide-tune.so'}", *(f"{k}={v}" for k, v in env.items())]
        args = [*assigns, str(mpich_build / "mg_stencil"), "--variants", "ddt:nonblocking", "--nx", "8", "--ny",
                "4096", "--steps", "100", "--nrep", "1", "--output", str(tmp_path / "raw.txt")]
        res = subprocess.run(launch.command(launch.LaunchSpec(), mpich_stack, 4, "env", args), env=mpich_stack.env(),
                             capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stdout + res.stderr
        assert "#@end=ok" in (tmp_path / "raw.txt").read_text()  # its results checked, none failed

    stencil({"MPIGUIDE_TUNE_MODE": "online", "MPIGUIDE_TUNE_REPORT": str(tmp_path / "online-%r.txt")})
    reports = [tmp_path / f"online-{rank}.txt" for rank in range(4)]
    keys = []
    for report in reports:
        halo = [k for k in profiles.read_online_dt(report) if k.calls >= 100]
        assert {k.operation for k in halo} == {"send", "recv"} and all(k.chosen is not None for k in halo)
        keys += profiles.read_online_dt(report)
    assert not list(tmp_path.glob("*%r*"))
    done = profiles.from_online(reports, tmp_path / "profiles")
    rules = {}
    for path in done.written:
        lines = path.read_text().splitlines()
        op = lines[2].split()[1]
        for line in lines[5:]:
            shape, lo, hi, strategy, _, block, _ = line.split()
            rules[op, int(lo)] = strategy
    # a rule for each (side, size) whose key of most calls settled on another strategy than native (of keys
    # of equal calls, the first report's)
    expected = {}
    for k in sorted(keys, key=lambda k: -k.calls):
        expected.setdefault((k.operation, k.nbytes), k.chosen)
    assert rules == {key: s for key, s in expected.items() if s not in (None, "native")}
    stencil({"MPIGUIDE_TUNE_MODE": "tuned", "MPIGUIDE_TUNE_PROFILES": str(tmp_path / "profiles"),
             "MPIGUIDE_TUNE_REPORT": str(tmp_path / "tuned-%r.txt")})
    for rank in range(4):
        ran = {}
        text = (tmp_path / f"tuned-{rank}.txt").read_text()
        for m in re.finditer(r"#@tune_dt\[MPI_I(send|recv) (\d+) (\w+)\]=(\d+)", text):
            ran.setdefault((m[1], int(m[2])), {})[m[3]] = int(m[4])
        for (op, nbytes), strategy in rules.items():
            assert set(ran[op, nbytes]) == {strategy}, (rank, op, nbytes, strategy, ran)
