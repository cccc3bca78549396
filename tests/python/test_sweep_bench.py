"""`bloatlab bench --sweep` (tiny: the real benchmark is 60 runs; see docs/sweeps.md)."""

from __future__ import annotations

import json

from helpers import cli


def test_sweep_bench_json():
    proc = cli("bench", "--sweep", "--runs", "4", "--jobs", "2", "--quick", "--time-scale", "0.1", "--json",
               timeout=300)
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    assert [t["mode"] for t in rep["timings"]] == ["direct", "serial", "local-1", "local-2"]
    assert rep["runs"] == 4 and all(t["wall_s"] > 0 for t in rep["timings"])
    assert rep["speedup_vs_direct"] > 0 and set(rep["overhead_ms_per_run"]) == {"serial", "local-1", "in_worker"}


def test_sweep_bench_table():
    proc = cli("bench", "--sweep", "--runs", "2", "--jobs", "1", "--quick", "--time-scale", "0.1", timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "overhead per run" in proc.stdout and "speed-up" in proc.stdout
