"""The collective algorithms each MPI library offers, as the library itself lists them at run time (its MPI_T
control variables, printed by the mg_mpit driver), never from a list kept by hand: what the native algorithm
selection (COLL-SEL) measures and forces. The family adapters (core.families) know where each library lists
them and how each is forced."""

from __future__ import annotations

import json

from mpiguide.core import catalog
from mpiguide.core.errors import MpiguideError
from mpiguide.core.families import Algorithm
from mpiguide.core.stacks import Stack
from mpiguide.suites.coll.catalog import COLLECTIVES


def listing(stack: Stack) -> dict:
    """mg_mpit's JSON object for the control variables the stack's family lists its algorithms in."""
    stack.adapter.check_lists_algorithms()
    return catalog.driver_json(stack, "mg_mpit", ["--match", ",".join(stack.adapter.algorithm_cvar_match)])


def algorithms(stack: Stack, collectives: list[str], cvars: list[dict] | None = None) -> dict[str, list[Algorithm]]:
    """Per collective, the algorithms the stack's library offers besides its default, read from the library
    (cvars: a listing already read, for tests and for reuse)."""
    unknown = [c for c in collectives if c not in COLLECTIVES]
    if unknown:
        raise MpiguideError(f"unknown collective(s) {', '.join(unknown)}: choose from {', '.join(COLLECTIVES)}")
    if cvars is None:
        cvars = listing(stack)["cvars"]
    return {c: stack.adapter.algorithms(cvars, c) for c in collectives}


def console_lines(stack: Stack, found: dict[str, list[Algorithm]]) -> list[str]:
    """What `mpiguide algorithms` prints for one stack: per collective the algorithms and how one is forced."""
    lines = [f"{stack.name} ({stack.family}): {sum(map(len, found.values()))} algorithm(s) of "
             f"{len(found)} collective(s), as the library lists them"]
    for coll, algs in found.items():
        lines.append(f"  {coll}: " + ", ".join(f"{a.name} ({a.value})" if a.value != a.name else a.name
                                               for a in algs))
        if algs:
            first = algs[0]
            placeholder = "<name>" if first.value == first.name else "<number>"
            lines.append("    forced by: " + " ".join([*(f"{k}={v}" for k, v in first.needs),
                                                      f"{first.control}={placeholder}"]))
    return lines


def to_json(found: dict[str, dict[str, list[Algorithm]]]) -> str:
    """Per stack and collective, the algorithms with their values, environments and the parameters a tuning
    file gives them."""
    return json.dumps({stack: {coll: [a.to_dict() for a in algs] for coll, algs in per.items()}
                       for stack, per in found.items()}, indent=2)
