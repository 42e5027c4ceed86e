"""A report written twice, as report.html and report.md: titled sections of
tables, notes, lists and images; and the CSV tables next to it. Every suite's
report is a Document."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from mpiguide.core import stats
from mpiguide.core.errors import MpiguideError

VERDICT_COLORS = ((stats.VIOLATED, "#f4b6b6"), (stats.INCONCLUSIVE, "#f6e7a8"), (stats.PASS, "#c9ecc9"))
STYLE = ("body{font-family:sans-serif;max-width:90em;margin:2em auto}table{border-collapse:collapse;"
         "font-size:85%}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}img{max-width:100%}")


def html_table(df: pd.DataFrame, colored: bool = False) -> str:
    """colored: cells starting with a verdict get its color."""
    if df.empty:
        return "<p>none</p>"
    text = df.to_html(float_format=lambda v: f"{v:.3g}", escape=True)
    if colored:
        for verdict, color in VERDICT_COLORS:
            text = text.replace(f"<td>{verdict}", f"<td style='background:{color}'>{verdict}")
    return text


def md_table(df: pd.DataFrame) -> str:
    if df.empty:
        return "_none_\n"
    frame = df.reset_index() if not isinstance(df.index, pd.RangeIndex) else df
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * len(frame.columns)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(f"{v:.3g}" if isinstance(v, float) else str(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


class Document:
    def __init__(self, title: str):
        self.title = title
        self.html = [f"<h1>{html.escape(title)}</h1>"]
        self.md = [f"# {title}\n"]

    def heading(self, text: str, level: int = 2) -> None:
        self.html.append(f"<h{level}>{html.escape(text)}</h{level}>")
        self.md.append(f"{'#' * level} {text}\n")

    def text(self, text: str) -> None:
        self.html.append(f"<p>{html.escape(text)}</p>")
        self.md.append(text + "\n")

    def table(self, frame: pd.DataFrame, colored: bool = False) -> None:
        self.html.append(html_table(frame, colored))
        self.md.append(md_table(frame))

    def section(self, title: str, frame: pd.DataFrame, note: str = "", colored: bool = False) -> None:
        self.heading(title)
        if note:
            self.text(note)
        self.table(frame, colored)

    def items(self, entries: list[tuple[str, str]]) -> None:
        """A list of (bold lead, text) entries."""
        self.html.append("<ul>" + "".join(f"<li><b>{html.escape(lead)}</b>: {html.escape(text)}</li>"
                                          for lead, text in entries) + "</ul>")
        self.md.append("".join(f"- {lead}: {text}\n" for lead, text in entries))

    def images(self, paths: list[Path], base: Path) -> None:
        for p in paths:
            rel = p.relative_to(base).as_posix()
            self.html.append(f'<p><img src="{html.escape(rel)}" alt="{html.escape(p.stem)}"></p>')
            self.md.append(f"![{p.stem}]({rel})\n")

    def write(self, out: Path) -> Path:
        """out/report.md and out/report.html; returns the HTML path."""
        path = out / "report.html"
        try:
            (out / "report.md").write_text("\n".join(self.md))
            path.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(self.title)}"
                            f"</title><style>{STYLE}</style></head><body>{''.join(self.html)}</body></html>\n")
        except OSError as exc:
            raise MpiguideError(f"cannot write the report in {out}: {exc.strerror}") from exc
        return path


def fields(values: dict[str, object]) -> pd.DataFrame:
    """A two-column table of named values (a report's Run section)."""
    frame = pd.DataFrame({"value": {k: str(v) for k, v in values.items()}})
    frame.index.name = "field"
    return frame


def write_csvs(out: Path, tables: dict[str, pd.DataFrame], keep_index: tuple[str, ...] = (),
               drop_empty: tuple[str, ...] = ()) -> None:
    """name.csv per table; an empty table still writes its header, except those in drop_empty, whose file
    is removed instead (config_errors.csv exists only when a data check failed)."""
    for name, frame in tables.items():
        path = out / f"{name}.csv"
        try:
            if frame.empty and name in drop_empty:
                path.unlink(missing_ok=True)
                continue
            frame.to_csv(path, index=name in keep_index, float_format="%.9g")
        except OSError as exc:
            raise MpiguideError(f"cannot write {path}: {exc.strerror}") from exc
