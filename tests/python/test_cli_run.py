"""`bloatlab run` end to end with the real simulator (subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

from bloatlab.result import OUTPUT_FILES
from helpers import (
    FLOW_SERIES_COLUMNS,
    QUEUE_SERIES_COLUMNS,
    SCENARIOS,
    check_summary,
    cli,
    without_wall_clock,
)

RANDOM_LOSS = str(SCENARIOS / "random-loss.toml")


def ok(proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert proc.returncode == 0, f"exit {proc.returncode}\nstderr: {proc.stderr}"
    assert "Traceback" not in proc.stderr
    return proc


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "bloatlab"
    assert script.exists(), f"{script} missing: was the package installed (pip install .)?"
    proc = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "bloatlab" in proc.stdout


def test_demo_runs_without_arguments():
    proc = ok(cli("run"))
    assert "built-in demo" in proc.stderr
    for needle in ["demo", "newreno", "reno", "bottleneck", "Jain", "events"]:
        assert needle in proc.stdout, proc.stdout


def test_json_has_every_contract_field(small_toml: Path):
    proc = ok(cli("run", str(small_toml), "--json", "--seed", "3"))
    summary = json.loads(proc.stdout)
    check_summary(summary)
    assert summary["name"] == "small" and summary["seed"] == 3
    assert [f["id"] for f in summary["flows"]] == [0, 1]
    assert [f["cc"] for f in summary["flows"]] == ["newreno", "reno"]
    assert summary["duration_s"] == 5.0
    assert proc.stderr == ""


def test_out_writes_readable_files(small_toml: Path, tmp_path: Path):
    out = tmp_path / "run"
    proc = ok(cli("run", str(small_toml), "--out", str(out), "--json", "--set", "duration=3s"))
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUT_FILES)
    assert json.loads((out / "summary.json").read_text()) == json.loads(proc.stdout)
    scenario = json.loads((out / "scenario.json").read_text())
    assert scenario["duration"] == "3s" and scenario["name"] == "small"
    ts = pq.read_table(out / "timeseries.parquet")
    qs = pq.read_table(out / "queues.parquet")
    assert FLOW_SERIES_COLUMNS <= set(ts.column_names)
    assert QUEUE_SERIES_COLUMNS <= set(qs.column_names)
    assert ts.num_rows > 0 and qs.num_rows > 0
    # the resolved scenario reruns to the same summary
    again = ok(cli("run", str(out / "scenario.json"), "--json"))
    assert without_wall_clock(again.stdout) == without_wall_clock(proc.stdout)


def test_same_seed_same_bytes():
    args = ("run", RANDOM_LOSS, "--json", "--seed", "3", "--set", "duration=10s")
    a, b = ok(cli(*args)), ok(cli(*args))
    assert without_wall_clock(a.stdout) == without_wall_clock(b.stdout)
    assert '"wall_s": X' in without_wall_clock(a.stdout)


def test_different_seeds_differ():
    runs = [ok(cli("run", RANDOM_LOSS, "--json", "--seed", s, "--set", "duration=10s")) for s in ("1", "2")]
    a, b = (json.loads(r.stdout) for r in runs)
    for s in (a, b):
        s.pop("engine")
        s.pop("seed")
    assert a != b


def test_series_off_and_on_give_the_same_summary(small_toml: Path, tmp_path: Path):
    plain = ok(cli("run", str(small_toml), "--json"))
    with_out = ok(cli("run", str(small_toml), "--json", "--out", str(tmp_path / "o")))
    assert without_wall_clock(plain.stdout) == without_wall_clock(with_out.stdout)
