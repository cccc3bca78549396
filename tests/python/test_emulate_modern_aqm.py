"""Real Linux flows through the field's fixes on the emulated bottleneck (issue 13 item 6):
FQ-CoDel, CAKE and DualPI2 run in `bloatlab emulate` as they do in the simulator, and a
congestion control the kernel lacks (prague) is refused before anything is created.

Needs root, /dev/net/tun and iproute2 (CI has them); skipped otherwise. Three 6 s emulations.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not (hasattr(os, "geteuid") and os.geteuid() == 0 and os.path.exists("/dev/net/tun") and shutil.which("ip")),
    reason="emulation needs root, /dev/net/tun and iproute2",
)

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "emulate-dumbbell.toml"
RATE_MBPS = 10.0


def emulate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bloatlab.emulate", "emulate", str(SCENARIO), *args],
                          check=False, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("queue, bound_ms", [
    # CoDel per flow: target 5 ms, one CUBIC flow's sawtooth around it.
    ('{ kind = "fq_codel", limit = "300KB" }', 15.0),
    # COBALT per flow, same 5 ms target; no shaper (the link's rate limits).
    ('{ kind = "cake", limit = "300KB" }', 15.0),
    # A classic (Not-ECT) CUBIC flow goes to the C queue: PI2 steers it to its 15 ms target.
    ('{ kind = "dualpi2", limit = "300KB" }', 30.0),
])
def test_a_kernel_cubic_flow_through_the_modern_disciplines(tmp_path, queue, bound_ms):
    """A 300 KB buffer (6 BDP at 10 Mbit/s, 40 ms) would hold ~240 ms of drop-tail queue; each
    discipline keeps the real flow's mean queueing delay near its target at full rate."""
    out = tmp_path / "out"
    r = emulate("--set", "duration=6s", "--set", f"topology.bottleneck_queue={queue}", "--out", str(out))
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    kind = queue.split('"')[1]
    b = s["bottleneck"]
    assert b["aqm"] == kind
    assert b["mean_sojourn_ms"] < bound_ms, b
    # Goodput over the whole run (slow start included) stays near the rate.
    assert s["flows"][0]["goodput_mbps"] > 0.8 * RATE_MBPS, s["flows"][0]


def test_prague_is_refused_naming_the_key(tmp_path):
    r = emulate("--set", "flows[0].cc=prague", "--out", str(tmp_path / "out"))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: flows[0].cc:"), r.stderr
    assert "prague" in lines[0] and "cubic" in lines[0]
    assert not (tmp_path / "out").exists()
