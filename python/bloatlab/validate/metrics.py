"""What ``bloatlab validate`` compares, the error, and the verdict.

The error of a metric is relative to Linux, with an absolute floor for values near zero:

    error = (sim − linux) / max(|linux|, floor)

so retransmissions at 0 % loss (a handful in either engine) or CoDel's few milliseconds of
queueing do not make a tiny absolute difference a huge relative one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    unit: str
    floor: float
    #: |error| allowed in a cell, or None: reported, not judged.
    target: float | None


METRICS = (
    Metric("goodput_mbps", "goodput", "Mbit/s", 0.1, 0.05),
    Metric("queue_delay_mean_ms", "queueing delay mean", "ms", 1.0, 0.15),
    Metric("queue_delay_p95_ms", "queueing delay p95", "ms", 1.0, None),
    Metric("retransmits", "retransmissions", "packets", 20.0, 0.25),
    Metric("jain", "Jain's index", "", 0.01, None),
    # Not a target: shown because it explains most retransmission errors (at 0 % random loss
    # every retransmission answers a drop, or is spurious).
    Metric("drops", "queue drops", "packets", 20.0, None),
)
BY_KEY = {m.key: m for m in METRICS}
#: Share of the cells that must be within each target (issue 15).
CELL_SHARE_TARGET = 0.90


def extract(summary: Mapping[str, Any]) -> dict[str, float | None]:
    """The compared metrics from a summary (either engine's: they have one shape). Queueing
    delay is the bottleneck's sojourn time (same definition in both engines), goodput and
    retransmissions are summed over the flows."""
    flows = summary["flows"]
    b = summary["bottleneck"]
    retx = [f.get("retransmits") for f in flows]
    return {
        "goodput_mbps": sum(f["goodput_mbps"] for f in flows),
        "queue_delay_mean_ms": b.get("mean_sojourn_ms"),
        "queue_delay_p95_ms": b.get("p95_sojourn_ms"),
        "retransmits": None if any(r is None for r in retx) else float(sum(retx)),
        "jain": summary.get("fairness", {}).get("jain_goodput"),
        "drops": b.get("drops"),
    }


def rel_error(sim: float | None, linux: float | None, floor: float) -> float | None:
    if sim is None or linux is None:
        return None
    return (sim - linux) / max(abs(linux), floor)


def errors(sim: Mapping[str, float | None], linux: Mapping[str, float | None]) -> dict[str, float | None]:
    return {m.key: rel_error(sim.get(m.key), linux.get(m.key), m.floor) for m in METRICS}


def outside(errs: Mapping[str, float | None]) -> list[str]:
    """The judged metrics whose error misses the target (a missing value counts as missing it)."""
    return [m.key for m in METRICS if m.target is not None
            and (errs.get(m.key) is None or abs(errs[m.key]) > m.target)]


def score(errs: Mapping[str, float | None] | None) -> float:
    """How far the cell is from its targets: the largest |error| / target over the judged
    metrics (> 1: outside). Sorts the report worst first."""
    if not errs:
        return -1.0
    vals = [abs(errs[m.key]) / m.target for m in METRICS
            if m.target is not None and errs.get(m.key) is not None]
    return max(vals) if vals else float("inf")


def within_counts(cells: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Per judged metric: how many compared cells are within the target; and all three at once."""
    judged = [c for c in cells if c.get("errors")]
    out: dict[str, Any] = {"cells": len(judged)}
    for m in METRICS:
        if m.target is None:
            continue
        out[m.key] = sum(1 for c in judged if c["errors"].get(m.key) is not None
                         and abs(c["errors"][m.key]) <= m.target)
    out["all"] = sum(1 for c in judged if c["verdict"] == "within")
    return out


def summary_line(counts: Mapping[str, Any]) -> str:
    n = counts["cells"]
    if not n:
        return "no cell compared (simulation only or every emulation failed)"
    parts = [f"{m.label} within {m.target * 100:g} % in {counts[m.key]} of {n} cells"
             for m in METRICS if m.target is not None]
    return "; ".join(parts) + f"; all three in {counts['all']} of {n} (target: each in ≥ {CELL_SHARE_TARGET * 100:g} %)"
