"""``bloatlab reproduce``: every experiment end to end in its smallest configuration, the
shape of claims.json, determinism, resuming from the cache, and bad input.

The full reproductions take minutes to hours and are not run here; the smallest
configuration (``smoke``) still goes through every table, figure and claim."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bloatlab import SimulationError, Store, experiments
from bloatlab.experiments import framework
from helpers import assert_invalid, cli

EXPERIMENTS = list(experiments.MODULES)
CLAIM_KEYS = {"experiment", "id", "text", "paper", "ours", "holds", "why"}

# The claims the issue asks for, by experiment: at least this many each.
MIN_CLAIMS = {"cubic-plus": 7, "cellular-bufferbloat": 6, "ewt": 5, "abrwda": 5, "dccp-bbr": 4,
              "ending-the-anomaly": 6}


@pytest.fixture(scope="module")
def smoke_all(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reproduce-all")
    experiments.reproduce("all", out, smoke=True, jobs=2, progress=False)
    return out


def _check_claims(claims: list[dict], experiment: str | None = None) -> None:
    assert isinstance(claims, list) and claims
    ids = set()
    for c in claims:
        assert set(c) == CLAIM_KEYS, c
        assert isinstance(c["holds"], bool)
        for key in ("experiment", "id", "text", "paper", "ours", "why"):
            assert isinstance(c[key], str) and c[key].strip(), (key, c)
        if experiment is not None:
            assert c["experiment"] == experiment
        assert (c["experiment"], c["id"]) not in ids, f"duplicate claim id {c['id']}"
        ids.add((c["experiment"], c["id"]))


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_each_experiment_writes_tables_figures_claims_and_report(smoke_all: Path, name: str):
    d = smoke_all / name
    claims = json.loads((d / "claims.json").read_text())
    _check_claims(claims, name)
    assert len(claims) >= MIN_CLAIMS[name]
    tables = sorted((d / "tables").glob("*.csv"))
    assert tables, "no tables"
    for csv in tables:
        assert csv.with_suffix(".md").exists()
        header = csv.read_text().splitlines()[0].split(",")
        assert {"metric", "paper", "ours_mean", "ours_ci95_half", "n", "ratio"} <= set(header)
    pngs = sorted((d / "figures").glob("*.png"))
    assert pngs, "no figures"
    for png in pngs:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        svg = png.with_suffix(".svg")
        assert svg.exists() and b"<svg" in svg.read_bytes()[:2000]
    report = (d / "report.md").read_text()
    for c in claims:
        assert c["id"] in report
    for png in pngs:
        assert f"figures/{png.name}" in report
    html = (d / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "<table>" in html


def test_all_writes_an_index_and_every_claim(smoke_all: Path):
    claims = json.loads((smoke_all / "claims.json").read_text())
    _check_claims(claims)
    assert {c["experiment"] for c in claims} == set(EXPERIMENTS)
    index = (smoke_all / "report.md").read_text()
    for name in EXPERIMENTS:
        assert f"{name}/report.md" in index


def test_same_seeds_same_outputs_and_the_cache_is_reused(tmp_path: Path):
    a, b = tmp_path / "a", tmp_path / "b"
    experiments.reproduce("dccp-bbr", a, smoke=True, jobs=2, progress=False)
    experiments.reproduce("dccp-bbr", b, smoke=True, backend="serial", progress=False)
    for rel in ("claims.json", "report.md", "tables/fig7-goodput.csv", "figures/fig7-loss.svg"):
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel
    # A second run into the same directory runs nothing: every simulation is cached.
    before = sorted(p.name for p in (a / "cache" / "runs").iterdir())
    ctx_sims = []
    original = framework.Context.run

    def counting(self, specs, what=""):
        out = original(self, specs, what)
        ctx_sims.append(self.simulations)
        return out

    try:
        framework.Context.run = counting
        experiments.reproduce("dccp-bbr", a, smoke=True, jobs=2, progress=False)
    finally:
        framework.Context.run = original
    assert ctx_sims and ctx_sims[-1] == 0
    assert sorted(p.name for p in (a / "cache" / "runs").iterdir()) == before
    # The cache is a results store: every run whole and ok, its scenario beside it.
    runs = Store(a / "cache").runs
    assert len(runs) == len(before) and (runs["status"] == "ok").all()
    assert all((a / "cache" / "runs" / rid / "scenario.json").is_file() for rid in before)
    for rel in ("claims.json", "report.md"):  # a rerun from the cache reports the same
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_claims_are_computed_not_written():
    """A claim's verdict follows the numbers: the Fig. 7 collapse rule on made-up curves."""
    from bloatlab.experiments.dccp_bbr.scenarios import collapse_point

    losses = [0.0, 0.1, 0.2, 0.3, 0.4]
    assert collapse_point(losses, [100, 90, 80, 70, 60]) is None  # never below 60 % of (1 - p) g0
    k = collapse_point(losses, [100, 90, 80, 20, 10])
    assert 0.2 < k < 0.3
    assert collapse_point(losses, [100, 10, 5, 1, 0]) < 0.1


