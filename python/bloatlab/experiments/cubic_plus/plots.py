"""The figures of the cubic-plus experiment (:mod:`bloatlab.experiments.cubic_plus`), drawn like
the paper's: grouped bars of mean throughput, completion time or loss, with 95 % CI error bars."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..framework import Context, Stat
from ..plotting import bar_panels, finish, pyplot

LABEL = {"cubic": "Cubic", "cubic+": "Cubic+", "vegas": "Vegas", "reno": "Reno", "sack": "SACK"}

COLORS = {"cubic": "tab:red", "cubic+": "tab:blue", "vegas": "tab:green", "reno": "tab:gray"}


def fig6(ctx: Context, data: dict[tuple[str, str, str], tuple[Stat, Stat]], partners: Sequence[str]) -> None:
    keys = sorted({k[:2] for k in data}, key=lambda k: (k[0], -_kb(k[1])))
    panels = [(f"scenario {sc}, {b}", {"the other flow": [data[(sc, b, p)][0] for p in partners],
                                       "Reno": [data[(sc, b, p)][1] for p in partners]}) for sc, b in keys]
    bar_panels(ctx, "fig6-with-reno", "Fig. 6: average throughput of one Reno flow and one Vegas, Cubic+ or "
               "Cubic flow sharing the bottleneck (both buffers of each scenario; mean and 95 % CI).",
               [f"{LABEL[p]}\n+ Reno" for p in partners], panels, "average throughput (Mbit/s)",
               colors={"the other flow": "tab:blue", "Reno": "tab:gray"})


def _beside(bgs: Sequence[str]) -> dict[str, str]:
    return {f"beside {LABEL[bg]}": COLORS[bg] for bg in bgs}


def fig7(ctx: Context, times: dict[tuple[str, str, str, str], Stat], bgs: Sequence[str],
         fgs: Sequence[str]) -> None:
    keys = sorted({k[:2] for k in times}, key=lambda k: (k[0], _kb(k[1])))
    panels = [(f"scenario {sc}, {b}", {f"beside {LABEL[bg]}": [times[(sc, b, bg, fg)] for fg in fgs] for bg in bgs})
              for sc, b in keys]
    bar_panels(ctx, "fig7-completion-time", "Fig. 7: completion time of the foreground Reno or SACK transfer "
               "started 15 s after a Cubic or Cubic+ background flow (mean and 95 % CI).",
               [LABEL[fg] for fg in fgs], panels, "completion time (s)", colors=_beside(bgs), panel_width=3.2)


def fig8(ctx: Context, losses: dict[tuple[str, str, str], Stat], bgs: Sequence[str], fgs: Sequence[str]) -> None:
    buffers = sorted({k[0] for k in losses}, key=_kb)
    panels = [(f"scenario I, {b}", {f"beside {LABEL[bg]}": [losses[(b, bg, fg)] for fg in fgs] for bg in bgs})
              for b in buffers]
    bar_panels(ctx, "fig8-foreground-loss", "Fig. 8: packet loss rate of the foreground transfer in scenario I "
               "(mean and 95 % CI).", [LABEL[fg] for fg in fgs], panels, "packet loss rate (%)",
               colors=_beside(bgs))


def fig9(ctx: Context, per_flow: dict[tuple[str, str], list[Stat]], variants: Sequence[str],
         buffers: Sequence[str]) -> None:
    panels = [(f"scenario II, {b}", {f"with {LABEL[v]}": per_flow[(b, v)] for v in variants}) for b in buffers]
    bar_panels(ctx, "fig9-friendliness", "Fig. 9: TCP-friendliness in scenario II: average throughput of two "
               "Cubic (or Cubic+) flows and two Reno flows (mean and 95 % CI).",
               ["1", "2", "3 (Reno)", "4 (Reno)"], panels, "average throughput (Mbit/s)",
               colors={f"with {LABEL[v]}": COLORS[v] for v in variants},
               xlabel="flow (1, 2: Cubic or Cubic+; 3, 4: Reno)", panel_width=4.2)


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
    ax.set_yscale("symlog", linthresh=10)
    finish(ax, "time (s)", "bottleneck queue (KB)", "Scenario I, 500 KB buffer, one flow (seed 1)")
    ctx.figure("table2-queue", fig, "Table 2, scenario I, 500 KB: bottleneck backlog over time for one Cubic, "
               "Cubic+ or Vegas flow (sampled every 0.5 s; log scale above 10 KB). Cubic fills the buffer "
               "and backs off only when it overflows; Cubic+ and Vegas keep a few packets queued.")
