"""Emulation parts that need no root: input validation (exit 2, nothing created), the root
check, TCP_INFO parsing."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "emulate-dumbbell.toml"


def bloatlab(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bloatlab.emulate", *args], check=False, capture_output=True,
                          text=True,
                          timeout=timeout)


@pytest.mark.parametrize(
    ("sets", "path"),
    [
        (["flows[0].cc=prague"], "flows[0].cc"),
        (["flows[0].cc=cubik"], "flows[0].cc"),
        (['flows[0]={ transport = "udp", app = "voip" }'], "flows[0].app"),
        (['flows[0]={ transport = "udp", rate = "1Mbps", direction = "reverse" }'], "flows[0].direction"),
        (['flows[0]={ transport = "dccp", cc = "ccid2" }'], "flows[0].transport"),
        (["flows[0].cc_params.c=0.5"], "flows[0].cc_params.c"),
        (["flows[0].app=web", "flows[0].size=10KB", "flows[0].direction=reverse"], "flows[0].direction"),
        (["flows=[" + ", ".join(f'{{ cc = "cubic", rtt = "{40 + 10 * i}ms" }}' for i in range(9)) + "]"],
         "flows[0].rtt"),
        (["flows[0].direction=reverse", 'topology.gateway={ kind = "ewt", start = "10KB" }'], "flows[0].direction"),
        (["tcp.init_cwnd=4"], "tcp.init_cwnd"),
        (['topology={ kind = "cellular", profile = "4g", ues = 2 }'], "topology.ues"),
        (['topology={ kind = "cellular", profile = "4g", core = { rate = "1Mbps", delay = "10ms" } }'],
         "topology.core.rate"),
        (["flows[0].tcp.delack=10ms"], "flows[0].tcp.delack"),
        # the simulator's models of this Linux's own send buffer, writes and receive device
        (['tcp.sndbuf="8MiB"'], "tcp.sndbuf"),
        (['flows[0].tcp.write_size="64KiB"'], "flows[0].tcp.write_size"),
        (['tcp.rcv_truesize="4096B"'], "tcp.rcv_truesize"),
        (["tcp.mss=400B"], "tcp.mss"),
        (["tcp.recovery=newreno"], "tcp.recovery"),
        (['flows=[{ cc = "cubic" }, { cc = "reno", tcp = { recovery = "reno" } }]'], "flows[1].tcp.recovery"),
        (["tcp.recovery=sac"], "tcp.recovery"),
        # the kernel runs Linux's rules: the simulator's default set cannot be emulated
        (['tcp.rules="default"'], "tcp.rules"),
        (['flows[0].tcp.rules="bsd"'], "flows[0].tcp.rules"),
        (["tcp.mss=4000B"], "tcp.mss"),
        (['flows=[{ cc = "cubic", tcp = { mss = "1000B" } }, { cc = "cubic", tcp = { mss = "1200B" } }]'],
         "flows[1].tcp.mss"),
        (["topology.access.rate=1Mbps"], "topology.access.rate"),
        (["topology.bottleneck.rate=10Mbit"], "topology.bottleneck.rate"),
        (["topology.bottleneck_queue.kind=fifo"], "topology.bottleneck_queue.kind"),
        (["capture.links=[\"bottleneck\"]"], "capture"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_creates_nothing(tmp_path, sets, path):
    out = tmp_path / "out"
    r = bloatlab("emulate", str(SCENARIO), "--out", str(out), *[a for s in sets for a in ("--set", s)])
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: "), r.stderr
    assert "(allowed" in lines[0] or "(known" in lines[0] or "expected" in lines[0]
    assert "Traceback" not in r.stderr
    assert not out.exists()
    from bloatlab.emulate import netns

    assert not [n for n in netns.list_netns() if n.startswith("blemu-") and _dead(n)]


def _dead(name: str) -> bool:
    pid = int(name.split("-")[1])
    return not Path(f"/proc/{pid}").exists()


def test_refuses_to_run_without_root():
    # As an unprivileged user would see it (geteuid patched: the test itself runs as root).
    code = ("import os, sys; os.geteuid = lambda: 1000; sys.argv = ['bloatlab', 'emulate', sys.argv[1]]; "
            "from bloatlab.emulate.__main__ import main; main()")
    r = subprocess.run([sys.executable, "-c", code, str(SCENARIO)], check=False, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        "error: bloatlab emulate needs root (it creates network namespaces and TUN devices); "
        "run it as root, e.g. with sudo"
    ]




def test_the_plan_carries_the_mtu_and_the_receive_window_clamp():
    from bloatlab.emulate.runner import plan

    base = {"duration": "5s", "topology": {"bottleneck": {"rate": "10Mbps", "delay": "10ms"}},
            "flows": [{"cc": "cubic", "count": 2}, {"cc": "reno", "tcp": {"rcvbuf": "64KB"}}]}
    p = plan(base)
    assert p["mtu"] == 1500 and [f["rcvbuf"] for f in p["flows"]] == [None, None, 64_000]
    p = plan({**base, "tcp": {"mss": "1458B", "rcvbuf": "131072B"}})
    assert p["mtu"] == 1510 and [f["rcvbuf"] for f in p["flows"]] == [131_072, 131_072, 64_000]


def test_nagle_false_sets_tcp_nodelay_and_is_otherwise_linuxs_default():
    """`tcp.nagle` is honoured: `false` puts TCP_NODELAY on the flow's sockets (the plan's
    `nodelay`); `true` or the key left out leave Linux's default socket, Nagle on."""
    from bloatlab.emulate import tcpinfo
    from bloatlab.emulate.runner import plan

    base = {"duration": "5s", "topology": {"bottleneck": {"rate": "10Mbps", "delay": "10ms"}},
            "flows": [{"cc": "cubic"}, {"cc": "reno", "tcp": {"nagle": False}}, {"cc": "reno", "tcp": {"nagle": True}}]}
    assert [f["nodelay"] for f in plan(base)["flows"]] == [False, True, False]
    assert [f["nodelay"] for f in plan({**base, "tcp": {"nagle": False}})["flows"]] == [True, True, False]
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        tcpinfo.nodelay(s, {"nodelay": False})
        assert s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
        tcpinfo.nodelay(s, {"nodelay": True})
        assert s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


