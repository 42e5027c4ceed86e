"""The protocol every suite implements, and the registry the CLI and the runner
go through without knowing which suite they talk to.

A suite is one capability of mpiguide (the ping-pong latency, the datatype
engine bench, the derived-datatype expectation tests, the collective tuning,
the stencil applications). It owns

  - its measurement job: the options of `mpiguide run NAME`, the validated
    parameters stored in meta.json, and the driver launches they mean;
  - its results: the analysis, the report files and the lines printed at the
    end of a run (`report`);
  - any command of its own (`mpiguide ddt list`, `mpiguide tune`, ...);
  - optionally, the importer of other tools' measurements of its job.

Adding a suite is one package under mpiguide/suites/ and one line in its registry.
"""

from __future__ import annotations

import argparse
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from mpiguide.core.errors import MpiguideError
from mpiguide.core.stats import SAMPLE_MODES

if TYPE_CHECKING:
    from mpiguide.core.reprompi import ReproImporter
    from mpiguide.core.runner import RunDir


@dataclass(frozen=True)
class Guideline:
    """`A ⪯ B`: configurations selected by `a` should be no slower than those selected by `b`."""

    name: str
    a: dict[str, str]
    b: dict[str, str]
    text: str


# What Suite.verdict_points gives `mpiguide compare`: one row per guideline point of a run. `point` names the
# point within its stack and guideline alike in every run of the same parameters; `factor` is how much slower
# the guideline's left side was; `ratio` (A / B), `se_log` and `df` are the estimate the verdict was judged on
# (stats.Verdict), from which compare tests whether the point changed between two runs.
POINT_COLUMNS = ["stack", "guideline", "point", "verdict", "factor", "p_value", "ratio", "se_log", "df"]
# Optional beside them: the launch template(s) whose launches measured the point, so that adaptive launches
# (`--until-decided`) launch only the templates of undecided points (without it: every template of the stack);
# the verdict's estimate of how many more launches would decide it, so that they skip points out of reach; and
# any column of the suite's own that Suite.narrow reads.
POINT_TEMPLATE = "template"
TEMPLATE_SEP = ";"  # between the templates of a point measured by several (its sides in launches of their own)
POINT_MORE = "more"


@dataclass(frozen=True)
class LaunchTemplate:
    """One driver invocation (a whole configuration grid) per stack and launch."""

    key: str
    driver: str
    nprocs: int
    args: list[str]
    placement: str | None = None  # NODESxPPN of this template instead of the run's --placement
    # environment variables of its launches, beside the stack's (how a library is told to run one algorithm)
    env: tuple[tuple[str, str], ...] = ()
    stack: str | None = None  # launched on this stack only (None: on every stack of the run)
    # templates with the same block run back to back in each round (None: a block of its own), for sides that
    # must be measured in launches of their own but close in time
    block: str | None = None
    # driver is a program of the user's (a path; args its arguments): it gets no measurement options and no
    # --output, and the runner writes its raw file, one repetition timed from start to exit
    program: bool = False


@dataclass
class Report:
    """What a suite's report wrote and what the terminal shows of it."""

    path: Path  # report.html
    lines: list[str] = field(default_factory=list)  # printed before "report: <path>"


@dataclass
class AppPlan:
    """What one suite measures of an application's record (`mpiguide app tune`): a run of the suite with these
    parameters (empty: nothing to run), the recorded call shapes it measures (rows of core.record's
    Record.calls, with a column `key` naming what of the run stands for each) and those it leaves (with a
    column `reason`)."""

    suite: str
    params: dict
    taken: pd.DataFrame
    left: pd.DataFrame
    nprocs: list[int] = field(default_factory=list)  # the process counts of its launches


@dataclass
class AppChoice:
    """What a suite chose from an AppPlan's run: per measured key and stack, the implementation or strategy the
    tuned library takes (`choice`; "native" where nothing was shown to save the threshold) with its gain and
    interval (`gain`, `low`, `high`) and why (`decision`); the files it wrote (profiles in out/<stack>/, each
    library's own tuning file), and per stack the environment that puts them to use."""

    # stack, key, choice, gain, low, high, decision; and native_s where the suite measured the call alone: the
    # native call's seconds per call (what a nonblocking call costs the program up to its completion)
    decisions: pd.DataFrame
    files: list[Path] = field(default_factory=list)
    env: dict[str, dict[str, str]] = field(default_factory=dict)  # stack -> variables beside the profiles


@dataclass
class CommandContext:
    """What a suite's own commands need from the CLI: the common options of a measurement job, the function
    that runs one (`mpiguide ddt run` is `mpiguide run ddt`), and the registry of every suite (for a workflow
    that asks each suite through the protocol, such as `mpiguide app tune`)."""

    add_run_options: Callable[[argparse.ArgumentParser, Suite], None]
    run_command: Callable[[argparse.Namespace], int]
    suites: Registry | None = None


