"""The parallel engine from the front end (issue 31): `threads`, `bloatlab run --threads`, the
same bytes for any thread count, the core's notes, and `bloatlab bench --scale`'s parallel cases."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import bloatlab
from bloatlab import bench, simcore
from bloatlab.cli import main
from helpers import SCENARIOS, assert_invalid, cli, without_wall_clock

FAT_TREE = SCENARIOS / "fat-tree.toml"
REFUSED = 'must be an integer from 1 to 1024 or "auto"'


def _run(out: Path, *args: str):
    proc = cli("run", str(FAT_TREE), "--json", "--out", str(out), *args)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_fat_tree_on_2_and_3_threads_is_the_one_thread_run(tmp_path):
    # The k = 4 fat-tree (4 pods) splits into 2 and 3 partitions: the summary (wall-clock fields
    # aside) and both time series must be those of one thread, exactly.
    one = _run(tmp_path / "t1", "--threads", "1")
    for n in ("2", "3"):
        many = _run(tmp_path / f"t{n}", "--threads", n)
        assert "note:" not in many.stderr, many.stderr  # all n threads used, nothing clamped
        assert without_wall_clock(many.stdout) == without_wall_clock(one.stdout), f"--threads {n}"
        for name in ("timeseries.parquet", "queues.parquet"):
            a = pd.read_parquet(tmp_path / "t1" / name)
            b = pd.read_parquet(tmp_path / f"t{n}" / name)
            assert len(a) > 0, name
            pd.testing.assert_frame_equal(a, b, check_exact=True)
    # The flows did something: the comparison is not between two empty runs.
    summary = json.loads(one.stdout)
    assert summary["engine"]["transmissions"] > 0
    assert all(f["bytes_delivered"] > 0 for f in summary["flows"])


@pytest.mark.parametrize("args, got", [
    (["--threads", "0"], "(got 0)"),
    (["--threads", "many"], '(got "many")'),
    (["--threads", "-1"], "(got -1)"),
    (["--set", "threads=0"], "(got 0)"),
    (["--set", "threads=2000"], "(got 2000)"),
    (["--set", "threads=1.5"], "(got 1.5)"),
    (["--set", 'threads="x"'], '(got "x")'),
])
def test_bad_threads_are_refused(tmp_path, args, got):
    out = tmp_path / "out"
    line = assert_invalid(cli("run", str(FAT_TREE), "--out", str(out), *args), REFUSED, got)
    assert line.startswith("error: threads: "), line
    assert not out.exists(), f"{out} was created"


def test_more_threads_than_pods_are_clamped_and_said(tmp_path):
    proc = _run(tmp_path / "t8", "--threads", "8")
    notes = [ln for ln in proc.stderr.splitlines() if ln.startswith("note:")]
    assert notes == ["note: threads = 8: 4 used (the graph splits into at most 4 partitions)"], proc.stderr
    one = _run(tmp_path / "t1", "--threads", "1")
    assert without_wall_clock(proc.stdout) == without_wall_clock(one.stdout)


def test_a_dumbbell_runs_on_one_thread_and_says_so():
    proc = cli("run", str(SCENARIOS / "demo.toml"), "--set", "duration=1s", "--threads", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        "note: threads = 2: 1 used (the dumbbell and cellular topologies run on one thread)"]
    # "auto" and one thread say nothing.
    for args in (["--threads", "auto"], ["--threads", "1"], []):
        proc = cli("run", str(SCENARIOS / "demo.toml"), "--set", "duration=1s", "--json", *args)
        assert proc.returncode == 0 and "note:" not in proc.stderr, (args, proc.stderr)


def test_python_api_takes_threads_in_set():
    one = bloatlab.run(FAT_TREE, set={"threads": 1, "duration": "10ms"}, series=False)
    two = bloatlab.run(FAT_TREE, set={"threads": 2, "duration": "10ms"}, series=False)
    assert two.scenario["threads"] == 2
    assert without_wall_clock(two.summary_json) == without_wall_clock(one.summary_json)
    with pytest.raises(bloatlab.ScenarioError) as e:
        bloatlab.run(FAT_TREE, set={"threads": 0})
    assert e.value.path == "threads"


# --------------------------------------------------------------------------- bench --scale cases


def test_bench_case_scenarios_are_the_documented_ones():
    doc = bench.days_e5()
    assert doc["topology"] == {"kind": "fat_tree", "k": 32, "link": {"rate": "100Gbps", "delay": "1us"},
                               "queue": {"kind": "droptail", "limit": "200p"}, "ecmp": "hash"}
    assert doc["flows"] == [{"transport": "tcp", "cc": "cubic", "pattern": "permutation", "size": "1MiB"}]
    assert doc["tcp"]["recovery"] == "sack" and doc["metrics"] == {"interval": "0s"}
    assert doc["duration"] == "1000000us" and "threads" not in doc  # set per run
    simcore.validate_scenario(doc)
    ft = bench.fat_tree_4096(0.002)
    assert ft == {**bench.scale_fat_tree(4096, 0.002), "threads": 1} and bench._flows_in(ft) == 4096
    assert bench.PARALLEL_CASES["e5"].fixed_s == 1.0 and bench.PARALLEL_CASES["fat_tree_4096"].fixed_s is None


def test_bench_threads_and_cases_lists():
    cores = os.cpu_count() or 1
    assert bench.parse_threads("1,2,all") == list(dict.fromkeys([1, 2, cores]))
    assert bench.parse_threads("4, 2,4") == [1, 4, 2]  # 1 first (the reference), duplicates dropped
    assert bench.parse_cases("none") == [] and bench.parse_cases("fat_tree_4096,e5") == ["fat_tree_4096", "e5"]


@pytest.mark.parametrize("args, needle", [
    (["--threads", "0"], "--threads: must be thread counts from 1 to 1024 or all"),
    (["--threads", "two"], "--threads: must be thread counts"),
    (["--threads", "1,,2"], "--threads: must be thread counts"),
    (["--threads", "-2"], "--threads: must be thread counts"),
    (["--threads", "1025"], "(got '1025')"),
    (["--cases", "e6"], "--cases: unknown case 'e6' (allowed: e5, fat_tree_4096, none)"),
    (["--cases", "none,e5"], "--cases: none goes alone (allowed: e5, fat_tree_4096, none)"),
    (["--cases", ""], "--cases: unknown case ''"),
    (["--case-time", "0"], "--case-time: must be greater than 0 (got 0)"),
    (["--case-time", "-1"], "--case-time: must be greater than 0 (got -1)"),
    (["--case-time", "long"], "--case-time"),
    (["--case-k", "3"], "--case-k: must be an even number from 2 to 64 (got 3)"),
])
def test_bench_case_options_are_checked_before_anything_runs(tmp_path, args, needle):
    out = tmp_path / "out"
    proc = cli("bench", "--scale", "--max-flows", "1", "--out", str(out), *args)
    assert needle in assert_invalid(proc, needle)
    assert not out.exists()


def test_bench_case_options_go_with_scale():
    for args in (["--threads", "2"], ["--cases", "e5"], ["--case-time", "1"]):
        assert_invalid(cli("bench", *args), "--cases, --threads and --case-time go with --scale")


def test_bench_tiny_parallel_cases_end_to_end(tmp_path):
    # Both cases on a k = 4 tree (16 hosts): E5 to completion (1 s simulated, 16 flows of 1 MiB),
    # the fat-tree case 0.5 ms (64 long flows); every run in its own process.
    proc = cli("bench", "--scale", "--max-flows", "1", "--quick", "--time-scale", "0.02", "--case-k", "4",
               "--case-time", "0.0005", "--threads", "2,all,1", "--json", "--out", str(tmp_path), timeout=600)
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    assert [p["flows"] for p in rep["points"]] == [1, 2]  # the curve runs first, as before
    threads = bench.parse_threads("2,all,1")
    e5, ft = rep["cases"]
    assert (e5["name"], e5["k"], e5["simulated_s"], e5["to_completion"]) == ("e5", 4, 1.0, True)
    assert (ft["name"], ft["k"], ft["simulated_s"], ft["to_completion"]) == ("fat_tree_4096", 4, 0.0005, False)
    for case, flows in ((e5, 16), (ft, 64)):
        runs = case["runs"]
        assert [r["threads"] for r in runs] == threads
        # k = 4 has 4 pods: at most 4 threads are used.
        assert [r["threads_used"] for r in runs] == [min(n, 4) for n in threads]
        assert all(r["same_bytes"] for r in runs), runs
        assert len({r["summary_sha256"] for r in runs}) == 1
        assert runs[0]["speedup"] == 1.0
        for r in runs:
            assert r["flows"] == flows and r["transmissions"] > 0 and r["events"] > 0
            assert r["peak_rss_mb"] > 0 and r["wall_s"] > 0 and r["setup_s"] >= 0
            assert r["speedup"] == pytest.approx(runs[0]["wall_s"] / r["wall_s"])
    # E5 runs to completion: every 1 MiB flow has a completion time; the long flows never end.
    assert all(r["flows_completed"] == 16 for r in e5["runs"])
    assert all(r["flows_completed"] == 0 for r in ft["runs"])
    assert json.loads((tmp_path / "scale.json").read_text())["cases"] == rep["cases"]


def _fake_case(same: bool) -> dict:
    run = {"threads": 1, "threads_used": 1, "setup_s": 0.1, "wall_s": 2.0, "events": 10, "transmissions": 100,
           "transmissions_per_wall_s": 50.0, "peak_rss_mb": 10.0, "flows": 16, "flows_completed": 15,
           "summary_sha256": "a", "speedup": 1.0, "same_bytes": True}
    other = {**run, "threads": 8, "threads_used": 4, "wall_s": 1.0, "speedup": 2.0, "same_bytes": same}
    return {"name": "e5", "scenario": "days-e5", "description": "E5", "k": 32, "simulated_s": 1.0,
            "to_completion": True, "runs": [run, other]}


@pytest.mark.parametrize("same", [True, False])
def test_bench_cases_table_and_a_difference_is_a_loud_failure(monkeypatch, same):
    monkeypatch.setattr(bench, "run_scale", lambda **kw: {
        "bloatlab": "x", "machine": "m", "scenario": "s", "repeat": 1, "points": []})
    monkeypatch.setattr(bench, "run_parallel_cases", lambda names, **kw: [_fake_case(same)])
    monkeypatch.setenv("COLUMNS", "200")
    r = CliRunner().invoke(main, ["bench", "--scale", "--cases", "e5"], catch_exceptions=False)
    assert "parallel cases" in r.stdout and "15/16" in r.stdout and "2.00" in r.stdout
    assert "8 (4)" in r.stdout  # threads asked (used)
    assert "not every flow completed" in r.stdout
    if same:
        assert r.exit_code == 0, r.stderr
        assert "BUG" not in r.stdout and "NO (bug)" not in r.stdout
    else:
        assert r.exit_code == 1
        assert "NO (bug)" in r.stdout and "BUG: e5 on 8 threads" in r.stdout
        assert "e5 on 8 threads" in r.stderr and "a bug in the parallel engine" in r.stderr
