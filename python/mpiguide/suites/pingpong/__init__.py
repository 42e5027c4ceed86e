"""The ping-pong latency between two processes (mg_pingpong): Send/Recv,
Sendrecv and Isend/Irecv over message sizes, with two guidelines."""

from __future__ import annotations

import argparse

from mpiguide.core.guidelines import Analysis, GuidelineSuite
from mpiguide.core.options import parse_choice_list, parse_sizes
from mpiguide.core.suite import Guideline, LaunchTemplate
from mpiguide.suites.pingpong import report
from mpiguide.suites.pingpong.reprompi import PingPongImporter

VARIANTS = ("send_recv", "sendrecv", "isend_irecv")
DATATYPES = {"int": 4, "char": 1, "short": 2, "double": 8, "byte": 1}
DEFAULT_SIZES = "4,16,64,256,1k,4k,16k,64k,256k,1m"


class PingPongSuite(GuidelineSuite):
    name = "pingpong"
    title = "Ping-pong latency (MPI_Send/MPI_Recv between two processes)"
    simulation_refusal = ("a ping-pong is what the model is fitted to, not a prediction: measure it (mpiguide "
                          "run pingpong --sizes 4,1k,64k,1m) and fit the platform with mpiguide sim calibrate RUN")
    reprompi = PingPongImporter()
    guidelines = [
        Guideline("PP-GL1", {"variant": "sendrecv"}, {"variant": "send_recv"},
                  "MPI_Sendrecv is no slower than MPI_Send followed by MPI_Recv"),
        Guideline("PP-GL2", {"variant": "send_recv"}, {"variant": "isend_irecv"},
                  "MPI_Send/MPI_Recv is no slower than MPI_Isend/MPI_Irecv with a wait"),
    ]
    ignore_keys = ("count",)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        g = parser.add_argument_group("ping-pong")
        g.add_argument("--sizes", default=DEFAULT_SIZES,
                       help=f"message sizes in bytes, k/m = KiB/MiB (default {DEFAULT_SIZES})")
        g.add_argument("--variants", default=",".join(VARIANTS),
                       help=f"point-to-point variants (default {','.join(VARIANTS)})")
        g.add_argument("--datatype", default="int", choices=sorted(DATATYPES),
                       help="element type of the contiguous buffers (default int)")

    def params(self, args: argparse.Namespace) -> dict:
        sizes = parse_sizes(args.sizes, DATATYPES[args.datatype])
        variants = parse_choice_list(args.variants, VARIANTS, "variant")
        return {"sizes": sizes, "variants": variants, "datatype": args.datatype}

    def launches(self, params: dict) -> list[LaunchTemplate]:
        args = ["--sizes", ",".join(map(str, params["sizes"])), "--variants", ",".join(params["variants"]),
                "--datatype", params["datatype"]]
        return [LaunchTemplate("pp", "mg_pingpong", 2, args)]

    def tables(self, a: Analysis):
        return {f"Latency of {variant} (microseconds, mean of launch medians)": table
                for variant, table in report.latency_tables(a).items()}

    def charts(self, a: Analysis, out):
        return report.latency_chart(a, out)
