"""`bloatlab rrul`: the latency-under-load test (scenario building, grades, CLI, bad input)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bloatlab import rrul

SHORT = ["--set", "duration=6s", "--set", "warmup=1s"]


def bloatlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bloatlab", *args], check=False, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize(("added", "letter"), [(0.0, "A+"), (4.99, "A+"), (5.0, "A"), (29.9, "A"), (30.0, "B"),
                                               (59.9, "B"), (60.0, "C"), (199.0, "C"), (200.0, "D"), (399.9, "D"),
                                               (400.0, "F"), (5000.0, "F")])
def test_grades_follow_the_published_bounds(added, letter):
    assert rrul.grade(added) == letter


def test_scenarios_replace_the_flows_and_keep_the_topology():
    base = rrul.home()
    idle, loaded = rrul.scenarios(base, flows=3, cc="bbr", probe_interval="50ms")
    assert idle["topology"] == base["topology"] == loaded["topology"]
    assert idle["metrics"]["interval"] == "50ms"
    assert [f["group"] for f in idle["flows"]] == ["probe", "voip-down", "voip-up"]
    groups = {f["group"]: f for f in loaded["flows"]}
    assert groups["download"]["count"] == 3 and groups["download"]["cc"] == "bbr"
    assert groups["upload"]["direction"] == "reverse"
    assert groups["voip-up"]["direction"] == "reverse"
    assert "direction" not in groups["download"]
    assert base["flows"] != loaded["flows"]  # the base is not modified


def test_cli_runs_writes_figures_and_grades_a_bloated_link(tmp_path):
    out = tmp_path / "rrul"
    r = bloatlab("rrul", *SHORT, "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    o = doc["outcome"]
    # The built-in home link is bloated: hundreds of ms under load, an idle RTT of 30 ms plus
    # the probes' serialization.
    assert 30.0 < o["idle_rtt_ms"] < 30.5
    assert o["added_latency_ms"] > 60.0 and o["grade"] in ("C", "D", "F")
    # Five measured seconds include the flows' start-up and the two-way-traffic penalty on the
    # download (ACKs queued behind uploads): well above zero, below the link rates.
    assert 8.0 < o["download_mbps"] < 20.0 and 2.0 < o["upload_mbps"] < 5.0
    assert {p.name for p in out.iterdir()} == {"summary.json", "idle", "loaded", "rrul.png", "latency_cdf.png"}
    assert (out / "loaded" / "timeseries.parquet").exists()
    assert json.loads((out / "summary.json").read_text())["outcome"] == o


def test_an_aqm_on_both_directions_improves_the_grade():
    aqm = ["--set", "topology.bottleneck_queue.kind=codel", "--set", "topology.reverse_queue.kind=codel"]
    bloated = json.loads(bloatlab("rrul", *SHORT, "--json").stdout)["outcome"]
    managed = json.loads(bloatlab("rrul", *SHORT, *aqm, "--json").stdout)["outcome"]
    assert managed["added_latency_ms"] < bloated["added_latency_ms"] / 2


def test_same_seed_same_outcome():
    a = json.loads(bloatlab("rrul", *SHORT, "--seed", "4", "--json").stdout)
    b = json.loads(bloatlab("rrul", *SHORT, "--seed", "4", "--json").stdout)
    assert a["outcome"] == b["outcome"]
    for run in ("idle", "loaded"):
        for d in (a, b):
            d[run]["engine"].pop("wall_s")
            d[run]["engine"].pop("packets_per_wall_s")
            d[run]["engine"].pop("setup_s")
        assert a[run] == b[run]


@pytest.mark.parametrize(
    ("args", "path"),
    [
        (["--flows", "0"], "--flows"),
        (["--probe-interval", "0s"], "--probe-interval"),
        (["--probe-interval", "10"], "--probe-interval"),
        (["--cc", "cubik"], "--cc"),
        (["--set", "topology.bottleneck.rate=fast"], "topology.bottleneck.rate"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, args, path):
    out = tmp_path / "out"
    r = bloatlab("rrul", *SHORT, *args, "--out", str(out))
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: "), r.stderr
    assert not out.exists()


def test_out_must_not_be_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    r = bloatlab("rrul", *SHORT, "--out", str(f))
    assert r.returncode == 2 and "--out" in r.stderr
