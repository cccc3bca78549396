"""`bloatlab report`: a self-contained HTML page that a real browser (headless Chromium) renders."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import bloatlab
from bloatlab import _core
from helpers import SCENARIOS, assert_invalid, cli
from test_sweep_spec import TINY


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "sweep"
    real = _core.run_json

    def flaky(text: str, seed=None, series=True, *rest):  # one failed run, to be reported
        doc = json.loads(text)
        if doc["duration"] != "1ns" and doc.get("seed") == 2 and doc["flows"][0].get("cc") == "cubic":
            raise _core.SimulationError("conservation check failed (test)")
        return real(text, seed, series, *rest)

    mp = pytest.MonkeyPatch()
    mp.setattr(_core, "run_json", flaky)
    try:
        with pytest.warns(RuntimeWarning):
            bloatlab.sweep(TINY, {"flows[0].cc": ["newreno", "cubic"], "topology.bottleneck_queue.limit": ["10KB",
                                                                                                           "40KB"]},
                           seeds=3, backend="serial", out=out, progress=False)
    finally:
        mp.undo()
    return out


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("BLOATLAB_REQUIRE_TOOLS"):
        pytest.fail("chromium is not installed (scripts/test.sh installs it)")
    pytest.skip("chromium is not installed (apt-get install -y chromium)")


def screenshot(page: Path, png: Path, size: str = "1280,2400") -> str:
    """Renders ``page`` with headless Chromium; returns its log (stderr)."""
    browser = chromium()
    profile = png.parent / "chromium-profile"
    proc = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
         f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
         f"--screenshot={png}", f"--window-size={size}", page.resolve().as_uri()],
        capture_output=True, text=True, timeout=180, env={**os.environ, "HOME": str(png.parent)},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stderr


def check_screenshot(png: Path, width: int, height: int) -> None:
    from PIL import Image

    assert png.is_file() and png.stat().st_size > 30_000, "a nearly empty screenshot"
    with Image.open(png) as im:
        assert im.size == (width, height)
        rgb = im.convert("RGB")
        colors = rgb.getcolors(maxcolors=1 << 22)
        assert colors is None or len(colors) > 200, "too few colours: nothing rendered?"
        # the page is not one flat colour anywhere in its top half (tables and figures are there)
        top = rgb.crop((0, 0, width, height // 2)).getcolors(maxcolors=1 << 22)
        assert top is None or len(top) > 50


def check_self_contained(text: str) -> None:
    assert "<script" not in text.lower()
    for m in re.finditer(r'(?:src|href)="([^"]*)"', text):
        assert m.group(1).startswith(("data:", "#")), f"external reference: {m.group(1)[:80]}"
    assert "url(http" not in text and "@import" not in text


BROWSER_ERRORS = re.compile(r"Uncaught|Failed to load resource|ERR_FILE_NOT_FOUND|Not allowed to load|"
                            r"net::ERR_|CONSOLE\(\d+\).*[Ee]rror", re.I)


def test_sweep_report_renders_in_chromium(sweep_dir: Path, tmp_path: Path):
    proc = cli("report", str(sweep_dir))
    assert proc.returncode == 0, proc.stderr
    page = Path(proc.stdout.strip())
    assert page == sweep_dir / "report.html"
    text = page.read_text()
    check_self_contained(text)
    for needle in ["tiny", "flows[0].cc", "topology.bottleneck_queue.limit", "12 runs", "10 ok", "2 failed",
                   "Failed runs", "conservation check failed (test)", "Jain", "goodput (Mbit/s)",
                   "Bottleneck queue", "mean queueing delay (ms)", "Time series", "data:image/svg+xml;base64,",
                   "newreno", "cubic", "10KB", "40KB", "±"]:
        assert needle in text, needle
    assert text.count("<img ") >= 9  # 4 bar charts, a CDF, 4 time series
    log = screenshot(page, tmp_path / "shot.png")
    errors = [line for line in log.splitlines() if BROWSER_ERRORS.search(line)]
    assert not errors, "\n".join(errors)
    check_screenshot(tmp_path / "shot.png", 1280, 2400)


def test_run_report(tmp_path: Path):
    run = bloatlab.run(SCENARIOS / "demo.toml", set={"duration": "6s"}).to_dir(tmp_path / "run")
    out = tmp_path / "elsewhere" / "r.html"
    proc = cli("report", str(run), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    check_self_contained(text)
    assert "demo" in text and "Flows" in text and "Bottleneck" in text and text.count("<img ") == 2
    screenshot(out, tmp_path / "run.png", "1000,1600")
    check_screenshot(tmp_path / "run.png", 1000, 1600)


def test_report_errors(tmp_path: Path):
    assert_invalid(cli("report", str(tmp_path / "nope")), "no such directory")
    assert_invalid(cli("report", str(tmp_path)), "not a sweep store")
    assert not (tmp_path / "report.html").exists()
