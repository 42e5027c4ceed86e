"""`mpiguide sim calibrate RUN`: the simulated platform fitted to this machine's ping-pong (core.smpi): the
latency and bandwidth of a line through the one-way times of a ping-pong run, saved for
`mpiguide sim coll --platform calibrated`, with the fit shown size by size."""

from __future__ import annotations

import argparse

import pandas as pd

from mpiguide.core import rawfile, smpi
from mpiguide.core.errors import MpiguideError
from mpiguide.core.runner import RunDir, resolve_run
from mpiguide.front.commands import out

VARIANT = "send_recv"  # the plain MPI_Send/MPI_Recv round trip


def send_recv_medians(rd: RunDir) -> pd.Series:
    """The median round-trip time per message size of the run's send_recv rows (all complete launches)."""
    if rd.job != "pingpong":
        raise MpiguideError(f"{rd.path} is a '{rd.job}' run: calibrate from a ping-pong run "
                            "(mpiguide run pingpong --sizes 4,1k,64k,1m)")
    frames = []
    for x in rd.launches:
        path = rd.path / x.raw
        f = rawfile.parse(path) if path.exists() else None
        df = f.frame() if f is not None and f.complete else pd.DataFrame()
        if not df.empty and "variant" in df:
            frames.append(df[df["variant"] == VARIANT])
    if not frames or all(f.empty for f in frames):
        raise MpiguideError(f"{rd.path}: no complete launch with {VARIANT} rows")
    return pd.concat(frames).groupby("msize_bytes")["time_s"].median()


def calibrate(args: argparse.Namespace) -> int:
    rd = RunDir.open(resolve_run(args.run))
    med = send_recv_medians(rd)
    fit = smpi.fit_pingpong(list(med.index), list(med.values), source=f"ping-pong run {rd.path}")
    path = args.out or smpi.calibration_path()
    fit.save(path)
    out.print(f"calibration: {fit.describe()}", highlight=False)
    for m, t in med.items():
        model = 2 * fit.one_way(m)
        out.print(f"  {int(m):>9} B: measured round trip {t * 1e6:10.2f} us, fitted {model * 1e6:10.2f} us "
                  f"(x{model / t:.2f})", highlight=False)
    out.print(f"saved to {path}; use it with: mpiguide sim coll --platform calibrated", highlight=False)
    return 0
