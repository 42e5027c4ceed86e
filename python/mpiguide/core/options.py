"""Parsers of option values that several suites share; each error names the
option and says what is expected."""

from __future__ import annotations

import argparse

from mpiguide.core.errors import MpiguideError

# MPI's thread levels, lowest first, as the drivers' --thread-level and a record's #@thread_level name them
THREAD_LEVELS = ("single", "funneled", "serialized", "multiple")


def add_thread_level(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--thread-level", choices=THREAD_LEVELS,
                       help="start MPI at this thread level (MPI_Init_thread), the application's: a library may run "
                            "its calls at another speed at another level (MPICH's MPI_Allreduce of a few bytes is "
                            "about x8 slower under multiple, mpi4py's default) (default: MPI_Init)")


def thread_level_args(params: dict) -> list[str]:
    """The drivers' option for the run's thread level, if it has one."""
    level = params.get("thread_level")
    return ["--thread-level", level] if level else []


def parse_sizes(text: str, unit: int = 1) -> list[int]:
    """'4,1k,1m' -> [4, 1024, 1048576]; each a positive multiple of unit."""
    sizes = []
    for item in text.split(","):
        item = item.strip().lower()
        mult = {"k": 1024, "m": 1024 * 1024}.get(item[-1:], 1)
        digits = item[:-1] if mult > 1 else item
        if not digits.isdigit() or int(digits) == 0:
            raise MpiguideError(f"bad size '{item}' in '{text}': use positive byte counts like 4,1k,1m")
        size = int(digits) * mult
        if size % unit:
            raise MpiguideError(f"size {size} is not a multiple of the element size {unit} bytes")
        sizes.append(size)
    return sizes


def parse_choice_list(text: str, known: tuple[str, ...], what: str) -> list[str]:
    """'a,b' -> ['a', 'b'], each one of known."""
    items = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in items if x not in known]
    if bad or not items:
        raise MpiguideError(f"unknown {what} '{','.join(bad) or text}': choose from {', '.join(known)}")
    return items


def int_list(text: str, what: str, minimum: int = 1) -> list[int]:
    """'2,10' -> [2, 10], each at least minimum."""
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise MpiguideError(f"bad {what} '{text}': comma-separated integers") from None
    if not values or min(values) < minimum:
        raise MpiguideError(f"bad {what} '{text}': integers of at least {minimum}")
    return values


def fmt_duration(seconds: float) -> str:
    """A duration as a person reads it: '42 s', '18 min', '1.5 h'."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def add_old_name(parser: argparse.ArgumentParser, old: str, option: argparse.Action) -> None:
    """`old`, an earlier spelling of `option`, still taken for it (the same value, the same checks) and left out
    of --help: an option has one spelling over all commands (tests/python/test_cli_options.py)."""
    parser.add_argument(old, dest=option.dest, type=option.type, choices=option.choices, metavar=option.metavar,
                        default=argparse.SUPPRESS, help=argparse.SUPPRESS)
