"""The ABRWDA experiment's figures (Fig. 4-9 of the paper), drawn from the runs' data.

Kept apart from :mod:`.claims` so that the experiment reads as scenarios, numbers and
claims; every function here takes plain data (data frames, Stats) and a Context to save into.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..framework import Context, Stat
from ..plotting import grouped_bars, pyplot

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes


COLORS = {"newreno": "tab:red", "abrwda": "tab:green", "drwa": "tab:orange", "vegas": "tab:blue"}

#: smoothing of the throughput and bandwidth curves (the raw 10 ms samples are one or two packets)
SMOOTH_S = 0.5


def _smooth(t: pd.Series, y: pd.Series, window_s: float = SMOOTH_S) -> tuple[list[float], list[float]]:
    """Means over consecutive windows, stamped at each window's end."""
    k = ((t - 1e-9) / window_s).astype(int)
    g = y.groupby(k).mean()
    return [(i + 1) * window_s for i in g.index], list(g.values)


def plot_timeseries(ctx: Context, series: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]],
                    label: Mapping[str, str]) -> None:
    """Fig. 4 (NewReno: RTT, queue) and Fig. 5 (ABRWDA, DRWA, Vegas: throughput with the link's
    bandwidth, queue, RTT). ``series[scheme]`` = (bottleneck queue samples, flow samples)."""
    plt = pyplot()
    q, f = series["newreno"]
    fig, (ax_rtt, ax_q) = plt.subplots(2, 1, figsize=(7, 5.2), sharex=True)
    ax_rtt.plot(f.t_s, f.rtt_ms / 1e3, color=COLORS["newreno"], lw=0.8)
    ax_rtt.set_ylabel("RTT (s)")
    ax_rtt.set_title("(a) RTT")
    ax_q.plot(q.t_s, q.backlog_pkts, color=COLORS["newreno"], lw=0.8)
    ax_q.set_ylabel("queue length (packets)")
    ax_q.set_title("(b) queue length")
    ax_q.set_xlabel("time (s)")
    for ax in (ax_rtt, ax_q):
        ax.grid(alpha=0.3)
    ctx.figure("fig4-newreno", fig, "Fig. 4: RTT and base-station queue of plain NewReno over the Table I path "
               "(seed 1, 10 ms samples).")

    fig, (ax_t, ax_q, ax_r) = plt.subplots(3, 1, figsize=(7.5, 8), sharex=True)
    cap_q = series["abrwda"][0]
    # drawn last and dashed: the schemes' curves follow it closely and would hide it
    ax_t.plot(*_smooth(cap_q.t_s, cap_q.capacity_mbps), color="tab:pink", lw=1.4, ls="--", zorder=5,
              label="bandwidth")
    for s in ("abrwda", "drwa", "vegas"):
        q, f = series[s]
        ax_t.plot(*_smooth(q.t_s, q.tx_mbps), color=COLORS[s], lw=0.9, label=label[s])
        ax_q.plot(q.t_s, q.backlog_pkts, color=COLORS[s], lw=0.8, label=label[s])
        ax_r.plot(f.t_s, f.rtt_ms / 1e3, color=COLORS[s], lw=0.8, label=label[s])
    ax_t.set_ylabel("throughput (Mbit/s)")
    ax_t.set_title(f"(a) throughput ({SMOOTH_S:g} s means)")
    ax_q.set_ylabel("queue length (packets)")
    ax_q.set_title("(b) queue length")
    ax_r.set_ylabel("RTT (s)")
    ax_r.set_title("(c) RTT")
    ax_r.set_xlabel("time (s)")
    for ax in (ax_t, ax_q, ax_r):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper right")
    ctx.figure("fig5-abrwda-drwa-vegas", fig, "Fig. 5: throughput (with the radio link's bandwidth), queue length "
               "and RTT of ABRWDA, DRWA and Vegas in a 60 s run (seed 1; the same channel for all three).")


def _cdf(ax: Axes, values: Sequence[float], **kw: Any) -> None:
    xs = sorted(values)
    n = len(xs)
    if n:
        ax.step(xs, [(i + 1) / n for i in range(n)], where="post", **kw)


