"""The MPI libraries' own tuning formats: the algorithm each collective should use at each process count and
message size, written so that the library applies it without libmpiguide-tune (the family adapters call
these; core.families says which format a family uses).

How each library keys a collective's rules was read off the libraries themselves: a rule that selects an
algorithm the library cannot run (Open MPI: algorithm 99, which its tuned component refuses with
MPI_ERR_ARG) or one that leaves a trace (MPICH: its nonblocking algorithm `nb`, whose schedules
MPIR_CVAR_COLL_SCHED_DUMP prints) from a message size on shows at which of mpiguide's sizes (mg_collbench's:
the per-process block of allgather, alltoall, gather and scatter, the whole vector of reduce_scatter_block,
the count in bytes otherwise) the rule starts to apply. tests/python/test_tuning_formats.py repeats that on
the installed libraries for every collective, so a library version that keys them otherwise fails there."""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from mpiguide.core.errors import MpiguideError


@dataclass(frozen=True)
class Choice:
    """What a collective should run at one measured point: an algorithm of the library (its name and the
    value its control takes) or, with name None, the library's own choice."""

    collective: str
    nprocs: int
    msize: int  # mpiguide's message size (mg_collbench)
    name: str | None = None
    value: str | None = None
    # where the library's own choice is kept: the fastest of its algorithms measured there, (name, value), for a
    # format that cannot say "the library's own choice" (Intel MPI's)
    stand_in: tuple[str, str] | None = None
    params: tuple[tuple[str, str], ...] = ()  # the chosen algorithm's (families.Algorithm.params)
    placement: str = ""  # NODESxPPN where the run measured several placements; "": every placement

    @property
    def ppn(self) -> int:
        """Processes per node of the placement (all on one node where there is none)."""
        return int(self.placement.split("x")[1]) if self.placement else self.nprocs


@dataclass
class Written:
    """A tuning file: its text, what it carries, what it could not express (with why)."""

    text: str
    carried: list[Choice] = field(default_factory=list)
    left_out: list[tuple[Choice, str]] = field(default_factory=list)


def _per_collective(choices: list[Choice]) -> dict[str, dict[int, list[Choice]]]:
    out: dict[str, dict[int, list[Choice]]] = {}
    for c in sorted(choices, key=lambda c: (c.collective, c.nprocs, c.msize)):
        out.setdefault(c.collective, {}).setdefault(c.nprocs, []).append(c)
    return out


def _ranges(points: list[Choice], key) -> list[tuple[int, Choice]]:
    """Each measured point's choice from just above the previous point's key on (the first from 0), neighbours
    with the same choice merged: (first key of the range, choice)."""
    out: list[tuple[int, Choice]] = []
    previous = None
    for c in points:
        start = 0 if previous is None else key(previous) + 1
        if not out or (out[-1][1].name, out[-1][1].value) != (c.name, c.value):
            out.append((start, c))
        previous = c
    return out


def _agreed(choices: list[Choice], library: str) -> tuple[list[Choice], list[tuple[Choice, str]]]:
    """For a format with no condition on where the processes run: one choice per collective, process count and
    size, with no placement, from the placements' choices where all of them made the same (and their stand-ins
    agree); where they differ, the library's own choice with no stand-in, and the placements' algorithms left
    out with why."""
    points: dict[tuple[str, int, int], list[Choice]] = {}
    placements: dict[int, set[str]] = {}
    for c in choices:
        points.setdefault((c.collective, c.nprocs, c.msize), []).append(c)
        placements.setdefault(c.nprocs, set()).add(c.placement)
    out, left = [], []
    for (coll, p, m), cs in points.items():
        if len(placements[p]) < 2:
            out += cs
            continue
        if len({(c.name, c.value, c.params) for c in cs}) == 1 and len(cs) == len(placements[p]):
            stand_in = cs[0].stand_in if len({c.stand_in for c in cs}) == 1 else None
            out.append(Choice(coll, p, m, cs[0].name, cs[0].value, stand_in, cs[0].params))
            continue
        each = ", ".join(f"{c.placement}: {c.name or 'default'}" for c in cs)
        why = (f"the placements chose differently ({each}) and {library}'s format has no condition on the "
               "processes per node")
        left += [(c, why) for c in cs if c.name]
        out.append(Choice(coll, p, m))
    return out, left


