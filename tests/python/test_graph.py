"""Graph topologies from the command line: the example files run and report their links, and
bad graphs exit 2 with one line naming the key (docs/topology.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import SCENARIOS, assert_invalid, check_summary, cli, without_wall_clock

GRAPH = """\
name = "line"
duration = "3s"

[topology]
kind = "graph"
hosts = ["h1", "h2"]
routers = ["r1", "r2"]

[[topology.links]]
a = "h1"
b = "r1"
rate = "100Mbps"
delay = "1ms"

[[topology.links]]
a = "r1"
b = "r2"
rate = "10Mbps"
delay = "5ms"
queue = { kind = "codel" }

[[topology.links]]
a = "r2"
b = "h2"
rate = "100Mbps"
delay = "1ms"

[[flows]]
cc = "cubic"
src = "h1"
dst = "h2"
"""


def run_json(path: Path, *sets: str) -> dict:
    args = [x for s in sets for x in ("--set", s)]
    proc = cli("run", str(path), "--json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_parking_lot_file_reports_every_bottleneck():
    s = run_json(SCENARIOS / "parking-lot.toml", "duration=20s")
    check_summary(s)
    assert [f["id"] for f in s["flows"]] == [0, 1, 2, 3], "the long flow and three cross flows"
    assert [link["name"] for link in s["links"]] == ["b1", "b2", "b3"]
    assert s["bottleneck"] == {k: v for k, v in s["links"][0].items() if k != "name"}
    long, cross = s["flows"][0], s["flows"][1:]
    # RTT bias: the long flow crosses three bottlenecks on a longer path.
    assert all(long["goodput_mbps"] < c["goodput_mbps"] for c in cross)
    assert long["base_rtt_ms"] == pytest.approx(2 * (1 + 3 * 5 + 1))
    assert cross[0]["base_rtt_ms"] == pytest.approx(2 * (1 + 5 + 1))


def test_fat_tree_file_runs_and_is_deterministic():
    a = cli("run", str(SCENARIOS / "fat-tree.toml"), "--json")
    b = cli("run", str(SCENARIOS / "fat-tree.toml"), "--json")
    assert a.returncode == 0, a.stderr
    assert without_wall_clock(a.stdout) == without_wall_clock(b.stdout)
    s = json.loads(a.stdout)
    assert len(s["flows"]) == 16
    assert all(f["fct_s"] is not None for f in s["flows"]), "every 2 MB transfer completes"
    assert [link["name"] for link in s["links"]] == ["agg0_0-core0", "agg0_0-core0_rev", "edge0_0-agg0_0"]


def test_written_graph_runs_and_captures_a_link(tmp_path: Path):
    path = tmp_path / "line.toml"
    path.write_text(GRAPH + '\n[capture]\nlinks = ["r1-r2"]\n')
    out = tmp_path / "out"
    proc = cli("run", str(path), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["links"][0]["name"] == "r1-r2" and s["links"][0]["aqm"] == "codel", "a non-drop-tail queue is reported"
    assert s["flows"][0]["base_rtt_ms"] == pytest.approx(14.0)
    assert list(out.rglob("r1-r2.pcap")), "the graph link was captured"


@pytest.mark.parametrize(
    ("change", "needles"),
    [
        (('via = ["r1", "r2"]', 'via = ["r1", "r2", "r1"]'), ("topology.routes[0].via", "routing loop")),
        (('b = "h2"', 'b = "h9"'), ("topology.links[2].b", 'unknown node "h9"')),
        (('routers = ["r1", "r2"]', 'routers = ["r1", "r2", "r1"]'), ("topology.routers[2]", "duplicate node name")),
        (('dst = "h2"', 'dst = "h1"'), ("flows[0].dst", "to itself")),
        (('src = "h1"', 'src = "r1"'), ("flows[0].src", "is a router")),
        (('rate = "10Mbps"', 'name = "h1-r1"\nrate = "10Mbps"'), ("topology.links[1].name",
                                                                  'duplicate link name "h1-r1"')),
        (('dst = "h2"', 'dst = "h2"\nrtt = "40ms"'), ("flows[0].rtt",)),
    ],
    ids=["loop", "unknown-node", "duplicate-node", "self-flow", "router-src", "duplicate-link", "rtt-on-graph"],
)
def test_bad_graphs_exit_2_naming_the_key(tmp_path: Path, change: tuple[str, str], needles: tuple[str, ...]):
    text = GRAPH + '\n[[topology.routes]]\nfrom = "h1"\nto = "h2"\nvia = ["r1", "r2"]\n'
    old, new = change
    assert old in text
    path = tmp_path / "bad.toml"
    path.write_text(text.replace(old, new, 1))
    assert_invalid(cli("run", str(path)), *needles)


def test_unreachable_host_and_unknown_preset_key(tmp_path: Path):
    island = GRAPH.replace('hosts = ["h1", "h2"]', 'hosts = ["h1", "h2", "h3"]').replace('dst = "h2"', 'dst = "h3"')
    path = tmp_path / "island.toml"
    path.write_text(island)
    assert_invalid(cli("run", str(path)), "flows[0].dst", 'host "h3" is unreachable from "h1"')
    assert_invalid(cli("run", str(SCENARIOS / "fat-tree.toml"), "--set", "topology.pods=4"), "topology.pods",
                   "unknown key")
    assert_invalid(cli("run", str(SCENARIOS / "fat-tree.toml"), "--set", "topology.k=5"), "topology.k", "must be even")


def test_queue_series_sample_every_reported_link(tmp_path: Path):
    import pyarrow.parquet as pq

    out = tmp_path / "out"
    proc = cli("run", str(SCENARIOS / "parking-lot.toml"), "--set", "duration=2s", "--set", "warmup=0s", "--out",
               str(out))
    assert proc.returncode == 0, proc.stderr
    links = set(pq.read_table(out / "queues.parquet").column("link").to_pylist())
    assert links == {"b1", "b1_rev", "b2", "b3"}, "the bottleneck pair, then the other reported links"