class Suite(ABC):
    name: str  # the job name: `mpiguide run NAME`, meta.json "job"
    title: str
    # A driver that times a whole loop a fixed number of times takes --sync and --nrep N only (no nrep
    # rule or estimation); its default N.
    fixed_nrep: int | None = None
    default_samples: str = "medians"  # what verdicts test by default (stats.SAMPLE_MODES)
    # The job takes several placements in one run (--placement 2x1,1x2) and plans a launch per placement.
    many_placements: bool = False
    # How `mpiguide import reprompi` turns ReproMPI rows into this job's runs (None: it takes none).
    reprompi: ReproImporter | None = None

    # ---- the measurement job

    @abstractmethod
    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """The job's own options (the common ones are added by the CLI)."""

    @abstractmethod
    def params(self, args: argparse.Namespace) -> dict:
        """Validated, JSON-able parameters (stored in meta.json, used on resume)."""

    @abstractmethod
    def launches(self, params: dict) -> list[LaunchTemplate]:
        """The driver invocations of one launch round on one stack."""

    def describe_plan(self, params: dict, runs: int, stacks: int, nrep: str | int) -> str:
        """A line printed before a run starts (size of the grid, expected duration); empty for none."""
        return ""

    # ---- results

    @abstractmethod
    def report(self, runs: list[RunDir], out: Path) -> Report:
        """Analyses the runs (one, or several where the suite compares them), writes the tables, charts,
        report.md and report.html into out, and says what to print."""

    def verdict_points(self, rd: RunDir) -> pd.DataFrame | None:
        """The run's guideline verdicts as POINT_COLUMNS rows for `mpiguide compare`; None for a suite that has
        no guidelines (compare then looks at the configurations only)."""
        return None

    def narrow(self, params: dict, template: LaunchTemplate, points: pd.DataFrame) -> LaunchTemplate:
        """The template measuring only what `points` need: its undecided verdict points (verdict_points rows,
        with the suite's own columns), for an adaptive round. The whole template by default."""
        return template

    # ---- tuning an application (`mpiguide app tune`: docs/app-tuning.md)

    def app_plan(self, calls: pd.DataFrame, options: dict) -> list[AppPlan]:
        """The runs of this suite that measure the application's recorded calls it can tune (calls: rows of
        core.record's Record.calls; options: the app command's, such as `algorithms`); [] for a suite that
        tunes no application calls (the default)."""
        return []

    def app_choose(self, rds: list[RunDir], threshold: float, out: Path, origin: str) -> AppChoice:
        """From the finished runs of its AppPlans: the choices of decided gains of at least `threshold`, their
        profiles written into out/<stack>/ (one profile per key of the library, however many runs measured
        it)."""
        raise MpiguideError(f"the {self.name} suite tunes no application calls")

    def inputs(self, params: dict) -> dict[str, str]:
        """Files its launches read, by path relative to the run directory (written when the run is created,
        and again before a launch where missing); none by default."""
        return {}

    # ---- simulation (`mpiguide sim NAME`: SimGrid SMPI, predictions of a model)

    # Why the job cannot run on a simulated cluster, for the refusal; None where it can (it then implements
    # add_simulation_arguments and simulate).
    simulation_refusal: str | None = "it has no simulated form"

    def add_simulation_arguments(self, parser: argparse.ArgumentParser) -> None:  # noqa: B027
        """The options of `mpiguide sim NAME` (none where the job is refused)."""

    def simulate(self, args: argparse.Namespace) -> int:
        raise MpiguideError(f"mpiguide sim {self.name}: refused: {self.simulation_refusal}")

    def add_simulation_commands(self, jobs: argparse._SubParsersAction) -> None:  # noqa: B027
        """Further `mpiguide sim` commands of the suite (none by default)."""

    # ---- commands of its own

    def add_commands(self, commands: argparse._SubParsersAction, context: CommandContext) -> None:  # noqa: B027
        """Top-level commands of the suite (`mpiguide ddt ...`); none by default."""


_PROTOCOL = ("add_arguments", "params", "launches", "describe_plan", "report", "verdict_points", "narrow",
             "add_commands")


def check_suite(suite: object) -> Suite:
    """The suite, if it implements the protocol; TypeError naming what is missing otherwise."""
    if not isinstance(suite, Suite):
        raise TypeError(f"{suite!r} is not a Suite (mpiguide.core.suite.Suite)")
    missing = [m for m in _PROTOCOL if not callable(getattr(suite, m, None))]
    name = getattr(suite, "name", None)
    if not isinstance(name, str) or not name.isidentifier() or name != name.lower():
        missing.append("name (a lower-case identifier)")
    if not isinstance(getattr(suite, "title", None), str) or not suite.title:
        missing.append("title")
    if suite.default_samples not in SAMPLE_MODES:
        missing.append(f"default_samples (one of {', '.join(SAMPLE_MODES)})")
    if suite.fixed_nrep is not None and (not isinstance(suite.fixed_nrep, int) or suite.fixed_nrep < 1):
        missing.append("fixed_nrep (None or a positive number)")
    if missing:
        raise TypeError(f"suite {name!r} does not implement the suite protocol: {', '.join(missing)}")
    return suite


class Registry:
    """The suites by name, in the order they were registered (the CLI's order)."""

    def __init__(self, suites: list[Suite], default: str):
        self._suites: dict[str, Suite] = {}
        for s in suites:
            check_suite(s)
            if s.name in self._suites:
                raise TypeError(f"two suites are named {s.name!r}")
            self._suites[s.name] = s
        if default not in self._suites:
            raise TypeError(f"the default suite {default!r} is not registered")
        self.default = default

    def __iter__(self) -> Iterator[Suite]:
        return iter(self._suites.values())

    def __contains__(self, name: object) -> bool:
        return name in self._suites

    def names(self) -> list[str]:
        return list(self._suites)

    def get(self, name: str) -> Suite:
        try:
            return self._suites[name]
        except KeyError:
            raise MpiguideError(f"unknown job '{name}': choose one of {', '.join(self._suites)}") from None
