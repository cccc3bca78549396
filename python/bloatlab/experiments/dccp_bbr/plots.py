"""The dccp-bbr experiment's figures, drawn from the runs' data."""

from __future__ import annotations

from ..framework import Context, RunResult, Stat, by_label, ci_or_zero
from ..plotting import finish, pyplot
from .scenarios import CCS, LABEL, _dccp


def _plot_fig6(ctx: Context, runs: list[RunResult]) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for cc, color in (("ccid2", "tab:red"), ("bbr-adaptive", "tab:blue")):
        r = by_label(runs, cc=cc)[0]
        fid = _dccp(r)["id"]
        ts = r.timeseries[r.timeseries.flow == fid]
        ax.plot(ts.t_s, ts.srtt_ms, color=color, label=LABEL[cc])
    finish(ax, "time (s)", "RTT (ms)", "DCCP connection RTT beside two Vegas flows (seed 1)")
    ctx.figure("fig6-delay", fig, "Fig. 6: smoothed RTT of the DCCP connection (CCID2 vs DCCP-BBR) "
               "while two TCP Vegas flows load the 100 Mbit/s link.")


def _plot_fig7(ctx: Context, losses: list[float], good: dict[str, list[Stat]]) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for cc, marker in zip(CCS, ("s", "o", "^")):
        ys = [s.mean for s in good[cc]]
        err = [ci_or_zero(s) for s in good[cc]]
        ax.errorbar(losses, ys, yerr=err, marker=marker, capsize=3, label=LABEL[cc])
    finish(ax, "link loss rate", "throughput (Mbit/s)", "Throughput against random loss (100 Mbit/s, 100 ms RTT)")
    ctx.figure("fig7-loss", fig, "Fig. 7: goodput of CCID2, BBR and DCCP-BBR alone against the bottleneck's "
               "random loss rate (mean and 95 % CI over seeds).")
