from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bloatlab import _core
from helpers import SMALL_TOML, fake_summary, fake_tables

# The files whose tests run real emulations (wall-clock runs in network namespaces).
EMULATION_FILES = frozenset({
    "test_emulate", "test_emulate_compare", "test_emulate_modern_aqm", "test_emulate_units",
    "test_reproduce_engine", "test_validate",
})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Groups for pytest-xdist's ``--dist loadgroup`` (scripts/test.sh): a file's tests run on one
    worker, so its module-scoped fixtures are computed once; every emulating file shares one
    group, so two emulations never run at once (they would share the cores whose timing the
    emulation tests check)."""
    for item in items:
        stem = item.path.stem
        item.add_marker(pytest.mark.xdist_group("emulation" if stem in EMULATION_FILES else stem))


class FakeCore:
    """Stands in for ``_core.run_json``; records what the front end passed."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.raise_: BaseException | None = None

    def __call__(self, scenario_json: str, seed: int | None = None, series: bool = True):
        doc = json.loads(scenario_json)
        self.calls.append({"doc": doc, "seed": seed, "series": series})
        if self.raise_ is not None:
            raise self.raise_
        return fake_summary(doc, seed), fake_tables(series)


@pytest.fixture
def fake_core(monkeypatch: pytest.MonkeyPatch) -> FakeCore:
    fake = FakeCore()
    monkeypatch.setattr(_core, "run_json", fake)
    return fake


@pytest.fixture
def small_toml(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL_TOML)
    return path
