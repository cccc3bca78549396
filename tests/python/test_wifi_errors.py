"""`bloatlab run` with bad Wi-Fi keys (docs/wifi.md): exit 2, one line naming the key path and
what is allowed; and a good BSS runs with its `wifi` block in the summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import assert_invalid, cli

BASE = """
name = "wifi"
duration = "1s"
[topology]
kind = "wifi"
{topology}
[[topology.stations]]
name = "sta0"
{station}
[[flows]]
cc = "cubic"
src = "server"
dst = "sta0"
"""

CASES = [
    ("", "", "topology.stations[0].rate", "needs a rate"),
    ("", 'phy = "vht"\nmcs = 9\nwidth = 20', "topology.stations[0].mcs", "not a valid combination"),
    ("", "mcs = 8\nstreams = 1", "topology.stations[0].mcs", "does not exist"),
    ("aggregation = { max_mpdus = 0 }", "mcs = 7", "topology.aggregation.max_mpdus", "[1, 64]"),
    ('access_category = "video"', "mcs = 7", "topology.access_category", "bk, be, vi, vo"),
    ("", 'mcs = 7\ndelay = "2ms"', "topology.stations[0].delay", "no delay"),
    ('ap_queue = "fq_mac"\nqdisc = { kind = "fq_codel" }', "mcs = 7", "topology.qdisc", "only with"),
    ('uplink_queue = { kind = "fq_mac" }', "mcs = 7", "topology.uplink_queue.kind", "Wi-Fi AP"),
    ('station_queue = "airtime"', "mcs = 7", "topology.station_queue", "fifo, fq_mac"),
    ("station_queue = 3", "mcs = 7", "topology.station_queue", "fifo, fq_mac"),
]


@pytest.mark.parametrize("topology,station,path,needle", CASES)
def test_bad_wifi_keys(tmp_path: Path, topology: str, station: str, path: str, needle: str):
    f = tmp_path / "s.toml"
    f.write_text(BASE.format(topology=topology, station=station))
    assert_invalid(cli("run", str(f), "--out", str(tmp_path / "out")), path, needle)


def test_a_bss_runs_and_reports_airtime(tmp_path: Path):
    f = tmp_path / "s.toml"
    f.write_text(BASE.format(topology='ap_queue = "airtime"', station="mcs = 7"))
    proc = cli("run", str(f), "--json")
    assert proc.returncode == 0, proc.stderr
    w = json.loads(proc.stdout)["wifi"]
    assert w["ap_queue"] == "airtime" and w["stations"][0]["down_mbps"] > 10


def test_rrul_places_its_flows_on_the_stations():
    import tomllib

    from bloatlab import rrul
    from helpers import SCENARIOS

    base = tomllib.loads((SCENARIOS / "wifi-home.toml").read_text())
    idle, loaded = rrul.scenarios(base, flows=4)
    down = [f for f in loaded["flows"] if f.get("group") == "download"]
    up = [f for f in loaded["flows"] if f.get("group") == "upload"]
    assert [f["dst"] for f in down] == ["laptop1", "laptop2", "far", "laptop1"]
    assert all(f["src"] == "server" for f in down) and all(f["dst"] == "server" for f in up)
    assert all("direction" not in f and "count" not in f for f in loaded["flows"])
    assert {f["group"] for f in idle["flows"]} == {"probe", "voip-down", "voip-up"}


GRAPH = """
name = "wifi-graph"
duration = "1s"
[topology]
kind = "graph"
hosts = ["server", "desk", "sta0"]
routers = ["r1", "ap"]
links = [{{ name = "wan", a = "server", b = "r1", rate = "1Gbps", delay = "4ms" }},
         {{ name = "lan", a = "r1", b = "desk", rate = "100Mbps", delay = "1ms" }},
         {{ name = "ap-link", a = "r1", b = "ap", rate = "1Gbps", delay = "1ms" }}]
[topology.wifi]
{wifi}
[[topology.wifi.stations]]
{station}
[[flows]]
cc = "cubic"
src = "server"
dst = "sta0"
"""

GRAPH_CASES = [
    ('ap = "desk"', 'name = "sta0"\nmcs = 7', "topology.wifi.ap", "name a router"),
    ('ap = "nowhere"', 'name = "sta0"\nmcs = 7', "topology.wifi.ap", "unknown node"),
    ('ap = "ap"', 'name = "r1"\nmcs = 7', "topology.wifi.stations[0].name", "a station is a host"),
    ('ap = "ap"', 'name = "sta9"\nmcs = 7', "topology.wifi.stations[0].name", "not a node"),
    ('ap = "ap"\nstation_queue = "cake"', 'name = "sta0"\nmcs = 7', "topology.wifi.station_queue", "fifo, fq_mac"),
    ('ap = "ap"\nuplink = { rate = "1Gbps" }', 'name = "sta0"\nmcs = 7', "topology.wifi.uplink", "unknown key"),
]


@pytest.mark.parametrize("wifi,station,path,needle", GRAPH_CASES)
def test_bad_graph_bss_keys(tmp_path: Path, wifi: str, station: str, path: str, needle: str):
    f = tmp_path / "s.toml"
    f.write_text(GRAPH.format(wifi=wifi, station=station))
    assert_invalid(cli("run", str(f), "--out", str(tmp_path / "out")), path, needle)


def test_a_bss_in_a_graph_runs(tmp_path: Path):
    f = tmp_path / "s.toml"
    f.write_text(GRAPH.format(wifi='ap = "ap"\nstation_queue = "fq_mac"', station='name = "sta0"\nmcs = 7'))
    proc = cli("run", str(f), "--json")
    assert proc.returncode == 0, proc.stderr
    w = json.loads(proc.stdout)["wifi"]
    assert w["station_queue"] == "fq_mac" and w["stations"][0]["down_mbps"] > 10
