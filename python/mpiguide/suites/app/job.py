"""The launches of a user's own MPI program (LaunchTemplate.program): one template per side, each side the
program under another configuration of libmpiguide-tune, all sides of a round run back to back in a random
order (one block), so that what the machine does in a round reaches them alike and the round pairs them.

Sides:
  native   the program as it is, without the library;
  record   preloaded in mode off with record mode on (each launch's record beside its raw file);
  tuned    preloaded in tuned mode with the profiles of mpiguide app tune, and each library's own tuning file
           where one was written;
  file     each library's own tuning file alone (no preload);
  tuned-record  as tuned, recording (what the tuned library changed, per call shape);
  online   preloaded in online mode without profiles: the library chooses inside each launch;
  record-normalized  recording, every derived datatype normalized (forced mode): with `record`, the program's
           own calls no benchmark rebuilds, measured in it under both strategies (inprogram.py)."""

from __future__ import annotations

import argparse
import os
import re
import shutil
from pathlib import Path

from mpiguide.core import stacks as stackmod
from mpiguide.core.errors import MpiguideError
from mpiguide.core.suite import LaunchTemplate

SIDES = ("native", "record", "tuned", "file", "tuned-record", "online", "record-normalized")
LIBRARY = "{build}/libmpiguide-tune.so"  # the stack's tuning library (runner placeholders)
RECORD = "{run_dir}/raw/{stack}/{launch}.record"  # beside the launch's raw file (its folder exists)
BLOCK = "program"


def resolve_program(argv: list[str]) -> list[str]:
    """The program's argv with its path made absolute (found on PATH like a shell would); a clear error for a
    program that is missing or cannot be run."""
    argv = [a for a in argv if a != "--"] if argv[:1] == ["--"] else list(argv)
    if not argv:
        raise MpiguideError("no program to run: give it after --, such as: mpiguide app record --np 4 -- ./app "
                            "input.dat")
    name = argv[0]
    path = Path(name) if "/" in name else (Path(shutil.which(name)) if shutil.which(name) else None)
    if path is None or not path.exists():
        raise MpiguideError(f"the program {name} does not exist" + ("" if "/" in name else " (nor on PATH)"))
    if not path.is_file() or not os.access(path, os.X_OK):
        raise MpiguideError(f"the program {path} is not an executable file")
    # absolute, but not through its symbolic links: a virtual environment's python finds its packages by the
    # path it was started as
    return [os.path.abspath(path), *argv[1:]]


def _env_program() -> str:
    env = shutil.which("env")
    if not env:
        raise MpiguideError("the env program is not on PATH: mpiguide starts the preloaded side through it")
    return env


def templates(params: dict) -> list[LaunchTemplate]:
    """One template per side of params["sides"] (a side per stack where its environment differs by stack)."""
    program, np_ = params["program"], params["np"]
    placement = params.get("placement")
    out = []
    for side in params["sides"]:
        if side == "native":
            out.append(LaunchTemplate(side, program[0], np_, program[1:], placement, program=True, block=BLOCK))
            continue
        if side == "file":
            for stack, env in params.get("file_env", {}).items():
                out.append(LaunchTemplate(f"file-{stack}", program[0], np_, program[1:], placement,
                                          env=tuple(sorted(env.items())), stack=stack, program=True, block=BLOCK))
            continue
        assigns = [f"LD_PRELOAD={LIBRARY}"]
        if side in ("record", "tuned-record", "record-normalized"):
            assigns.append(f"MPIGUIDE_TUNE_RECORD={RECORD}")
        if side == "record-normalized":
            assigns += ["MPIGUIDE_TUNE_MODE=forced", "MPIGUIDE_TUNE_FORCE=datatypes=normalized"]
        if side == "online":
            assigns.append("MPIGUIDE_TUNE_MODE=online")
        if side in ("tuned", "tuned-record"):
            assigns += ["MPIGUIDE_TUNE_MODE=tuned", f"MPIGUIDE_TUNE_PROFILES={params['profiles']}"]
            files = params.get("file_env") or {}
            # with a library's own tuning file, each stack's tuned side uses its own (one template per stack)
            for stack in params["stacks"] if files else [None]:
                more = [f"{k}={v}" for k, v in sorted(files.get(stack, {}).items())]
                out.append(LaunchTemplate(f"{side}-{stack}" if stack else side, _env_program(), np_,
                                          [*assigns, *more, *program], placement, stack=stack, program=True,
                                          block=BLOCK))
            continue
        out.append(LaunchTemplate(side, _env_program(), np_, [*assigns, *program], placement, program=True,
                                  block=BLOCK))
    return out


def side_of(template: str) -> str:
    """The side of a template key (file-<stack> -> file)."""
    for side in sorted(SIDES, key=len, reverse=True):
        if template == side or template.startswith(side + "-"):
            return side
    return template


def add_output_options(g: argparse._ArgumentGroup) -> None:
    """How a launch's output is compared and what is measured."""
    g.add_argument("--mask", action="append", default=[], metavar="REGEX",
                   help="leave lines matching REGEX out of the output comparison (timings, dates); repeatable")
    g.add_argument("--metric", metavar="REGEX", help="measure a number the program prints instead of the launch's "
                   "wall time: the last match's first group (a time: less is better)")
    g.add_argument("--check", metavar="CMD", help="judge each launch's output by CMD OUTPUT_FILE (exit 0: right) "
                   "instead of comparing it with the native program's")


def program_params(args: argparse.Namespace, sides: list[str], profiles: str | None,
                   file_env: dict | None = None) -> dict:
    """The app job's parameters from a command line's program and output options."""
    if args.np < 1:
        raise MpiguideError(f"bad --np {args.np}: at least 1 process")
    for pattern in [*args.mask, *([args.metric] if args.metric else [])]:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise MpiguideError(f"bad regular expression {pattern!r}: {exc}") from None
    return {"program": resolve_program(args.program), "np": args.np, "sides": sides, "profiles": profiles,
            "stacks": stackmod.parse_stack_list(args.stacks), "masks": list(args.mask), "metric": args.metric,
            "check": args.check, "file_env": file_env or {}, "placement": None}
