"""One spelling for one option over every command (issue 44): the options that several commands share are
spelled the same in all of them, and an earlier spelling is only ever a hidden old name of the option, giving
the same value. Checked mechanically on every parser the command line has."""

from __future__ import annotations

import argparse

import pytest

from mpiguide.cli import _batch_options, build_parser

# The options several commands share, each with spellings of the same meaning that no command may show instead.
SYNONYMS = {
    "--output": ("--out", "--outdir", "--out-dir", "--output-dir", "--dir", "-o"),
    "--resume": ("--continue", "--restart"),
    "--stacks": ("--mpis", "--libraries"),
    "--runs": ("--launches", "--repeats"),
    "--np": ("--ranks", "--nprocs", "--procs", "--processes", "-n", "-np"),
    "--nrep": ("--reps", "--repetitions", "--nreps"),
    "--sizes": ("--msizes", "--message-sizes"),
    "--collectives": ("--colls",),
    "--timeout": ("--launch-timeout", "--wall-limit", "--time-limit"),
    "--tolerance": ("--tol",),
    "--threshold": ("--min-gain",),
    "--dry-run": ("--dryrun",),
}
# A spelling that abbreviates a shared option (a proper prefix of it, 3 characters or more) names something else
# only where it says so here. (--type of the datatype suites is the basic type their layouts are built of: there
# "datatype" is the derived type under test, one of their --modes, so it is not a synonym of --datatype.)
OTHER_MEANING = {"--stack": "one stack, where a command works on exactly one (dt explain, sim calibrate) or "
                            "names the one it makes (import reprompi)",
                 "--time": "the time limit of a batch job's allocation (mpiguide batch), as sbatch spells it"}


def parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    """Every command's parser, subcommands and jobs included, and mpiguide batch's own options."""
    found, seen = [], set()

    def walk(p: argparse.ArgumentParser, path: str) -> None:
        if id(p) in seen:
            return
        seen.add(id(p))
        found.append((path, p))
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    walk(sub, f"{path} {name}")

    walk(build_parser(), "mpiguide")
    found.append(("mpiguide batch", _batch_options()))
    return found


def shown(p: argparse.ArgumentParser) -> list[tuple[str, argparse.Action]]:
    return [(o, a) for a in p._actions if a.help != argparse.SUPPRESS for o in a.option_strings]


def canonical_of(option: str) -> str | None:
    """The shared option that `option` is another spelling of, or None."""
    for canonical, others in SYNONYMS.items():
        if option != canonical and (option in others or (
                canonical.startswith(option) and len(option.lstrip("-")) >= 3 and option not in OTHER_MEANING)):
            return canonical
    return None


def test_every_command_spells_a_shared_option_one_way():
    wrong = [f"{path}: {option} (the other commands say {canonical_of(option)})" for path, p in parsers()
             for option, _ in shown(p) if canonical_of(option)]
    assert wrong == []


def test_the_table_lists_shared_options():
    """Every option of the table is one that at least two commands take (the table keeps up with the commands)."""
    taken = {}
    for path, p in parsers():
        for option, _ in shown(p):
            taken.setdefault(option, set()).add(path)
    assert [c for c in SYNONYMS if len(taken.get(c, ())) < 2] == []


def test_a_hidden_option_is_an_old_name_of_one_shown():
    """An option left out of --help stores where one shown in the same command does: an old spelling kept for
    old command lines, never a second option."""
    lost = []
    for path, p in parsers():
        dests = {a.dest for _, a in shown(p)}
        lost += [f"{path}: {o}" for a in p._actions if a.help == argparse.SUPPRESS and a.option_strings
                 and a.dest not in dests for o in a.option_strings]
    assert lost == []


@pytest.mark.parametrize(("argv", "old", "new", "value"), [
    (["sim", "coll"], "--out", "--output", "d"),
    (["sim", "coll"], "--launch-timeout", "--timeout", "60"),
    (["sim", "check", "RUN"], "--out", "--output", "d"),
    (["sim", "compare", "A", "B"], "--out", "--output", "d"),
    (["sim", "calibrate", "RUN"], "--out", "--output", "f.json"),
    (["run", "apps"], "--ranks", "--np", "1,2"),
    (["apps", "run"], "--ranks", "--np", "1,2"),
])
def test_an_old_spelling_gives_what_the_new_one_does(argv, old, new, value, capsys):
    parser = build_parser()
    assert vars(parser.parse_args([*argv, old, value])) == vars(parser.parse_args([*argv, new, value]))
    with pytest.raises(SystemExit):
        parser.parse_args([*argv, "--help"])
    usage = capsys.readouterr().out
    assert new in usage and f"{old} " not in usage and f"{old}," not in usage
