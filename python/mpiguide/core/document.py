"""A report written twice, as report.html and report.md: a picture first (a
heat map of the verdicts), then titled sections of tables, notes, lists and
images, which the HTML folds (each opens with a click); and the CSV tables next
to it. Every suite's report is a Document."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from mpiguide.core import stats
from mpiguide.core.errors import MpiguideError

VERDICT_COLORS = ((stats.VIOLATED, "#f4b6b6"), (stats.INCONCLUSIVE, "#f6e7a8"), (stats.PASS, "#c9ecc9"))
STYLE = ("body{font-family:sans-serif;max-width:90em;margin:2em auto}table{border-collapse:collapse;"
         "font-size:85%}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}img{max-width:100%}"
         "details{margin:.4em 0}summary{cursor:pointer}summary h2{display:inline;font-size:1.2em}"
         "table.heatmap td.cell{text-align:center;min-width:5em;font-weight:bold}"
         "table.heatmap th{text-align:left;font-weight:normal}figure{margin:1em 0}"
         "figcaption{font-size:85%;color:#444;margin-top:.4em}")


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


def worst_cells(frame: pd.DataFrame, rows: list[str], cols: list[str], factor: str = "factor") -> pd.DataFrame:
    """Per rows x cols of a verdict table: the worst verdict, how many of the cell's points have it, and the
    largest factor among them. One row per cell (rows, cols, verdict, count, points, factor)."""
    out = []
    if frame.empty:
        return pd.DataFrame(columns=[*rows, *cols, "verdict", "count", "points", "factor"])
    for key, part in frame.groupby([*rows, *cols], sort=False):
        worst = max(part["verdict"], key=lambda v: stats.RANK.get(v, -1))
        hit = part[part["verdict"] == worst]
        f = pd.to_numeric(hit[factor], errors="coerce").max()
        out.append(dict(zip([*rows, *cols], key if isinstance(key, tuple) else (key,), strict=True),
                        verdict=worst, count=len(hit), points=len(part), factor=f))
    return pd.DataFrame(out)


class Heatmap:
    """The picture a report opens with: rows x columns of coloured cells, colour = a verdict (or status),
    text = its worst factor; each cell names its verdict, count and factor in data- attributes (the browser
    test reads them) and in its tooltip."""

    def __init__(self, cells: pd.DataFrame, rows: list[str], cols: list[str], caption: str,
                 colors: tuple[tuple[str, str], ...] = VERDICT_COLORS, text=None):
        self.cells, self.rows, self.cols, self.caption, self.colors = cells, rows, cols, caption, dict(colors)
        self.text = text or (lambda c: f"x{c.factor:.2f}" if pd.notna(c.factor) else str(c.verdict))

    def _grid(self) -> tuple[list[tuple], list[tuple], dict[tuple, object]]:
        def key(c, names):
            return tuple(getattr(c, n) for n in names)
        cells = list(self.cells.itertuples(index=False))
        rows = list(dict.fromkeys(key(c, self.rows) for c in cells))
        cols = list(dict.fromkeys(key(c, self.cols) for c in cells))
        return rows, cols, {(key(c, self.rows), key(c, self.cols)): c for c in cells}

    def html(self) -> str:
        rows, cols, at = self._grid()
        if not rows:
            return f"<figure><p>no verdicts</p><figcaption>{html.escape(self.caption)}</figcaption></figure>"
        head = "".join(f"<th>{html.escape(' / '.join(map(str, c)))}</th>" for c in cols)
        lines = [f"<tr><th>{html.escape(' / '.join(self.rows))}</th>{head}</tr>"]
        for r in rows:
            tds = []
            for c in cols:
                cell = at.get((r, c))
                if cell is None:
                    tds.append("<td class='cell empty'>-</td>")
                    continue
                f = "" if pd.isna(cell.factor) else f"{cell.factor:.6g}"
                tip = f"{cell.verdict}: {cell.count} of {cell.points}" + (f", worst x{cell.factor:.3g}" if f else "")
                row_name, col_name = (html.escape(" / ".join(map(str, x))) for x in (r, c))
                tds.append(f"<td class='cell' data-row='{row_name}' data-col='{col_name}' "
                           f"data-verdict='{html.escape(str(cell.verdict))}' "
                           f"data-count='{cell.count}' data-points='{cell.points}' data-factor='{f}' "
                           f"title='{html.escape(tip)}' style='background:{self.colors.get(cell.verdict, '#eee')}'>"
                           f"{html.escape(self.text(cell))}</td>")
            lines.append(f"<tr><th>{html.escape(' / '.join(map(str, r)))}</th>{''.join(tds)}</tr>")
        legend = " ".join(f"<span style='background:{c};padding:0 .5em'>{html.escape(v)}</span>"
                          for v, c in self.colors.items())
        return (f"<figure><table class='heatmap'>{''.join(lines)}</table><figcaption>{legend} "
                f"{html.escape(self.caption)}</figcaption></figure>")

    def markdown(self) -> str:
        rows, cols, at = self._grid()
        if not rows:
            return "_no verdicts_\n"
        frame = pd.DataFrame({" / ".join(map(str, c)): [
            f"{at[(r, c)].verdict} {self.text(at[(r, c)])}" if (r, c) in at else "-" for r in rows] for c in cols},
            index=[" / ".join(map(str, r)) for r in rows])
        frame.index.name = " / ".join(self.rows)
        return md_table(frame) + f"\n{self.caption}\n"


class Document:
    def __init__(self, title: str):
        self.title = title
        self.html: list[str] = []
        self.md: list[str] = []
        self.picture: Heatmap | None = None
        self._open = False  # an HTML <details> of a section is open

    def heatmap(self, picture: Heatmap) -> None:
        """The picture the report opens with, whenever it is given."""
        self.picture = picture

    def heading(self, text: str, level: int = 2) -> None:
        if level == 2:  # a section: folded in HTML
            if self._open:
                self.html.append("</details>")
            self.html.append(f"<details><summary><h2>{html.escape(text)}</h2></summary>")
            self._open = True
        else:
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
        first_html = [f"<h1>{html.escape(self.title)}</h1>"] + ([self.picture.html()] if self.picture else [])
        first_md = [f"# {self.title}\n"] + ([self.picture.markdown()] if self.picture else [])
        body = first_html + self.html + (["</details>"] if self._open else [])
        try:
            (out / "report.md").write_text("\n".join(first_md + self.md))
            path.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(self.title)}"
                            f"</title><style>{STYLE}</style></head><body>{''.join(body)}</body></html>\n")
        except OSError as exc:
            raise MpiguideError(f"cannot write the report in {out}: {exc.strerror}") from exc
        return path


def host_text(host: dict) -> str:
    """The measuring host as a report's Run section names it (runs imported from other tools may not know it)."""
    if not host.get("cores"):
        return str(host.get("hostname", "not recorded"))
    return f"{host['hostname']} ({host['cpu_model']}, {host['cores']} cores)"


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
