"""`mpiguide sim calibrate RUN`: the simulated platform fitted to this machine's ping-pong (core.smpi): the
latency and bandwidth of a line through the one-way times of a ping-pong run, saved for
`mpiguide sim coll --platform calibrated`, with the fit shown size by size."""

from __future__ import annotations

import argparse

import pandas as pd

from mpiguide.core import smpi
from mpiguide.core.errors import MpiguideError
from mpiguide.core.measurements import Measured
from mpiguide.core.runner import RunDir, resolve_run
from mpiguide.front.commands import out

VARIANT = "send_recv"  # the plain MPI_Send/MPI_Recv round trip


def send_recv_medians(rd: RunDir, stack: str | None = None) -> tuple[str, pd.Series]:
    """One stack's median round-trip time per message size of the run's send_recv rows (all its finished
    launches): the stack asked for, or the run's only one."""
    if rd.job != "pingpong":
        raise MpiguideError(f"{rd.path} is a '{rd.job}' run: calibrate from a ping-pong run "
                            "(mpiguide run pingpong --sizes 4,1k,64k,1m)")
    df, _ = Measured.load(rd).tables()
    rows = df[df["variant"] == VARIANT] if "variant" in df else df.iloc[0:0]
    if rows.empty:
        raise MpiguideError(f"{rd.path}: no complete launch with {VARIANT} rows")
    stacks = sorted(rows["stack"].unique())
    if stack is None and len(stacks) > 1:
        raise MpiguideError(f"{rd.path} measured {len(stacks)} stacks ({', '.join(stacks)}), each a network of its "
                            "own: name the one to fit with --stack")
    stack = stack or stacks[0]
    if stack not in stacks:
        raise MpiguideError(f"{rd.path}: no {VARIANT} rows of stack {stack!r} (it has {', '.join(stacks)})")
    return stack, rows[rows["stack"] == stack].groupby("msize_bytes")["time_s"].median()


def calibrate(args: argparse.Namespace) -> int:
    rd = RunDir.open(resolve_run(args.run))
    stack, med = send_recv_medians(rd, args.stack)
    fit = smpi.fit_pingpong(list(med.index), list(med.values), source=f"ping-pong run {rd.path}, stack {stack}")
    path = args.output or smpi.calibration_path()
    fit.save(path)
    out.print(f"calibration: {fit.describe()}", highlight=False)
    for m, t in med.items():
        model = 2 * fit.one_way(m)
        out.print(f"  {int(m):>9} B: measured round trip {t * 1e6:10.2f} us, fitted {model * 1e6:10.2f} us "
                  f"(x{model / t:.2f})", highlight=False)
    out.print(f"saved to {path}; use it with: mpiguide sim coll --platform calibrated", highlight=False)
    return 0
