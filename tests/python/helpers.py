"""Shared helpers for the Python tests (imported by the test modules)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"

# A small valid scenario: 2 Mbit/s is cheap to simulate.
SMALL_TOML = """\
name = "small"
duration = "5s"
seed = 1

[metrics]
interval = "100ms"

[topology]
kind = "dumbbell"
bottleneck = { rate = "2Mbps", delay = "5ms" }
bottleneck_queue = { kind = "droptail", limit = "100KB" }
access = { rate = "10Mbps", delay = "2.5ms" }

[[flows]]
transport = "tcp"
cc = "newreno"

[[flows]]
transport = "tcp"
cc = "reno"
start = "1s"
"""

SMALL: dict[str, Any] = {
    "name": "small",
    "duration": "5s",
    "seed": 1,
    "metrics": {"interval": "100ms"},
    "topology": {
        "kind": "dumbbell",
        "bottleneck": {"rate": "2Mbps", "delay": "5ms"},
        "bottleneck_queue": {"kind": "droptail", "limit": "100KB"},
        "access": {"rate": "10Mbps", "delay": "2.5ms"},
    },
    "flows": [
        {"transport": "tcp", "cc": "newreno"},
        {"transport": "tcp", "cc": "reno", "start": "1s"},
    ],
}

NUM = (int, float)
OPT_NUM = (int, float, type(None))

# The summary JSON contract (docs/scenario.md, DESIGN.md): field -> accepted types.
SUMMARY_FIELDS = {"name": str, "seed": int, "duration_s": NUM, "flows": list,
                  "bottleneck": dict, "fairness": dict, "engine": dict}
FLOW_FIELDS = {
    "id": int, "group": str, "transport": str, "cc": str, "start_s": NUM, "end_s": OPT_NUM,
    "throughput_mbps": NUM, "goodput_mbps": NUM, "bytes_delivered": int, "loss_pct": NUM,
    "efficiency_pct": NUM, "fct_s": OPT_NUM, "rtt_mean_ms": OPT_NUM, "rtt_p95_ms": OPT_NUM,
}
BOTTLENECK_FIELDS = {
    "aqm": str, "capacity_bytes": int, "mean_bytes": NUM, "buffer_usage_pct": NUM,
    "mean_sojourn_ms": NUM, "p95_sojourn_ms": NUM, "drops": int, "drop_pct": NUM,
    "utilization_pct": NUM,
}
FAIRNESS_FIELDS = {"jain_goodput": NUM}
ENGINE_FIELDS = {"wall_s": NUM, "events": int, "bottleneck_packets": int, "packets_per_wall_s": NUM}

FLOW_SERIES_COLUMNS = {"t_s", "flow", "cwnd_bytes", "ssthresh_bytes", "inflight_bytes", "rwnd_bytes",
                       "srtt_ms", "rtt_ms", "throughput_mbps", "goodput_mbps", "pacing_mbps", "cc_state"}
QUEUE_SERIES_COLUMNS = {"t_s", "link", "backlog_bytes", "backlog_pkts", "drops", "sojourn_ms", "tx_mbps"}


def check_fields(obj: dict[str, Any], spec: dict[str, Any], where: str) -> None:
    for key, types in spec.items():
        assert key in obj, f"{where}: missing field {key!r}"
        value = obj[key]
        assert not isinstance(value, bool), f"{where}.{key}: unexpected boolean"
        assert isinstance(value, types), f"{where}.{key}: {value!r} is not {types}"


def check_summary(summary: dict[str, Any]) -> None:
    check_fields(summary, SUMMARY_FIELDS, "summary")
    assert summary["flows"], "summary.flows is empty"
    for i, flow in enumerate(summary["flows"]):
        check_fields(flow, FLOW_FIELDS, f"flows[{i}]")
        assert flow["transport"] in {"tcp", "dccp", "udp"}
    check_fields(summary["bottleneck"], BOTTLENECK_FIELDS, "bottleneck")
    check_fields(summary["fairness"], FAIRNESS_FIELDS, "fairness")
    check_fields(summary["engine"], ENGINE_FIELDS, "engine")


_WALL = re.compile(r'("(?:wall_s|packets_per_wall_s|setup_s)"\s*:\s*)[-+0-9.eE]+'
                   r'|("(?:wall_s|packets_per_wall_s|setup_s)"\s*:\s*)null')


def without_wall_clock(summary_json: str) -> str:
    """The summary text with the wall-clock fields blanked (everything else must match byte for byte)."""
    return _WALL.sub(lambda m: (m.group(1) or m.group(2)) + "X", summary_json)


def cli(*args: str, cwd: Path | None = None, timeout: float = 300,
        stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Runs ``python -m bloatlab ARGS`` and returns the completed process."""
    env = {k: v for k, v in os.environ.items() if k != "BLOATLAB_DEBUG"}
    env["COLUMNS"] = "160"
    return subprocess.run(
        [sys.executable, "-m", "bloatlab", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env=env,
        input=stdin,
    )


def assert_invalid(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    """Exit 2, exactly one ``error: ...`` line on stderr naming every needle, no traceback."""
    err = proc.stderr
    assert proc.returncode == 2, f"exit {proc.returncode}\nstdout: {proc.stdout}\nstderr: {err}"
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one message line, got:\n{err}"
    assert lines[0].startswith("error: "), err
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    assert proc.stdout == "", proc.stdout
    return lines[0]


def assert_run_refused(scenario: Path, out: Path, overrides: list[str], path: str, *needles: str) -> str:
    """``bloatlab run SCENARIO --out OUT --set O ...`` is refused at key ``path``: exit 2, one line
    ``error: PATH: ...`` naming every needle, and OUT not written."""
    args = ["run", str(scenario), "--out", str(out)]
    for o in overrides:
        args += ["--set", o]
    line = assert_invalid(cli(*args), *needles)
    assert line.startswith(f"error: {path}: "), line
    assert not out.exists(), f"{out} was created"
    return line


def fake_summary(doc: dict[str, Any], seed: int | None = None) -> str:
    """A summary JSON that follows the contract, built from a resolved scenario (for tests of
    the front end that must not depend on the simulator)."""
    flows = []
    fid = 0
    for spec in doc.get("flows", []):
        for _ in range(int(spec.get("count", 1))):
            flows.append({
                "id": fid, "group": spec.get("group", spec.get("cc", "?")), "transport": "tcp",
                "cc": spec.get("cc", "?"), "start_s": 0.0, "end_s": None,
                "throughput_mbps": 1.25, "goodput_mbps": 1.125, "bytes_delivered": 123456,
                "loss_pct": 0.5, "efficiency_pct": 99.5, "fct_s": None,
                "rtt_mean_ms": 210.5, "rtt_p95_ms": 395.25,
            })
            fid += 1
    summary = {
        "name": doc.get("name", "scenario"),
        "seed": seed if seed is not None else doc.get("seed", 1),
        "duration_s": 5.0,
        "flows": flows,
        "bottleneck": {"aqm": "droptail", "capacity_bytes": 100000, "mean_bytes": 61234.5,
                       "buffer_usage_pct": 61.2345, "mean_sojourn_ms": 244.9, "p95_sojourn_ms": 390.0,
                       "drops": 17, "drop_pct": 1.7, "utilization_pct": 99.1},
        "fairness": {"jain_goodput": 0.9987},
        "engine": {"wall_s": 0.012, "events": 45678, "bottleneck_packets": 3210,
                   "packets_per_wall_s": 267500.0},
    }
    return json.dumps(summary, indent=2)


def fake_tables(series: bool) -> dict[str, dict[str, list[Any]]]:
    if not series:
        return {"flows": {"t_s": [], "flow": [], "cc_state": []}, "queues": {"t_s": [], "link": [], "drops": []}}
    return {
        "flows": {
            "t_s": [0.1, 0.1, 0.2, 0.2], "flow": [0, 1, 0, 1],
            "cwnd_bytes": [14480, 14480, 28960, 20000], "srtt_ms": [20.0, 21.5, 40.0, 41.0],
            "cc_state": ["slow_start", "slow_start", "recovery", "open"],
            "brand_new_column": [1, 2, 3, 4],
        },
        "queues": {
            "t_s": [0.1, 0.1, 0.2, 0.2], "link": ["bottleneck", "bottleneck_rev"] * 2,
            "backlog_bytes": [0, 0, 3000, 52], "drops": [0, 0, 1, 0], "sojourn_ms": [0.0, 0.0, 12.0, 0.1],
        },
    }
