"""The CLI's plumbing, in-process, with a stand-in for the simulator (no simulation needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bloatlab import _core
from bloatlab.cli import main
from bloatlab.result import OUTPUT_FILES
from helpers import check_summary


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_table_output(fake_core, small_toml: Path):
    r = invoke("run", str(small_toml))
    assert r.exit_code == 0, r.stderr
    out = r.stdout
    for needle in ["small", "newreno", "reno", "1.250", "1.125", "210.5", "395.2", "droptail",
                   "100 KB", "0.9987", "Jain", "events", "utilization", "sojourn"]:
        assert needle in out, f"{needle!r} missing from:\n{out}"
    assert r.stderr == ""


def test_json_output_is_the_summary_text(fake_core, small_toml: Path):
    r = invoke("run", str(small_toml), "--json", "--seed", "4")
    assert r.exit_code == 0
    summary = json.loads(r.stdout)
    check_summary(summary)
    assert summary["seed"] == 4
    assert fake_core.calls[0]["doc"]["seed"] == 4


def test_set_is_applied(fake_core, small_toml: Path):
    r = invoke("run", str(small_toml), "--set", "flows[0].count=3", "--set", "name=other", "--json")
    assert r.exit_code == 0
    doc = fake_core.calls[0]["doc"]
    assert doc["flows"][0]["count"] == 3 and doc["name"] == "other"
    assert len(json.loads(r.stdout)["flows"]) == 4


def test_out_writes_files(fake_core, small_toml: Path, tmp_path: Path):
    out = tmp_path / "res"
    r = invoke("run", str(small_toml), "--out", str(out), "--json")
    assert r.exit_code == 0
    assert fake_core.calls[0]["series"] is True
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUT_FILES)
    assert (out / "summary.json").read_text().strip() == r.stdout.strip()
    assert "wrote" in r.stderr


def test_demo_without_a_file(fake_core):
    r = invoke("run", "--json")
    assert r.exit_code == 0
    assert "built-in demo" in r.stderr
    assert fake_core.calls[0]["doc"]["name"] == "demo"


def test_core_scenario_error_exits_2(fake_core, small_toml: Path, tmp_path: Path):
    fake_core.raise_ = _core.ScenarioError("flows[0].cc", 'unknown congestion control "x" (known: newreno, reno)')
    out = tmp_path / "o"
    r = invoke("run", str(small_toml), "--out", str(out))
    assert r.exit_code == 2
    assert r.stderr == 'error: flows[0].cc: unknown congestion control "x" (known: newreno, reno)\n'
    assert r.stdout == ""
    assert not out.exists()


def test_simulation_error_exits_1(fake_core, small_toml: Path, tmp_path: Path):
    fake_core.raise_ = _core.SimulationError("packet conservation violated on bottleneck")
    out = tmp_path / "o"
    r = invoke("run", str(small_toml), "--out", str(out))
    assert r.exit_code == 1
    assert r.stderr == "error: simulation failed: packet conservation violated on bottleneck\n"
    assert not out.exists()


def test_unexpected_error_exits_1_without_traceback(fake_core, small_toml: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("BLOATLAB_DEBUG", raising=False)
    fake_core.raise_ = KeyError("boom")
    r = invoke("run", str(small_toml))
    assert r.exit_code == 1
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith("error: KeyError:") and "BLOATLAB_DEBUG" in r.stderr


def test_debug_env_shows_traceback(fake_core, small_toml: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("BLOATLAB_DEBUG", "1")
    fake_core.raise_ = KeyError("boom")
    r = invoke("run", str(small_toml))
    assert r.exit_code == 1
    assert "Traceback" in r.stderr


def test_unwritable_out_exits_1(fake_core, small_toml: Path, tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = invoke("run", str(small_toml), "--out", str(blocker / "sub"))
    assert r.exit_code == 1
    assert r.stderr.startswith("error: --out: cannot write")


def test_version_and_help():
    r = invoke("--version")
    assert r.exit_code == 0 and _core.version() in r.stdout
    r = invoke("run", "--help")
    assert r.exit_code == 0 and "--set" in r.stdout and "--out" in r.stdout


def test_bench_failure_is_one_line(monkeypatch: pytest.MonkeyPatch):
    from bloatlab import bench

    def boom(case, duration_s):
        raise bench.BenchError(f"bench {case.key}: SimulationError: nope")

    monkeypatch.setattr(bench, "run_case", boom)
    r = invoke("bench", "--quick")
    assert r.exit_code == 1
    assert r.stderr.strip().splitlines()[-1].startswith("error: bench wang2016-II/short: ")
