"""`bloatlab run` with a bad video flow (app = "video"): exit 2 naming the key path, nothing
written; the run table's frame-delay columns; the emulator's refusal. (The video model's own
checks are in crates/sim/tests/video.rs.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import assert_run_refused, cli

VIDEO = ['flows[0]={ transport = "udp", app = "video", cc = "gcc" }']
SCREAM = ['flows[0]={ transport = "udp", app = "video", cc = "scream" }']


@pytest.mark.parametrize(
    ("overrides", "path", "needles"),
    [
        (VIDEO + ["flows[0].video.fps=0"], "flows[0].video.fps", []),
        (['flows[0]={ app = "video", cc = "gcc" }'], "flows[0].app", ["transport"]),
        (['flows[0]={ cc = "gcc" }'], "flows[0].cc", ["video rate controller"]),
        (['flows[0]={ transport = "udp", rate = "1Mbps", cc = "scream" }'], "flows[0].cc", ["video"]),
        (VIDEO + ['flows[0].video.min_rate="5Mbps"', 'flows[0].video.max_rate="2Mbps"'],
         "flows[0].video.min_rate", ["max_rate"]),
        (VIDEO + ["flows[0].video.l4s=true"], "flows[0].video.l4s", ["scream"]),
        (VIDEO + ['flows[0].video.feedback="0s"'], "flows[0].video.feedback", []),
        (VIDEO + ["flows[0].video.nack=1"], "flows[0].video.nack", ["true or false"]),
        (VIDEO + ['flows[0].video.nack="on"'], "flows[0].video.nack", ["true or false"]),
        (VIDEO + ["flows[0].video.compensation=false"], "flows[0].video.compensation", ["scream"]),
        (SCREAM + ["flows[0].video.compensation=1"], "flows[0].video.compensation",
         ["true or false"]),
    ],
)
def test_bad_video_flows(small_toml: Path, tmp_path: Path, overrides, path, needles):
    assert_run_refused(small_toml, tmp_path / "out", overrides, path, *needles)


def test_the_run_table_shows_frame_delays(small_toml: Path):
    r = cli("run", str(small_toml), "--set", VIDEO[0], "--set", "duration=3s", "--set", "warmup=0s")
    assert r.returncode == 0, r.stderr
    assert "frame" in r.stdout and "p95 ms" in r.stdout and "freezes" in r.stdout
    assert "gcc" in r.stdout


def test_the_summary_counts_repairs(small_toml: Path):
    """NACK/RTX is on by default: the summary carries the repair counters (0 when off)."""
    for nack, args in ((True, []), (False, ["--set", "flows[0].video.nack=false"])):
        r = cli("run", str(small_toml), "--json", "--set", VIDEO[0], "--set", "duration=3s", "--set", "warmup=0s",
                *args)
        assert r.returncode == 0, r.stderr
        flow = json.loads(r.stdout)["flows"][0]
        assert isinstance(flow["frames_repaired"], int) and isinstance(flow["rtx_packets"], int), flow
        if not nack:
            assert flow["frames_repaired"] == 0 and flow["rtx_packets"] == 0, flow


def test_the_emulator_refuses_video(tmp_path: Path):
    scenario = Path(__file__).resolve().parents[2] / "scenarios" / "emulate-dumbbell.toml"
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "bloatlab.emulate", "emulate", str(scenario), "--out", str(out),
                        "--set", VIDEO[0]], check=False, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: flows[0].app: ") and "video" in lines[0], r.stderr
    assert not out.exists()
