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
#: The reverse direction's metrics of a both-ways cell (the uploads and the reverse queue).
UP_METRICS = (
    Metric("up_goodput_mbps", "upload goodput", "Mbit/s", 0.1, 0.05),
    Metric("up_queue_delay_mean_ms", "upload queueing delay mean", "ms", 1.0, 0.15),
    Metric("up_queue_delay_p95_ms", "upload queueing delay p95", "ms", 1.0, None),
    Metric("up_retransmits", "upload retransmissions", "packets", 20.0, 0.25),
    Metric("up_drops", "upload queue drops", "packets", 20.0, 0.25),
)
ALL_METRICS = METRICS + UP_METRICS
BY_KEY = {m.key: m for m in ALL_METRICS}
#: Share of the cells that must be within each target (issue 15).
CELL_SHARE_TARGET = 0.90
#: In the both-ways slice the forward queue's drops are judged too (issue 34: how the
#: downloads' ACKs bunch behind the uploads decides them), with the retransmissions' target.
BOTH_WAYS_DROPS_TARGET = 0.25


def target(m: Metric, both_ways: bool = False) -> float | None:
    """The |error| allowed for ``m`` in a cell of the matrix or of the both-ways slice."""
    if both_ways and m.key == "drops":
        return BOTH_WAYS_DROPS_TARGET
    return m.target


def _sum_or_none(values: list[Any]) -> float | None:
    return None if any(v is None for v in values) else float(sum(values))


