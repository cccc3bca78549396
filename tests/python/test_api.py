"""The Python API: bloatlab.run, Result, Result.to_dir."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import bloatlab
from bloatlab import Result, ScenarioError, SimulationError, _core
from bloatlab.result import OUTPUT_FILES
from helpers import (
    FLOW_SERIES_COLUMNS,
    QUEUE_SERIES_COLUMNS,
    SMALL,
    check_summary,
    fake_summary,
    fake_tables,
)


def test_public_names():
    assert set(bloatlab.__all__) >= {"run", "Result", "ScenarioError", "__version__"}
    assert bloatlab.__version__ == _core.version()
    assert issubclass(SimulationError, RuntimeError)
    assert issubclass(ScenarioError, ValueError)


# --------------------------------------------------------------------------- with a stand-in core


def test_run_passes_the_resolved_scenario(fake_core, small_toml):
    r = bloatlab.run(small_toml, seed=9, set=["duration=2s", "flows[1].cc=newreno"], series=False)
    (call,) = fake_core.calls
    assert call["series"] is False
    assert call["doc"]["seed"] == 9 and call["doc"]["duration"] == "2s"
    assert call["doc"]["flows"][1]["cc"] == "newreno"
    assert r.scenario == call["doc"]
    assert r.summary["seed"] == 9


def test_run_does_not_modify_a_dict(fake_core):
    before = copy.deepcopy(SMALL)
    bloatlab.run(SMALL, set={"flows[0].cc": "reno"})
    assert SMALL == before
    assert fake_core.calls[0]["doc"]["flows"][0]["cc"] == "reno"


def test_core_errors_become_bloatlab_errors(fake_core):
    fake_core.raise_ = _core.ScenarioError("flows[0].cc", 'unknown congestion control "cubik"')
    with pytest.raises(ScenarioError) as info:
        bloatlab.run(SMALL)
    assert info.value.path == "flows[0].cc"
    assert str(info.value).startswith("flows[0].cc: unknown congestion control")
    fake_core.raise_ = _core.SimulationError("conservation violated")
    with pytest.raises(SimulationError, match="conservation"):
        bloatlab.run(SMALL)


def test_result_frames_are_generic():
    r = Result(fake_summary(SMALL), fake_tables(True), SMALL)
    assert list(r.flows["id"]) == [0, 1]
    assert {"group", "cc", "goodput_mbps", "rtt_p95_ms"} <= set(r.flows.columns)
    assert "brand_new_column" in r.timeseries.columns  # columns are not hard-coded
    assert len(r.timeseries) == 4 and len(r.queues) == 4
    assert r.timeseries["cwnd_bytes"].dtype.kind == "i"
    assert r.queues["sojourn_ms"].dtype.kind == "f"
    assert "small" in repr(r)


def test_result_with_missing_or_empty_tables():
    r = Result(fake_summary(SMALL), {}, SMALL)
    assert r.timeseries.empty and r.queues.empty
    r = Result(fake_summary(SMALL), fake_tables(False), SMALL)
    assert r.timeseries.empty and list(r.timeseries.columns) == ["t_s", "flow", "cc_state"]


def test_to_dir_writes_four_readable_files(tmp_path: Path):
    r = Result(fake_summary(SMALL), fake_tables(True), SMALL)
    out = r.to_dir(tmp_path / "a" / "b")
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUT_FILES)
    assert (out / "summary.json").read_text() == r.summary_json + "\n"
    assert json.loads((out / "scenario.json").read_text()) == SMALL
    ts = pq.read_table(out / "timeseries.parquet").to_pandas()
    assert list(ts.columns) == list(fake_tables(True)["flows"])
    assert ts["cc_state"].tolist() == ["slow_start", "slow_start", "recovery", "open"]
    qs = pq.read_table(out / "queues.parquet").to_pandas()
    assert qs["link"].tolist()[:2] == ["bottleneck", "bottleneck_rev"]
    assert not [p for p in tmp_path.joinpath("a").iterdir() if p.name.startswith(".")]  # no temp dir left


def test_to_dir_empty_tables(tmp_path: Path):
    r = Result(fake_summary(SMALL), fake_tables(False), SMALL)
    out = r.to_dir(tmp_path / "o")
    assert pq.read_table(out / "timeseries.parquet").num_rows == 0


def test_to_dir_into_existing_directory_replaces_only_its_files(tmp_path: Path):
    out = tmp_path / "o"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    (out / "summary.json").write_text("old")
    Result(fake_summary(SMALL), fake_tables(True), SMALL).to_dir(out)
    assert (out / "notes.txt").read_text() == "keep me"
    assert json.loads((out / "summary.json").read_text())["name"] == "small"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]


def test_to_dir_failure_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import pyarrow.parquet

    calls = []

    def failing_write(table, where, **kw):
        calls.append(where)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(table, where, **kw)

    real = pyarrow.parquet.write_table
    monkeypatch.setattr(pyarrow.parquet, "write_table", failing_write)
    r = Result(fake_summary(SMALL), fake_tables(True), SMALL)
    with pytest.raises(OSError):
        r.to_dir(tmp_path / "out")
    assert list(tmp_path.iterdir()) == []  # neither the target nor a temp dir

    existing = tmp_path / "existing"
    existing.mkdir()
    (existing / "summary.json").write_text("old")
    calls.clear()
    with pytest.raises(OSError):
        r.to_dir(existing)
    assert [p.name for p in existing.iterdir()] == ["summary.json"]
    assert (existing / "summary.json").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing"]


def test_to_dir_refuses_a_file(tmp_path: Path):
    f = tmp_path / "f"
    f.write_text("x")
    with pytest.raises(NotADirectoryError):
        Result(fake_summary(SMALL), {}, SMALL).to_dir(f)


# --------------------------------------------------------------------------- with the real simulator


def test_real_run_from_dict():
    r = bloatlab.run(SMALL, set=["duration=3s"])
    check_summary(r.summary)
    assert r.summary["name"] == "small" and r.summary["seed"] == 1
    assert len(r.flows) == 2
    assert list(r.flows["cc"]) == ["newreno", "reno"]
    assert FLOW_SERIES_COLUMNS <= set(r.timeseries.columns)
    assert QUEUE_SERIES_COLUMNS <= set(r.queues.columns)
    assert len(r.timeseries) > 0 and len(r.queues) > 0
    assert set(r.timeseries["flow"]) == {0, 1}
    assert "bottleneck" in set(r.queues["link"])


def test_real_run_from_path_with_seed(small_toml):
    r = bloatlab.run(small_toml, seed=5, set=["duration=2s"], series=False)
    assert r.summary["seed"] == 5
    assert r.timeseries.empty and r.queues.empty


def test_real_run_to_dir(tmp_path: Path):
    r = bloatlab.run(SMALL, set=["duration=2s"])
    out = r.to_dir(tmp_path / "run")
    ts = pq.read_table(out / "timeseries.parquet")
    assert FLOW_SERIES_COLUMNS <= set(ts.column_names)
    assert ts.num_rows == len(r.timeseries)
    assert json.loads((out / "summary.json").read_text()) == r.summary


@pytest.mark.parametrize(
    ("overrides", "path"),
    [
        ({"topology.bottlenek": {"rate": "1Mbps"}}, "topology.bottlenek"),
        ({"flows[0].cc": "cubik"}, "flows[0].cc"),
        ({"duration": "0s"}, "duration"),
        ({"topology.bottleneck.rate": "2Mbit"}, "topology.bottleneck.rate"),
    ],
)
def test_real_scenario_errors(overrides, path):
    with pytest.raises(ScenarioError) as info:
        bloatlab.run(SMALL, set=overrides)
    assert info.value.path == path
    assert info.value.message


@pytest.mark.parametrize(
    "overrides",
    [
        {"topology.bottlenek": {"rate": "1Mbps"}},
        {"flows[0].cc": "cubik"},
        {"duration": "0s"},
        {"warmup": "1h"},
        {"capture": {"links": ["nowhere"]}},
        {"topology.bottleneck.rate": "2Mbit"},
    ],
)
def test_validate_reports_what_a_run_reports(overrides):
    """One core call checks a scenario without running it, with the run's key path and message."""
    from bloatlab.scenario import resolve
    from bloatlab.simcore import validate_scenario

    doc = resolve(SMALL, set=overrides)
    with pytest.raises(ScenarioError) as checked:
        validate_scenario(doc)
    with pytest.raises(ScenarioError) as ran:
        bloatlab.run(doc)
    assert checked.value.args == ran.value.args


def test_a_sweep_checks_each_point_with_one_core_call(monkeypatch: pytest.MonkeyPatch):
    """Issue 17: a sweep goes through the core once per point to validate it and once per run."""
    calls = {"validate": 0, "run": 0}
    real_validate, real_run = _core.validate_json, _core.run_json

    def validate(text):
        calls["validate"] += 1
        return real_validate(text)

    def run(text, *args):
        calls["run"] += 1
        return real_run(text, *args)

    monkeypatch.setattr(_core, "validate_json", validate)
    monkeypatch.setattr(_core, "run_json", run)
    df = bloatlab.sweep(SMALL, {"flows[0].cc": ["reno", "cubic"]}, seeds=2, set={"duration": "1s"},
                        backend="serial", progress=False)
    assert df["run_id"].nunique() == 4
    assert calls == {"validate": 2, "run": 4}
