"""`bloatlab bench --scale` on a tiny set (1 and 10 flows, tens of simulated milliseconds)."""

from __future__ import annotations

import json

import pytest

from bloatlab import bench
from helpers import cli

POINT_KEYS = {
    "topology", "flows", "simulated_s", "setup_s", "wall_s", "events", "bottleneck_packets", "transmissions",
    "bottleneck_packets_per_wall_s", "transmissions_per_wall_s", "peak_rss_mb", "baseline_rss_mb",
}


def test_scale_json_shape_and_files(tmp_path):
    proc = cli("bench", "--scale", "--max-flows", "10", "--quick", "--time-scale", "0.1", "--json",
               "--out", str(tmp_path), "--cases", "none", timeout=600)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    pts = report["points"]
    # The fat-tree runs count * k³/4 flows: 1 -> k = 2, 2 hosts; 10 -> k = 4, 16 hosts.
    assert [(p["topology"], p["flows"]) for p in pts] == [("dumbbell", 1), ("dumbbell", 10), ("fat_tree", 2),
                                                          ("fat_tree", 16)]
    for p in pts:
        assert set(p) == POINT_KEYS
        assert p["simulated_s"] == pytest.approx(0.05 * bench.SCALE_TIME_SHARE[p["topology"]])
        assert p["bottleneck_packets"] > 0 and p["transmissions"] > p["bottleneck_packets"]
        assert p["peak_rss_mb"] > 0 and p["wall_s"] >= 0 and p["setup_s"] >= 0
    # Ten flows send more than one; a fat-tree flow crosses up to 6 links.
    assert pts[1]["transmissions"] > pts[0]["transmissions"]
    assert pts[3]["transmissions"] > 2 * pts[3]["bottleneck_packets"]
    assert report["cases"] == []  # --cases none: the curve alone
    assert json.loads((tmp_path / "scale.json").read_text())["points"] == pts
    assert (tmp_path / "scale.svg").read_text().lstrip().startswith("<?xml")


