"""Aggregation: Student-t quantiles, mean ± CI per group, Jain's index across chosen flows."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import bloatlab
from bloatlab.sweeps.aggregate import jain, jain_index, mean_ci, summarize, t_cdf, t_quantile
from test_sweep_spec import TINY

# t(0.975, df) from standard tables (and scipy.stats.t.ppf).
T975 = {1: 12.706204736, 2: 4.302652730, 3: 3.182446305, 4: 2.776445105, 9: 2.262157163,
        29: 2.045229642, 100: 1.983971519, 1000: 1.962339081}


@pytest.mark.parametrize("df, expected", sorted(T975.items()))
def test_t_quantile_matches_tables(df: int, expected: float):
    assert t_quantile(0.975, df) == pytest.approx(expected, rel=1e-9)
    assert t_quantile(0.025, df) == pytest.approx(-expected, rel=1e-9)
    assert t_cdf(expected, df) == pytest.approx(0.975, abs=1e-9)  # the table has 10 digits


def test_t_quantile_against_scipy():
    stats = pytest.importorskip("scipy.stats")
    for df in (1, 2, 3, 5, 7.5, 12, 30, 200):
        for p in (0.6, 0.9, 0.95, 0.975, 0.995, 0.9995):
            assert t_quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-9)


def test_mean_ci():
    r = mean_ci([1.0, 2.0, 3.0, 4.0])
    assert r["n"] == 4 and r["mean"] == 2.5
    assert r["std"] == pytest.approx(math.sqrt(5 / 3))
    half = 3.182446305 * math.sqrt(5 / 3) / 2
    assert r["ci_half"] == pytest.approx(half) and r["ci_low"] == pytest.approx(2.5 - half)
    assert mean_ci([1.0, 2.0, 3.0, 4.0], 0.99)["ci_half"] > half
    one = mean_ci([5.0])
    assert one["mean"] == 5.0 and math.isnan(one["std"]) and math.isnan(one["ci_half"])
    assert mean_ci([float("nan"), None, 2.0, 4.0])["n"] == 2
    assert mean_ci([])["n"] == 0


def test_summarize_is_tidy_and_keeps_group_order():
    df = pd.DataFrame({"cc": ["b", "b", "a", "a", "a"], "x": [1.0, 3.0, 10.0, 20.0, 30.0], "y": [1, 1, 1, 1, None]})
    s = summarize(df, "cc", ["x", "y"])
    assert list(s.columns) == ["cc", "metric", "n", "mean", "std", "sem", "ci_low", "ci_high", "ci_half"]
    assert s[["cc", "metric"]].values.tolist() == [["b", "x"], ["b", "y"], ["a", "x"], ["a", "y"]]
    a = s[(s.cc == "a") & (s.metric == "x")].iloc[0]
    assert a["mean"] == 20.0 and a["n"] == 3
    assert a["ci_half"] == pytest.approx(4.302652730 * 10 / math.sqrt(3))
    assert s[(s.cc == "a") & (s.metric == "y")].iloc[0]["n"] == 2
    whole = summarize(df, None, "x")
    assert len(whole) == 1 and whole.iloc[0]["n"] == 5
    with pytest.raises(KeyError):
        summarize(df, "nope", "x")


def test_jain_index():
    assert jain_index([5, 5, 5]) == 1.0
    assert jain_index([1, 0, 0, 0]) == pytest.approx(0.25)
    assert jain_index([]) == 1.0 and jain_index([0, 0]) == 1.0  # as the simulator
    assert jain_index([1, 2]) == pytest.approx(9 / 10)


def test_jain_per_run_matches_the_simulator_and_selects_flows(tmp_path):
    scenario = {**TINY, "flows": [{"cc": "newreno", "count": 2}, {"cc": "cubic", "start": "0.5s"}]}
    flows = bloatlab.sweep(scenario, {"topology.bottleneck_queue.limit": ["10KB", "40KB"]}, seeds=3,
                           backend="serial", out=tmp_path / "s", progress=False)
    per_run = jain(flows)
    assert len(per_run) == 6 and (per_run["n_flows"] == 3).all()
    assert list(per_run.columns) == ["run_id", "point", "topology.bottleneck_queue.limit", "seed", "jain", "n_flows"]
    runs = bloatlab.Store(tmp_path / "s").runs.set_index("run_id")
    for _, r in per_run.iterrows():
        assert r["jain"] == pytest.approx(runs.loc[r["run_id"], "jain_goodput"], rel=1e-9)
    only = jain(flows, where={"group": "newreno"})
    assert (only["n_flows"] == 2).all()
    lam = jain(flows, where=lambda f: f["id"] != 2)
    assert only["jain"].tolist() == pytest.approx(lam["jain"].tolist())
    agg = summarize(per_run, ["topology.bottleneck_queue.limit"], "jain")
    assert agg["n"].tolist() == [3, 3]
    assert ((agg["ci_low"] <= agg["mean"]) & (agg["mean"] <= agg["ci_high"])).all()
