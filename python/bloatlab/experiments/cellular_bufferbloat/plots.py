"""Figures of the cellular-bufferbloat experiment (Alfredsson et al. 2013, Fig. 2-10),
drawn like the paper's: grouped bars with 95 % confidence intervals for the overviews,
time series of one run for the traces."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..framework import Context, RunResult, Stat, by_label, ci_or_zero
from ..plotting import finish, pyplot
from .scenarios import (
    CC_LABEL,
    CCS,
    N_BACKGROUND,
    TECH_LABEL,
    WebResults,
    mean_inflight_bytes,
    response_time,
    web_configs,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes


#: one colour per background CC (grey: no background), as the paper's bar groups
BG_COLOR = {None: "0.6", "cubic": "tab:red", "newreno": "tab:blue", "westwood+": "tab:green"}

ABBR = {"cubic": "C", "newreno": "N", "westwood+": "W"}

_FIG_NO = {"3.5g": 2, "3g": 8, "4g": 10}


def _grouped_bars(ax: Axes, configs: Sequence[tuple[str, str, str | None]],
                  stat: Callable[[str, str, str | None], Stat], ylabel: str) -> None:
    """The paper's overview layout: a bar per (short CC, background CC), grouped by the number of
    background flows, coloured by the background CC; tick labels read short/background."""
    x, pos, groups = 0.0, [], {}  # groups: run -> [first x, last x]
    for run, sh, bg in configs:
        if run not in groups:
            x += 0.8 if groups else 0.0
            groups[run] = [x, x]
        groups[run][1] = x
        s = stat(run, sh, bg)
        ax.bar(x, s.mean if math.isfinite(s.mean) else 0.0, yerr=ci_or_zero(s), color=BG_COLOR[bg], capsize=2,
               width=0.8, edgecolor="black", linewidth=0.4)
        pos.append((x, f"{ABBR[sh]}/{ABBR[bg] if bg else '-'}"))
        x += 1.0
    ax.set_xticks([p for p, _ in pos], [lbl for _, lbl in pos], rotation=90, fontsize=8)
    for run, (first, last) in groups.items():
        n = N_BACKGROUND[run]
        ax.annotate(f"{n} background\nflow{'s' if n != 1 else ''}", ((first + last) / 2, 1.0), ha="center",
                    xycoords=("data", "axes fraction"), xytext=(0, 4), textcoords="offset points", fontsize=8)
    ax.set_ylim(bottom=0)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    handles = [_patch(BG_COLOR[bg], CC_LABEL[bg] if bg else "none") for bg in (None, *CCS)]
    ax.legend(handles=handles, title="background CC", fontsize=8, title_fontsize=8, loc="upper left",
              bbox_to_anchor=(1.0, 1.0))


def _patch(color: str, label: str) -> Any:
    from matplotlib.patches import Patch

    return Patch(facecolor=color, edgecolor="black", linewidth=0.4, label=label)


def response_overview(ctx: Context, web: dict[str, WebResults], short_ccs: Sequence[str]) -> None:
    """Fig. 2 (3.5G), Fig. 8 (3G), Fig. 10 (4G): mean web response time, every configuration."""
    plt = pyplot()
    for tech in ("3.5g", "3g", "4g"):
        w = web[tech]
        fig, ax = plt.subplots(figsize=(8, 3.8))
        _grouped_bars(ax, web_configs(short_ccs), w.response, "web response time (s)")
        ax.set_title(f"Web response time (320 kB), {TECH_LABEL[tech]}", pad=30)
        no = _FIG_NO[tech]
        ctx.figure(f"fig{no}-response-{tech}", fig,
                   f"Fig. {no}: mean 320 kB web response time and 95 % CI over seeds, {TECH_LABEL[tech]}; "
                   "labels are short-flow CC / background CC (C CUBIC, N NewReno, W Westwood+).")


def short_rtt(ctx: Context, w: WebResults, short_ccs: Sequence[str]) -> None:
    """Fig. 6: mean RTT of the short flows, 3.5G."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 3.8))
    _grouped_bars(ax, web_configs(short_ccs),
                  lambda run, sh, bg: w.short_metric("rtt_mean_ms", run, sh, bg), "short-flow RTT (ms)")
    ax.set_title("Mean RTT of the short flows, 3.5G", pad=30)
    ctx.figure("fig6-short-rtt-3.5g", fig, "Fig. 6: mean RTT of the 320 kB short flows and 95 % CI, 3.5G.")


