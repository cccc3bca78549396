"""`bloatlab responsiveness`: the RPM test's block, its human line, and bad input (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys


def bloatlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bloatlab", *args], check=False,
                          capture_output=True, text=True, timeout=300)


SHORT = ["--set", "duration=12s"]


def test_the_home_link_is_poor_and_cake_is_good():
    p = bloatlab("responsiveness", "--json", *SHORT)
    assert p.returncode == 0, p.stderr
    block = json.loads(p.stdout)
    assert block["class"] == "Poor"
    assert block["rpm"] < 300
    assert block["draft"] == "draft-ietf-ippm-responsiveness-09"
    assert block["foreign"]["probes"] > 0 and block["loaded"]["probes"] > 0
    cake = ["--set", "topology.bottleneck_queue.kind=cake",
            "--set", "topology.reverse_queue.kind=cake"]
    p = bloatlab("responsiveness", *SHORT, *cake)
    assert p.returncode == 0, p.stderr
    assert "RPM (Good)" in p.stdout or "RPM (Excellent)" in p.stdout, p.stdout


def test_bad_input_exits_2_with_the_option_or_key():
    p = bloatlab("responsiveness", "--interval", "0s")
    assert p.returncode == 2
    assert "--interval" in p.stderr and "greater than 0" in p.stderr
    p = bloatlab("responsiveness", "--probe-interval", "1ms")
    assert p.returncode == 2 and "--probe-interval" in p.stderr
    p = bloatlab("responsiveness", "--direction", "sideways")
    assert p.returncode == 2
    p = bloatlab("responsiveness", "--set", "topology.bottleneck.rate=fast")
    assert p.returncode == 2 and "topology.bottleneck.rate" in p.stderr
