"""`bloatlab run` with a bad page flow (app = "page"): exit 2 naming the key path, nothing
written. (The page's own checks are tested in crates/sim/tests/page_load.rs.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import assert_run_refused


@pytest.mark.parametrize(
    ("overrides", "path", "needles"),
    [
        (["flows[0].app=page", "flows[0].connections=7"], "flows[0].connections", ["6"]),
        (["flows[0].app=page", "flows[0].objects=0"], "flows[0].objects", []),
        (["flows[0].app=page", "flows[0].objects=10", "flows[0].size=5B"], "flows[0].size", ["object"]),
        (["flows[0].app=page", "flows[0].multiplex=true", "flows[0].connections=3"],
         "flows[0].connections", ["one connection"]),
    ],
)
def test_bad_page_flows(small_toml: Path, tmp_path: Path, overrides, path, needles):
    assert_run_refused(small_toml, tmp_path / "out", overrides, path, *needles)
