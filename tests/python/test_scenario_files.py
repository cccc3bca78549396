"""Every example in scenarios/ is valid TOML, validates and runs."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from bloatlab.scenario import demo_text
from helpers import SCENARIOS, check_summary, cli

FILES = sorted(SCENARIOS.glob("*.toml"))


def test_there_are_examples():
    names = {p.stem for p in FILES}
    assert {"demo", "wang2016-I", "wang2016-II", "heterogeneous-rtt", "file-transfers", "random-loss"} <= names


def test_builtin_demo_is_scenarios_demo():
    assert demo_text() == (SCENARIOS / "demo.toml").read_text(), (
        "python/bloatlab/scenarios/demo.toml and scenarios/demo.toml must be identical"
    )


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_example_is_commented_toml(path: Path):
    text = path.read_text()
    doc = tomllib.loads(text)
    assert text.lstrip().startswith("#"), "start with a comment that says what the scenario shows"
    assert doc.get("name") == path.stem
    assert doc["flows"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_example_runs(path: Path):
    # Short runs: the point is that each file validates and simulates, not the numbers.
    proc = cli("run", str(path), "--json", "--set", "duration=10s", "--set", "warmup=0s")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    check_summary(summary)
    doc = tomllib.loads(path.read_text())
    if not any("pattern" in f for f in doc["flows"]):  # a pattern expands to host pairs (graph topologies)
        assert len(summary["flows"]) == sum(int(f.get("count", 1)) for f in doc["flows"])
    assert summary["name"] == doc["name"]
