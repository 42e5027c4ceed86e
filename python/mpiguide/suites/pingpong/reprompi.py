"""ReproMPI's ping-pongs (Send_Recv, Sendrecv, Isend_Irecv) as a pingpong run
(`mpiguide import reprompi`)."""

from __future__ import annotations

from mpiguide.core.reprompi import ReproImporter, Row

PINGPONGS = {"Send_Recv": "send_recv", "Sendrecv": "sendrecv", "Isend_Irecv": "isend_irecv"}


class PingPongImporter(ReproImporter):
    driver = "mg_pingpong"

    def call(self, test: str) -> tuple[str, str] | None:
        return (PINGPONGS[test], "") if test in PINGPONGS else None

    def template(self, what: str, nprocs: int) -> tuple[str, int]:
        return "pp", 2

    def raw_rows(self, rows: list[Row], esize: int) -> tuple[list[str], str, list[str]]:
        data = [f"{r.what} {r.msize} {r.msize // esize} {i} {t:.9e}" for r in rows for i, t in enumerate(r.times)]
        return [], "variant msize_bytes count rep time_s", data

    def params(self, rows: list[Row], header: dict[str, str], dtype: str, root: int) -> dict:
        return {"sizes": sorted({r.msize for r in rows}), "variants": sorted({r.what for r in rows}),
                "datatype": dtype}
