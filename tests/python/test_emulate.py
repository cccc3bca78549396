"""`bloatlab emulate`: real kernel TCP in network namespaces through bloatlab's bottleneck.

Needs root, /dev/net/tun and iproute2 (CI has them); skipped otherwise. Each emulation runs on
the wall clock (10 s flows), so the module costs about a minute.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not (hasattr(os, "geteuid") and os.geteuid() == 0 and os.path.exists("/dev/net/tun") and shutil.which("ip")),
    reason="emulation needs root, /dev/net/tun and iproute2",
)

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "emulate-dumbbell.toml"
RATE_MBPS = 10.0
BASE_RTT_MS = 40.0
DEEP = "300KB"  # 6 BDP


def bloatlab(*args: str, timeout: float = 120, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bloatlab.emulate", *args], check=False, capture_output=True,
                          text=True,
                          timeout=timeout, **kw)


def _default_sigint() -> None:
    # As from a terminal: a test run started in the background by a non-interactive shell
    # inherits SIGINT ignored, and Python keeps an inherited SIG_IGN — Ctrl-C would be lost.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "bloatlab.emulate", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint)


def leftovers(pid: int) -> list[str]:
    from bloatlab.emulate import netns

    prefix = f"blemu-{pid}-"
    found = netns.leftovers(prefix)
    found += [f"directory {d}" for d in Path("/tmp").glob(prefix + "*")]
    return found


def run_emulation(tmp: Path, name: str, *sets: str) -> tuple[dict, Path, int]:
    out = tmp / name
    p = start("emulate", str(SCENARIO), "--out", str(out), *[a for s in sets for a in ("--set", s)])
    _, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    return json.loads((out / "summary.json").read_text()), out, p.pid


def emulate_toml(tmp: Path, name: str, toml: str) -> dict:
    """Emulates the scenario TOML text ``toml`` (written as ``tmp/name.toml``); its summary."""
    scen = tmp / f"{name}.toml"
    scen.write_text(toml)
    out = tmp / f"{name}-out"
    r = bloatlab("emulate", str(scen), "--out", str(out))
    assert r.returncode == 0, r.stderr
    return json.loads((out / "summary.json").read_text())


@pytest.fixture(scope="module")
def droptail(tmp_path_factory):
    """One CUBIC flow, 10 s, 10 Mbit/s, 40 ms, a deep (6 BDP) drop-tail buffer."""
    return run_emulation(tmp_path_factory.mktemp("emu"), "droptail", f"topology.bottleneck_queue.limit={DEEP}")


@pytest.fixture(scope="module")
def ewt(tmp_path_factory):
    """The same flow and buffer with EWT on the gateway."""
    return run_emulation(tmp_path_factory.mktemp("emu"), "ewt", f"topology.bottleneck_queue.limit={DEEP}",
                         'topology.gateway={ kind = "ewt", start = "29KB" }')


def test_cubic_reaches_90_percent_of_the_rate(droptail):
    s, _, _ = droptail
    f = s["flows"][0]
    assert f["cc"] == "cubic" and f["transport"] == "tcp"
    # Goodput over the whole 10 s, slow start included, counted by the receiving application.
    assert f["goodput_mbps"] >= 0.9 * RATE_MBPS, f
    assert f["goodput_mbps"] <= RATE_MBPS * 1.001, "more than the link can carry"
    assert s["bottleneck"]["utilization_pct"] >= 90
    # No packet above the MTU reached the bottleneck (TUN without vnet headers: no GSO).
    assert s["emulation"]["io"]["max_packet_bytes"] <= 1500
    # Nothing was lost outside the emulated queue (the bottleneck kept up with the devices).
    for side in ("sender_side", "receiver_side"):
        d = s["emulation"]["device_drops"][side]
        assert d["tx_dropped"] == 0 and d["rx_dropped"] == 0, (side, d)
    assert s["emulation"]["io"]["slab_full_drops"] == 0


def test_summary_has_the_simulators_fields(droptail):
    import bloatlab

    s, out, _ = droptail
    sim = bloatlab.run(SCENARIO, set=[f"topology.bottleneck_queue.limit={DEEP}"], series=False).summary
    for block in ("bottleneck", "fairness"):
        assert list(s[block]) == list(sim[block])
    assert list(s["flows"][0]) == list(sim["flows"][0])
    assert set(sim["engine"]) <= set(s["engine"])
    assert {p.name for p in out.iterdir()} >= {"summary.json", "scenario.json", "timeseries.parquet", "queues.parquet"}


def test_deep_droptail_queueing_delay_is_backlog_over_rate(droptail):
    import pandas as pd

    s, out, _ = droptail
    b = s["bottleneck"]
    # The bottleneck's own accounting: mean sojourn = mean backlog / rate (Little's law).
    predicted_ms = b["mean_bytes"] * 8 / (RATE_MBPS * 1e6) * 1e3
    assert b["mean_sojourn_ms"] == pytest.approx(predicted_ms, rel=0.05)
    assert b["mean_bytes"] > 0.5 * 300_000, "a CUBIC flow fills a deep drop-tail buffer"
    # What the kernel measured: smoothed RTT ≈ base RTT + backlog / rate, once the queue is built.
    flows = pd.read_parquet(out / "timeseries.parquet")
    queues = pd.read_parquet(out / "queues.parquet")
    fwd = queues[(queues.link == "bottleneck") & (queues.t_s >= 3)]
    srtt = flows[flows.t_s >= 3].srtt_ms.mean()
    expected = BASE_RTT_MS + fwd.backlog_bytes.mean() * 8 / (RATE_MBPS * 1e6) * 1e3
    assert srtt == pytest.approx(expected, rel=0.10), (srtt, expected)


def test_ewt_cuts_the_queue_against_droptail(droptail, ewt):
    d, _, _ = droptail
    e, _, _ = ewt
    assert e["emulation"]["gateway"]["scheme"] == "ewt"
    assert e["emulation"]["gateway"]["acks_lowered"] > 100
    assert e["bottleneck"]["mean_bytes"] < 0.8 * d["bottleneck"]["mean_bytes"], (e["bottleneck"], d["bottleneck"])
    assert e["bottleneck"]["mean_sojourn_ms"] < 0.8 * d["bottleneck"]["mean_sojourn_ms"]
    assert e["flows"][0]["goodput_mbps"] >= 0.85 * RATE_MBPS


def test_nothing_is_left_behind_after_runs(droptail, ewt):
    for _, _, pid in (droptail, ewt):
        assert leftovers(pid) == []


def _wait_for_senders(p: subprocess.Popen[str], timeout: float = 30) -> None:
    from bloatlab.emulate import netns

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert p.poll() is None, p.communicate()[1]
        if netns.netns_pids(f"blemu-{p.pid}-snd"):
            time.sleep(0.5)
            return
        time.sleep(0.05)
    raise AssertionError("the emulation did not start")


def test_kill_9_of_the_controller_then_cleanup_leaves_nothing():
    p = start("emulate", str(SCENARIO), "--set", "duration=60s", "--json")
    _wait_for_senders(p)
    assert leftovers(p.pid), "the run is up"
    p.kill()
    p.wait()
    # The bottleneck and the endpoints die with the controller (PR_SET_PDEATHSIG) ...
    from bloatlab.emulate import netns

    deadline = time.monotonic() + 5
    while any(x.startswith("process") for x in leftovers(p.pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(x.startswith("process") for x in leftovers(p.pid))
    # ... and their TUN devices with them; the namespaces stay until --cleanup.
    assert any(x.startswith("netns") for x in leftovers(p.pid))
    r = bloatlab("emulate", "--cleanup")
    assert r.returncode == 0, r.stderr
    assert f"blemu-{p.pid}-snd" in r.stderr
    assert leftovers(p.pid) == []
    assert not [n for n in netns.list_netns() if n.startswith(f"blemu-{p.pid}-")]


def test_ctrl_c_stops_and_cleans_up():
    p = start("emulate", str(SCENARIO), "--set", "duration=60s", "--json")
    _wait_for_senders(p)
    p.send_signal(signal.SIGINT)
    # The clean-up kills three processes (up to 5 s each to reap) and deletes three network
    # namespaces; a full-suite CI run once needed more than 30 s for it (alone it takes ~3 s).
    out, err = p.communicate(timeout=90)
    assert p.returncode == 130, err
    assert out == ""
    assert leftovers(p.pid) == []


def test_sigterm_cleans_up():
    p = start("emulate", str(SCENARIO), "--set", "duration=60s", "--json")
    _wait_for_senders(p)
    p.terminate()
    p.communicate(timeout=90)  # as for Ctrl-C above
    assert p.returncode != 0
    assert leftovers(p.pid) == []


def _pcap_records(path: Path) -> list[bytes]:
    import struct

    data = path.read_bytes()
    magic, _, _, _, _, _, linktype = struct.unpack("<IHHiIII", data[:24])
    assert magic == 0xA1B23C4D and linktype == 101  # nanosecond pcap, raw IPv4
    out, i = [], 24
    while i < len(data):
        _, _, caplen, _ = struct.unpack("<IIII", data[i:i + 16])
        out.append(data[i + 16:i + 16 + caplen])
        i += 16 + caplen
    return out


def test_two_flows_sized_transfer_drwa_and_pcap(tmp_path):
    """A bulk CUBIC flow and a 300 KB Reno transfer with DRWA at its receiver, CoDel, pcap on
    both sides of the bottleneck."""
    scen = tmp_path / "two.toml"
    scen.write_text(
        'name = "two"\nduration = "6s"\n[topology]\nbottleneck = { rate = "10Mbps", delay = "10ms" }\n'
        'access = { delay = "5ms" }\nbottleneck_queue = { kind = "codel", limit = "200KB" }\n'
        '[[flows]]\ncc = "cubic"\n[[flows]]\ncc = "reno"\nstart = "1s"\nsize = "300KB"\nrwnd = "drwa"\n'
    )
    out = tmp_path / "out"
    r = bloatlab("emulate", str(scen), "--out", str(out), "--pcap", "sender", "--pcap", "receiver")
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    bulk, sized = s["flows"]
    assert (bulk["cc"], sized["cc"]) == ("cubic", "reno")
    assert bulk["end_s"] is None and bulk["fct_s"] is None
    assert sized["start_s"] == 1.0 and sized["fct_s"] is not None and 0.1 < sized["fct_s"] < 5
    assert sized["end_s"] == pytest.approx(sized["start_s"] + sized["fct_s"])
    assert sized["bytes_delivered"] == 300_000
    assert s["bottleneck"]["aqm"] == "codel"
    assert s["emulation"]["drwa_clamps"].get("1", 0) > 0
    # The pcaps: real packets, sender side holds the SYN from flow 1's port 10001.
    snd = _pcap_records(out / "sender.pcap")
    rcv = _pcap_records(out / "receiver.pcap")
    assert len(snd) > 1000 and len(rcv) > 1000
    syns = [p for p in snd if p[9] == 6 and p[33] & 0x02 and int.from_bytes(p[20:22], "big") == 10001]
    assert syns, "flow 1's SYN crossed the sender side"


def test_sized_transfers_end_the_run_mss_sets_the_mtu_and_rcvbuf_clamps_the_window(tmp_path):
    """Issue 16: a run of sized transfers ends when they complete (as a simulated one does),
    `tcp.mss` gives the simulator's wire size (MSS + 52 B with timestamps) and `tcp.rcvbuf`
    bounds the window Linux advertises."""
    scen = tmp_path / "sized.toml"
    scen.write_text(
        'name = "sized"\nduration = "60s"\n[topology]\nbottleneck = { rate = "10Mbps", delay = "10ms" }\n'
        'access = { delay = "5ms" }\nbottleneck_queue = { kind = "droptail", limit = "300KB" }\n'
        '[tcp]\nmss = "1458B"\nrcvbuf = "100000B"\n'
        '[[flows]]\ncc = "cubic"\ncount = 2\nsize = "400KB"\n'
    )
    out = tmp_path / "out"
    t = time.monotonic()
    r = bloatlab("emulate", str(scen), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - t < 20
    s = json.loads((out / "summary.json").read_text())
    # The window stays the scenario's (as simulated); the wall clock stopped when the transfers did.
    assert s["duration_s"] == 60 and s["emulation"]["io"]["stopped_s"] < 10
    assert all(f["bytes_delivered"] == 400_000 and f["fct_s"] is not None for f in s["flows"])
    assert s["emulation"]["io"]["max_packet_bytes"] == 1510
    # The advertised window stays at the clamp (up to the window scale's rounding), so two
    # flows never fill the 300 KB buffer.
    import pandas as pd

    rwnd = pd.read_parquet(out / "timeseries.parquet")["rwnd_bytes"]
    assert 65_535 < rwnd.max() <= 100_000 + 128
    assert s["bottleneck"]["drops"] == 0


def test_per_flow_rtts_and_a_udp_cbr_flow(tmp_path):
    """Issue 16: a flow with its own base RTT gets its own access delay lines; a UDP CBR flow
    is sent and received by the end hosts, with one-way delays and jitter."""
    s = emulate_toml(
        tmp_path, "mixed",
        'name = "mixed"\nduration = "30s"\n[topology]\nbottleneck = { rate = "10Mbps", delay = "10ms" }\n'
        'access = { delay = "5ms" }\nbottleneck_queue = { kind = "droptail", limit = "30KB" }\n'
        '[[flows]]\ncc = "cubic"\nsize = "300KB"\n'
        '[[flows]]\ncc = "reno"\nsize = "300KB"\nrtt = "120ms"\n'
        '[[flows]]\ntransport = "udp"\nrate = "2Mbps"\npacket_size = "972B"\nsize = "250000B"\n',
    )
    short, long, cbr = s["flows"]
    assert (short["base_rtt_ms"], long["base_rtt_ms"]) == (40.0, 120.0)
    # The kernel's smoothed RTTs: the base RTT plus at most the 30 KB queue (24 ms).
    assert 38 < short["rtt_mean_ms"] < 40 + 30 and 118 < long["rtt_mean_ms"] < 120 + 30
    assert short["bytes_delivered"] == long["bytes_delivered"] == 300_000
    # The CBR flow: 250000 B in datagrams of 972 B (1000 B on the wire, one every 4 ms): 258,
    # each delivered or dropped by the bottleneck; one-way delay at least the base one (20 ms).
    assert cbr["transport"] == "udp"
    lost = round(cbr["loss_pct"] / 100 * 258)
    assert cbr["datagrams_delivered"] + lost == 258
    assert cbr["bytes_delivered"] <= 250_000 and cbr["bytes_delivered"] >= 972 * (cbr["datagrams_delivered"] - 1)
    assert 20 <= cbr["owd_mean_ms"] < 20 + 30 and cbr["jitter_ms"] is not None
    assert s["emulation"]["udp_send_errors"] == {"2": 0}
    assert s["emulation"]["io"]["stopped_s"] < 15


def test_traffic_in_both_directions(tmp_path):
    """Issue 16: a reverse flow's sender runs at the receivers' end and its data crosses the
    reverse bottleneck (its own queue); both flows fill their direction, as simulated."""
    s = emulate_toml(
        tmp_path, "both",
        'name = "both"\nduration = "4s"\n[topology]\nbottleneck = { rate = "10Mbps", delay = "10ms" }\n'
        'access = { delay = "5ms" }\nbottleneck_queue = { kind = "droptail", limit = "100KB" }\n'
        'reverse_queue = { kind = "droptail", limit = "100KB" }\n'
        '[[flows]]\ncc = "cubic"\n[[flows]]\ncc = "reno"\ndirection = "reverse"\nsize = "2MB"\n',
    )
    fwd, rev = s["flows"]
    assert fwd["goodput_mbps"] > 6 and rev["bytes_delivered"] == 2_000_000 and rev["fct_s"] < 4
    # The reverse flow's data went through the reverse queue: its packets and drops are counted.
    assert s["emulation"]["reverse"]["mean_bytes"] > 10_000 and rev["loss_pct"] > 0
    assert s["bottleneck"]["utilization_pct"] > 70 and not s["emulation"]["errors"]


def test_the_cellular_topology_with_one_ue(tmp_path):
    """Issue 16: the cellular topology with one UE: the core link's delay, the base-station
    queue and the radio link with the stochastic rate model (the simulator's random stream,
    so the same rate realization for the same seed), the uplink and the core back."""
    s = emulate_toml(tmp_path, "cell", 'name = "cell"\nduration = "5s"\nseed = 3\n[topology]\nkind = "cellular"\n'
                                       'profile = "4g"\n[[flows]]\ncc = "cubic"\n')
    from bloatlab import run as simulate

    sim = json.loads(simulate(str(tmp_path / "cell.toml"), series=False).summary_json)
    f, g = s["flows"][0], sim["flows"][0]
    assert f["base_rtt_ms"] == g["base_rtt_ms"]
    assert s["bottleneck"]["rate_mbps"] == sim["bottleneck"]["rate_mbps"]
    # The same radio rate realization: goodput within 15 % of the simulated run.
    assert 0.85 < f["goodput_mbps"] / g["goodput_mbps"] < 1.15, (f, g)
    assert f["rtt_mean_ms"] > f["base_rtt_ms"]


def test_web_requests_open_a_new_connection_each_and_are_timed_like_the_simulators(tmp_path):
    # Three 100 KB responses, 200 ms think time, beside a long NewReno flow (kernel reno), 4 s.
    from bloatlab import run

    sets = ["duration=4s", 'flows=[{ cc = "cubic", app = "web", size = "100KB", requests = 3, think = "200ms", '
            'start = "0.1s" }, { cc = "newreno" }]']
    emu, _, pid = run_emulation(tmp_path, "web", *sets)
    sim = run(str(SCENARIO), set=sets).summary
    e, s = emu["flows"][0], sim["flows"][0]
    assert e["responses"]["n"] == s["responses"]["n"] == 3
    assert e["bytes_delivered"] == 300_000 and e["fct_s"] is None is s["fct_s"]
    # The same mechanism: within 30 % of the simulated mean (real runs on a shared machine).
    assert 0.7 < e["responses"]["mean_s"] / s["responses"]["mean_s"] < 1.3, (e["responses"], s["responses"])
    assert emu["emulation"]["errors"] == [] and emu["flows"][1]["cc"] == "newreno"
    assert not leftovers(pid)
