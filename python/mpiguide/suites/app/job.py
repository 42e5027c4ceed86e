"""The launches of a user's own MPI program (LaunchTemplate.program): one template per side, each side the
program under another configuration of libmpiguide-tune, all sides of a round run back to back in a random
order (one block), so that what the machine does in a round reaches them alike and the round pairs them.

Sides:
  native   the program as it is, without the library;
  record   preloaded in mode off with record mode on (each launch's record beside its raw file);
  tuned    preloaded in tuned mode with the profiles of mpiguide app tune, and each library's own tuning file
           where one was written;
  file     each library's own tuning file alone (no preload);
  tuned-record  as tuned, recording (what the tuned library changed, per call shape)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from mpiguide.core.errors import MpiguideError
from mpiguide.core.suite import LaunchTemplate

SIDES = ("native", "record", "tuned", "file", "tuned-record")
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
    return [str(path.resolve()), *argv[1:]]


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
        if side in ("record", "tuned-record"):
            assigns.append(f"MPIGUIDE_TUNE_RECORD={RECORD}")
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
