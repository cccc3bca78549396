"""The ending-the-anomaly experiment's setup: the testbed as scenario dicts, and what is read
from a run's ``wifi`` block."""

from __future__ import annotations

from typing import Any

from ..framework import RunResult, Spec

MODES = ("fifo", "fq_codel", "fq_mac", "airtime")
LABEL = {"fifo": "FIFO", "fq_codel": "FQ-CoDel qdisc", "fq_mac": "FQ-MAC", "airtime": "Airtime fairness"}
STATIONS = ("fast1", "fast2", "slow")
TESTS = ("udp", "tcp")
#: The wired side's one-way delay: the probe's one-way delay minus this is its queueing.
WIRE_MS = 5.0
#: Offered load per station in the UDP test: more than any station can take.
UDP_RATE = "60Mbps"


def _ap(mode: str) -> dict[str, Any]:
    if mode == "fifo":
        return {"ap_queue": "qdisc"}
    if mode == "fq_codel":
        return {"ap_queue": "qdisc", "qdisc": {"kind": "fq_codel"}}
    return {"ap_queue": mode}


def spec(mode: str, test: str, seed: int, duration: str, warmup: str) -> Spec:
    stations = [
        {"name": "fast1", "mcs": 15, "short_gi": True},
        {"name": "fast2", "mcs": 15, "short_gi": True},
        {"name": "slow", "mcs": 0},
    ]
    if test == "udp":
        flows = [{"transport": "udp", "src": "server", "dst": s, "rate": UDP_RATE} for s in STATIONS]
    else:
        flows = [{"transport": "tcp", "cc": "cubic", "src": "server", "dst": s} for s in STATIONS]
        flows.append({"transport": "udp", "group": "probe", "src": "server", "dst": "fast1",
                      "rate": "0.1Mbps", "packet_size": "100B"})
    doc = {
        "name": f"anomaly-{test}-{mode}",
        "duration": duration,
        "warmup": warmup,
        "seed": seed,
        "topology": {"kind": "wifi", "uplink": {"rate": "1Gbps", "delay": "5ms"}, **_ap(mode),
                     "stations": stations},
        "tcp": {"recovery": "sack"},
        "flows": flows,
    }
    return Spec(doc, {"mode": mode, "test": test, "seed": seed})


def wifi(r: RunResult) -> dict[str, Any]:
    return r.summary["wifi"]


def station(r: RunResult, i: int) -> dict[str, Any]:
    return wifi(r)["stations"][i]


def probe_queueing_ms(r: RunResult) -> float:
    p = next(f for f in r.flows if f["group"] == "probe")
    return float(p["owd_mean_ms"]) - WIRE_MS


def tcp_rtt_ms(r: RunResult, i: int) -> float:
    return float([f for f in r.flows if f["transport"] == "tcp"][i]["rtt_mean_ms"])