def test_a_sized_receive_window_raises_both_ends_send_buffer_cap(monkeypatch):
    """Where the scenario sets rcvbuf the simulator's send buffer is unlimited: the emulator
    raises tcp_wmem[2] in both end namespaces to twice the window (never lowers it)."""
    from bloatlab.emulate import netns

    calls: list[tuple[str, str, str]] = []
    monkeypatch.setattr(netns, "_sysctl", lambda ns, key, value: calls.append((ns, key, value)))
    low, default, cap = netns.TCP_WMEM
    ns = netns.Namespaces("blemu-test-")
    ns.raise_send_buffers(32_000_000)
    want = f"'{low} {default} {max(int(cap), 64_000_000)}'"
    assert calls == [("blemu-test-snd", "net.ipv4.tcp_wmem", want), ("blemu-test-rcv", "net.ipv4.tcp_wmem", want)]
    calls.clear()
    ns.raise_send_buffers(1000)
    assert all(v == f"'{low} {default} {cap}'" for _, _, v in calls)


def test_the_end_namespaces_get_the_modelled_tcp_buffers_not_the_hosts(monkeypatch):
    """New namespaces copy the host's tcp_rmem/tcp_wmem, and hosts differ (Linux 6.16 raised
    tcp_rmem[2] from 6 MiB to 32 MiB): both end namespaces are pinned to the simulator's."""
    from bloatlab.emulate import netns

    calls: list[tuple[str, str, str]] = []
    monkeypatch.setattr(netns, "_sysctl", lambda ns, key, value: calls.append((ns, key, value)))
    monkeypatch.setattr(netns, "ip", lambda *args, **kw: None)
    netns.Namespaces("blemu-test-").create()
    for end in ("blemu-test-snd", "blemu-test-rcv"):
        assert (end, "net.ipv4.tcp_rmem", "'4096 131072 6291456'") in calls
        assert (end, "net.ipv4.tcp_wmem", "'4096 16384 4194304'") in calls
    assert not any(ns == "blemu-test-link" and "tcp_" in key for ns, key, _ in calls)


