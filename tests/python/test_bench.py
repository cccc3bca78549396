"""`bloatlab bench` (scaled down so that it takes a few seconds)."""

from __future__ import annotations

import json

from bloatlab import bench
from helpers import cli


def test_bench_cases_are_the_documented_ones():
    wang = bench._wang_ii(10.0)
    assert wang["topology"]["bottleneck"] == {"rate": "400Mbps", "delay": "55ms"}
    assert wang["topology"]["access"] == {"rate": "1Gbps", "delay": "2.5ms"}  # base RTT 120 ms
    assert wang["topology"]["bottleneck_queue"] == {"kind": "droptail", "limit": "1500KB"}
    assert wang["tcp"]["mss"] == "1448B"
    assert wang["metrics"]["interval"] == "0s"
    assert [c.key for c in bench.CASES].count("wang2016-II/short") == 1
    short, long_ = bench.CASES[0], bench.CASES[1]
    assert long_.full_s >= 4 * short.full_s and long_.quick_s >= 4 * short.quick_s


def test_bench_json():
    proc = cli("bench", "--quick", "--json", "--time-scale", "0.25", timeout=600)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert [r["name"] for r in report["runs"]] == [c.key for c in bench.CASES]
    for r in report["runs"]:
        assert r["events"] > 0 and r["bottleneck_packets"] > 0
        assert r["peak_rss_mb"] > 0 and r["wall_s"] >= 0
    m = report["memory_vs_duration"]
    assert len(m["peak_rss_mb"]) == 2 and m["simulated_s"][1] > m["simulated_s"][0]


def test_bench_table():
    proc = cli("bench", "--quick", "--time-scale", "0.1", timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "wang2016-II/long" in proc.stdout and "RSS" in proc.stdout
    assert "memory vs simulated time" in proc.stdout
