"""The library's own algorithm selection (COLL-SEL): each collective's default against every algorithm the
library itself lists for it (suites.coll.algorithms), forced through the library's documented control.

A library reads those controls once, at MPI_Init (MPICH copies its MPIR_CVAR_<COLL>_INTRA_ALGORITHM into the
collective's choice there), so every algorithm gets launches of its own, with the default's launch of the same
collective in one block of adjacent launches (LaunchTemplate.block) and the two paired round by round. The
algorithm launches run the default implementation only; their rows are labelled `alg:<name>`. Before it is
timed, each size's result is compared with MPI's definition of the call (mg_collbench), so an algorithm that
returns a different result is reported as an error of its own; where the library says it did not apply the
forced algorithm (Family.refusal_marks in what it printed) or refuses the call with an error (mg_collbench
notes a skip), the point is not applicable, not timed."""

from __future__ import annotations

import re

import pandas as pd

from mpiguide.core import build, families, launch
from mpiguide.core import stacks as stackmod
from mpiguide.core.errors import MpiguideError
from mpiguide.core.suite import LaunchTemplate
from mpiguide.suites.coll import algorithms

GUIDELINE = "COLL-SEL"
PREFIX = "alg:"  # the impl label of an algorithm's rows
NATIVE_FILE = "native-file"  # the impl label of the rows of launches with the library's own tuning file
FILE = "file"  # the name of those launches in their template keys
NATIVE_DIR = "{run_dir}/native/{stack}"  # where a validation run keeps each stack's tuning file


def parse_choice(text: str) -> list[str] | None:
    """--algorithms: None (none), [] (all), or the names asked for."""
    item = text.strip()
    if item == "none":
        return None
    if item == "all":
        return []
    names = [n.strip() for n in item.split(",") if n.strip()]
    if not names:
        raise MpiguideError(f"bad --algorithms '{text}': all, none, or comma-separated algorithm names")
    return names


def read(stack_names: list[str], collectives: list[str], wanted: list[str]) -> dict:
    """Per stack: its family's account of how a refused algorithm is detected, and per collective the
    algorithms to measure (wanted: names, or [] for all), as the library lists them (builds the stack's
    drivers). Stored in the run's parameters, so that a resumed run launches what the first one planned."""
    out, seen = {}, set()
    for name in stack_names:
        stack = stackmod.get(name)
        stack.adapter.check_lists_algorithms()
        build.ensure_built(stack)
        per = {}
        for coll, algs in algorithms.algorithms(stack, collectives).items():
            chosen = [a for a in algs if not wanted or a.name in wanted]
            seen.update(a.name for a in chosen)
            per[coll] = [a.to_dict() for a in chosen]
        out[name] = {"family": stack.family, "detection": stack.adapter.refusal_detection,
                     "refusal_env": dict(stack.adapter.refusal_env),
                     "refusal_marks": list(stack.adapter.refusal_marks), "collectives": per}
    missing = [n for n in wanted if n not in seen]
    if missing:
        raise MpiguideError(f"--algorithms: no stack lists {', '.join(missing)} for {', '.join(collectives)} "
                            f"(`mpiguide algorithms --stacks {','.join(stack_names)}` shows what each lists)")
    return out


def shapes(params: dict) -> list[tuple[int, str | None]]:
    """(processes, placement) of each collective's launches: one per placement where the run measures several
    (params["placements"]), else one per process count at the run's placement (None)."""
    if params.get("placements"):
        return [(nodes * ppn, p) for p in params["placements"] for nodes, ppn in [launch.parse_placement(p)]]
    return [(np_, None) for np_ in params["np"]]


def main_key(coll: str, np_: int, placement: str | None) -> str:
    """The key of a collective's template with its mock-ups (and the block of its algorithms' templates)."""
    return f"{coll}-p{np_}" + (f"-{placement}" if placement else "")


def template_key(coll: str, np_: int, stack: str, alg: str, placement: str | None = None) -> str:
    return f"{main_key(coll, np_, placement)}-{stack}-{re.sub(r'[^A-Za-z0-9_]', '_', alg)}"