def plot_sensitivity(ctx: Context, runs: Sequence[Any], sweep: str, values: Sequence[float], name: str,
                     util_of: Callable[[Any], list[float]], rtt_of: Callable[[Any], Any]) -> None:
    """Fig. 6 / 7: CDFs of link utilisation and RTT, one curve per setting, all seeds pooled."""
    plt = pyplot()
    fig, (ax_u, ax_r) = plt.subplots(2, 1, figsize=(7, 6.4))
    symbol = "α" if sweep == "alpha" else "λ"
    cmap = plt.get_cmap("viridis")
    for i, v in enumerate(values):
        rs = [r for r in runs if r.labels.get("sweep") == sweep and r.labels.get("value") == v]
        util = [u for r in rs for u in util_of(r)]
        rtt = [x / 1e3 for r in rs for x in rtt_of(r)]
        color = cmap(i / max(1, len(values) - 1))
        _cdf(ax_u, util, color=color, label=f"{symbol} = {v:g}")
        _cdf(ax_r, rtt, color=color, label=f"{symbol} = {v:g}")
    ax_u.set_xlabel("link utilisation")
    ax_r.set_xlabel("RTT (s)")
    for ax in (ax_u, ax_r):
        ax.set_ylabel("CDF")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fixed = "λ = 1" if sweep == "alpha" else "α = 1/4"
    fig.suptitle(f"ABRWDA with different {symbol} values ({fixed})")
    fig.tight_layout()
    which = "Fig. 6" if sweep == "alpha" else "Fig. 7"
    ctx.figure(name, fig, f"{which}: CDF of link utilisation (per 1 s window) and of RTT (10 ms samples) for "
               f"ABRWDA with different {symbol} ({fixed}), all seeds pooled.")


def _by_size(ctx: Context, name: str, caption: str, values: Mapping[tuple[str, int, float], Stat],
             schemes: Sequence[str], delays: Sequence[float], rtt: Mapping[float, int],
             label: Mapping[str, str], ylabel: str, title: Callable[[int, int], str],
             style: Callable[[Axes], None]) -> None:
    """One panel per flow size (stacked), bars per scheme against the base RTT."""
    plt = pyplot()
    sizes = sorted({k[1] for k in values})
    fig, grid = plt.subplots(len(sizes), 1, figsize=(7.5, 3 * len(sizes)), squeeze=False)
    axes = grid[:, 0]
    for i, (ax, size) in enumerate(zip(axes, sizes)):
        grouped_bars(ax, [f"{rtt[d]} ms" for d in delays], {s: [values[(s, size, d)] for d in delays] for s in schemes},
                     COLORS, label, capsize=2)
        style(ax)
        ax.set_ylabel(ylabel)
        ax.set_title(title(i, size))
        ax.legend(fontsize=8)
    axes[-1].set_xlabel("base RTT (propagation delay)")
    fig.tight_layout()
    ctx.figure(name, fig, caption)


def _packets(size: int) -> str:
    return f"{size} packet{'s' if size > 1 else ''}"


def plot_afct(ctx: Context, afct: Mapping[tuple[str, int, float], Stat], delays: Sequence[float],
              rtt: Mapping[float, int], label: Mapping[str, str]) -> None:
    """Fig. 8: AFCT per scheme against the base RTT, one panel per flow size."""
    schemes = [s for s in label if any(k[0] == s for k in afct)]
    _by_size(ctx, "fig8-afct", "Fig. 8: average completion time of 1-, 30- and 200-packet flows that run one "
             "after another next to one long flow, by scheme and base RTT (mean and 95 % CI over seeds).",
             afct, schemes, delays, rtt, label, "AFCT (s)",
             lambda i, size: f"({'abc'[i]}) the AFCT of a {_packets(size)}-size flow",
             # a wide CI over few seeds must not suggest negative times
             lambda ax: ax.set_ylim(bottom=0))


def plot_improvement(ctx: Context, red: Mapping[tuple[str, int, float], Stat], delays: Sequence[float],
                     rtt: Mapping[float, int], label: Mapping[str, str]) -> None:
    """Fig. 9: AFCT reduction against NewReno (top 1, middle 30, bottom 200 packets)."""
    schemes = [s for s in label if s != "newreno" and any(k[0] == s for k in red)]
    _by_size(ctx, "fig9-improvement", "Fig. 9: AFCT reduction of ABRWDA, DRWA and Vegas against NewReno "
             "(1 − AFCT / AFCT of NewReno on the same seed), by flow size and base RTT.",
             red, schemes, delays, rtt, label, "AFCT reduction (%)",
             lambda i, size: f"{_packets(size)}-size flows", lambda ax: ax.axhline(0, color="black", lw=0.8))
