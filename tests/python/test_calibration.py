"""The RFC 7928 calibration and flows-served search (bloatlab.experiments.calibration).

The search logic is tested with a fake runner whose loss is a known function of the flow
count (no simulation); one cheap real scenario checks the whole path through bloatlab.run.
"""

from __future__ import annotations

from typing import Any

import pytest

from bloatlab import ScenarioError
from bloatlab.experiments.calibration import (
    RFC7928_LEVELS,
    congestion_levels,
    flows_served,
    search_counts,
)

BASE: dict[str, Any] = {
    "duration": "60s",
    "topology": {"bottleneck": {"rate": "4Mbps", "delay": "20ms"},
                 "bottleneck_queue": {"kind": "droptail", "limit": "60KB"},
                 "access": {"rate": "100Mbps", "delay": "1ms"}},
    # a 30 kB window: one flow (30 kB < 22 kB of pipe + 60 kB of queue) cannot lose, three can
    "tcp": {"rcvbuf": "30KB"},
    "flows": [{"cc": "reno", "size": "300KB", "start": {"uniform": ["0s", "1s"]}}],
}


class FakeRunner:
    """Loss (%) = slope · (count − free), per seed + a seed offset; records every batch."""

    def __init__(self, slope: float = 0.1, free: int = 5, jitter: float = 0.0) -> None:
        self.slope, self.free, self.jitter = slope, free, jitter
        self.batches: list[list[tuple[int, int]]] = []

    def __call__(self, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        batch = [(d["flows"][0]["count"], d["seed"]) for d in docs]
        self.batches.append(batch)
        return [{"bottleneck": {"drop_pct": max(0.0, self.slope * (n - self.free)) + self.jitter * (s - 2)}}
                for n, s in batch]

    def counts(self) -> list[int]:
        return sorted({n for b in self.batches for n, _ in b})


def test_levels_are_the_smallest_counts_reaching_each_loss() -> None:
    run = FakeRunner(slope=0.1, free=5)  # 0.1 % at 6 flows, 0.5 % at 10, 1 % at 15
    assert congestion_levels(BASE, seeds=[1, 2], max_flows=100, run=run) == {"mild": 6, "medium": 10, "heavy": 15}
    # each count is run once, with every seed, whatever the number of levels
    assert all(sorted(s for _, s in b) == sorted([1, 2] * (len(b) // 2)) for b in run.batches)
    seen = [n for b in run.batches for n, s in b if s == 1]
    assert len(seen) == len(set(seen))
    # exponential then bisection: fewer counts than the one-by-one search (1..15)
    assert len(run.counts()) < 15


def test_levels_use_the_mean_over_seeds() -> None:
    # seeds 1, 2, 3 add −0.3, 0, +0.3: the mean is the noiseless loss
    run = FakeRunner(slope=0.1, free=5, jitter=0.3)
    assert congestion_levels(BASE, seeds=[1, 2, 3], max_flows=64, run=run)["medium"] == 10


def test_unreached_level_is_none_and_max_flows_is_tried() -> None:
    run = FakeRunner(slope=0.01, free=5)  # 1 % needs 105 flows
    found = congestion_levels(BASE, seeds=[1], max_flows=50, run=run)
    assert found["heavy"] is None and found["mild"] == 15
    assert 50 in run.counts() and max(run.counts()) == 50


def test_flows_served_by_name_or_percentage() -> None:
    assert flows_served(BASE, criterion="heavy", seeds=[1], max_flows=64, run=FakeRunner()) == 15
    assert flows_served(BASE, criterion=0.3, seeds=[1], max_flows=64, run=FakeRunner()) == 8
    assert flows_served(BASE, criterion=1.0, seeds=[1], max_flows=1, run=FakeRunner(free=0, slope=2)) == 1


def test_search_counts_runs_scenarios_in_lockstep_with_their_own_hooks() -> None:
    run = FakeRunner()
    seen: dict[str, list[int]] = {"a": [], "b": []}

    def hook(key: str):  # noqa: ANN202
        def f(doc: dict[str, Any], n: int) -> dict[str, Any]:
            seen[key].append(n)
            doc["duration"] = f"{10 * n}s"
            return doc
        return f

    found, losses = search_counts({"a": BASE, "b": BASE}, levels={"x": 0.5}, seeds=[1], max_flows=32, run=run,
                                  with_count={"a": hook("a"), "b": hook("b")})
    assert found == {"a": {"x": 10}, "b": {"x": 10}}
    assert seen["a"] == seen["b"] and sorted(losses["a"]) == sorted(set(seen["a"]))
    assert all(len(b) == 2 for b in run.batches)  # one count of each scenario per batch


@pytest.mark.parametrize(("kwargs", "path"), [
    ({"flow_index": 1}, "flow_index"),
    ({"flow_index": -1}, "flow_index"),
    ({"levels": {"mild": 0.0}}, "levels.mild"),
    ({"levels": {"x": 150}}, "levels.x"),
    ({"levels": {}}, "levels"),
    ({"seeds": []}, "seeds"),
    ({"max_flows": 0}, "max_flows"),
])
def test_bad_input_raises_scenario_error(kwargs: dict[str, Any], path: str) -> None:
    with pytest.raises(ScenarioError) as e:
        congestion_levels(BASE, run=FakeRunner(), **kwargs)
    assert e.value.path == path


def test_bad_criterion_and_missing_flows() -> None:
    with pytest.raises(ScenarioError) as e:
        flows_served(BASE, criterion="extreme", run=FakeRunner())
    assert e.value.path == "criterion"
    with pytest.raises(ScenarioError) as e:
        flows_served(BASE, criterion=-1.0, run=FakeRunner())
    assert e.value.path.startswith("levels")
    with pytest.raises(ScenarioError) as e:
        congestion_levels({**BASE, "flows": []}, run=FakeRunner())
    assert e.value.path == "flows"


def test_real_runs_through_bloatlab_run() -> None:
    """A small drop-tail dumbbell (serial runner, the default): more flows lose more, and the
    levels found are consistent with the losses measured."""
    found, losses = search_counts({0: BASE}, levels=RFC7928_LEVELS, seeds=[1, 2], max_flows=16)
    lv, loss = found[0], losses[0]
    for name, pct in RFC7928_LEVELS.items():
        n = lv[name]
        if n is None:
            assert loss[16] < pct
            continue
        assert loss[n] >= pct
        assert all(loss[m] < pct for m in loss if m < n and m in loss and loss[m] < pct) or n == 1
    assert loss[max(loss)] > loss[min(loss)]
