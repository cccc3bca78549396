"""`bloatlab plot`: time series of a run, bars with CI and CDFs of a sweep, PNG and SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import bloatlab
from helpers import SCENARIOS, assert_invalid, cli
from test_sweep_spec import TINY

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("plot") / "sweep"
    bloatlab.sweep(TINY, {"flows[0].cc": ["newreno", "cubic"], "topology.bottleneck_queue.limit": ["10KB", "40KB"]},
                   seeds=3, backend="serial", out=out, progress=False)
    return out


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bloatlab.run(SCENARIOS / "demo.toml", set={"duration": "8s"}).to_dir(
        tmp_path_factory.mktemp("plot") / "run")


def check_png(path: Path, min_bytes: int = 10_000) -> None:
    from PIL import Image

    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > min_bytes, (path, len(data))
    with Image.open(path) as im:
        w, h = im.size
        assert w >= 500 and h >= 300
        colors = im.convert("RGB").getcolors(maxcolors=1 << 20)
        assert colors is None or len(colors) > 20, "an almost blank image"


def check_svg(path: Path) -> None:
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    assert len(path.read_bytes()) > 5_000


def written(proc) -> list[Path]:
    assert proc.returncode == 0, proc.stderr
    return [Path(line) for line in proc.stdout.splitlines() if line.strip()]


def test_timeseries_of_a_run_png_and_svg(run_dir: Path):
    files = written(cli("plot", str(run_dir), "--format", "png", "--format", "svg"))
    assert [f.name for f in files] == ["timeseries.png", "timeseries.svg"]
    assert all(f.parent == run_dir / "plots" for f in files)
    check_png(files[0])
    check_svg(files[1])


def test_cdf_of_a_run(run_dir: Path, tmp_path: Path):
    files = written(cli("plot", str(run_dir), "cdf", "--metric", "srtt_ms", "--metric", "sojourn_ms",
                        "--out", str(tmp_path)))
    assert [f.name for f in files] == ["cdf-srtt_ms.png", "cdf-sojourn_ms.png"]
    for f in files:
        check_png(f, 5_000)


def test_bars_and_cdf_of_a_sweep(sweep_dir: Path):
    files = written(cli("plot", str(sweep_dir)))
    assert [f.name for f in files] == ["bars-goodput_mbps.png"]
    check_png(files[0])
    files = written(cli("plot", str(sweep_dir), "bars", "--metric", "jain", "--metric", "mean_sojourn_ms",
                        "--x", "topology.bottleneck_queue.limit", "--hue", "flows[0].cc", "--format", "svg"))
    assert [f.name for f in files] == ["bars-jain.svg", "bars-mean_sojourn_ms.svg"]
    for f in files:
        check_svg(f)
    files = written(cli("plot", str(sweep_dir), "cdf", "--metric", "rtt_p95_ms"))
    check_png(files[0], 5_000)
    # a sweep's run directory is a run directory
    rid = next((sweep_dir / "runs").iterdir())
    check_png(written(cli("plot", str(rid)))[0])


def incli(*args: str):
    """The CLI in this process (quicker than a subprocess), as a CompletedProcess."""
    import subprocess

    from click.testing import CliRunner

    from bloatlab.cli import main

    r = CliRunner().invoke(main, list(args))
    return subprocess.CompletedProcess(args, r.exit_code, r.stdout, r.stderr)


def test_plot_errors(sweep_dir: Path, run_dir: Path, tmp_path: Path):
    assert_invalid(incli("plot", str(tmp_path / "nope")), "no such directory")
    assert_invalid(incli("plot", str(tmp_path)), "not a run directory")
    assert_invalid(incli("plot", str(sweep_dir), "timeseries"), "timeseries needs a run directory")
    assert_invalid(incli("plot", str(run_dir), "bars"), "bars need a sweep store")
    assert_invalid(incli("plot", str(sweep_dir), "pie"), 'unknown plot "pie"')
    assert_invalid(incli("plot", str(sweep_dir), "--metric", "speed"), '--metric: unknown metric "speed"')
    assert_invalid(incli("plot", str(sweep_dir), "--x", "nope"), '--x: no column "nope"')
    assert_invalid(incli("plot", str(sweep_dir), "--format", "gif"), '--format: unknown format "gif"')
    assert_invalid(incli("plot", str(run_dir), "cdf", "--metric", "nope"), "nope: no such time-series column")
    assert not (sweep_dir / "plots" / "bars-speed.png").exists()


def test_figures_from_python(sweep_dir: Path, run_dir: Path, tmp_path: Path):
    from bloatlab.outputs import plot

    fig = plot.sweep_bars(sweep_dir, "goodput_mbps", x="flows[0].cc")
    assert fig.axes[0].get_xlabel() == "flows[0].cc"
    assert plot.save(fig, tmp_path / "a.svg").is_file()
    fig = plot.timeseries_figure(bloatlab.run(SCENARIOS / "demo.toml", set={"duration": "2s"}))
    assert len(fig.axes) >= 3
    assert plot.label("rtt_p95_ms") == "95th-percentile RTT (ms)"
    with pytest.raises(bloatlab.ScenarioError):
        plot.save(fig, tmp_path / "a.bmp")
