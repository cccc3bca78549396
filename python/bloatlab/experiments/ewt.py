"""Talau, Fonseca & Wille 2019, Early Window Tailoring (paper 002): Tables 2-6, Fig. 5-17.

A dumbbell (Fig. 4) where every TCP source sends a 5 MB file starting at a random time in
[1 s, 8 s], with six gateway schemes: drop-tail, RED, ARED (queue disciplines), EWA, AWM and
EWT (ACK rewriters over a drop-tail queue), 97 kB of gateway memory.

- Scenario 1 (Table 4): 4 Mbit/s everywhere, 360 ms bottleneck RTT, 5 ms access RTTs.
- Scenario 2 (Table 5): 45 Mbit/s, 80 ms bottleneck; 100 Mbit/s, 2 ms access; plus one
  13.35 Mbit/s UDP flow of 1400-byte datagrams.

The flow counts of the mild / medium / heavy levels come from the RFC 7928 search with
drop-tail (Table 2), redone in bloatlab (:mod:`.calibration`); the same search with every
scheme gives the flows each one serves per level (Fig. 16, 17). At each level and scheme:
TCP efficiency, file transfer latency, goodput, Jain fairness of goodput, mean loss ratio
(Fig. 5-9, 11-15), UDP efficiency and Table 6's TCP/UDP loss in scenario 2, and the window
of one flow under RED and EWT (Fig. 10). 30 seeds (the paper's), 95 % CIs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from . import ewt_plots as plots
from .calibration import RFC7928_LEVELS, context_runner, search_counts
from .framework import Context, Experiment, RunResult, Spec, Stat, TableRow, by_label, cis_overlap, fmt, jain

SCHEMES = ("droptail", "red", "ared", "ewa", "awm", "ewt")
LABEL = {"droptail": "Drop-tail", "red": "RED", "ared": "ARED", "ewa": "EWA", "awm": "AWM", "ewt": "EWT"}
LEVELS = tuple(RFC7928_LEVELS)  # mild, medium, heavy
SCENARIOS = (1, 2)

# -- the paper's numbers

#: Table 2: flows per congestion level (found with drop-tail in ns-3)
PAPER_TABLE2 = {1: {"mild": 8, "medium": 17, "heavy": 24}, 2: {"mild": 13, "medium": 24, "heavy": 31}}
#: Table 6: mean loss ratio (%) in scenario 2, (TCP, UDP) per scheme and level
PAPER_TABLE6 = {
    "droptail": {"mild": (0.07, 0.029), "medium": (0.31, 0.31), "heavy": (0.52, 0.43)},
    "red": {"mild": (0.11, 0.07), "medium": (0.54, 0.37), "heavy": (0.83, 0.62)},
    "ared": {"mild": (0.09, 0.05), "medium": (0.41, 0.29), "heavy": (0.62, 0.50)},
    "ewa": {"mild": (0.0, 0.0), "medium": (0.07, 0.02), "heavy": (0.19, 0.05)},
    "awm": {"mild": (0.0, 0.0), "medium": (0.0, 0.0), "heavy": (0.04, 0.02)},
    "ewt": {"mild": (0.0, 0.0), "medium": (0.0, 0.0), "heavy": (0.0, 0.0)},
}
#: §5.6: EWT's flows served, on average over levels and scenarios, vs the best other scheme
#: and vs drop-tail (% more)
PAPER_SERVED_GAIN = {"best competitor": 49.3, "drop-tail": 75.8}

# -- the setup (Tables 3, 4, 5)

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

# -- our choices (stated in the report)

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
#: two means are "tied" when their 95 % confidence intervals overlap


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


# --------------------------------------------------------------------------- reproduce


def reproduce(ctx: Context) -> None:
    seeds = ctx.seeds()
    search_seeds = seeds[:SEARCH_SEEDS_FULL]
    file_bytes = ctx.pick(FILE_BYTES, FILE_BYTES, 1_000_000)
    max_flows = ctx.pick(MAX_FLOWS_FULL, MAX_FLOWS_QUICK, 8)
    _setup_text(ctx, file_bytes, max_flows, len(seeds), len(search_seeds))

    # 1. the RFC 7928 search with every scheme: drop-tail's result is Table 2 (the levels);
    #    the others' is Fig. 16-17 (flows served). One lockstep search keeps the pool busy.
    keys = [(sc, s) for sc in SCENARIOS for s in SCHEMES]
    served, losses = search_counts(
        {k: talau_scenario(*k, 1, file_bytes) for k in keys}, levels=RFC7928_LEVELS, seeds=search_seeds,
        max_flows=max_flows, run=context_runner(ctx, "RFC 7928 search"),
        with_count={k: with_count_for(*k, file_bytes) for k in keys})
    levels = {sc: served[(sc, "droptail")] for sc in SCENARIOS}
    _table2(ctx, levels, losses, max_flows)

    # 2. every scheme at each level's flow count
    specs = [Spec(_seeded(talau_scenario(sc, scheme, n, file_bytes), seed),
                  {"sc": sc, "level": lv, "scheme": scheme, "flows": n, "seed": seed})
             for sc in SCENARIOS for lv, n in levels[sc].items() if n is not None
             for scheme in SCHEMES for seed in seeds]
    runs = ctx.run(specs, "schemes at each level")
    stats: Stats = {(sc, lv, s): metric_stats(runs, sc, lv, s)
                    for sc in SCENARIOS for lv, n in levels[sc].items() if n is not None for s in SCHEMES}
    for sc in SCENARIOS:
        _metric_table(ctx, sc, levels[sc], stats)
        plots.metric_figures(ctx, sc, stats, levels[sc], FIGURE_NO[sc], METRICS, SCHEMES, LABEL)
    _table6(ctx, levels[2], stats)
    _fig10(ctx, levels[1], file_bytes)
    _served_table(ctx, served, max_flows)
    plots.served_figures(ctx, served, max_flows, SCHEMES, LABEL)

    _claims(ctx, runs, levels, stats, served, max_flows)
    _unstated_text(ctx, max_flows)


def _seeded(doc: dict[str, Any], seed: int) -> dict[str, Any]:
    doc["seed"] = seed
    return doc


# --------------------------------------------------------------------------- tables


def _table2(ctx: Context, levels: dict[int, dict[str, int | None]], losses: dict[Any, dict[int, float]],
            max_flows: int) -> None:
    rows = [TableRow({"scenario": sc, "level": f"{lv} ({RFC7928_LEVELS[lv]} %)"}, "flows",
                     Stat.one(n if n is not None else math.nan), PAPER_TABLE2[sc][lv])
            for sc in SCENARIOS for lv, n in levels[sc].items()]
    curve = "; ".join(
        f"scenario {sc}: " + ", ".join(f"{n} → {fmt(loss, 2)} %" for n, loss in losses[(sc, 'droptail')].items())
        for sc in SCENARIOS)
    ctx.table("table2-levels", "Table 2: flows per congestion level (RFC 7928 search with drop-tail)", rows,
              note="The smallest flow count whose mean drop-tail loss over the seeds reaches the level "
                   f"(searched up to {max_flows}). Drop-tail loss per count tried (mean over seeds) — {curve}. "
                   "The paper's counts belong to its ns-3 setup; only the procedure carries over.")


def _metric_table(ctx: Context, sc: int, levels: dict[str, int | None], stats: Stats) -> None:
    metrics = METRICS_S1 if sc == 1 else METRICS_S2
    rows = [TableRow({"level": f"{lv} ({n} flows)", "scheme": LABEL[s]}, METRICS[m][0], stats[(sc, lv, s)][m],
                     None, METRICS[m][1])
            for lv, n in levels.items() if n is not None for s in SCHEMES for m in metrics]
    figs = ", ".join(str(FIGURE_NO[sc][m]) for m in metrics if m in FIGURE_NO[sc])
    ctx.table(f"scenario{sc}-metrics", f"Scenario {sc}: the metrics of Fig. {figs} (mean ± 95 % CI over seeds)",
              rows, note="The paper plots these without giving values; its statements are checked in the claims."
              + (" Mean loss ratio: the bottleneck's drops / arrivals, TCP and UDP packets." if sc == 2 else ""))


def _table6(ctx: Context, levels: dict[str, int | None], stats: Stats) -> None:
    rows = [TableRow({"level": lv, "scheme": LABEL[s], "traffic": t}, "mean loss ratio",
                     stats[(2, lv, s)][m], PAPER_TABLE6[s][lv][i], "%")
            for lv, n in levels.items() if n is not None for s in SCHEMES
            for i, (t, m) in enumerate((("TCP", "tcp_loss"), ("UDP", "udp_loss")))]
    ctx.table("table6-loss", "Table 6: mean loss ratio of TCP and UDP, scenario 2", rows,
              note="TCP: Eq. 13 over the TCP flows (each flow's loss weighted by what it sent); UDP: the "
                   "CBR flow's datagrams lost / sent.")


def _served_table(ctx: Context, served: dict[Any, dict[str, int | None]], max_flows: int) -> None:
    rows = [TableRow({"scenario": sc, "level": lv, "scheme": LABEL[s]}, "flows served",
                     Stat.one(_served_value(served[(sc, s)][lv], max_flows)), None)
            for sc in SCENARIOS for lv in LEVELS for s in SCHEMES]
    gains = served_gains(served, max_flows)
    rows += [TableRow({"scenario": "both", "level": "mean", "scheme": f"EWT vs {k}"}, "more flows",
                      Stat.one(gains[k]), PAPER_SERVED_GAIN[k], "%") for k in PAPER_SERVED_GAIN]
    ctx.table("served", "Fig. 16-17: flows needed to reach each RFC 7928 level, per scheme", rows,
              note=f"The smallest count whose mean loss reaches the level; {max_flows + 1} stands for "
                   f"'not reached with {max_flows} flows' (the search's cap), a lower bound.")


def _served_value(n: int | None, max_flows: int) -> float:
    return float(max_flows + 1 if n is None else n)


def served_gains(served: dict[Any, dict[str, int | None]], max_flows: int) -> dict[str, float]:
    """EWT's flows served vs the best other scheme and vs drop-tail: the mean over scenarios
    and levels of (EWT − other) / other, in % (a capped count counts as max_flows + 1)."""
    out: dict[str, list[float]] = {"best competitor": [], "drop-tail": []}
    for sc in SCENARIOS:
        for lv in LEVELS:
            e = _served_value(served[(sc, "ewt")][lv], max_flows)
            best = max(_served_value(served[(sc, s)][lv], max_flows) for s in SCHEMES if s != "ewt")
            dt = _served_value(served[(sc, "droptail")][lv], max_flows)
            out["best competitor"].append(100 * (e - best) / best)
            out["drop-tail"].append(100 * (e - dt) / dt)
    return {k: sum(v) / len(v) for k, v in out.items()}


# --------------------------------------------------------------------------- Fig. 10


def _fig10(ctx: Context, levels: dict[str, int | None], file_bytes: int) -> None:
    """The window of one flow (min(cwnd, rwnd), the sender's limit) with RED and EWT, scenario 1
    at its medium level (the paper does not say which level its Fig. 10 shows), seed 1."""
    n = levels.get("medium") or next((v for v in levels.values() if v), 2)
    specs = []
    for scheme in ("red", "ewt"):
        doc = _seeded(talau_scenario(1, scheme, n, file_bytes), 1)
        doc["metrics"] = {"interval": "100ms"}
        specs.append(Spec(doc, {"scheme": scheme, "figure": "10"}))
    runs = ctx.run(specs, "Fig. 10 window")
    plots.fig10(ctx, runs, n, LABEL)


# --------------------------------------------------------------------------- claims


def _levels_present(levels: dict[int, dict[str, int | None]]) -> list[tuple[int, str]]:
    return [(sc, lv) for sc in SCENARIOS for lv, n in levels[sc].items() if n is not None]


def _tied_or_best(stats: Stats, key: tuple[int, str], metric: str, higher_better: bool) -> tuple[bool, str]:
    """Whether EWT is the best scheme for ``metric`` or tied with the best other (95 % CIs overlap)."""
    sign = 1 if higher_better else -1
    other = max((s for s in SCHEMES if s != "ewt"), key=lambda s: sign * stats[(*key, s)][metric].mean)
    e, b = stats[(*key, "ewt")][metric], stats[(*key, other)][metric]
    ok = sign * (e.mean - b.mean) >= 0 or cis_overlap([e, b])
    return ok, f"EWT {e.fmt()} vs best other {LABEL[other]} {b.fmt()}"


def _claims(ctx: Context, runs: list[RunResult], levels: dict[int, dict[str, int | None]], stats: Stats,
            served: dict[Any, dict[str, int | None]], max_flows: int) -> None:
    present = _levels_present(levels)
    where = {k: f"s{k[0]} {k[1]}" for k in present}
    # -- no loss
    ewt_runs = [r for r in by_label(runs, scheme="ewt") if (r.labels["sc"], r.labels["level"]) in present]
    drops = {k: sum(r.bottleneck["drops"] for r in by_label(ewt_runs, sc=k[0], level=k[1])) for k in present}
    lossy = [f"{where[k]}: {d} drops, {stats[(*k, 'ewt')]['loss'].fmt()} %" for k, d in drops.items() if d > NO_LOSS_DROPS]
    ctx.claim(
        "ewt-no-loss", "EWT loses no segment at any congestion level, in both scenarios (with UDP too).",
        paper="mean loss ratio 0 at every level (Fig. 9, Table 6)",
        ours="; ".join(f"{where[k]}: {d} drops" for k, d in drops.items()),
        holds=not lossy,
        why=(f"Counted: the bottleneck drops of every EWT run (a claim of zero tolerates {NO_LOSS_DROPS}). "
             + ("None lost a packet: EWT shrinks the advertised windows as the queue fills, so the N "
                "windows settle where they carry the pipe plus the queue without overflowing it."
                if not lossy else
                "EWT lost packets at " + "; ".join(lossy) + ". "
                + ("Scenario 1 (no UDP, access as fast as the bottleneck) loses nothing at its levels: EWT "
                   "itself keeps the queue below the memory there. " if not any(k[0] == 1 for k, d in drops.items()
                                                                               if d > NO_LOSS_DROPS) else "")
                + "Where EWT loses, the 13.35 Mbit/s UDP flow is present (scenario 2): EWT throttles only TCP. "
                "A window-limited sender whose advertised window re-opens sends the difference at once, at "
                "the 100 Mbit/s access rate (several flows together), so the queue nears the memory within "
                "EWT's ~2 ms feedback loop; the UDP packets that arrive then overflow it (the paper allows "
                "that 'if there is excessive UDP traffic, losses will occur'; its ns-3 runs saw none)."))
    )
    # -- goodput and latency best or tied
    checks = {k: (_tied_or_best(stats, k, "goodput", True), _tied_or_best(stats, k, "latency", False))
              for k in present}
    bad = [f"{where[k]}: {what} ({txt})" for k, pair in checks.items()
           for what, (ok, txt) in zip(("goodput", "latency"), pair) if not ok]
    ctx.claim(
        "ewt-best-goodput-latency",
        "EWT's goodput and file transfer latency are the best of the six schemes, or tied with the best.",
        paper="EWT had the highest goodput and the shortest latency at every level (Fig. 6, 7, 13, 14)",
        ours="; ".join(f"{where[k]}: goodput {c[0][1]}, latency {c[1][1]}" for k, c in checks.items()),
        holds=not bad,
        why="Tied = the 95 % confidence intervals overlap. "
            + ("EWT avoids losses and their recovery, so its transfers are not slower than any other scheme's."
               if not bad else "Not best or tied at " + "; ".join(bad) + ". With few flows every "
               "scheme keeps the link busy until the work is done, so the mean latency differs only by "
               "the order in which transfers end; unfair schemes finish some transfers early.")
    )
    # -- drop-tail least fair
    fair = {k: {s: stats[(*k, s)]["fairness"].mean for s in SCHEMES} for k in present}
    least = {k: min(SCHEMES, key=lambda s: v[s]) for k, v in fair.items()}
    ctx.claim(
        "droptail-least-fair", "Drop-tail is the least fair scheme (Jain's index of goodput).",
        paper="drop-tail the most unfair method (Fig. 8, 15)",
        ours="; ".join(f"{where[k]}: least fair {LABEL[least[k]]} ({fmt(fair[k][least[k]])}), drop-tail "
                       f"{fmt(fair[k]['droptail'])}" for k in present),
        holds=all(s == "droptail" for s in least.values()),
        why="The lowest mean Jain index over seeds, per scenario and level, TCP flows only. "
            + ("Drop-tail's synchronised overflow losses hit flows unequally." if all(
                s == "droptail" for s in least.values()) else
               "Less fair than drop-tail at " + ", ".join(f"{where[k]} ({LABEL[least[k]]})" for k in present
                                                        if least[k] != "droptail")
               + f". Our levels have few flows ({_count_range(levels)} against the paper's 8-31): a handful of "
               "early random drops (RED/ARED) lands on one or two flows and slows them while the others run "
               "on, whereas drop-tail's overflow bursts hit every flow at once.")
    )
    # -- efficiency kept
    eff = {k: stats[(*k, "ewt")]["tcp_eff"] for k in present}
    udp = {k: stats[(*k, "ewt")]["udp_eff"] for k in present if k[0] == 2}
    low = [f"{where[k]} TCP {v.fmt()} %" for k, v in eff.items() if v.mean < EFFICIENCY_KEPT_PCT] + \
          [f"{where[k]} UDP {v.fmt()} %" for k, v in udp.items() if v.mean < EFFICIENCY_KEPT_PCT]
    ctx.claim(
        "ewt-keeps-efficiency", "With EWT, TCP efficiency and (scenario 2) UDP efficiency stay at about 100 %.",
        paper="EWT kept TCP efficient at every level (Fig. 5, 11) and UDP efficient (Fig. 12)",
        ours="; ".join([f"{where[k]} TCP {v.fmt()} %" for k, v in eff.items()]
                       + [f"{where[k]} UDP {v.fmt()} %" for k, v in udp.items()]),
        holds=not low,
        why=f"Kept = mean efficiency ≥ {EFFICIENCY_KEPT_PCT} %. TCP efficiency = bytes not retransmitted / "
            "bytes sent; UDP efficiency = datagrams delivered / sent. "
            + ("EWT causes almost no loss, so there is almost nothing to retransmit." if not low else
               "Below it at " + "; ".join(low) + ": the losses of the ewt-no-loss claim cost retransmissions.")
    )
    # -- flows served
    served_v = {(sc, lv): {s: _served_value(served[(sc, s)][lv], max_flows) for s in SCHEMES}
                for sc in SCENARIOS for lv in LEVELS}
    beaten = [f"s{sc} {lv}: {LABEL[s]} {_cap(v[s], max_flows)} > EWT {_cap(v['ewt'], max_flows)}"
              for (sc, lv), v in served_v.items() for s in SCHEMES if v[s] > v["ewt"]]
    gains = served_gains(served, max_flows)
    ctx.claim(
        "ewt-serves-most", "EWT serves the most flows at every congestion level (RFC 7928 search per scheme).",
        paper="EWT reached the greatest number of flows at each level, on average 49.3 % more than the best "
              "competitor and 75.8 % more than drop-tail (Fig. 16, 17)",
        ours="; ".join(f"s{sc} {lv}: EWT {_cap(v['ewt'], max_flows)}, best other "
                       f"{_cap(max(x for s, x in v.items() if s != 'ewt'), max_flows)}"
                       for (sc, lv), v in served_v.items())
             + f"; mean gain {fmt(gains['best competitor'])} % vs the best competitor, {fmt(gains['drop-tail'])} % vs drop-tail",
        holds=not beaten,
        why=f"Flows served = the smallest count whose mean loss reaches the level (searched up to {max_flows}; "
            "ties, including two schemes that never reach it, count as EWT serving the most). "
            + ("EWT needs more flows than every other scheme to lose as much." if not beaten else
               "Another scheme serves more at " + "; ".join(beaten) + ". " + _served_why(served, max_flows))
    )


def _served_why(served: dict[Any, dict[str, int | None]], max_flows: int) -> str:
    """Why EWT loses at fewer flows in bloatlab, with its fixed point at its own mild count."""
    n = served[(1, "ewt")]["mild"] or max_flows
    u = ewt_fixed_point_kb(1, n)
    return (f"EWT settles where N·W_r·(B − U)/B = pipe + U: with W_r = 131 kB and {n} flows in scenario 1 "
            f"that is U ≈ {u:.0f} kB of the 97 kB, so the memory left for bursts shrinks as flows are added, "
            "and a window that re-opens lets its sender send the difference at once (several flows together); "
            "losses come back long before §5.6's bound N·MSS > memory (≈ 64 flows). EWA (α·log2 of the free "
            "buffer, the same window for every flow) and AWM (swnd shared among the N flows it is told of) "
            "impose windows that do not grow with W_r, so they keep more memory free and serve more flows "
            "in bloatlab; their parameters are bloatlab's (the originals were not available, "
            "docs/gateway.md), so their ranking may differ from the paper's ns-3 runs.")


def _count_range(levels: dict[int, dict[str, int | None]]) -> str:
    ns = [n for sc in SCENARIOS for n in levels[sc].values() if n is not None]
    return f"{min(ns)}-{max(ns)} flows" if ns else "no flows"


def _cap(v: float, max_flows: int) -> str:
    return f"≥{max_flows + 1}" if v > max_flows else f"{v:.0f}"


# --------------------------------------------------------------------------- text


def _setup_text(ctx: Context, file_bytes: int, max_flows: int, n_seeds: int, n_search: int) -> None:
    mode = ("" if not ctx.quick else
            f" Quick mode: {n_seeds} seed(s) per configuration and the flows-served search capped at "
            f"{max_flows} flows" + (f", {file_bytes // 1000} kB files" if file_bytes != FILE_BYTES else "") + ".")
    ctx.text(
        "Dumbbell (Fig. 4): one sender per flow behind router R1, one receiver per flow behind R2. Each "
        f"TCP source starts at a uniformly random time in [1 s, 8 s] and sends a {file_bytes / 1e6:g} MB "
        "file; a run ends when every transfer has completed.\n\n"
        "| parameter | paper | bloatlab |\n|---|---|---|\n"
        f"| memory size (Table 3) | 97 kB | bottleneck queue limit `{MEMORY}` |\n"
        "| RED min_th / max_th / q_w / max_p | memory/12, memory/4, 0.002, 0.02 | the same (bloatlab's defaults for a byte limit) |\n"
        f"| S_t (EWT) | 29 kB | `{EWT_START}` |\n"
        f"| TCP segment size | 1458 B | MSS `{MSS}` (1510 B on the wire) |\n"
        "| TCP | CUBIC | `cubic`, SACK, delayed ACKs every 2 segments |\n"
        "| scenario 1 links (Table 4) | 4 Mb, RTT 5 ms / 360 ms / 5 ms | 4 Mbit/s; one-way delays 2.5 ms, 180 ms, 2.5 ms |\n"
        "| scenario 2 links (Table 5) | 100 Mb / 45 Mb / 100 Mb, RTT 2 / 80 / 2 ms | one-way delays 1 ms, 40 ms, 1 ms |\n"
        "| scenario 2 UDP | 13.35 Mbit/s, 1400-byte segments | CBR 13.35 Mbit/s on the wire, 1400 B payload |\n"
        f"| seeds | 30, 95 % CI | {n_seeds} (the RFC 7928 searches: {n_search}) |\n\n"
        "Schemes: drop-tail, RED, ARED (queue disciplines with the 97 kB limit), EWA, AWM and EWT (ACK "
        "rewriters at R1 over a 97 kB drop-tail queue). The flow counts of the three congestion levels are "
        "searched in bloatlab with drop-tail (Table 2), and the same search with each scheme gives Fig. 16-17."
        + mode,
        heading="Setup",
    )


def _unstated_text(ctx: Context, max_flows: int) -> None:
    ctx.text(
        f"- **Link RTTs** (Tables 4, 5) are read as twice the link's one-way delay, as in docs/gateway.md.\n"
        f"- **Receive buffer** `{RCVBUF}`: ns-3's default, which the paper's senders had; it matters because "
        "EWT scales the advertised window.\n"
        "- **File size**: the paper's \"5 Mb file\" is read as 5 MB (5·10⁶ bytes).\n"
        "- **Congestion levels** are re-derived in bloatlab with the paper's procedure (the loss of a "
        "drop-tail run reaching 0.1 / 0.5 / 1 %), on the mean loss over the seeds. The paper incremented the "
        "count one by one; we double it, then bisect — the same answer when loss grows with the count, and "
        "far fewer runs. Loss is the bottleneck's drops / arrivals (in scenario 2 the UDP packets count). "
        "When a level's count equals another's, the same runs serve both.\n"
        "- **Flows served** (Fig. 16-17): the same search with each scheme in place of drop-tail, up to "
        f"{max_flows} flows; the EWT bound of §5.6 (N·MSS > memory, ≈ 64 flows) sets that cap. The searches "
        f"(levels and flows served) average over the first {SEARCH_SEEDS_FULL} seeds at most: the paper does "
        "not say how many it used, and the many-flow runs of the search are what costs most.\n"
        "- **UDP flow**: the paper gives no start or stop time. It starts at 0 s and sends for as long as the "
        f"TCP transfers would last at {TCP_SHARE:.0%} of the capacity it leaves (8 s + N·5 MB / "
        f"({TCP_SHARE} × 31.65 Mbit/s)), so that it overlaps the transfers without running long after them. "
        "Its 13.35 Mbit/s counts the IP/UDP headers (bloatlab's CBR rate is a wire rate).\n"
        "- **EWA and AWM** use bloatlab's defaults (docs/gateway.md: the original papers' values were not "
        "available); AWM is told the number of TCP flows.\n"
        "- **Metrics**: TCP efficiency, latency and goodput are means over a run's TCP flows; fairness is "
        "Jain's index over the TCP flows' goodputs; the UDP efficiency is delivered / sent datagrams (UDP "
        "never retransmits, so Eq. 11 alone would always give 100 %).\n"
        "- **Fig. 10** shows one flow at the medium level, seed 1 (the paper does not say which level).",
        heading="Parameters the paper does not state, and our choices",
    )


EXPERIMENT = Experiment(
    name="ewt",
    title="Early Window Tailoring (Talau, Fonseca & Wille 2019)",
    paper="M. Talau, M. Fonseca, E. C. G. Wille, Early Window Tailoring: A New Approach to Increase the "
          "Number of TCP Connections Served, Journal of Computer Networks and Communications, 2019",
    reproduce=reproduce,
    seeds_full=30,
    seeds_quick=2,
    summary="EWT, EWA, AWM, drop-tail, RED and ARED at the RFC 7928 mild/medium/heavy levels of a "
            "long-delay dumbbell (scenario 1) and one with UDP traffic (scenario 2), and how many flows each "
            "serves per level.",
    emulation_ccs=("cubic",),
)
