"""A run's measurements as tidy tables: the raw file of every successful
measurement launch, parsed once, turned into one row per repetition, the
configurations whose data check failed, and the drivers' per-configuration
notes (`#@kind[label]=value`). Every suite's analysis starts here; everything
can be recomputed from the raw files alone."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pandas as pd

from mpiguide.core import rawfile
from mpiguide.core.runner import MEASURE, OK, Launch, RunDir

ID_COLUMNS = ["stack", "template", "nprocs"]
ERROR_COLUMNS = ["stack", "launch_id", "config", "error"]
NOT_MEASURED = ("launch", "launch_id", "rep", "time_s")  # columns that never identify a configuration


@dataclass
class Measured:
    """The successful measurement launches of one run, in launch order, each with its parsed raw file."""

    rd: RunDir
    raws: dict[str, rawfile.RawFile]  # by launch id

    @classmethod
    def load(cls, rd: RunDir) -> Measured:
        raws = {x.id: rawfile.parse(rd.path / x.raw) for x in rd.launches if x.phase == MEASURE and x.status == OK}
        return cls(rd, raws)

    def launches(self) -> Iterator[tuple[Launch, rawfile.RawFile]]:
        for x in self.rd.launches:
            if x.id in self.raws:
                yield x, self.raws[x.id]

    def notes(self, kind: str) -> Iterator[tuple[Launch, str, str]]:
        """(launch, configuration label, value) of every `#@kind[label]=value` note."""
        for x, raw in self.launches():
            for label, value in raw.notes.get(kind, {}).items():
                yield x, label, value

    def tables(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """One row per repetition (stack, template, nprocs, launch, launch_id, the driver's columns, rep,
        time_s), and one row per configuration whose data check failed (ERROR_COLUMNS)."""
        frames, errors = [], []
        for x, raw in self.launches():
            df = raw.frame()
            df.insert(0, "launch", x.run_index)
            for col, val in reversed(list(zip(ID_COLUMNS, (x.stack, x.template, x.nprocs), strict=True))):
                df.insert(0, col, val)
            df.insert(len(ID_COLUMNS) + 1, "launch_id", x.id)
            frames.append(df)
            errors += [{"stack": x.stack, "launch_id": x.id, "config": config, "error": message}
                       for config, message in raw.errors.items()]
        measurements = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        return measurements, pd.DataFrame(errors, columns=ERROR_COLUMNS)


def config_keys(df: pd.DataFrame, ignore: tuple[str, ...] | list[str] = ()) -> list[str]:
    """The columns of a measurements table that identify one configuration."""
    skip = {*NOT_MEASURED, *ignore}
    return [c for c in df.columns if c not in skip]


def stack_versions(rd: RunDir) -> dict[str, str]:
    """Stack -> the first line of its MPI_Get_library_version, blanks folded, in the run's stack order."""
    out = {}
    for s in rd.meta["stacks_order"]:
        lib = rd.meta["stacks"].get(s, {}).get("library_version", "")
        out[s] = " ".join(lib.splitlines()[0].split()) if lib.strip() else "?"
    return out


def unfinished(rd: RunDir) -> list[Launch]:
    """The launches that did not complete."""
    return [x for x in rd.launches if x.status != OK]


def oversubscription(m: Measured) -> str | None:
    """A sentence when some launch put more ranks on one machine than this host has cores (on mpiguide's test
    cluster every node is this machine), from the raw headers' placement; None otherwise."""
    cores = int(m.rd.meta.get("host", {}).get("cores") or 0)
    shared = m.rd.meta.get("test_cluster")
    worst = 0
    for _, raw in m.launches():
        nprocs = int(raw.header.get("nprocs", 0) or 0)
        ppn = int(raw.header.get("ppn", 0) or 0) or nprocs  # 0: the nodes hold different numbers
        worst = max(worst, nprocs if shared or "hosts" not in raw.header else ppn)
    if not cores or worst <= cores:
        return None
    where = f"the nodes of test cluster '{shared}' share this machine" if shared else "one machine"
    return (f"some launches run {worst} ranks on {cores} cores ({where}): they are oversubscribed, and their "
            "timings mean little")
