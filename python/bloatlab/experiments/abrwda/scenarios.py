"""The abrwda experiment's setup: its constants, the scenarios it runs (as scenario
dicts and :class:`~bloatlab.experiments.framework.Spec`), and what it reads from a run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..framework import RunResult, Spec, Stat
from .paper import PAPER_ALPHA, PAPER_LAMBDA

# --------------------------------------------------------------------------- our choices

SCHEMES = ("newreno", "abrwda", "drwa", "vegas")

LABEL = {"newreno": "NewReno", "abrwda": "ABRWDA", "drwa": "DRWA", "vegas": "Vegas"}

#: DRWA's λ (Jiang et al.; bloatlab's default, see docs/cellular.md)
DRWA_LAMBDA = 3.0

#: ns-2's Vegas defaults (v_alpha_, v_beta_, v_gamma_), the Vegas the paper ran
VEGAS_PARAMS = {"alpha": 1, "beta": 3, "gamma": 1}

#: the sensitivity grids (the paper's values are in its figures' legends, not its text)
ALPHAS_FULL = (1 / 16, 1 / 8, 1 / 4, 1 / 2, 3 / 4, 1.0)

LAMBDAS_FULL = (1.0, 1.1, 1.2, 1.3, 1.5, 2.0)

ALPHAS_SMOKE = (1 / 4, 1.0)

LAMBDAS_SMOKE = (1.0, 1.2)

#: utilisation CDF: bytes carried / capacity offered over windows of this length (s)
UTIL_WINDOW_S = 1.0

#: Fig. 8: the core's one-way delay (the radio adds 25 ms); base RTT = 2 (core + 25 ms)
CORE_DELAYS_FULL = (10, 30, 50, 100, 150)

CORE_DELAYS_QUICK = (10, 50, 150)

CORE_DELAYS_SMOKE = (50,)

SHORT_SIZES = (1, 30, 200)  # packets

#: the spacing of short-flow starts, long enough that they do not overlap (checked)
SHORT_GAP_S = {1: 4.0, 30: 6.0, 200: 15.0}

#: the long flow's head start before the first short flow (NewReno fills the buffer in ~3.5 s)
SHORT_T0_S = 5.0


# --------------------------------------------------------------------------- claim thresholds

#: "fills the buffer": the largest sampled queue is at least this share of the 500 packets
FULL_SHARE = 0.95

PKT = 1500  # bytes on the wire per full packet

MSS = 1448

BASE_RTT_MS = 150.0

MEAN_RATE_MBPS = 6.2

BDP_PKTS = MEAN_RATE_MBPS * 1e6 / 8 * BASE_RTT_MS / 1e3 / PKT  # 77.5


# --------------------------------------------------------------------------- scenarios

def _rate(lo: str, hi: str) -> dict[str, str]:
    # The paper's two random variables; interval and dwell are our choices (docs/cellular.md).
    return {"model": "cellular", "min": lo, "max": hi, "interval": "10ms", "dwell": "5s"}


def topology(core_delay_ms: float = 50) -> dict[str, Any]:
    """Table I; only the core delay varies (Fig. 8)."""
    return {
        "kind": "cellular",
        "core": {"rate": "1Gbps", "delay": f"{core_delay_ms}ms"},
        "bs_queue": {"kind": "droptail", "limit": "500p"},
        "radio": {"delay": "25ms", "down": _rate("3.1Mbps", "9.3Mbps"), "up": _rate("1.8Mbps", "5.4Mbps")},
    }


def tcp_flow(scheme: str, alpha: float = PAPER_ALPHA, lam: float = PAPER_LAMBDA, **extra: Any) -> dict[str, Any]:
    """A TCP flow of one scheme: NewReno with a receive-window policy, or Vegas."""
    flow: dict[str, Any] = {"transport": "tcp", "cc": "vegas" if scheme == "vegas" else "newreno"}
    if scheme == "vegas":
        flow["cc_params"] = dict(VEGAS_PARAMS)
    elif scheme == "abrwda":
        flow.update(rwnd="abrwda", rwnd_params={"alpha": alpha, "lambda": lam})
    elif scheme == "drwa":
        flow.update(rwnd="drwa", rwnd_params={"lambda": DRWA_LAMBDA})
    flow.update(extra)
    return flow


def long_spec(scheme: str, seed: int, duration: str, alpha: float = PAPER_ALPHA, lam: float = PAPER_LAMBDA,
              **labels: Any) -> Spec:
    """One long flow for `duration` (Fig. 4-7), sampled every 10 ms (the rate's own step)."""
    doc = {
        "name": f"abrwda-long-{scheme}",
        "duration": duration,
        "seed": seed,
        "metrics": {"interval": "10ms"},
        "topology": topology(),
        "flows": [tcp_flow(scheme, alpha, lam)],
    }
    return Spec(doc, {"scheme": scheme, "seed": seed, **labels})


def afct_spec(scheme: str, size_pkts: int, core_ms: float, seed: int, n_short: int) -> Spec:
    """Fig. 8: one long flow from 0 s, then `n_short` sized flows one after the other."""
    gap = SHORT_GAP_S[size_pkts]
    shorts = [tcp_flow(scheme, group="short", size=f"{size_pkts * MSS}B", start=f"{SHORT_T0_S + k * gap:g}s")
              for k in range(n_short)]
    doc = {
        "name": f"abrwda-afct-{scheme}-{size_pkts}p-{core_ms}ms",
        "duration": f"{SHORT_T0_S + n_short * gap:g}s",
        "seed": seed,
        "metrics": {"interval": "0s"},
        "topology": topology(core_ms),
        "flows": [tcp_flow(scheme, group="long"), *shorts],
    }
    return Spec(doc, {"scheme": scheme, "size": size_pkts, "core_ms": core_ms, "seed": seed})


# --------------------------------------------------------------------------- per-run measures

def down_queue(r: RunResult) -> Any:
    """The base station's queue towards the UE (the bottleneck), one row per sample."""
    q = r.queues
    return q[q.link == "ue0_down"].reset_index(drop=True)


def rtt_samples(r: RunResult) -> Any:
    return r.timeseries.rtt_ms.dropna()


@dataclass
class LongMeasures:
    """What Fig. 4 / 5's text reports for one run."""

    mean_queue_pkts: float
    max_queue_pkts: float
    p95_queue_pkts: float
    empty_pct: float
    t_full_s: float | None
    t_empty_s: float | None
    mean_rtt_ms: float
    min_rtt_ms: float
    max_rtt_ms: float
    goodput_mbps: float
    util_pct: float
    drops: int
    max_cwnd_pkts: float


def measure_long(r: RunResult) -> LongMeasures:
    q = down_queue(r)
    pk = q.backlog_pkts
    full = q.t_s[pk >= FULL_SHARE * 500]
    t_full = float(full.iloc[0]) if len(full) else None
    # the first time the queue is empty again after it filled (the paper's 8.92 s)
    later = q.t_s[(q.t_s > t_full) & (pk == 0)] if t_full is not None else q.t_s.iloc[:0]
    rtts = rtt_samples(r)
    f = r.flows[0]
    return LongMeasures(
        mean_queue_pkts=r.bottleneck["mean_bytes"] / PKT,
        max_queue_pkts=float(pk.max()),
        p95_queue_pkts=float(pk.quantile(0.95)),
        empty_pct=100.0 * float((pk == 0).mean()),
        t_full_s=t_full,
        t_empty_s=float(later.iloc[0]) if len(later) else None,
        mean_rtt_ms=f["rtt_mean_ms"],
        min_rtt_ms=float(rtts.min()),
        max_rtt_ms=float(rtts.max()),
        goodput_mbps=f["goodput_mbps"],
        util_pct=r.bottleneck["utilization_pct"],
        drops=int(r.bottleneck["drops"]),
        max_cwnd_pkts=float(r.timeseries.cwnd_bytes.max()) / MSS,
    )


def window_utilisation(r: RunResult, window_s: float = UTIL_WINDOW_S) -> list[float]:
    """Bytes carried over capacity offered, per window (10 ms samples of both)."""
    q = down_queue(r)
    w = (q.t_s / window_s - 1e-9).astype(int)  # samples stamp their interval's end
    g = q.groupby(w)
    util = g.tx_mbps.sum() / g.capacity_mbps.sum()
    return [min(1.0, float(u)) for u in util]  # a sample's capacity is its end's: ±1 step


def stat_of(ms: Sequence[LongMeasures], field: str) -> Stat:
    return Stat.of(getattr(m, field) for m in ms)