def _queue(summary: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """A queue's block: the simulator lists it under ``links`` (when the scenario asks), the
    emulator's reverse queue sits in its ``emulation`` block."""
    for link in summary.get("links") or []:
        if link.get("name") == name:
            return link
    if name == "bottleneck_rev":
        return (summary.get("emulation") or {}).get("reverse") or {}
    return summary["bottleneck"]


def extract(summary: Mapping[str, Any], reverse_ids: frozenset[int] = frozenset()) -> dict[str, float | None]:
    """The compared metrics from a summary (either engine's: they have one shape). Queueing
    delay is the bottleneck's sojourn time (same definition in both engines), goodput and
    retransmissions are summed over the flows. With ``reverse_ids`` (a both-ways cell) the
    forward metrics cover the other flows and the ``up_*`` ones these and the reverse queue."""
    flows = [f for f in summary["flows"] if f["id"] not in reverse_ids] if reverse_ids else summary["flows"]
    b = summary["bottleneck"]
    out: dict[str, float | None] = {
        "goodput_mbps": sum(f["goodput_mbps"] for f in flows),
        "queue_delay_mean_ms": b.get("mean_sojourn_ms"),
        "queue_delay_p95_ms": b.get("p95_sojourn_ms"),
        "retransmits": _sum_or_none([f.get("retransmits") for f in flows]),
        "jain": summary.get("fairness", {}).get("jain_goodput"),
        "drops": b.get("drops"),
    }
    if reverse_ids:
        up = [f for f in summary["flows"] if f["id"] in reverse_ids]
        r = _queue(summary, "bottleneck_rev")
        out.update({
            "up_goodput_mbps": sum(f["goodput_mbps"] for f in up),
            "up_queue_delay_mean_ms": r.get("mean_sojourn_ms"),
            "up_queue_delay_p95_ms": r.get("p95_sojourn_ms"),
            "up_retransmits": _sum_or_none([f.get("retransmits") for f in up]),
            "up_drops": r.get("drops"),
        })
    return out


def rel_error(sim: float | None, linux: float | None, floor: float) -> float | None:
    if sim is None or linux is None:
        return None
    return (sim - linux) / max(abs(linux), floor)


def errors(sim: Mapping[str, float | None], linux: Mapping[str, float | None]) -> dict[str, float | None]:
    """The error of every metric the cell has (a both-ways cell also has the ``up_*`` ones)."""
    return {m.key: rel_error(sim.get(m.key), linux.get(m.key), m.floor) for m in ALL_METRICS
            if m.key in sim or m.key in linux}


def _judged(errs: Mapping[str, Any], both_ways: bool) -> list[tuple[Metric, float]]:
    return [(m, t) for m in ALL_METRICS if m.key in errs and (t := target(m, both_ways)) is not None]


def outside(errs: Mapping[str, float | None], both_ways: bool = False) -> list[str]:
    """The judged metrics whose error misses the target (a missing value counts as missing it)."""
    return [m.key for m, t in _judged(errs, both_ways) if errs[m.key] is None or abs(errs[m.key]) > t]


def score(errs: Mapping[str, float | None] | None, both_ways: bool = False) -> float:
    """How far the cell is from its targets: the largest |error| / target over the judged
    metrics (> 1: outside). Sorts the report worst first."""
    if not errs:
        return -1.0
    vals = [abs(errs[m.key]) / t for m, t in _judged(errs, both_ways) if errs[m.key] is not None]
    return max(vals) if vals else float("inf")


def spread(sims: list[Mapping[str, Any]], linuxes: list[Mapping[str, Any]], keys: list[str],
           both_ways: bool = False) -> dict[str, Any]:
    """A cell run at several seeds on both engines, judged on the metrics ``keys`` (those outside
    at the first seed): a metric is *within Linux's spread* when the simulator's mean over the
    seeds lies inside the range of Linux's runs widened at each end by the metric's target
    (the same tolerance as a single comparison, applied to the nearest Linux run)."""
    out: dict[str, Any] = {"sim_mean": {}, "linux": {}, "within": {}}
    for k in keys:
        m = BY_KEY[k]
        t = target(m, both_ways) or 0.0
        sv = [s.get(k) for s in sims]
        lv = [x.get(k) for x in linuxes]
        if any(v is None for v in sv + lv):
            out["within"][k] = False
            continue
        mean = sum(sv) / len(sv)
        lo, hi = min(lv), max(lv)
        out["sim_mean"][k] = mean
        out["linux"][k] = lv
        out["within"][k] = lo - t * max(abs(lo), m.floor) <= mean <= hi + t * max(abs(hi), m.floor)
    return out


def is_both_ways(cell: Mapping[str, Any]) -> bool:
    return bool((cell.get("params") or {}).get("both_ways"))


def within_counts(cells: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Per judged metric: how many compared cells are within the target; all of them at once;
    and (after ``--spread``) how many of the rest are within Linux's own spread."""
    judged = [c for c in cells if c.get("errors")]
    out: dict[str, Any] = {"cells": len(judged)}
    for m in ALL_METRICS:
        cells_m = [c for c in judged if m.key in c["errors"] and target(m, is_both_ways(c)) is not None]
        if not cells_m:
            continue
        out[m.key] = sum(1 for c in cells_m if c["errors"][m.key] is not None
                         and abs(c["errors"][m.key]) <= target(m, is_both_ways(c)))
    out["all"] = sum(1 for c in judged if c["verdict"] == "within")
    spread = [c for c in judged if c.get("spread")]
    if spread:
        out["spread_checked"] = len(spread)
        out["within_spread"] = sum(1 for c in judged if c["verdict"] == "within-spread")
    return out


def summary_line(counts: Mapping[str, Any]) -> str:
    n = counts["cells"]
    if not n:
        return "no cell compared (simulation only or every emulation failed)"
    parts = []
    for m in ALL_METRICS:
        if m.key in counts:
            # A metric counted with no target of its own is judged only in the both-ways slice.
            t = m.target if m.target is not None else target(m, both_ways=True)
            parts.append(f"{m.label} within {t * 100:g} % in {counts[m.key]} of {n} cells")
    line = "; ".join(parts) + f"; all {'three' if len(parts) == 3 else len(parts)} in {counts['all']} of {n}"
    if "spread_checked" in counts:
        line += (f"; of the others, {counts['within_spread']} of {counts['spread_checked']} within Linux's "
                 "own spread over the seeds")
    return line + f" (target: each in ≥ {CELL_SHARE_TARGET * 100:g} %)"
