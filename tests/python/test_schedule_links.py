"""Schedule-driven links (`topology.bottleneck.schedule`): the shipped LEO scenario runs, a
relative schedule file is found beside its scenario, bad schedules exit 2 naming the key and
the file's line, and the emulator refuses them before doing anything."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import assert_invalid, cli

ROOT = Path(__file__).resolve().parents[2]


def test_the_leo_scenario_runs_and_its_probe_sees_the_path(tmp_path: Path):
    out = tmp_path / "leo"
    proc = cli("run", str(ROOT / "scenarios" / "leo.toml"), "--set", "duration=20s", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    s = json.loads((out / "summary.json").read_text())
    probe = next(f for f in s["flows"] if f["group"] == "probe")
    # Base RTT: 2 × (12 ms, the schedule's smallest one-way delay, + two 1 ms access links).
    assert probe["base_rtt_ms"] == 28.0
    assert s["bottleneck"]["utilization_pct"] > 90


def test_a_relative_schedule_file_is_read_beside_the_scenario(tmp_path: Path):
    (tmp_path / "path.sched").write_text("0 10 20 0\n5000 30 20 0\n")
    (tmp_path / "s.toml").write_text(
        'duration = "10s"\n[topology]\nbottleneck = { schedule = "path.sched" }\n'
        '[[flows]]\ntransport = "udp"\napp = "probe"\n')
    proc = cli("run", str(tmp_path / "s.toml"), "--json", cwd=Path("/"))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["flows"][0]["base_rtt_ms"] == 20.0


def test_a_bad_schedule_line_exits_2_with_the_file_and_line(tmp_path: Path):
    (tmp_path / "bad.sched").write_text("0 10 20 0\n100 10 20 0\n50 10 20 0\n")
    (tmp_path / "s.toml").write_text(
        'duration = "1s"\n[topology]\nbottleneck = { schedule = "bad.sched" }\n[[flows]]\ncc = "cubic"\n')
    assert_invalid(cli("run", str(tmp_path / "s.toml")), "topology.bottleneck.schedule", "bad.sched",
                   "line 3: times must increase")


def test_a_leo_setting_out_of_range_exits_2(tmp_path: Path):
    proc = cli("run", str(ROOT / "scenarios" / "leo.toml"), "--set", "topology.bottleneck.schedule.switch_loss=2")
    assert_invalid(proc, "topology.bottleneck.schedule.switch_loss", "[0, 1]")


def test_the_emulator_refuses_a_schedule_before_anything_runs(tmp_path: Path):
    r = subprocess.run([sys.executable, "-m", "bloatlab.emulate", "compare", str(ROOT / "scenarios" / "leo.toml"),
                        "--out", str(tmp_path / "cmp")], check=False, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("error: topology.bottleneck.schedule: ") and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "cmp").exists()