def test_scale_table_caps_at_an_uneven_max():
    proc = cli("bench", "--scale", "--max-flows", "3", "--quick", "--time-scale", "0.02", "--cases", "none",
               timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "bench --scale" in proc.stdout and "RSS MiB" in proc.stdout
    # 1 and the cap itself.
    assert [ln.split()[1] for ln in proc.stdout.splitlines() if ln.strip().startswith("dumbbell")] == ["1", "3"]


def test_scale_bad_input_exits_2():
    for args, needle in [
        (["--max-flows", "0"], "--max-flows: must be at least 1 (got 0)"),
        (["--max-flows", "-5"], "--max-flows: must be at least 1 (got -5)"),
        (["--max-flows", "many"], "--max-flows"),
        (["--time-scale", "0"], "--time-scale: must be greater than 0"),
        (["--repeat", "0"], "--repeat: must be at least 1 (got 0)"),
        (["--repeat", "-2"], "--repeat: must be at least 1 (got -2)"),
        (["--repeat", "twice"], "--repeat"),
    ]:
        proc = cli("bench", "--scale", *args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert needle in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
    for args in (["--max-flows", "10"], ["--repeat", "3"]):
        proc = cli("bench", *args)
        assert proc.returncode == 2 and "--max-flows, --out and --repeat go with --scale" in proc.stderr


def test_scale_repeat_reports_each_points_median_run(monkeypatch):
    # Wall times by call order: the curve (two points) runs in three rounds.
    walls = iter([5.0, 1.0, 3.0, 9.0, 4.0, 2.0])
    calls = []

    def point(topo, n, d):
        calls.append((topo, n))
        w = next(walls)
        return {"topology": topo, "flows": n, "wall_s": w, "bottleneck_packets": int(100 * w)}

    monkeypatch.setattr(bench, "scale_point", point)
    rep = bench.run_scale(max_flows=10, topologies=["dumbbell"], repeat=3)
    assert calls == [("dumbbell", 1), ("dumbbell", 10)] * 3  # round after round, not point after point
    assert rep["repeat"] == 3
    one, ten = rep["points"]
    assert one["wall_s_runs"] == [5.0, 3.0, 4.0] and one["wall_s"] == 4.0 and one["bottleneck_packets"] == 400
    assert ten["wall_s_runs"] == [1.0, 9.0, 2.0] and ten["wall_s"] == 2.0
    # An even count reports the lower middle run; one run reports itself, without the list.
    walls = iter([3.0, 1.0])
    assert bench.run_scale(max_flows=1, topologies=["dumbbell"], repeat=2)["points"][0]["wall_s"] == 1.0
    walls = iter([7.0])
    p = bench.run_scale(max_flows=1, topologies=["dumbbell"])["points"][0]
    assert p["wall_s"] == 7.0 and "wall_s_runs" not in p
    with pytest.raises(ValueError, match="--repeat: must be at least 1"):
        bench.run_scale(max_flows=1, repeat=0)


def test_scale_scenarios_are_the_documented_ones():
    doc = bench.scale_dumbbell(100, 2.0)
    assert doc["flows"] == [{"transport": "tcp", "cc": "cubic", "count": 100, "size": "unlimited"}]
    assert doc["topology"]["bottleneck"] == {"rate": "10Gbps", "delay": "5ms"}
    assert doc["topology"]["access"] == {"rate": "10Gbps", "delay": "2.5ms"}
    assert doc["metrics"]["interval"] == "0s"
    assert bench.SCALE_FLOWS[-1] == 100_000


def test_scale_fat_tree_is_the_documented_one():
    # The 4,096-flow CUBIC fat-tree: k = 16 (1,024 hosts), 4 flows per host.
    assert bench.fat_tree_shape(4096) == (16, 4)
    assert bench.fat_tree_shape(1) == (2, 1) and bench.fat_tree_shape(100) == (6, 2)
    doc = bench.scale_fat_tree(4096, 0.01)
    assert doc["topology"] == {"kind": "fat_tree", "k": 16, "link": {"rate": "10Gbps", "delay": "1us"}, "ecmp": "hash"}
    assert doc["flows"] == [{"transport": "tcp", "cc": "cubic", "pattern": "permutation", "count": 4,
                             "size": "unlimited"}]
    assert doc["duration"] == "10000us"
    assert doc["threads"] == 1  # the curve is a per-core measure
    assert bench._flows_in(doc) == 4096


def test_scale_fat_tree_point_runs():
    # A tiny point: k = 4, 16 hosts, 2 flows each, 200 µs simulated.
    p = bench.scale_point("fat_tree", 20, 0.04)
    assert p["flows"] == 32 and p["simulated_s"] == pytest.approx(0.0002)
    assert p["bottleneck_packets"] > 0 and p["transmissions"] > p["bottleneck_packets"]


def test_the_fat_tree_target_file_is_the_bench_scenario():
    """scripts/fat-tree-4096-1s.toml (issue 14's 1 s target, hours to run) stays the scenario
    that `bench --scale` times at 4,096 flows, with 1 s simulated; it validates."""
    import tomllib

    from bloatlab import simcore
    from helpers import REPO

    doc = tomllib.loads((REPO / "scripts" / "fat-tree-4096-1s.toml").read_text())
    assert doc == bench.scale_fat_tree(4096, 1.0)
    simcore.validate_scenario(doc)


def test_scale_repeat_on_the_command_line():
    proc = cli("bench", "--scale", "--max-flows", "1", "--quick", "--time-scale", "0.02", "--repeat", "2", "--json",
               "--cases", "none", timeout=600)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["repeat"] == 2
    for p in report["points"]:
        assert set(p) == POINT_KEYS | {"wall_s_runs"}
        assert len(p["wall_s_runs"]) == 2 and p["wall_s"] == min(p["wall_s_runs"])
    proc = cli("bench", "--scale", "--max-flows", "1", "--quick", "--time-scale", "0.02", "--repeat", "2",
               "--cases", "none", timeout=600)
    assert proc.returncode == 0 and "median wall time of 2" in proc.stdout


def test_the_scale_rounds_script_runs_the_bench_dumbbell():
    """scripts/scale_rounds.py (docs/performance.md's interleaved rounds) writes its dumbbell
    points from a template of its own; it stays what `bench.scale_dumbbell` builds."""
    import importlib.util
    import tomllib

    from helpers import REPO

    spec = importlib.util.spec_from_file_location("scale_rounds", REPO / "scripts" / "scale_rounds.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for flows, seconds in [(10, 1.0), (10_000, 2.0), (3, 0.25)]:
        assert tomllib.loads(mod.DUMBBELL.format(flows=flows, seconds=seconds)) == bench.scale_dumbbell(flows, seconds)