def test_the_plan_has_udp_cbr_flows_and_per_flow_base_rtts():
    from bloatlab.emulate.runner import plan

    p = plan({"duration": "5s", "topology": {"bottleneck": {"rate": "10Mbps", "delay": "10ms"},
                                             "access": {"delay": "5ms"}},
              "flows": [{"cc": "cubic", "rtt": "100ms"}, {"transport": "udp", "rate": "1Mbps", "packet_size": "972B"}]})
    tcp, cbr = p["flows"]
    assert tcp["transport"] == "tcp" and tcp["base_rtt_ns"] == 100_000_000 and tcp["gap_ns"] is None
    # 1 Mbit/s on the wire with 972 + 28 B datagrams: one every 8 ms.
    assert cbr["transport"] == "udp" and cbr["payload"] == 972 and cbr["gap_ns"] == 8_000_000
    assert cbr["cc"] == "none" and cbr["port"] == 10_001 and cbr["base_rtt_ns"] == 40_000_000


def test_tcp_info_fields_are_where_the_kernel_puts_them():
    from bloatlab.emulate import tcpinfo

    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    c = socket.socket()
    c.setsockopt(socket.IPPROTO_TCP, tcpinfo.TCP_CONGESTION, b"reno")
    c.connect(ls.getsockname())
    s, _ = ls.accept()
    c.sendall(b"x" * 100_000)
    got = 0
    while got < 100_000:
        got += len(s.recv(65536))
    i = tcpinfo.read(c)
    assert i.state == 1  # ESTABLISHED
    assert i.snd_mss > 1000 and i.rcv_mss > 0
    assert i.snd_cwnd >= 10  # segments: Linux's initial window and up
    assert 0 < i.rtt_us < 1_000_000
    assert i.bytes_acked >= 100_000 and i.bytes_sent >= 100_000
    assert i.bytes_retrans == 0 and i.total_retrans == 0
    assert tcpinfo.read(s).bytes_received >= 100_000
    for x in (c, s, ls):
        x.close()


def test_the_emulation_summary_is_built_by_the_simulators_builder():
    """Issue 17: one summary builder. The emulation front gathers measurements; the shape
    (keys, order, derived fields) comes from crates/sim/src/metrics/measure.rs."""
    import json

    import bloatlab
    from bloatlab.emulate.summary import build

    plan = {"duration_ns": 10_000_000_000, "warmup_ns": 0, "name": "units", "seed": 3,
            "flows": [{"id": 0, "group": "g", "cc": "cubic", "start_ns": 0, "size": None, "base_rtt_ns": 20_000_000}]}
    snd = {"flows": [{"id": 0, "base": None, "rtt_us": [20_000, 30_000],
                      "final": {"bytes_sent": 2_000_000, "bytes_retrans": 500_000, "total_retrans": 3,
                                "total_rto": 1}}],
           "rows": []}
    rcv = {"flows": [{"id": 0, "complete_s": None, "bytes_window": 1_250_000}]}
    queue = {"aqm": "fifo", "capacity_bytes": 100_000, "rate_mbps": 10.0, "window_s": 10.0,
             "backlog_area": 5e14, "sojourn_n": 4, "sojourn_sum_ns": 8e7, "sojourn_p95_ns": 30_000_000,
             "arrivals": 100, "drop_reasons": {"overflow": 4, "early": 0, "aqm_dequeue": 1}, "random_losses": 0,
             "tx_packets": 95, "tx_bytes": 142_500, "busy": {"time": {"busy_s": 5.0}}}
    bn = {"flows": [{"data_pkts": 100, "data_drops": 5}], "bottleneck": queue, "bottleneck_rev": {},
          "io": {"rounds": 7, "bottleneck_packets": 95}, "queues": {}}
    summary, _ = build({}, plan, bn, snd, rcv, wall_s=2.0)
    f = summary["flows"][0]
    assert f["throughput_mbps"] == 2_000_000 * 8 / 10 / 1e6 and f["goodput_mbps"] == 1.0
    assert f["loss_pct"] == 5.0 and f["efficiency_pct"] == 75.0 and f["recoveries"] is None
    assert f["rtt_mean_ms"] == 25.0 and f["rtt_p95_ms"] == 30.0
    b = summary["bottleneck"]
    assert b["mean_bytes"] == 50_000.0 and b["buffer_usage_pct"] == 50.0 and b["drops"] == 5
    assert b["utilization_pct"] == 50.0 and b["mean_sojourn_ms"] == 20.0 and b["p95_sojourn_ms"] == 30.0
    assert summary["engine"]["packets_per_wall_s"] == 47.5 and summary["fairness"]["jain_goodput"] == 1.0
    assert summary["emulation"]["bottleneck_window"] == {"arrivals": 100, "tx_packets": 95, "tx_bytes": 142_500}
    # The same keys in the same order as a simulated run's summary.
    sim = json.loads(bloatlab.run(SIM_SMALL, set=["duration=1s"], series=False).summary_json)
    assert list(summary)[:-1] == list(sim)
    assert list(f) == list(sim["flows"][0]) and list(b) == list(sim["bottleneck"])


