"""The figures of the cubic-plus experiment (:mod:`.cubic_plus`), drawn like the paper's:
grouped bars of mean throughput, completion time or loss, with 95 % CI error bars."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .framework import Context, Stat
from .plotting import grouped_bars, pyplot

LABEL = {"cubic": "Cubic", "cubic+": "Cubic+", "vegas": "Vegas", "reno": "Reno", "sack": "SACK"}
COLORS = {"cubic": "tab:red", "cubic+": "tab:blue", "vegas": "tab:green", "reno": "tab:gray"}


def fig6(ctx: Context, data: dict[tuple[str, str, str], tuple[Stat, Stat]], partners: Sequence[str]) -> None:
    plt = pyplot()
    keys = sorted({k[:2] for k in data}, key=lambda k: (k[0], -_kb(k[1])))
    fig, axes = plt.subplots(1, len(keys), figsize=(3.4 * len(keys), 3.6))
    for ax, (sc, b) in zip(axes, keys):
        grouped_bars(ax, [f"{LABEL[p]}\n+ Reno" for p in partners],
             {"the other flow": [data[(sc, b, p)][0] for p in partners],
              "Reno": [data[(sc, b, p)][1] for p in partners]},
             {"the other flow": "tab:blue", "Reno": "tab:gray"})
        ax.set_title(f"scenario {sc}, {b}")
        ax.set_ylabel("average throughput (Mbit/s)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    ctx.figure("fig6-with-reno", fig, "Fig. 6: average throughput of one Reno flow and one Vegas, Cubic+ or "
               "Cubic flow sharing the bottleneck (both buffers of each scenario; mean and 95 % CI).")


def fig7(ctx: Context, times: dict[tuple[str, str, str, str], Stat], bgs: Sequence[str],
         fgs: Sequence[str]) -> None:
    plt = pyplot()
    keys = sorted({k[:2] for k in times}, key=lambda k: (k[0], _kb(k[1])))
    fig, axes = plt.subplots(1, len(keys), figsize=(3.2 * len(keys), 3.6))
    for ax, (sc, b) in zip(axes, keys):
        grouped_bars(ax, [LABEL[fg] for fg in fgs],
             {f"beside {LABEL[bg]}": [times[(sc, b, bg, fg)] for fg in fgs] for bg in bgs},
             {f"beside {LABEL[bg]}": COLORS[bg] for bg in bgs})
        ax.set_title(f"scenario {sc}, {b}")
        ax.set_ylabel("completion time (s)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    ctx.figure("fig7-completion-time", fig, "Fig. 7: completion time of the foreground Reno or SACK transfer "
               "started 15 s after a Cubic or Cubic+ background flow (mean and 95 % CI).")


def fig8(ctx: Context, losses: dict[tuple[str, str, str], Stat], bgs: Sequence[str], fgs: Sequence[str]) -> None:
    plt = pyplot()
    buffers = sorted({k[0] for k in losses}, key=_kb)
    fig, axes = plt.subplots(1, len(buffers), figsize=(3.4 * len(buffers), 3.6))
    for ax, b in zip(axes, buffers):
        grouped_bars(ax, [LABEL[fg] for fg in fgs],
             {f"beside {LABEL[bg]}": [losses[(b, bg, fg)] for fg in fgs] for bg in bgs},
             {f"beside {LABEL[bg]}": COLORS[bg] for bg in bgs})
        ax.set_title(f"scenario I, {b}")
        ax.set_ylabel("packet loss rate (%)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    ctx.figure("fig8-foreground-loss", fig, "Fig. 8: packet loss rate of the foreground transfer in scenario I "
               "(mean and 95 % CI).")


def fig9(ctx: Context, per_flow: dict[tuple[str, str], list[Stat]], variants: Sequence[str],
         buffers: Sequence[str]) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(buffers), figsize=(4.2 * len(buffers), 3.6))
    for ax, b in zip(axes, buffers):
        grouped_bars(ax, ["1", "2", "3 (Reno)", "4 (Reno)"],
             {f"with {LABEL[v]}": per_flow[(b, v)] for v in variants},
             {f"with {LABEL[v]}": COLORS[v] for v in variants})
        ax.set_title(f"scenario II, {b}")
        ax.set_xlabel("flow (1, 2: Cubic or Cubic+; 3, 4: Reno)")
        ax.set_ylabel("average throughput (Mbit/s)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    ctx.figure("fig9-friendliness", fig, "Fig. 9: TCP-friendliness in scenario II: average throughput of two "
               "Cubic (or Cubic+) flows and two Reno flows (mean and 95 % CI).")


def _kb(buffer: str) -> float:
    return float(buffer.removesuffix("KB"))


def queue_over_time(ctx: Context, queues: dict[str, Any]) -> None:
    """The bottleneck backlog of one run per protocol (``queues``: protocol -> queues DataFrame):
    the mechanism behind Table 2's averages."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for proto, q in queues.items():
        b = q[q.link == "bottleneck"]
        ax.plot(b.t_s, b.backlog_bytes / 1000, color=COLORS[proto], label=LABEL[proto], lw=1)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("bottleneck queue (KB)")
    ax.set_yscale("symlog", linthresh=10)
    ax.set_title("Scenario I, 500 KB buffer, one flow (seed 1)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    ctx.figure("table2-queue", fig, "Table 2, scenario I, 500 KB: bottleneck backlog over time for one Cubic, "
               "Cubic+ or Vegas flow (sampled every 0.5 s; log scale above 10 KB). Cubic fills the buffer "
               "and backs off only when it overflows; Cubic+ and Vegas keep a few packets queued.")