def impl_template(coll: str, np_: int, stack: str, impl: str, placement: str | None) -> str:
    """The key of the template whose launches measure impl (the default, the tuned library and the mock-ups
    share the collective's; an algorithm and the library's own file have their own)."""
    if impl == NATIVE_FILE:
        return template_key(coll, np_, stack, FILE, placement)
    if impl.startswith(PREFIX):
        return template_key(coll, np_, stack, impl[len(PREFIX):], placement)
    return main_key(coll, np_, placement)


def templates(params: dict, coll: str, np_: int, base: LaunchTemplate) -> list[LaunchTemplate]:
    """One template per stack and algorithm of coll, in base's block: base's arguments with the default only
    (checked against MPI's definition, what the library prints noted), the algorithm forced in the
    environment."""
    args = list(base.args)
    if "--forms" in args:  # the forms are measured beside the default's launch, not the algorithms'
        del args[args.index("--forms"):args.index("--forms") + 2]
    args += ["--impls", "default", "--capture-output"]
    out = []
    for stack, found in (params.get("algorithms") or {}).items():
        for alg in found["collectives"].get(coll, []):
            env = {**alg["env"], **found["refusal_env"]}
            out.append(LaunchTemplate(template_key(coll, np_, stack, alg["name"], base.placement), base.driver,
                                      np_, args, placement=base.placement, env=tuple(sorted(env.items())),
                                      stack=stack, block=base.block))
    return out


def labels(params: dict) -> dict[tuple[str, str], str]:
    """(stack, template key) -> the impl label of that template's rows."""
    out = {}
    for stack, found in (params.get("algorithms") or {}).items():
        for coll, algs in found["collectives"].items():
            for np_, placement in shapes(params):
                for alg in algs:
                    out[(stack, template_key(coll, np_, stack, alg["name"], placement))] = alg.get(
                        "label", PREFIX + alg["name"])
    return out


def for_validation(params: dict, keep: set[tuple[str, str, str]]) -> dict:
    """The validation run's algorithms: per stack and collective those in keep ((stack, collective, name): the
    ones a tuning file chooses or a violation names), and the library's own tuning file, NATIVE_FILE, read from
    NATIVE_DIR in the environment the stack's family names."""
    out = {}
    for stack, found in (params.get("algorithms") or {}).items():
        family = families.get(found["family"])
        env = family.tuning_env(f"{NATIVE_DIR}/{family.tuning_file}")
        per = {coll: [a for a in algs if (stack, coll, a["name"]) in keep] +
               [{"name": FILE, "value": "", "env": env, "label": NATIVE_FILE}]
               for coll, algs in found["collectives"].items()}
        out[stack] = {**found, "collectives": per}
    return out


def relabel(df: pd.DataFrame, params: dict, impl_col: str = "impl") -> pd.DataFrame:
    """Rows of algorithm launches (columns stack, template) get their algorithm's label as impl."""
    names = labels(params)
    if df.empty or not names:
        return df
    label = [names.get((s, t)) for s, t in zip(df["stack"], df["template"], strict=True)]
    return df.assign(**{impl_col: [lab or i for lab, i in zip(label, df[impl_col], strict=True)]})


def refused(params: dict, stack: str, printed: str) -> bool:
    """Whether what the library printed says it did not apply the forced algorithm."""
    found = (params.get("algorithms") or {}).get(stack)
    return bool(found) and any(mark in printed for mark in found["refusal_marks"])


def detection(params: dict) -> pd.DataFrame:
    """Per stack: how many algorithms were measured and how a refused one is detected."""
    rows = [{"stack": s, "algorithms": sum(map(len, f["collectives"].values())), "refusal detected by": f["detection"]}
            for s, f in (params.get("algorithms") or {}).items()]
    return pd.DataFrame(rows, columns=["stack", "algorithms", "refusal detected by"]).set_index("stack")