SIM_SMALL = {"duration": "1s", "topology": {"bottleneck": {"rate": "10Mbps", "delay": "10ms"}},
             "flows": [{"cc": "cubic"}]}


def test_sack_recovery_is_accepted_globally_and_per_flow():
    # Linux's default: SACK recovery (the simulator's default too), so it needs no refusal.
    from bloatlab.emulate.runner import plan
    from bloatlab.scenario import resolve

    doc = resolve(str(SCENARIO), set=["tcp.recovery=sack", 'flows=[{ cc = "cubic", tcp = { recovery = "sack" } }]'])
    assert [f["cc"] for f in plan(doc)["flows"]] == ["cubic"]


def test_linux_rules_are_what_the_kernel_runs_so_they_are_accepted():
    from bloatlab.emulate.runner import plan
    from bloatlab.scenario import resolve

    doc = resolve(str(SCENARIO), set=['tcp.rules="linux"', 'flows=[{ cc = "cubic", tcp = { rules = "linux" } }]'])
    assert [f["cc"] for f in plan(doc)["flows"]] == ["cubic"]


def test_simulator_ccs_map_to_the_kernels():
    from bloatlab.emulate.runner import plan
    from bloatlab.scenario import resolve

    ccs = ["reno", "newreno", "cubic", "bbr", "vegas", "westwood+"]
    doc = resolve(str(SCENARIO), set=["flows=[" + ", ".join(f'{{ cc = "{c}" }}' for c in ccs) + "]"])
    flows = plan(doc)["flows"]
    assert [f["cc"] for f in flows] == ccs  # the summary keeps the simulator's names
    assert [f["kernel_cc"] for f in flows] == ["reno", "reno", "cubic", "bbr", "vegas", "westwood"]


def test_a_kernel_without_the_mapped_cc_is_refused_before_anything_runs(monkeypatch):
    from bloatlab import ScenarioError
    from bloatlab.emulate import netns, runner
    from bloatlab.scenario import resolve

    monkeypatch.setattr(netns, "ensure_cc", lambda name: name != "westwood")
    p = runner.plan(resolve(str(SCENARIO), set=['flows=[{ cc = "cubic" }, { cc = "westwood+" }]']))
    with pytest.raises(ScenarioError, match=r'flows\[1\]\.cc: this kernel has no "westwood" congestion control '
                                            r'\(module tcp_westwood, which runs "westwood\+"; allowed: '):
        runner.check_kernel(p)
