"""The dccp-bbr experiment's setup: its constants, the scenarios it runs (as scenario
dicts and :class:`~bloatlab.experiments.framework.Spec`), and what it reads from a run."""

from __future__ import annotations

from typing import Any

from ..framework import RunResult, Spec

CCS = ("ccid2", "bbr", "bbr-adaptive")

LABEL = {"ccid2": "CCID2", "bbr": "BBR", "bbr-adaptive": "DCCP-BBR"}

LOSSES_FULL = (0.0, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4)

LOSSES_QUICK = (0.0, 0.01, 0.1, 0.2, 0.25, 0.3, 0.35, 0.4)

LOSSES_SMOKE = (0.0, 0.01, 0.2, 0.3)

#: "collapse": goodput below this share of what the loss alone leaves, (1 - p) * g(0).
COLLAPSE_SHARE = 0.6

def _topology() -> dict[str, Any]:
    # base RTT = 2 * (2 * access.delay + bottleneck.delay) = 100 ms with 1 ms access links
    return {
        "bottleneck": {"rate": "100Mbps", "delay": "48ms"},
        "bottleneck_queue": {"kind": "droptail", "limit": "4000p"},
        "access": {"rate": "1Gbps", "delay": "1ms"},
    }


def delay_spec(cc: str, seed: int, duration: str) -> Spec:
    doc = {
        "name": f"dccp-bbr-fig6-{cc}",
        "duration": duration,
        "seed": seed,
        "metrics": {"interval": "100ms"},
        "topology": _topology(),
        "flows": [
            # The paper does not say when its flows start; a random start in the first half
            # second makes seeds differ (with simultaneous starts every seed is the same run).
            {"transport": "tcp", "cc": "vegas", "count": 2, "start": {"uniform": ["0s", "500ms"]}},
            {"transport": "dccp", "cc": cc},
        ],
    }
    return Spec(doc, {"figure": "6", "cc": cc, "seed": seed})


def loss_spec(cc: str, loss: float, seed: int, duration: str) -> Spec:
    topo = _topology()
    topo["bottleneck"]["loss"] = loss
    doc = {
        "name": f"dccp-bbr-fig7-{cc}-{loss}",
        "duration": duration,
        "seed": seed,
        "metrics": {"interval": "500ms"},
        "topology": topo,
        "flows": [{"transport": "dccp", "cc": cc}],
    }
    return Spec(doc, {"figure": "7", "cc": cc, "loss": loss, "seed": seed})


def _dccp(r: RunResult) -> dict[str, Any]:
    return next(f for f in r.flows if f["transport"] == "dccp")


def collapse_point(losses: list[float], goodput: list[float], share: float = COLLAPSE_SHARE) -> float | None:
    """The loss rate at which goodput first falls below ``share`` of (1 - p)·g(0), linearly
    interpolated between grid points; None if it never does on the grid."""
    g0 = goodput[0]
    if not g0 or g0 <= 0:
        return losses[0]
    prev = None
    for p, g in zip(losses, goodput):
        e = g / ((1 - p) * g0)
        if e < share:
            if prev is None:
                return p
            p0, e0 = prev
            return p0 + (p - p0) * (e0 - share) / (e0 - e) if e0 != e else p
        prev = (p, e)
    return None
