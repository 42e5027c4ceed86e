"""Record files of libmpiguide-tune's record mode (MPIGUIDE_TUNE_RECORD; docs/formats.md, "Record files"):
what an application called, per rank and call shape, and the time it spent inside.

A call shape is what the library keys its choices by: the MPI function (the `_c` entry point counts as its
int form), the communicator's size, the message bytes, the implementation a collective ran, the datatype
strategy, the derived types of its send and receive sides in the type notation, and a reduction's datatype
and operation. `Record.calls` adds up
a shape over the ranks: how many ranks made it, the calls per rank, the seconds over all ranks, and the
share of the run's MPI time."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from mpiguide.core.errors import MpiguideError

COLUMNS = ["rank", "op", "comm_size", "bytes", "impl", "strategy", "calls", "seconds", "send_type", "recv_type",
           "datatype", "reduce_op"]
SHAPE = ["op", "comm_size", "bytes", "impl", "strategy", "send_type", "recv_type", "datatype", "reduce_op"]
NONE = "-"  # no implementation, strategy or derived type
CALL_COLUMNS = [*SHAPE, "ranks", "calls", "calls_per_rank", "seconds", "seconds_per_rank", "share"]
_KEYED = re.compile(r"^#@(?P<kind>[a-z_]+)\[(?P<key>[^\]]*)\]=(?P<value>.*)$")
_PLAIN = re.compile(r"^#@(?P<key>[a-z_]+)=(?P<value>.*)$")


@dataclass
class Record:
    path: Path
    header: dict[str, str] = field(default_factory=dict)
    wall_s: dict[int, float] = field(default_factory=dict)  # rank -> seconds from MPI_Init to MPI_Finalize
    mpi_s: dict[int, float] = field(default_factory=dict)  # rank -> seconds inside the recorded calls
    hosts: dict[int, str] = field(default_factory=dict)  # rank -> its processor name
    lost: dict[str, str] = field(default_factory=dict)  # "calls of rank R" / "rank R" -> what was lost
    # a type's text -> its shape and mean block, the keys datatype profiles look it up by (records before
    # they were written have none)
    shapes: dict[str, tuple[str, int]] = field(default_factory=dict)
    rows: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=COLUMNS))  # types as text

    @property
    def nprocs(self) -> int:
        return int(self.header.get("nprocs", 0))

    @property
    def library_version(self) -> str:
        return self.header.get("library_version", "?")

    @property
    def thread_level(self) -> str:
        """The MPI_THREAD_ level the program ran at (single, funneled, serialized, multiple): a library's calls
        may cost otherwise at another level (MPICH's MPI_Allreduce of a few bytes: x8 under multiple)."""
        return self.header.get("thread_level", "single")

    @property
    def wall(self) -> float:
        """The run's wall time: the longest rank's."""
        return max(self.wall_s.values(), default=0.0)

    @property
    def mpi(self) -> float:
        """Seconds inside the recorded calls, the mean over the ranks."""
        return sum(self.mpi_s.values()) / len(self.mpi_s) if self.mpi_s else 0.0

    @property
    def mpi_share(self) -> float:
        """The recorded calls' share of the run: the mean over ranks of their share of their own wall time."""
        shares = [self.mpi_s[r] / w for r, w in self.wall_s.items() if w > 0 and r in self.mpi_s]
        return sum(shares) / len(shares) if shares else 0.0

    def calls(self) -> pd.DataFrame:
        """One row per call shape over the ranks (CALL_COLUMNS), the most time first."""
        if self.rows.empty:
            return pd.DataFrame(columns=CALL_COLUMNS)
        g = self.rows.groupby(SHAPE, sort=False, dropna=False)
        out = g.agg(ranks=("rank", "nunique"), calls=("calls", "sum"), seconds=("seconds", "sum")).reset_index()
        n = max(self.nprocs, 1)
        out["calls_per_rank"] = out["calls"] / out["ranks"]
        out["seconds_per_rank"] = out["seconds"] / n
        total = self.rows["seconds"].sum()
        out["share"] = out["seconds"] / total if total > 0 else 0.0
        return out.sort_values(["seconds", "op"], ascending=[False, True], kind="stable")[CALL_COLUMNS] \
            .reset_index(drop=True)

    def by_operation(self) -> pd.DataFrame:
        """Per MPI function: calls, bytes moved, seconds (over all ranks) and share of the recorded time."""
        if self.rows.empty:
            return pd.DataFrame(columns=["op", "calls", "bytes", "seconds", "share"])
        df = self.rows.assign(moved=self.rows["calls"] * self.rows["bytes"].clip(lower=0))
        out = df.groupby("op", sort=False).agg(calls=("calls", "sum"), bytes=("moved", "sum"),
                                               seconds=("seconds", "sum")).reset_index()
        total = out["seconds"].sum()
        out["share"] = out["seconds"] / total if total > 0 else 0.0
        return out.sort_values("seconds", ascending=False, kind="stable").reset_index(drop=True)


def base_op(name: str) -> str:
    """The int form of a large-count entry point: MPI_Allgather_c -> MPI_Allgather."""
    return name[:-2] if name.endswith("_c") else name


def parse(path: str | Path) -> Record:
    """A record file; MpiguideError naming the file and line for anything that is not one."""
    path = Path(path)
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise MpiguideError(f"cannot read the record {path}: {exc.strerror}") from exc
    rec = Record(path)
    types: dict[str, str] = {}
    shapes: dict[str, str] = {}
    blocks: dict[str, int] = {}
    rows, columns = [], None
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.startswith("#@"):
            m = _KEYED.match(line)
            if m:
                kind, key, value = m["kind"], m["key"], m["value"]
                if kind == "type":
                    types[key] = value
                elif kind == "shape":
                    shapes[key] = value
                elif kind == "block":
                    blocks[key] = int(_number(value, path, lineno))
                elif kind == "host":
                    rec.hosts[_rank(key, path, lineno)] = value
                elif kind in ("wall_s", "mpi_s"):
                    getattr(rec, kind)[_rank(key, path, lineno)] = _number(value, path, lineno)
                elif kind == "lost_calls":
                    rec.lost[f"calls of rank {key}"] = f"{value} call(s) not recorded (out of memory)"
                elif kind == "lost_rank":
                    rec.lost[f"rank {key}"] = value
                continue
            m = _PLAIN.match(line)
            if m:
                rec.header[m["key"]] = m["value"]
            continue
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split()
        if columns is None:
            if fields != COLUMNS:
                raise MpiguideError(f"{path}:{lineno}: not a record's column line ({' '.join(COLUMNS)} expected)")
            columns = fields
            continue
        if len(fields) != len(COLUMNS):
            raise MpiguideError(f"{path}:{lineno}: {len(fields)} fields where a record row has {len(COLUMNS)}")
        rows.append(fields)
    if "mpiguide_record" not in rec.header:
        raise MpiguideError(f"{path} is not a record of libmpiguide-tune (no #@mpiguide_record line)")
    if "end" not in rec.header:
        raise MpiguideError(f"{path} is cut short (no #@end line): the program did not reach MPI_Finalize")
    df = pd.DataFrame(rows, columns=COLUMNS)
    for c in ("rank", "comm_size", "bytes", "calls"):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("Int64")
    df["seconds"] = pd.to_numeric(df["seconds"], errors="coerce")
    if df[["rank", "comm_size", "bytes", "calls", "seconds"]].isna().any().any():
        raise MpiguideError(f"{path}: a record row holds a field that is not a number")
    for side in ("send_type", "recv_type"):
        unknown = sorted(set(df[side]) - set(types) - {NONE})
        if unknown:
            raise MpiguideError(f"{path}: row(s) name the type {unknown[0]}, which no #@type line defines")
        df[side] = df[side].map(lambda t: types.get(t, NONE))
    rec.shapes = {types[k]: (shapes[k], blocks[k]) for k in types if k in shapes and k in blocks}
    df["op"] = df["op"].map(base_op)
    df = df.astype({c: "int64" for c in ("rank", "comm_size", "bytes", "calls")})
    rec.rows = df
    return rec


def _rank(text: str, path: Path, lineno: int) -> int:
    if not text.isdigit():
        raise MpiguideError(f"{path}:{lineno}: '{text}' is not a rank")
    return int(text)


def _number(text: str, path: Path, lineno: int) -> float:
    try:
        return float(text)
    except ValueError:
        raise MpiguideError(f"{path}:{lineno}: '{text}' is not a number") from None
