"""ReproMPI's collectives (MPI_Bcast, ...) and PGMPITuneLib's mock-ups
(GL_Bcast_as_ScatterAllgather, ...) as a coll run (`mpiguide import reprompi`).
ReproMPI's count of Reduce_scatter_block is the block each process receives;
mpiguide's size of it is the whole vector (docs/tuning.md), p blocks."""

from __future__ import annotations

import re

from mpiguide.core.reprompi import ReproImporter, Row
from mpiguide.suites.coll.catalog import COLLECTIVES, MOCKUPS, POOL_DEFAULTS

MOCKUP_NAMES = {name: coll for coll, ms in MOCKUPS.items() for name, _, _ in ms}
OPS = {"MPI_BOR": "bor", "MPI_SUM": "sum", "MPI_MAX": "max"}


class CollImporter(ReproImporter):
    driver = "mg_collbench"

    def call(self, test: str) -> tuple[str, str] | None:
        if test.startswith("MPI_") and test[4:].lower() in COLLECTIVES:
            return test[4:].lower(), "default"
        m = re.fullmatch(r"GL_([A-Za-z_]+?)_as_([A-Za-z]+)", test)
        if m:  # GL_Reduce_scatter_block_as_ReduceScatter -> reducescatterblock_as_reduce_scatter
            what = m.group(1).replace("_", "").lower()
            how = "_".join(p.lower() for p in re.findall(r"[A-Z][a-z]*", m.group(2)))
            name = f"{what}_as_{how}"
            if name in MOCKUP_NAMES:
                return MOCKUP_NAMES[name], name
        return None

    def msize(self, what: str, msize: int, nprocs: int) -> int:
        return msize * nprocs if what == "reduce_scatter_block" else msize

    def template(self, what: str, nprocs: int) -> tuple[str, int]:
        return f"{what}-p{nprocs}", nprocs

    def raw_rows(self, rows: list[Row], esize: int) -> tuple[list[str], str, list[str]]:
        coll = rows[0].what
        header = [f"#@collectives={coll}", f"#@mockup[default]=0 MPI_{coll.capitalize()}"]
        header += [f"#@mockup[{name}]={gl} {formula}" for name, gl, formula in MOCKUPS[coll]]
        data = [f"{coll} {r.impl} {r.msize} {i} {t:.9e}" for r in rows for i, t in enumerate(r.times)]
        return header, "collective impl msize rep time_s", data

    def params(self, rows: list[Row], header: dict[str, str], dtype: str, root: int) -> dict:
        return {"collectives": [c for c in COLLECTIVES if any(r.what == c for r in rows)],
                "sizes": sorted({r.msize for r in rows}), "np": sorted({r.file.nprocs for r in rows}),
                "datatype": dtype if dtype in ("byte", "int", "double") else "int",
                "op": OPS.get(header.get("operation", ""), "sum"), "root": root, **POOL_DEFAULTS, "profiles": None}
