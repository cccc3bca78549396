"""Packet capture: `bloatlab run --pcap LINK`, Result.pcaps, and tshark's view of a flow
checked against the summary."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

import bloatlab
from helpers import SCENARIOS, assert_invalid, cli

DEMO = SCENARIOS / "demo.toml"
DURATION_S = 5.0


def need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        if os.environ.get("BLOATLAB_REQUIRE_TOOLS"):
            pytest.fail(f"{tool} is not installed (scripts/test.sh installs it)")
        pytest.skip(f"{tool} is not installed (apt-get install -y {tool})")
    return path


def pcap_header(path: Path) -> tuple[int, int, int]:
    magic, _major, _minor, _tz, _sig, snaplen, linktype = struct.unpack("<IHHiIII", path.read_bytes()[:24])
    return magic, snaplen, linktype


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pcap") / "run"
    proc = cli("run", str(DEMO), "--set", f"duration={DURATION_S:g}s", "--pcap", "f0_src_up",
               "--pcap", "bottleneck", "--pcap", "f0_dst_down", "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    assert "f0_src_up.pcap" in proc.stderr
    return out


def test_pcap_files_are_written_with_the_other_outputs(captured: Path):
    names = sorted(p.name for p in captured.iterdir())
    assert names == sorted(["summary.json", "scenario.json", "timeseries.parquet", "queues.parquet",
                            "bottleneck.pcap", "f0_src_up.pcap", "f0_dst_down.pcap"])
    scenario = json.loads((captured / "scenario.json").read_text())
    assert scenario["capture"]["links"] == ["f0_src_up", "bottleneck", "f0_dst_down"]
    for name in ("bottleneck.pcap", "f0_src_up.pcap"):
        magic, _snaplen, linktype = pcap_header(captured / name)
        assert magic in (0xA1B2C3D4, 0xA1B23C4D), hex(magic)  # classic pcap (µs or ns)
        assert linktype in (101, 228)  # LINKTYPE_RAW / LINKTYPE_IPV4
    # no staging directory left next to the output
    assert [p.name for p in captured.parent.iterdir()] == ["run"]


def test_pcap_needs_out():
    assert_invalid(cli("run", str(DEMO), "--pcap", "bottleneck", "--json"), "--pcap", "--out")


def test_pcap_unknown_link_is_invalid(tmp_path: Path):
    out = tmp_path / "x"
    proc = cli("run", str(DEMO), "--set", "duration=1s", "--pcap", "nowhere", "--out", str(out))
    assert_invalid(proc, "capture.links")
    assert not out.exists()


def test_api_result_keeps_captures_until_to_dir(tmp_path: Path):
    r = bloatlab.run(DEMO, set={"duration": "1s", "capture": {"links": ["bottleneck_rev"]}})
    assert set(r.pcaps) == {"bottleneck_rev"}
    src = r.pcaps["bottleneck_rev"]
    assert src.is_file() and src.stat().st_size > 24
    out = r.to_dir(tmp_path / "a")
    assert (out / "bottleneck_rev.pcap").read_bytes() == src.read_bytes()
    # into an existing directory: replaced too
    r.to_dir(tmp_path / "a")
    assert "bottleneck_rev.pcap" in r.output_files()
    capture_dir = src.parent
    del r
    import gc

    gc.collect()
    assert not capture_dir.exists(), "the temporary capture directory outlives its Result"
    assert (out / "bottleneck_rev.pcap").stat().st_size > 24


def tshark_fields(path: Path, *fields: str) -> list[list[str]]:
    tshark = need("tshark")
    args = [tshark, "-r", str(path), "-T", "fields", "-E", "separator=,", "-E", "occurrence=f"]
    for f in fields:
        args += ["-e", f]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HOME": str(path.parent)})
    assert proc.returncode == 0, proc.stderr
    return [line.split(",") for line in proc.stdout.splitlines() if line.strip()]


def test_tshark_sees_the_flow_of_the_summary(captured: Path):
    summary = json.loads((captured / "summary.json").read_text())
    flow = summary["flows"][0]
    assert flow["retransmits"] > 50, "the scenario should lose packets (500 KB buffer overflows)"
    active_s = DURATION_S - flow["start_s"]

    # The sender's own link: every data segment it sent, retransmissions included.
    rows = tshark_fields(captured / "f0_src_up.pcap", "ip.src", "tcp.srcport", "tcp.len",
                         "tcp.analysis.retransmission", "tcp.analysis.out_of_order")
    data = [r for r in rows if r[1] == "10000" and int(r[2] or 0) > 0]
    assert {r[0] for r in rows} == {"10.0.0.0"}
    sent_bytes = sum(int(r[2]) for r in data)
    # The summary counts a segment when the socket sends it, the capture when its transmission
    # on the sender's link ends before the run does: what that 100 Mbit/s link still held at
    # the end (the last ACK's release, at most a few segments) is in the first only.
    unsent = round(flow["throughput_mbps"] * 1e6 / 8 * active_s) - sent_bytes
    assert unsent % 1448 == 0 and 0 <= unsent <= 4 * 1448, unsent
    retx = sum(1 for r in data if r[3])
    out_of_order = sum(1 for r in data if not r[3] and r[4])
    # tshark flags a retransmission sent right behind new data (SACK recovery) as out-of-order.
    assert 0.8 * flow["retransmits"] <= retx <= flow["retransmits"]
    assert retx + out_of_order == flow["retransmits"]
    assert 100.0 * (sent_bytes - retx * 1448 - out_of_order * 1448) / sent_bytes == pytest.approx(
        flow["efficiency_pct"], abs=0.05)

    # The bottleneck: the summary counts the packets that crossed it.
    rows = tshark_fields(captured / "bottleneck.pcap", "frame.number")
    assert len(rows) == summary["engine"]["bottleneck_packets"]

    # The receiver's link: bytes delivered in order by the end of the run (a segment needs
    # the access link's 2.5 ms of propagation after its capture time).
    rows = tshark_fields(captured / "f0_dst_down.pcap", "frame.time_epoch", "tcp.seq", "tcp.len")
    delay_s = 0.0025
    end = 1  # relative sequence numbers: 1 is the first data byte
    for s, e in sorted((int(r[1]), int(r[1]) + int(r[2])) for r in rows
                       if int(r[2] or 0) > 0 and float(r[0]) + delay_s <= DURATION_S + 1e-9):
        if s <= end:
            end = max(end, e)
    assert end - 1 == flow["bytes_delivered"]


def test_a_sweep_stores_captures_with_each_run(tmp_path: Path):
    out = tmp_path / "store"
    df = bloatlab.sweep(DEMO, {"topology.bottleneck_queue.limit": ["50KB", "100KB"]},
                        set={"duration": "1s", "capture": {"links": ["bottleneck"], "snaplen": 96}},
                        out=out, progress=False)
    for rid in df["run_id"].unique():
        pcap = out / "runs" / rid / "bottleneck.pcap"
        magic, snaplen, _ = pcap_header(pcap)
        assert magic in (0xA1B2C3D4, 0xA1B23C4D) and snaplen == 96
