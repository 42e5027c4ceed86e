"""The HTML reports in a real browser (headless Chromium from Debian; installed
with apt-get when missing and run as root, else skipped with the reason): each
opens with its heat map before any folded section, renders without console
errors (a missing chart is one), and the heat map's cells are what verdicts.csv
says: per row and column the worst verdict, how many points have it, and the
largest factor among them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from conftest import (
    coll_known_times,
    ddt_library,
    ddt_params,
    run_cli,
    write_apps_run,
    write_coll_run,
    write_ddt_run,
)
from mpiguide.core import packages, stats


@pytest.fixture(scope="module")
def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe:
        return exe
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip("headless Chromium is not installed (Debian: apt-get install chromium); these tests install it "
                    "when run as root")
    packages.apt_install(["chromium"], "rendering the reports in a browser", lambda _: None)
    return shutil.which("chromium")


def render(chromium: str, page: Path, tmp: Path, screenshot: Path | None = None) -> tuple[str, str]:
    """(DOM after rendering, Chromium's log) of a local page, headless, nothing fetched from the network."""
    argv = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={tmp / 'profile'}", "--enable-logging=stderr", "--v=0", "--allow-file-access-from-files"]
    argv += [f"--screenshot={screenshot}", "--window-size=1280,900"] if screenshot else ["--dump-dom"]
    res = subprocess.run([*argv, page.resolve().as_uri()], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout, res.stderr


class Cells(HTMLParser):
    """The heat map's cells and the order of the page's landmarks."""

    def __init__(self):
        super().__init__()
        self.cells: list[dict] = []
        self.order: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and "heatmap" in (a.get("class") or ""):
            self.order.append("heatmap")
        elif tag == "details":
            self.order.append("details")
        elif tag == "td" and "data-verdict" in a:
            self.cells.append(a)


def console_errors(log: str) -> list[str]:
    return [line for line in log.splitlines() if "CONSOLE" in line or "Failed to load resource" in line]


def expected(verdicts: pd.DataFrame, rows: list[str], col: str, factor: str = "factor") -> dict:
    out = {}
    for key, part in verdicts.groupby([*rows, col]):
        worst = max(part["verdict"], key=stats.RANK.get)
        hit = part[part["verdict"] == worst]
        out[(" / ".join(map(str, key[:-1])), str(key[-1]))] = (worst, len(hit), len(part), hit[factor].max())
    return out


def check_page(chromium: str | None, out: Path, want: dict, tmp: Path) -> None:
    """The page as Chromium rendered it, or (chromium None) as written."""
    if chromium:
        dom, log = render(chromium, out / "report.html", tmp)
        assert not console_errors(log), console_errors(log)
    else:
        dom = (out / "report.html").read_text()
    p = Cells()
    p.feed(dom)
    assert p.order[0] == "heatmap" and "details" in p.order, p.order[:5]
    got = {(c["data-row"], c["data-col"]): (c["data-verdict"], int(c["data-count"]), int(c["data-points"]),
                                           float(c["data-factor"]) if c["data-factor"] else float("nan"))
           for c in p.cells}
    assert got.keys() == want.keys()
    for k, (verdict, count, points, factor) in want.items():
        g = got[k]
        assert g[:3] == (verdict, count, points), (k, g, want[k])
        assert g[3] == pytest.approx(factor, rel=1e-5) or (pd.isna(factor) and pd.isna(g[3])), (k, g, want[k])


def test_heatmap_as_written(tmp_path):
    """The same checks on the HTML as written, where no browser is at hand."""
    run = write_ddt_run(tmp_path / "ddt", ddt_params(), lambda s, *a, **k: ddt_library(s)(s, *a, **k),
                        stacks=("old", "new"))
    assert run_cli(["analyze", str(run)]).rc == 0
    check_page(None, run, expected(pd.read_csv(run / "verdicts.csv"), ["guideline", "test"], "stack"), tmp_path)
    md = (run / "report.md").read_text().splitlines()
    assert md[0] == "# mpiguide: derived datatype expectation tests" and md[2].startswith("| guideline / test |")


def test_ddt_report(chromium, tmp_path):
    run = write_ddt_run(tmp_path / "ddt", ddt_params(), lambda s, *a, **k: ddt_library(s)(s, *a, **k),
                        stacks=("old", "new"))
    assert run_cli(["analyze", str(run)]).rc == 0
    v = pd.read_csv(run / "verdicts.csv")
    assert set(v["verdict"]) >= {stats.VIOLATED, stats.PASS}
    check_page(chromium, run, expected(v, ["guideline", "test"], "stack"), tmp_path)
    shot = tmp_path / "ddt.png"
    render(chromium, run / "report.html", tmp_path, screenshot=shot)
    assert shot.stat().st_size > 10000


def test_coll_report(chromium, tmp_path):
    run = write_coll_run(tmp_path / "coll", coll_known_times)
    assert run_cli(["analyze", str(run)]).rc == 0
    v = pd.read_csv(run / "verdicts.csv").assign(stack=lambda d: d["stack"] + " / p=" + d["nprocs"].astype(str))
    check_page(chromium, run, expected(v, ["guideline", "collective"], "stack"), tmp_path)


def test_apps_report(chromium, tmp_path):
    run = write_apps_run(tmp_path / "apps")
    assert run_cli(["analyze", str(run)]).rc == 0
    from mpiguide.core.runner import RunDir
    from mpiguide.suites.apps import report as apps

    pts = apps.verdict_points(apps.load(RunDir.open(run)))
    check_page(chromium, run, expected(pts, ["guideline", "app", "mode"], "stack"), tmp_path)


def test_compare_report(chromium, tmp_path):
    run = write_ddt_run(tmp_path / "both", ddt_params(), lambda s, *a, **k: ddt_library(s)(s, *a, **k),
                        stacks=("old", "new"))
    assert run_cli(["compare", str(run), str(run), "--stacks", "old:new", "--output", str(tmp_path / "c")]).rc == 0
    dom, log = render(chromium, tmp_path / "c" / "report.html", tmp_path)
    assert not console_errors(log)
    p = Cells()
    p.feed(dom)
    assert p.order[0] == "heatmap"
    points = pd.read_csv(tmp_path / "c" / "points.csv")
    newly = {c["data-row"] for c in p.cells if c["data-verdict"] == "newly violated"}
    assert newly == set(points[points["status"] == "newly violated"]["guideline"])
    assert all(re.fullmatch(r"old -> new", c["data-col"]) for c in p.cells)