def _uniform(points: list[Choice]) -> bool:
    return len({(c.name, c.value) for c in points}) == 1


NOT_BY_SIZE = ("{library} keys {collective} rules by element size and process count, not by message size: one "
               "algorithm for every size, and the measured sizes chose different ones")

# ---------------------------------------------------------------- Open MPI: coll/tuned's dynamic rules file

# coll/base's collective ids (ompi/mca/coll/base/coll_base_functions.h)
OPENMPI_IDS = {"allgather": 0, "allreduce": 2, "alltoall": 3, "bcast": 7, "gather": 9, "reduce": 11,
               "reduce_scatter_block": 13, "scan": 14, "scatter": 15}
# the rules' message size from mpiguide's msize m on p processes (Open MPI 5.0.11); None: not by size (scan:
# element size x p)
OPENMPI_KEYS = {"allgather": lambda m, p: m * p, "alltoall": lambda m, p: m * p, "gather": lambda m, p: m * p,
                "scatter": lambda m, p: m * p, "allreduce": lambda m, p: m, "bcast": lambda m, p: m,
                "reduce": lambda m, p: m, "reduce_scatter_block": lambda m, p: m, "scan": None}


def openmpi_rules(choices: list[Choice], origin: str) -> Written:
    """The classic format of coll/tuned's rules file (read with coll_tuned_use_dynamic_rules=1 and
    coll_tuned_dynamic_rules_filename). Per collective, one entry per measured process count p (Open MPI uses
    the entry of the largest count not above the communicator's, or the first), then one for p_max + 1 with
    the library's own choice, so that larger communicators keep it; per entry a rule from each size's range on
    (`message size, algorithm, fan-in/out 0, segment size 0`, algorithm 0: the library's own choice).
    The format has no condition on placement: where the run measured several, they must agree (_agreed)."""
    choices, left = _agreed(choices, "Open MPI")
    out = Written("", left_out=left)
    blocks = []
    for coll, per_np in _per_collective(choices).items():
        if coll not in OPENMPI_IDS:
            raise MpiguideError(f"no Open MPI collective id for {coll!r}")
        key = OPENMPI_KEYS[coll]
        entries = []
        for p, points in sorted(per_np.items()):
            if key is None and not _uniform(points):
                out.left_out += [(c, NOT_BY_SIZE.format(library="Open MPI", collective=coll)) for c in points]
                continue
            out.carried += points
            if all(c.name is None for c in points):
                continue
            ranges = [(0, points[0])] if key is None else _ranges(points, lambda c, p=p, k=key: k(c.msize, p))
            lines = [f"{p}  # processes", f"{len(ranges)}  # message size rules"]
            for start, c in ranges:
                if c.name and not str(c.value).isdigit():
                    raise MpiguideError(f"Open MPI's rules file takes an algorithm number, not {c.value!r} "
                                        f"({coll} {c.name})")
                lines.append(f"{start} {c.value if c.name else 0} 0 0  # {c.name or 'the library default'}")
            entries.append((p, lines))
        if not entries:
            continue
        last = entries[-1][0]
        entries.append((last + 1, [f"{last + 1}  # processes: larger communicators keep the library's choice",
                                   "1", "0 0 0 0"]))
        blocks.append([f"{OPENMPI_IDS[coll]}  # {coll}", f"{len(entries)}  # process counts",
                       *(line for _, lines in entries for line in lines)])
    text = [f"# Open MPI coll/tuned rules: {origin}", f"{len(blocks)}  # collectives"]
    for b in blocks:
        text += b
    out.text = "\n".join(text) + "\n"
    return out


