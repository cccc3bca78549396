"""The ewt experiment's setup: its constants, the scenarios it runs (as scenario
dicts and :class:`~bloatlab.experiments.framework.Spec`), and what it reads from a run."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..calibration import RFC7928_LEVELS
from ..framework import RunResult, Stat, by_label, jain

SCHEMES = ("droptail", "red", "ared", "ewa", "awm", "ewt")

LABEL = {"droptail": "Drop-tail", "red": "RED", "ared": "ARED", "ewa": "EWA", "awm": "AWM", "ewt": "EWT"}

LEVELS = tuple(RFC7928_LEVELS)  # mild, medium, heavy

SCENARIOS = (1, 2)

MEMORY = "97KB"  # Table 3

EWT_START = "29KB"  # Table 3, S_t

MSS = "1458B"  # Table 3 "TCP segment size": ns-3's SegmentSize, the MSS

RCVBUF = "131072B"  # ns-3's default RcvBufSize (EWT scales the advertised window)

FILE_SIZE = "5MB"

FILE_BYTES = 5_000_000

START = {"uniform": ["1s", "8s"]}

UDP_PAYLOAD = 1400  # bytes (§5.5)

UDP_HEADERS = 28


@dataclass(frozen=True)
class Dumbbell:
    """One of the paper's scenarios. Delays are one-way: a link's "RTT" in Tables 4/5 is
    twice its delay."""

    rate_mbps: float
    delay: str
    access_rate: str
    access_delay: str
    udp_mbps: float = 0.0  # a CBR flow beside the TCP flows (0: none)


DUMBBELLS = {
    1: Dumbbell(4, "180ms", "4Mbps", "2.5ms"),
    2: Dumbbell(45, "40ms", "100Mbps", "1ms", udp_mbps=13.35),
}

#: the largest flow count the flows-served search tries. EWT loses once the flows' one-MSS
#: windows alone exceed the memory (§5.6: N·MSS > queue size, 97 kB / 1510 B ≈ 64 flows); 96
#: leaves room above that bound.
MAX_FLOWS_FULL = 96

MAX_FLOWS_QUICK = 64

#: seeds of the RFC 7928 searches in full mode (levels and flows served). The search runs up to
#: 96 flows per scheme and scenario; 30 seeds there would exceed the full-mode budget (a 64-flow
#: step alone is ~18 min on 2 cores). The comparisons at each level use every seed.
SEARCH_SEEDS_FULL = 5

#: UDP runs as long as the TCP transfers would take at this share of the capacity UDP leaves
TCP_SHARE = 0.9

#: "loses nothing": the total of dropped segments over every run of a scheme
NO_LOSS_DROPS = 0

#: "keeps efficiency": the mean TCP / UDP efficiency stays at or above this (%)
EFFICIENCY_KEPT_PCT = 99.9


# --------------------------------------------------------------------------- scenarios

def scheme_topology(scheme: str, n_tcp: int) -> dict[str, Any]:
    """The queue and gateway keys of one scheme. RED/ARED use the Table 3 thresholds, which
    are bloatlab's defaults for a 97 kB limit; EWA and AWM rewrite over drop-tail; AWM is told
    the number of TCP flows (it needs it, §6)."""
    kind = scheme if scheme in ("red", "ared") else "droptail"
    topo: dict[str, Any] = {"bottleneck_queue": {"kind": kind, "limit": MEMORY}}
    if scheme == "ewt":
        topo["gateway"] = {"kind": "ewt", "start": EWT_START}
    elif scheme == "ewa":
        topo["gateway"] = {"kind": "ewa"}
    elif scheme == "awm":
        topo["gateway"] = {"kind": "awm", "flows": n_tcp}
    return topo


def transfer_estimate_s(d: Dumbbell, n_tcp: int, file_bytes: int) -> float:
    """How long the N transfers take at TCP_SHARE of the capacity UDP leaves (plus the last
    start, 8 s): how long the UDP flow runs."""
    return 8.0 + n_tcp * file_bytes * 8 / (TCP_SHARE * (d.rate_mbps - d.udp_mbps) * 1e6)


def talau_scenario(sc: int, scheme: str, n_tcp: int, file_bytes: int = FILE_BYTES) -> dict[str, Any]:
    """The scenario of one scheme with ``n_tcp`` TCP flows (``flows[0].count``), no seed."""
    d = DUMBBELLS[sc]
    est = transfer_estimate_s(d, n_tcp, file_bytes)
    flows: list[dict[str, Any]] = [{"cc": "cubic", "count": n_tcp, "size": f"{file_bytes}B", "start": START}]
    if d.udp_mbps:
        udp_payload = int(d.udp_mbps * 1e6 / 8 * est * UDP_PAYLOAD / (UDP_PAYLOAD + UDP_HEADERS))
        flows.append({"transport": "udp", "rate": f"{d.udp_mbps}Mbps", "packet_size": f"{UDP_PAYLOAD}B",
                      "size": f"{udp_payload}B"})
    return {
        "name": f"talau2019-s{sc}-{scheme}-{n_tcp}",
        # generous: a run ends when its transfers do (the UDP flow is sized)
        "duration": f"{math.ceil(3 * est + 60)}s",
        "topology": {
            "bottleneck": {"rate": f"{d.rate_mbps}Mbps", "delay": d.delay},
            "access": {"rate": d.access_rate, "delay": d.access_delay},
            **scheme_topology(scheme, n_tcp),
        },
        "tcp": {"mss": MSS, "rcvbuf": RCVBUF},
        "flows": flows,
    }


def ewt_fixed_point_kb(sc: int, n_tcp: int) -> float:
    """Where EWT over drop-tail settles (docs/gateway.md): the queue U at which the N rewritten
    windows N·W_r·(B − U)/B carry the TCP share of the pipe plus U (payload ≈ wire bytes)."""
    d = DUMBBELLS[sc]
    w, b = 131_072.0, 97_000.0
    base_rtt_s = 2 * (2 * _seconds(d.access_delay) + _seconds(d.delay))
    pipe = (d.rate_mbps - d.udp_mbps) * 1e6 / 8 * base_rtt_s
    return max(0.0, (n_tcp * w - pipe) * b / (n_tcp * w + b)) / 1000


def _seconds(text: str) -> float:
    return float(text.removesuffix("ms")) / 1000


def with_count_for(sc: int, scheme: str, file_bytes: int) -> Callable[[dict[str, Any], int], dict[str, Any]]:
    """The search's hook: rebuild the scenario for n flows (duration, UDP size, AWM's N follow)."""
    return lambda _doc, n: talau_scenario(sc, scheme, n, file_bytes)


# --------------------------------------------------------------------------- per-run measures

def tcp_flows(r: RunResult) -> list[dict[str, Any]]:
    return [f for f in r.flows if f["transport"] == "tcp"]


def udp_flow(r: RunResult) -> dict[str, Any] | None:
    return next((f for f in r.flows if f["transport"] == "udp"), None)


def weighted_loss(flows: Sequence[dict[str, Any]]) -> float:
    """Eq. 13 over a set of flows: lost / sent packets, each flow's loss_pct weighted by what
    it sent (throughput × active time; equal packet sizes within a transport)."""
    w = [f["throughput_mbps"] * max((f["end_s"] or 0.0) - f["start_s"], 0.0) for f in flows]
    total = sum(w)
    return sum(f["loss_pct"] * x for f, x in zip(flows, w)) / total if total > 0 else 0.0


#: metric -> (label, unit, how one run gives it)
METRICS: dict[str, tuple[str, str, Callable[[RunResult], float | None]]] = {
    "tcp_eff": ("TCP efficiency", "%", lambda r: _mean(f["efficiency_pct"] for f in tcp_flows(r))),
    "latency": ("file transfer latency", "s", lambda r: _mean(f["fct_s"] for f in tcp_flows(r))),
    "goodput": ("goodput", "Mbit/s", lambda r: _mean(f["goodput_mbps"] for f in tcp_flows(r))),
    "fairness": ("goodput fairness", "", lambda r: jain([f["goodput_mbps"] for f in tcp_flows(r)])),
    "loss": ("mean loss ratio", "%", lambda r: r.bottleneck["drop_pct"]),
    "tcp_loss": ("TCP loss ratio", "%", lambda r: weighted_loss(tcp_flows(r))),
    "udp_loss": ("UDP loss ratio", "%", lambda r: (u := udp_flow(r)) and u["loss_pct"]),
    "udp_eff": ("UDP efficiency", "%", lambda r: (u := udp_flow(r)) and 100.0 - u["loss_pct"]),
}

METRICS_S1 = ("tcp_eff", "latency", "goodput", "fairness", "loss")

METRICS_S2 = ("tcp_eff", "udp_eff", "latency", "goodput", "fairness", "loss")

#: the paper's figure numbers of each metric per scenario
FIGURE_NO = {1: {"tcp_eff": 5, "latency": 6, "goodput": 7, "fairness": 8, "loss": 9},
             2: {"tcp_eff": 11, "udp_eff": 12, "latency": 13, "goodput": 14, "fairness": 15}}


def _mean(xs: Any) -> float | None:
    vals = [x for x in xs if x is not None]
    return sum(vals) / len(vals) if vals else None


# Stats[(sc, level, scheme)][metric]
Stats = dict[tuple[int, str, str], dict[str, Stat]]


def metric_stats(runs: list[RunResult], sc: int, level: str, scheme: str) -> dict[str, Stat]:
    rs = by_label(runs, sc=sc, level=level, scheme=scheme)
    return {m: Stat.of(fn(r) for r in rs) for m, (_, _, fn) in METRICS.items()}
