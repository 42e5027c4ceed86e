"""Reader for the raw per-repetition files the C drivers write (docs/formats.md).

A file is `#@key=value` lines (anywhere), one line of column names, then one
row per repetition. `#@end=ok` (or `errors`) marks a driver that finished; a
file without it was cut short. `#@error[<config>]=...` names a configuration
whose data check failed; `#@estimate[<config>]=...` records an NREP estimate.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from mpiguide.core.errors import MpiguideError

# `kind[config]=value`; the config may itself hold '=' (layout labels such as tiled-struct:S1=2:S2=3).
_KEYED = re.compile(r"^(?P<kind>[a-z_]+)\[(?P<config>[^\]]*)\]=(?P<value>.*)$")


@dataclass
class RawFile:
    path: Path
    header: dict[str, str] = field(default_factory=dict)
    columns: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # the data rows as written (fields separated by blanks)
    errors: dict[str, str] = field(default_factory=dict)  # config label -> message
    estimates: dict[str, dict[str, str]] = field(default_factory=dict)
    # other per-configuration notes of a driver: kind -> config label -> value
    # (the engine bench writes info, normal and skip)
    notes: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return "end" in self.header

    @property
    def config_columns(self) -> list[str]:
        return [c for c in self.columns if c not in ("rep", "time_s")]

    @property
    def rows(self) -> list[list[str]]:
        return [line.split() for line in self.lines]

    def frame(self) -> pd.DataFrame:
        """Rows as a typed DataFrame (a column whose every value is a number becomes numeric)."""
        if not self.lines:
            return pd.DataFrame(columns=self.columns)
        return pd.read_csv(io.StringIO("\n".join(self.lines)), sep=r"\s+", header=None, names=self.columns,
                           na_filter=False, engine="c")


def parse(path: str | Path) -> RawFile:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise MpiguideError(f"cannot read raw file {path}: {exc.strerror}") from exc
    raw = RawFile(path=path)
    lines = text.splitlines()
    if text and not text.endswith("\n"):
        lines.pop()  # the driver was killed while writing this line
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if line.startswith("#@"):
            m = _KEYED.match(line[2:])
            key, sep, value = line[2:].partition("=")
            if m:
                value = m["value"]
            elif not sep:
                raise MpiguideError(f"{path}:{lineno}: header line without '=': {line!r}")
            if m and m["kind"] == "error":
                raw.errors[m["config"]] = value
            elif m and m["kind"] == "estimate":
                raw.estimates[m["config"]] = dict(
                    item.split(":", 1) for item in value.split(",") if ":" in item
                )
            elif m:
                raw.notes.setdefault(m["kind"], {})[m["config"]] = value
            else:
                raw.header[key] = value
        elif line.startswith("#"):
            continue
        elif not raw.columns:
            raw.columns = line.split()
            if raw.columns[-2:] != ["rep", "time_s"]:
                raise MpiguideError(f"{path}:{lineno}: column line must end with 'rep time_s', got {line!r}")
        else:
            line = line.strip()
            # single blanks as the drivers write them: counting them is enough (and much faster than split)
            if line.count(" ") + 1 != len(raw.columns) or "  " in line or "\t" in line:
                fields = line.split()
                if len(fields) != len(raw.columns):
                    raise MpiguideError(
                        f"{path}:{lineno}: {len(fields)} fields where the column line has {len(raw.columns)}"
                    )
            raw.lines.append(line)
    if "mpiguide_raw" not in raw.header:
        raise MpiguideError(f"{path} is not an mpiguide raw file (no #@mpiguide_raw header)")
    return raw


PROGRAM_COLUMNS = "side rep time_s"


def write_program_raw(path: Path, side: str, program: str, nprocs: int, seconds: float) -> None:
    """The raw file of a launch of a user's program (LaunchTemplate.program): its side (the template) and the
    launch's wall time from start to exit, one repetition, written whole or not at all."""
    tmp = path.with_name(path.name + ".partial")
    tmp.write_text(f"#@mpiguide_raw=1\n#@driver=program\n#@program={program}\n#@nprocs={nprocs}\n"
                   f"{PROGRAM_COLUMNS}\n{side} 0 {seconds:.9e}\n#@end=ok\n")
    tmp.replace(path)