def short_loss(ctx: Context, w: WebResults, short_ccs: Sequence[str]) -> None:
    """Fig. 9: packet loss of the short flows beside five background flows, 3G."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    configs = [("D", sh, bg) for bg in CCS for sh in short_ccs]
    _grouped_bars(ax, configs, lambda run, sh, bg: w.short_metric("loss_pct", run, sh, bg),
                  "short-flow packet loss (%)")
    ax.set_title("Short-flow packet loss beside five background flows, 3G", pad=30)
    ctx.figure("fig9-short-loss-3g", fig, "Fig. 9: packet loss rate of the short flows (mean and 95 % CI) "
               "beside five background flows, 3G.")


def long_flows(ctx: Context, longs: list[RunResult]) -> None:
    """Fig. 3 (throughput and RTT of single long flows), Fig. 4 (RTT) and 5 (outstanding data)
    traces of one run of each CC, all on 3.5G."""
    plt = pyplot()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 3.2))
    for ax, value, label in ((a1, lambda r: r.flows[0]["goodput_mbps"], "throughput (Mbit/s)"),
                             (a2, lambda r: r.flows[0]["rtt_mean_ms"], "RTT (ms)")):
        stats = [Stat.of(value(r) for r in by_label(longs, tech="3.5g", cc=cc)) for cc in CCS]
        ax.bar([CC_LABEL[cc] for cc in CCS], [s.mean for s in stats], yerr=[ci_or_zero(s) for s in stats],
               color=[BG_COLOR[cc] for cc in CCS], capsize=3, edgecolor="black", linewidth=0.4)
        ax.set_ylabel(label)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle("Single long flows (run A), 3.5G")
    fig.tight_layout()
    ctx.figure("fig3-long-flows-3.5g", fig, "Fig. 3: mean throughput (goodput) and RTT of single long "
               "flows with 95 % CI over seeds, 3.5G (start-up left out).")
    _long_trace(ctx, longs, "rtt_ms", 1.0, "RTT (ms)", "fig4-long-rtt-3.5g",
                "Fig. 4: RTT of a single long CUBIC, NewReno and Westwood+ flow (seed 1), 3.5G.")
    _long_trace(ctx, longs, "inflight_bytes", 1e-3, "outstanding data (kB)", "fig5-long-window-3.5g",
                "Fig. 5: outstanding (in-flight) data of a single long flow of each CC (seed 1), 3.5G; "
                "the dashed line is its mean after start-up.")


def _long_trace(ctx: Context, longs: list[RunResult], column: str, scale: float, ylabel: str,
                name: str, caption: str) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(3, 1, figsize=(7, 6.4), sharex=True, sharey=True)
    for ax, cc in zip(axes, CCS):
        r = min(by_label(longs, tech="3.5g", cc=cc), key=lambda x: x.seed)
        ts = r.timeseries
        ax.plot(ts.t_s, ts[column] * scale, color=BG_COLOR[cc], linewidth=0.8)
        if column == "inflight_bytes":
            ax.axhline(mean_inflight_bytes(r) * scale, color="black", linestyle="--", linewidth=0.8)
        ax.set_title(f"{CC_LABEL[cc]} (goodput {r.flows[0]['goodput_mbps']:.1f} Mbit/s)", fontsize=9)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("time (s)")
    fig.tight_layout()
    ctx.figure(name, fig, caption)


def short_rtt_trace(ctx: Context, w: WebResults) -> None:
    """Fig. 7: the RTT of one CUBIC short flow alone and beside one Westwood+, NewReno and CUBIC
    background flow, over 3.5G (seed 1), from its SYN to its last byte."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for run, bg in (("B", None), ("C", "westwood+"), ("C", "newreno"), ("C", "cubic")):
        rs = [r for r in w.select(run, "cubic", bg) if r.seed == 1]
        if not rs:
            continue
        r = rs[0]
        short = r.group("short")[0]
        start = short["start_s"]
        end = response_time(r) or (r.summary["duration_s"] - start)
        ts = r.timeseries
        ts = ts[(ts.flow == short["id"]) & (ts.t_s >= start) & (ts.t_s <= start + end)]
        ts = ts[ts.rtt_ms > 0]
        label = "no background" if bg is None else f"1 × {CC_LABEL[bg]} background"
        ax.plot(ts.t_s - start, ts.rtt_ms, color=BG_COLOR[bg], label=f"{label} ({end:.2f} s)")
    finish(ax, "time since the request (s)", "RTT (ms)", "RTT of a CUBIC short flow, 3.5G (seed 1)")
    ctx.figure("fig7-short-rtt-trace-3.5g", fig, "Fig. 7: RTT samples of a CUBIC 320 kB short flow alone and "
               "beside one Westwood+, NewReno or CUBIC background flow, 3.5G (seed 1); the legend gives "
               "each response time.")
