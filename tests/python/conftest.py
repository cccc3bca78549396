from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bloatlab import _core
from helpers import SMALL_TOML, fake_summary, fake_tables


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
