"""The figures of the ewt experiment (:mod:`bloatlab.experiments.ewt`), drawn like the paper's:
per congestion level, one bar per scheme with its 95 % CI (Fig. 5-9, 11-17), and one flow's
window (Fig. 10)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..framework import Context, RunResult, Stat
from ..plotting import grouped_bars, pyplot

COLORS = {"droptail": "tab:gray", "red": "tab:red", "ared": "tab:orange", "ewa": "tab:purple",
          "awm": "tab:green", "ewt": "tab:blue"}


def metric_figures(ctx: Context, sc: int, stats: Mapping[tuple[int, str, str], Mapping[str, Stat]],
                   levels: Mapping[str, int | None], figure_no: Mapping[str, int],
                   metrics: Mapping[str, tuple[str, str, Callable[[RunResult], Any]]], schemes: Sequence[str],
                   labels: Mapping[str, str]) -> None:
    """Fig. 5-9 (scenario 1) or 11-15 (scenario 2): one figure per metric."""
    plt = pyplot()
    present = [lv for lv, n in levels.items() if n is not None]
    groups = [f"{lv}\n({levels[lv]} flows)" for lv in present]
    for metric, no in figure_no.items():
        name, unit, _ = metrics[metric]
        fig, ax = plt.subplots(figsize=(7, 3.6))
        grouped_bars(ax, groups, {s: [stats[(sc, lv, s)][metric] for lv in present] for s in schemes}, COLORS,
                     labels, capsize=2)
        ax.set_ylabel(f"{name} ({unit})" if unit else name)
        ax.set_title(f"Scenario {sc}: {name}")
        if metric in ("tcp_eff", "udp_eff", "fairness"):
            lows = [stats[(sc, lv, s)][metric].mean for lv in present for s in schemes]
            lo = min((x for x in lows if not math.isnan(x)), default=0.0)
            top = 100.0 if metric != "fairness" else 1.0
            ax.set_ylim(max(0.0, lo - 0.1 * (top - lo) - 1e-3), top + 0.02 * top)
        ax.legend(fontsize=7, ncol=3)
        fig.tight_layout()
        ctx.figure(f"fig{no}-s{sc}-{metric.replace('_', '-')}", fig,
                   f"Fig. {no}: {name}, scenario {sc}, per congestion level and scheme (mean and 95 % CI over seeds).")


def served_figures(ctx: Context, served: Mapping[tuple[int, str], Mapping[str, int | None]], max_flows: int,
                   schemes: Sequence[str], labels: Mapping[str, str]) -> None:
    """Fig. 16, 17: the flows each scheme carries at each level; a capped search shows as a
    hatched bar at max_flows + 1."""
    plt = pyplot()
    for sc, no in ((1, 16), (2, 17)):
        levels = list(served[(sc, schemes[0])])
        fig, ax = plt.subplots(figsize=(7, 3.6))
        width = 0.8 / len(schemes)
        for j, s in enumerate(schemes):
            xs = [i - 0.4 + width * (j + 0.5) for i in range(len(levels))]
            vals = [served[(sc, s)][lv] for lv in levels]
            ys = [max_flows + 1 if v is None else v for v in vals]
            bars = ax.bar(xs, ys, width, label=labels[s], color=COLORS[s], edgecolor="black", linewidth=0.5)
            for b, v in zip(bars, vals):
                if v is None:
                    b.set_hatch("//")
        ax.axhline(max_flows, color="black", linestyle=":", linewidth=0.8)
        ax.set_xticks(range(len(levels)))
        ax.set_xticklabels(levels)
        ax.set_ylabel("number of flows")
        ax.set_title(f"Scenario {sc}: flows needed to reach each RFC 7928 level")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7, ncol=3)
        fig.tight_layout()
        ctx.figure(f"fig{no}-s{sc}-served", fig,
                   f"Fig. {no}: number of flows at which each scheme's mean loss reaches the mild (0.1 %), medium "
                   f"(0.5 %) and heavy (1 %) level, scenario {sc}; hatched: not reached with {max_flows} flows "
                   "(dotted line, the search's cap).")


def fig10(ctx: Context, runs: Sequence[RunResult], n: int, labels: Mapping[str, str]) -> None:
    """Fig. 10: min(cwnd, rwnd) of flow 0 over time, RED vs EWT."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for r in runs:
        scheme = r.labels["scheme"]
        ts = r.timeseries
        f0 = r.flows[0]
        end = f0["end_s"] if f0["end_s"] is not None else float(ts.t_s.max())
        ts = ts[(ts.flow == 0) & (ts.t_s >= f0["start_s"]) & (ts.t_s <= end)]  # while the transfer runs
        win = ts[["cwnd_bytes", "rwnd_bytes"]].min(axis=1) / 1000
        ax.plot(ts.t_s, win, label=labels[scheme], color=COLORS[scheme], linewidth=0.9)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("transmission window (kB)")
    ax.set_title(f"Scenario 1, {n} flows: window of flow 0 (seed 1)")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    ctx.figure("fig10-s1-window", fig, "Fig. 10: the effective transmission window min(W_r, cwnd) of one flow "
               f"with RED and with EWT, scenario 1, {n} flows (the medium level), seed 1.")