def openmpi_env(path: str) -> dict[str, str]:
    return {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_dynamic_rules_filename": path}


# ---------------------------------------------------------------- MPICH: the collective selection JSON

# the condition a rule's message size goes by, and the factor from mpiguide's msize (MPICH 5.0.2); None: scan
# has no size condition
MPICH_KEYS = {"allreduce": ("avg_msg_size", 1), "bcast": ("avg_msg_size", 1), "reduce": ("avg_msg_size", 1),
              "alltoall": ("avg_msg_size", 1), "allgather": ("total_msg_size", "p"),
              "gather": ("total_msg_size", "p"), "scatter": ("total_msg_size", "p"),
              "reduce_scatter_block": ("total_msg_size", 1), "scan": None}
_CONTAINER = re.compile(rb"algorithm=(MPIR_[A-Za-z0-9_]+)")
_TREE = re.compile(rb'\{"collective=[^\x00]+')


def mpich_library(prefix: Path) -> Path:
    """MPICH's shared library under prefix (libmpi.so itself may be a linker script naming it)."""
    found = []
    for lib in ("lib", "lib64"):
        for path in sorted((prefix / lib).glob("libmpi*.so*")):
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF" and "abi" not in path.name:
                    found.append(path)
    if not found:
        raise MpiguideError(f"no MPICH shared library (libmpi.so*) under {prefix}: cannot read its own collective "
                            "selection")
    return max(found, key=lambda p: p.stat().st_size)


def mpich_selection(library: Path) -> tuple[dict, set[str]]:
    """MPICH's compiled-in selection tree of its MPIR-level algorithms (a selection file replaces it whole, so
    ours starts from it: MPICH asserts where a collective finds no algorithm) and the names of the algorithms
    a selection file may name, both read from the library (once per library file: a tune run writes a stack's
    file again after each algorithm the library fails on). Callers copy the tree before changing it."""
    return _read_selection(str(library), library.stat().st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _read_selection(library: str, mtime_ns: int) -> tuple[dict, set[str]]:
    data = Path(library).read_bytes()
    names = {m.group(1).decode() for m in _CONTAINER.finditer(data)}
    for m in _TREE.finditer(data):
        try:
            tree = json.loads(m.group(0))
        except ValueError:
            continue
        if isinstance(tree, dict) and '"algorithm=MPIR_' in json.dumps(tree):
            return tree, names
    raise MpiguideError(f"{library}: MPICH's compiled-in collective selection (JSON naming MPIR_ algorithms) was "
                        "not found in the library, so no selection file can be written for it")


def mpich_container(collective: str, name: str, names: set[str]) -> str | None:
    """The selection file's name of an algorithm (MPIR_<Coll>_intra_<name>, or _allcomm_ for `nb`)."""
    coll = collective[0].upper() + collective[1:]
    for candidate in (f"MPIR_{coll}_intra_{name}", f"MPIR_{coll}_allcomm_{name}"):
        if candidate in names:
            return candidate
    return None


def _mpich_leaf(c: Choice, names: set[str], own: dict) -> dict:
    """The chosen algorithm with its parameters (`k=2`), or (None) the library's own branch."""
    if not c.name:
        return copy.deepcopy(own)
    return {f"algorithm={mpich_container(c.collective, c.name, names)}": {f"{k}={v}": {} for k, v in c.params}}


def _mpich_sizes(coll: str, p: int, points: list[Choice], names: set[str], own: dict,
                 out: Written) -> dict | None:
    """The branch of one process count and placement: `<size><=key` per range (scan: one leaf), or None where
    it keeps the library's own choice at every size."""
    usable = []
    for c in points:
        if c.name and mpich_container(coll, c.name, names) is None:
            out.left_out.append((c, f"the library names no selection-file algorithm for {c.name}"))
            c = Choice(c.collective, c.nprocs, c.msize, placement=c.placement)
        usable.append(c)
    if MPICH_KEYS[coll] is None and not _uniform(usable):
        out.left_out += [(c, NOT_BY_SIZE.format(library="MPICH", collective=coll)) for c in usable]
        return None
    out.carried += usable
    if all(c.name is None for c in usable):
        return None
    if MPICH_KEYS[coll] is None:
        return _mpich_leaf(usable[0], names, own)
    cond, factor = MPICH_KEYS[coll]
    ranges = _ranges(usable, lambda c: c.msize * (p if factor == "p" else factor))
    branch = {}
    for i, (_, c) in enumerate(ranges):
        last = i == len(ranges) - 1
        branch[f"{cond}=any" if last else f"{cond}<={ranges[i + 1][0] - 1}"] = _mpich_leaf(c, names, own)
    return branch


def mpich_json(choices: list[Choice], base: dict, names: set[str]) -> Written:
    """MPICH's collective selection JSON (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE): its own tree with the
    intra-communicator branch of each tuned collective replaced by ours: `comm_size<=p` per measured process
    count (larger communicators: the library's own branch), in it `<size><=key` per range, whose leaf is
    the chosen algorithm or the library's own branch. Where the run measured several placements of p, one
    `comm_avg_ppn<=ppn` branch per placement in between (the most processes per node: `comm_avg_ppn=any`), so
    that inter- and intra-node decisions differ."""
    tree = copy.deepcopy(base)
    out = Written("")
    for coll, per_np in _per_collective(choices).items():
        node = tree.get(f"collective={coll}")
        if node is None:
            out.left_out += [(c, f"MPICH's selection has no entry for {coll}") for ps in per_np.values() for c in ps]
            continue
        own = node.get("comm_type=intra", node)
        by_np = {}
        for p, points in sorted(per_np.items()):
            per_place: dict[str, list[Choice]] = {}
            for c in points:
                per_place.setdefault(c.placement, []).append(c)
            branches = [(ps[0].ppn, _mpich_sizes(coll, p, ps, names, own, out))
                        for _, ps in sorted(per_place.items(), key=lambda kv: kv[1][0].ppn)]
            if all(b is None for _, b in branches):
                continue
            if len(branches) == 1:
                by_np[f"comm_size<={p}"] = branches[0][1]
                continue
            by_np[f"comm_size<={p}"] = {
                f"comm_avg_ppn<={ppn}" if i < len(branches) - 1 else "comm_avg_ppn=any":
                    b if b is not None else copy.deepcopy(own) for i, (ppn, b) in enumerate(branches)}
        if not by_np:
            continue
        by_np["comm_size=any"] = copy.deepcopy(own)
        if "comm_type=intra" in node:
            node["comm_type=intra"] = by_np
        else:
            tree[f"collective={coll}"] = by_np
    out.text = json.dumps(tree, indent=1) + "\n"  # JSON has no comments: the origin is in the report
    return out


def mpich_env(path: str) -> dict[str, str]:
    return {"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": path}


# ---------------------------------------------------------------- Intel MPI: I_MPI_ADJUST_<COLL> settings

# A tuning "file" of environment settings (Intel MPI reads its collective selection from I_MPI_ADJUST_<COLL>
# variables): a launch's environment names it under ENV_FILE, and the runner adds its NAME=VALUE lines to the
# launch's environment when it starts the launch (with_env_file), so that a validation run planned before the
# file is written still reads it.
ENV_FILE = "MPIGUIDE_ENV_FILE"
_ENV_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
INT_MAX = 2**31 - 1  # the open end of Intel MPI's last message-size range (its conditions are closed ranges)


def env_file_env(path: str) -> dict[str, str]:
    return {ENV_FILE: path}


def read_env_file(path: Path) -> dict[str, str]:
    """The NAME=VALUE lines of an environment file (blank lines and # comments skipped; values taken as they
    stand, no shell quoting)."""
    try:
        lines = path.read_text().splitlines()
    except OSError as e:
        raise MpiguideError(f"cannot read the environment file {path}: {e.strerror}") from None
    out = {}
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _ENV_LINE.match(line.strip())
        if not m:
            raise MpiguideError(f"{path}:{number}: not a NAME=VALUE line: {line[:200]!r}")
        out[m.group(1)] = m.group(2)
    return out


def with_env_file(env: dict[str, str]) -> dict[str, str]:
    """env with the settings of the file it names under ENV_FILE in place of that name (env itself if none)."""
    if ENV_FILE not in env:
        return env
    rest = {k: v for k, v in env.items() if k != ENV_FILE}
    return {**rest, **read_env_file(Path(env[ENV_FILE]))}


IMPI_NO_STAND_IN = ("Intel MPI's I_MPI_ADJUST_{var} replaces the library's own selection at every size and "
                    "process count, so each measured point needs a preset, and none was measured at {msize} B on "
                    "{nprocs} processes")


def impi_adjust(choices: list[Choice], origin: str) -> Written:
    """Intel MPI's I_MPI_ADJUST_<COLL> settings, one line a collective: `<preset>:<l>-<m>@<p>-<p>` for each
    range of sizes (the first from 0, the last to INT_MAX) at each measured process count p.
    Once the variable is set, Intel MPI no longer consults its own tuned selection for that collective: a size
    or process count no condition names gets its basic logic (measured with Intel MPI 2021.18: an allreduce of
    1 MiB on 2 processes 2.5 times slower with a rule for 0-64 kB alone, or with `0` named beyond it). So a
    collective with a chosen preset anywhere has every measured point written: where the library's own choice
    is kept, the fastest preset measured there (Choice.stand_in); a collective where one is missing is left out.
    Process counts not measured get the basic logic (docs/tuning.md).
    The sizes are mpiguide's message sizes, which for every collective is what Intel's manual calls the message
    size (its only definition); Intel MPI 2021 does not show which algorithm a call ran, so where a rule starts
    is not checked against the library, only that it accepts the rule (an id it does not have it ignores at
    MPI_Init with "Incorrect algorithm"). The conditions name no placement: where the run measured several,
    they must agree (_agreed)."""
    choices, left = _agreed(choices, "Intel MPI")
    out = Written("", left_out=left)
    lines = [f"# Intel MPI collective selection: {origin}"]
    for coll, per_np in _per_collective(choices).items():
        var = coll.upper()
        points = [c for ps in per_np.values() for c in ps]
        if all(c.name is None for c in points):
            out.carried += points  # the variable stays unset: the library's own selection everywhere
            continue
        missing = [c for c in points if c.name is None and c.stand_in is None]
        if missing:
            why = IMPI_NO_STAND_IN.format(var=var, msize=missing[0].msize, nprocs=missing[0].nprocs)
            out.left_out += [(c, why) for c in points if c.name]
            out.carried += [Choice(c.collective, c.nprocs, c.msize) for c in points]
            continue
        conditions = []
        for p, ps in sorted(per_np.items()):
            written = [c if c.name else Choice(c.collective, c.nprocs, c.msize, *c.stand_in) for c in ps]
            out.carried += written
            ranges = _ranges(written, lambda c: c.msize)
            for i, (start, c) in enumerate(ranges):
                if not str(c.value).isdigit():
                    raise MpiguideError(f"Intel MPI's I_MPI_ADJUST_{var} takes a preset number, not {c.value!r} "
                                        f"({c.name})")
                end = ranges[i + 1][0] - 1 if i + 1 < len(ranges) else INT_MAX
                conditions.append(f"{c.value}:{start}-{end}@{p}-{p}")
        lines.append(f"I_MPI_ADJUST_{var}={';'.join(conditions)}")
    out.text = "\n".join(lines) + "\n"
    return out