def test_stat_and_ratio():
    s = framework.Stat.of([1.0, 2.0, 3.0])
    assert s.mean == 2.0 and s.n == 3 and 2.4 < s.ci_half < 2.5  # t(0.975, 2) = 4.303; sem = 0.577
    assert framework.Stat.of([5.0]).fmt() == "5.00"
    assert framework.ratio(2.0, 4.0) == 0.5
    assert framework.ratio(1.0, 0.0) is None and framework.ratio(None, 1.0) is None


# --------------------------------------------------------------------------- bad input


def test_unknown_experiment_lists_the_known_ones(tmp_path: Path):
    proc = cli("reproduce", "cubic", "--out", str(tmp_path / "o"))
    msg = assert_invalid(proc, "EXPERIMENT", "unknown experiment", "cubic-plus", "dccp-bbr", "all")
    assert "Traceback" not in msg
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("args", "needle"), [
    (["--seeds", "0"], "--seeds"),
    (["--jobs", "0"], "--jobs"),
    (["--backend", "cloud"], "--backend"),
    (["--seeds", "two"], "--seeds"),
])
def test_bad_options(tmp_path: Path, args: list[str], needle: str):
    proc = cli("reproduce", "dccp-bbr", *args, "--out", str(tmp_path / "o"))
    assert_invalid(proc, needle)
    assert not (tmp_path / "o").exists()


def test_out_is_a_file(tmp_path: Path):
    f = tmp_path / "file"
    f.write_text("x")
    assert_invalid(cli("reproduce", "dccp-bbr", "--out", str(f)), "--out")


def test_a_cache_in_the_old_layout_is_refused(tmp_path: Path):
    old = tmp_path / "o" / "cache" / "0123456789abcdef"
    old.mkdir(parents=True)
    (old / "summary.json").write_text("{}")
    assert_invalid(cli("reproduce", "dccp-bbr", "--out", str(tmp_path / "o")), "--out", "older layout")


def test_a_failed_run_is_stored_and_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from bloatlab import _core

    real = _core.run_json

    def broken(*args, **kwargs):
        raise _core.SimulationError("boom")

    monkeypatch.setattr(_core, "run_json", broken)
    with pytest.raises(SimulationError, match="boom"):
        experiments.reproduce("dccp-bbr", tmp_path, smoke=True, backend="serial", progress=False)
    runs = Store(tmp_path / "cache").runs
    assert len(runs) == 1 and runs["status"].tolist() == ["error"]
    monkeypatch.setattr(_core, "run_json", real)
    experiments.reproduce("dccp-bbr", tmp_path, smoke=True, backend="serial", progress=False)
    assert (Store(tmp_path / "cache").runs["status"] == "ok").all()


def test_api_rejects_unknown_names(tmp_path: Path):
    with pytest.raises(experiments.ScenarioError, match="known: cubic-plus"):
        experiments.reproduce("nope", tmp_path)
