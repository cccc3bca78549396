"""Back ends give the same numbers (serial, local pool, Ray); failures are recorded and do not
stop the others; a killed worker is survived; Ray missing or unreachable is invalid input."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import bloatlab
from bloatlab import _core
from bloatlab.sweeps.backends import LocalBackend, RayBackend, SerialBackend, execute
from bloatlab.sweeps.store import Store
from helpers import assert_invalid, cli
from test_sweep_spec import TINY

WALL = ["engine.wall_s", "engine.packets_per_wall_s", "engine.setup_s", "elapsed_s", "finished_at"]
AXES = {"flows[0].cc": ["newreno", "cubic"]}


def numbers(store: Path) -> dict[str, object]:
    """Every number of a store except wall-clock ones, by table."""
    st = Store(store)
    out = {}
    for name in ("runs", "flows", "bottleneck", "timeseries", "queues"):
        df = st.table(name)
        df = df.drop(columns=[c for c in WALL if c in df.columns])
        out[name] = df.sort_values([c for c in ("run_id", "id", "flow", "link", "t_s") if c in df.columns],
                                   kind="stable").reset_index(drop=True)
    return out


def assert_same(a: dict, b: dict) -> None:
    import pandas.testing as pdt

    for name in a:
        pdt.assert_frame_equal(a[name], b[name], check_dtype=False, obj=name)


def test_serial_local_and_ray_give_the_same_numbers(tmp_path: Path):
    ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'bloatlab[ray]')")
    kw = {"seeds": 2, "progress": False}
    df_serial = bloatlab.sweep(TINY, AXES, backend="serial", out=tmp_path / "serial", **kw)
    df_local = bloatlab.sweep(TINY, AXES, backend="local", jobs=2, out=tmp_path / "local", **kw)
    assert len(df_serial) == 2 * 2 * 2  # 4 runs x 2 flows
    assert df_serial["seed"].nunique() == 2
    # the seeds matter: flow 1 starts at a random time
    starts = df_serial[df_serial["id"] == 1]["start_s"]
    assert starts.nunique() == 2
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        df_ray = bloatlab.sweep(TINY, AXES, backend="ray", out=tmp_path / "ray", **kw)
    finally:
        ray.shutdown()
    import pandas.testing as pdt

    for df in (df_local, df_ray):
        pdt.assert_frame_equal(df_serial, df, check_dtype=False)
    ref = numbers(tmp_path / "serial")
    assert_same(ref, numbers(tmp_path / "local"))
    assert_same(ref, numbers(tmp_path / "ray"))
    # and the same as single runs
    r = bloatlab.run(TINY, seed=2, set={"flows[0].cc": "cubic"})
    got = df_serial[(df_serial["seed"] == 2) & (df_serial["flows[0].cc"] == "cubic")]
    assert got["goodput_mbps"].tolist() == r.flows["goodput_mbps"].tolist()
    # the summaries are byte for byte the simulator's, but for the wall clock
    rid = got["run_id"].iloc[0]
    texts = {(d / "runs" / rid / "summary.json").read_text() for d in (tmp_path / "serial", tmp_path / "ray")}
    from helpers import without_wall_clock

    assert len({without_wall_clock(t) for t in texts}) == 1


def test_a_failing_run_is_recorded_and_the_others_finish(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    real = _core.run_json

    def flaky(text: str, seed=None, series=True, capture_dir=None):
        doc = json.loads(text)
        if doc["duration"] == "1ns":  # validation: not a run
            return real(text, seed, series)
        if doc.get("seed") == 2 and doc["flows"][0].get("cc") == "cubic":
            raise _core.SimulationError("conservation check failed: 3 packets unaccounted for")
        if doc.get("seed") == 3 and doc["flows"][0].get("cc") == "cubic":
            raise RuntimeError("a bug")
        return real(text, seed, series) if capture_dir is None else real(text, seed, series, capture_dir)

    monkeypatch.setattr(_core, "run_json", flaky)
    out = tmp_path / "store"
    with pytest.warns(RuntimeWarning, match="2 of 6 runs failed"):
        df = bloatlab.sweep(TINY, AXES, seeds=3, backend="serial", out=out, progress=False)
    assert df["run_id"].nunique() == 4
    runs = Store(out).runs
    bad = runs[runs["status"] == "error"].set_index("seed")
    assert sorted(bad.index) == [2, 3]
    assert bad.loc[2, "error_type"] == "SimulationError" and "conservation" in bad.loc[2, "error"]
    assert bad.loc[3, "error_type"] == "RuntimeError" and bad.loc[3, "error"] == "a bug"
    rec = json.loads((out / "runs" / bad.loc[3, "run_id"] / "run.json").read_text())
    assert "Traceback" in rec["error"]["traceback"]  # not a simulator error: keep the traceback
    assert sorted(p.name for p in (out / "runs" / bad.loc[2, "run_id"]).iterdir()) == ["run.json", "scenario.json"]
    # The next start retries the failed runs (and only them).
    monkeypatch.setattr(_core, "run_json", real)
    calls = []

    def counting(text: str, seed=None, series=True, *rest):
        if json.loads(text)["duration"] != "1ns" and series:  # runs, not validation
            calls.append(1)
        return real(text, seed, series, *rest)

    monkeypatch.setattr(_core, "run_json", counting)
    df = bloatlab.sweep(TINY, AXES, seeds=3, backend="serial", out=out, progress=False)
    assert len(calls) == 2
    assert df["run_id"].nunique() == 6
    assert (Store(out).runs["status"] == "ok").all()


def test_cli_reports_failures_with_exit_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from bloatlab.cli import main

    real = _core.run_json

    def flaky(text: str, seed=None, series=True, capture_dir=None):
        doc = json.loads(text)
        if doc["flows"][0].get("cc") == "cubic" and doc["duration"] != "1ns":
            raise _core.SimulationError("boom")
        return real(text, seed, series)

    monkeypatch.setattr(_core, "run_json", flaky)
    sweep = tmp_path / "s.toml"
    (tmp_path / "base.json").write_text(json.dumps(TINY))
    sweep.write_text('base = "base.json"\nseeds = 2\n[grid]\n"flows[0].cc" = ["newreno", "cubic"]\n')
    out = tmp_path / "store"
    r = CliRunner().invoke(main, ["sweep", str(sweep), "--backend", "serial", "--out", str(out)])
    assert r.exit_code == 1, r.output
    assert "2 failed" in r.stderr and "failed: flows[0].cc=cubic, seed 1: SimulationError: boom" in r.stderr
    assert "newreno" in r.stdout  # the table of what succeeded
    assert Store(out).status() == {"total": 4, "ok": 2, "error": 2, "missing": 0}


def test_execute_never_raises():
    out = execute({"run_id": "x", "scenario_json": json.dumps({**TINY, "duration": "0s"})})
    assert out["status"] == "error" and out["error"]["type"] == "ScenarioError" and out["error"]["path"] == "duration"
    out = execute({"run_id": "y", "scenario_json": json.dumps(TINY)})
    assert out["status"] == "ok" and set(out["files"]) == {"summary.json", "timeseries.parquet", "queues.parquet"}


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_worker_is_survived():
    """SIGKILL a worker in the middle of a run: its run is retried, the sweep completes."""
    backend = LocalBackend(jobs=2)
    slow = {**TINY, "duration": "60s", "topology": {**TINY["topology"], "bottleneck": {"rate": "100Mbps",
                                                                                       "delay": "5ms"}}}
    tasks = [{"run_id": f"r{i}", "scenario_json": json.dumps({**slow, "seed": i + 1})} for i in range(6)]
    killed: list[int] = []

    def killer() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            kids = _children(os.getpid())
            workers = [k for k in kids
                       if b"bloatlab.sweeps.worker" in Path(f"/proc/{k}/cmdline").read_bytes()] if kids else []
            if len(workers) == 2:
                time.sleep(0.3)  # let them start a run
                os.kill(workers[0], signal.SIGKILL)
                killed.append(workers[0])
            time.sleep(0.05)

    t = threading.Thread(target=killer, daemon=True)
    t.start()
    results = list(backend.run(tasks))
    t.join(5)
    assert killed, "no worker was found to kill"
    assert sorted(r["run_id"] for r in results) == [f"r{i}" for i in range(6)]
    assert all(r["status"] == "ok" for r in results), [r.get("error") for r in results]
    assert not any(Path(f"/proc/{k}").exists() for k in _children(os.getpid()))  # no worker left behind


def test_a_worker_that_always_dies_is_recorded_as_failed(monkeypatch: pytest.MonkeyPatch):
    """A run that kills its worker every time fails after two tries; the others finish."""
    import bloatlab.sweeps.backends as B

    original = B._Worker.call

    def call(self, task):
        if task["run_id"] == "bad":
            self.proc.kill()
        return original(self, task)

    monkeypatch.setattr(B._Worker, "call", call)
    tasks = [{"run_id": rid, "scenario_json": json.dumps(TINY)} for rid in ("a", "bad", "b", "c")]
    results = {r["run_id"]: r for r in LocalBackend(jobs=2).run(tasks)}
    assert set(results) == {"a", "bad", "b", "c"}
    assert results["bad"]["status"] == "error"
    assert "killed by SIGKILL" in results["bad"]["error"]["message"] and "2 times" in results["bad"]["error"]["message"]
    assert all(results[k]["status"] == "ok" for k in "abc")


def test_serial_backend_runs_in_process():
    out = list(SerialBackend().run([{"run_id": "a", "scenario_json": json.dumps(TINY)}]))
    assert out[0]["worker"]["pid"] == os.getpid()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_ray_address_exits_2_and_writes_nothing(tmp_path: Path):
    pytest.importorskip("ray")
    sweep = tmp_path / "s.toml"
    (tmp_path / "base.json").write_text(json.dumps(TINY))
    sweep.write_text('base = "base.json"\n[grid]\n"flows[0].cc" = ["newreno", "cubic"]\n')
    out = tmp_path / "store"
    port = _free_port()
    t0 = time.monotonic()
    proc = cli("sweep", str(sweep), "--backend", "ray", "--address", f"127.0.0.1:{port}", "--out", str(out))
    assert_invalid(proc, "--address", f"cannot reach a Ray cluster at 127.0.0.1:{port}")
    assert time.monotonic() - t0 < 60
    assert not out.exists()
    assert_invalid(cli("sweep", str(sweep), "--backend", "ray", "--address", "nonsense", "--out", str(out)),
                   "--address", "not a Ray address")


def test_ray_missing_says_how_to_install(tmp_path: Path):
    # A child Python in which `import ray` fails.
    (tmp_path / "ray.py").write_text("raise ImportError('No module named ray')\n")
    sweep = tmp_path / "s.toml"
    (tmp_path / "base.json").write_text(json.dumps(TINY))
    sweep.write_text('base = "base.json"\n')
    out = tmp_path / "store"
    env = {**os.environ, "PYTHONPATH": str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-m", "bloatlab", "sweep", str(sweep), "--backend", "ray", "--out",
                           str(out)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert_invalid(proc, "--backend", "pip install 'bloatlab[ray]'")
    assert not out.exists()


def test_ray_backend_uses_an_existing_session(monkeypatch: pytest.MonkeyPatch):
    class FakeRay:
        inits = 0

        def is_initialized(self):
            return True

        def init(self, **kw):  # pragma: no cover - must not be called
            FakeRay.inits += 1

        def cluster_resources(self):
            return {"CPU": 6.0}

    monkeypatch.setitem(sys.modules, "ray", FakeRay())
    b = RayBackend()
    b.start()
    assert b.workers == 6 and FakeRay.inits == 0
    b.close()  # does not shut down a session it did not start
