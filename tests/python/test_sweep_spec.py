"""Sweep definitions: files, axes, zipped lists, seeds, run ids, and bad input (exit 2, nothing written)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import bloatlab
from bloatlab.sweeps.spec import load_sweep, make_sweep, run_id, validate
from helpers import REPO, assert_invalid, cli

# A tiny base: 2 Mbit/s, 2 s; the second flow's start is drawn from the seed, so seeds differ.
TINY: dict[str, Any] = {
    "name": "tiny",
    "duration": "2s",
    "seed": 1,
    "metrics": {"interval": "200ms"},
    "topology": {
        "bottleneck": {"rate": "2Mbps", "delay": "5ms"},
        "bottleneck_queue": {"kind": "droptail", "limit": "30KB"},
        "access": {"rate": "10Mbps", "delay": "2.5ms"},
    },
    "flows": [
        {"cc": "newreno"},
        {"cc": "reno", "start": {"uniform": ["0.1s", "1s"]}},
    ],
}

SWEEP_TOML = """\
name = "t"
base = "base.toml"
seeds = 2

[set]
duration = "1s"

[grid]
"flows[0].cc" = ["newreno", "reno"]
topology.bottleneck_queue.limit = ["10KB", "20KB", "40KB"]

[[zip]]
"topology.bottleneck.rate" = ["2Mbps", "4Mbps"]
"topology.access.rate" = ["20Mbps", "40Mbps"]
"""

BASE_TOML = """\
name = "base"
duration = "2s"
[topology]
bottleneck = { rate = "2Mbps", delay = "5ms" }
access = { rate = "10Mbps", delay = "2.5ms" }
[[flows]]
cc = "newreno"
[[flows]]
cc = "reno"
start = { uniform = ["0.1s", "1s"] }
"""


def write_sweep(tmp: Path, text: str = SWEEP_TOML, base: str = BASE_TOML) -> Path:
    (tmp / "base.toml").write_text(base)
    path = tmp / "sweep.toml"
    path.write_text(text)
    return path


def test_sweep_file_grid_zip_seeds_and_set(tmp_path: Path):
    sw = load_sweep(write_sweep(tmp_path))
    assert sw.name == "t"
    assert sw.seeds == [1, 2]
    assert sw.param_names == ["flows[0].cc", "topology.bottleneck_queue.limit", "topology.bottleneck.rate",
                              "topology.access.rate"]
    assert len(sw) == 2 * 3 * 2 * 2
    runs = sw.runs()
    assert len(runs) == 24 and len({r.run_id for r in runs}) == 24
    # plan order: the last axis varies fastest, seeds innermost
    assert [r.seed for r in runs[:4]] == [1, 2, 1, 2]
    assert runs[0].params == {"flows[0].cc": "newreno", "topology.bottleneck_queue.limit": "10KB",
                              "topology.bottleneck.rate": "2Mbps", "topology.access.rate": "20Mbps"}
    assert runs[2].params["topology.bottleneck.rate"] == "4Mbps"
    assert runs[2].params["topology.access.rate"] == "40Mbps"  # zipped: they move together
    doc = runs[-1].scenario
    assert doc["duration"] == "1s" and doc["seed"] == 2  # [set] and the seed are applied
    assert doc["flows"][0]["cc"] == "reno"
    assert doc["topology"]["bottleneck_queue"] == {"limit": "40KB"}  # created on the way
    assert doc["topology"]["bottleneck"]["delay"] == "5ms"  # the rest of the table is kept
    validate(sw)


def test_inline_base_and_seed_list(tmp_path: Path):
    path = tmp_path / "s.toml"
    path.write_text('seeds = [7, 3]\n[base]\nduration = "1s"\n[base.topology]\n'
                    'bottleneck = { rate = "2Mbps", delay = "5ms" }\n[[base.flows]]\ncc = "reno"\n'
                    '[grid]\nduration = ["1s", "2s"]\n')
    sw = load_sweep(path)
    assert sw.name == "s" and sw.seeds == [7, 3]
    assert [(r.params["duration"], r.seed) for r in sw.runs()] == [("1s", 7), ("1s", 3), ("2s", 7), ("2s", 3)]
    validate(sw)


def test_run_id_is_a_content_hash():
    a = make_sweep(TINY, {"flows[0].cc": ["newreno", "reno"]}, seeds=2).runs()
    b = make_sweep(copy.deepcopy(TINY), {"flows[0].cc": ["reno", "newreno"]}, seeds=[2, 1]).runs()
    assert {r.run_id for r in a} == {r.run_id for r in b}  # same scenarios + seeds, any order
    doc = dict(a[0].scenario)
    assert run_id(doc, "0.1.0") == run_id(json.loads(json.dumps(doc)), "0.1.0")
    assert run_id(doc, "0.1.0") != run_id(doc, "0.2.0")  # the version is part of the key
    doc2 = copy.deepcopy(doc)
    doc2["seed"] += 1
    assert run_id(doc2, "0.1.0") != run_id(doc, "0.1.0")


def test_python_api_forms():
    sw = make_sweep(TINY, {"flows[0].cc": ["newreno", "reno"]}, 3,
                    zip=[{"topology.bottleneck.rate": ["1Mbps", "2Mbps"], "duration": ["1s", "2s"]}],
                    set=["metrics.interval=100ms"])
    assert len(sw) == 2 * 2 * 3 and sw.seeds == [1, 2, 3]
    assert sw.base["metrics"]["interval"] == "100ms"
    assert make_sweep(TINY).seeds == [1]  # the base's own seed
    assert len(make_sweep(TINY)) == 1


@pytest.mark.parametrize(
    "axes, zipped, seeds, needle",
    [
        ({"flows[0].cc": []}, None, None, "empty axis"),
        ({"flows[0].cc": "reno"}, None, None, "list of values"),
        ({"flows[0].cc": ["reno", "reno"]}, None, None, "duplicate value"),
        ({"flows[0]cc": ["reno"]}, None, None, "invalid key path"),
        ({"seed": [1, 2]}, None, None, "seeds"),
        ({"duration": ["1s"]}, [{"duration": ["2s"]}], None, "already varied"),
        (None, [{"duration": ["1s", "2s"], "flows[0].cc": ["reno"]}], None, "same length"),
        (None, [{}], None, "non-empty"),
        (None, None, 0, "at least 1"),
        (None, None, [], "at least one seed"),
        (None, None, [1, 1], "duplicate seeds"),
        (None, None, [-1], "seeds[0]"),
    ],
)
def test_bad_sweep_structure(axes, zipped, seeds, needle):
    with pytest.raises(bloatlab.ScenarioError) as e:
        make_sweep(TINY, axes, seeds, zip=zipped)
    assert needle in str(e.value)


def test_unknown_key_is_found_before_anything_runs():
    sw = make_sweep(TINY, {"flows[0].cc": ["reno"], "flows[0].ccc": ["x"]})
    with pytest.raises(bloatlab.ScenarioError) as e:
        validate(sw)
    assert e.value.path == "flows[0].ccc"
    assert "unknown key" in e.value.message and 'flows[0].ccc="x"' in e.value.message


def test_bad_value_names_the_path_and_the_point():
    sw = make_sweep(TINY, {"topology.bottleneck.rate": ["2Mbps", "2Mbit"]})
    with pytest.raises(bloatlab.ScenarioError) as e:
        validate(sw)
    assert e.value.path == "topology.bottleneck.rate" and '"2Mbit"' in e.value.message


def test_index_past_the_end():
    with pytest.raises(bloatlab.ScenarioError) as e:
        validate(make_sweep(TINY, {"flows[5].cc": ["reno"]}))
    assert e.value.path == "flows[5]"


def test_duration_and_warmup_are_checked():
    with pytest.raises(bloatlab.ScenarioError) as e:
        validate(make_sweep(TINY, {"warmup": ["1s", "3s"]}))
    assert e.value.path == "warmup"
    with pytest.raises(bloatlab.ScenarioError) as e:
        validate(make_sweep(TINY, {"duration": ["0s"]}))
    assert e.value.path == "duration"


# --------------------------------------------------------------------------- CLI: exit 2, nothing written


@pytest.mark.parametrize(
    "grid, needle",
    [
        ('"flows[0].ccc" = ["reno"]', "flows[0].ccc: unknown key"),
        ('"flows[0].cc" = []', "grid.flows[0].cc: empty axis"),
        ('"flows[0].cc" = ["cubik"]', "flows[0].cc:"),
    ],
)
def test_cli_bad_axis_exits_2_and_writes_nothing(tmp_path: Path, grid: str, needle: str):
    path = write_sweep(tmp_path, f'base = "base.toml"\n[grid]\n{grid}\n')
    out = tmp_path / "store"
    assert_invalid(cli("sweep", str(path), "--out", str(out)), needle)
    assert not out.exists()


def test_cli_unequal_zip(tmp_path: Path):
    path = write_sweep(tmp_path, 'base = "base.toml"\n[[zip]]\nduration = ["1s", "2s"]\n"flows[0].cc" = ["reno"]\n')
    out = tmp_path / "store"
    assert_invalid(cli("sweep", str(path), "--out", str(out)), "zip[0]", "same length", "duration: 2")
    assert not out.exists()


@pytest.mark.parametrize(
    "text, needle",
    [
        ('base = "base.toml"\ngrd = 1\n', "grd: unknown key"),
        ('[grid]\nduration = ["1s"]\n', "base: required"),
        ('base = "nope.toml"\n', "base: nope.toml: no such file"),
        ('base = "base.toml"\nseeds = "x"\n', "seeds:"),
        ('base = "base.toml"\n[grid\n', "malformed TOML"),
    ],
)
def test_cli_bad_sweep_file(tmp_path: Path, text: str, needle: str):
    path = write_sweep(tmp_path, text)
    out = tmp_path / "store"
    assert_invalid(cli("sweep", str(path), "--out", str(out)), needle)
    assert not out.exists()


def test_cli_bad_options(tmp_path: Path):
    path = write_sweep(tmp_path)
    out = tmp_path / "store"
    assert_invalid(cli("sweep", str(path), "--out", str(out), "--backend", "slurm"), "--backend", "local, ray")
    assert_invalid(cli("sweep", str(path), "--out", str(out), "--jobs", "0"), "--jobs")
    assert_invalid(cli("sweep", str(path), "--out", str(out), "--address", "1.2.3.4:1"), "--address", "ray")
    (tmp_path / "file").write_text("x")
    assert_invalid(cli("sweep", str(path), "--out", str(tmp_path / "file")), "--out", "not a directory")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "mine.txt").write_text("x")
    assert_invalid(cli("sweep", str(path), "--out", str(tmp_path / "full")), "--out", "not a bloatlab results store")
    assert not out.exists()


def test_cli_dry_run(tmp_path: Path):
    path = write_sweep(tmp_path)
    proc = cli("sweep", str(path), "--dry-run", "--out", str(tmp_path / "store"))
    assert proc.returncode == 0, proc.stderr
    assert "24 runs, all valid" in proc.stdout
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("path", sorted((REPO / "scenarios" / "sweeps").glob("*.toml")), ids=lambda p: p.stem)
def test_example_sweeps_are_valid(path: Path):
    text = path.read_text()
    assert text.lstrip().startswith("#"), "start with a comment that says what the sweep shows"
    sw = load_sweep(path)
    assert sw.name == path.stem
    assert len(sw) >= 10
    validate(sw)


def test_set_merges_tables_and_a_quoted_path_replaces_one(tmp_path: Path):
    path = write_sweep(tmp_path, 'base = "base.toml"\n[set]\ntopology.bottleneck.rate = "5Mbps"\n'
                                 '"topology.access" = { rate = "50Mbps" }\n')
    base = load_sweep(path).base
    assert base["topology"]["bottleneck"] == {"rate": "5Mbps", "delay": "5ms"}  # merged
    assert base["topology"]["access"] == {"rate": "50Mbps"}  # replaced


def test_inline_base_trace_files_are_relative_to_the_sweep_file(tmp_path: Path):
    (tmp_path / "sub").mkdir()
    path = tmp_path / "sub" / "s.toml"
    path.write_text('[base]\nduration = "1s"\n[base.topology]\n'
                    'bottleneck = { rate = { model = "trace", file = "up.trace" }, delay = "5ms" }\n'
                    '[[base.flows]]\ncc = "reno"\n')
    rate = load_sweep(path).base["topology"]["bottleneck"]["rate"]
    assert Path(rate["file"]) == tmp_path / "sub" / "up.trace"
