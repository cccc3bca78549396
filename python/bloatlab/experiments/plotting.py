"""Plot helpers the experiments share: a headless pyplot and grouped bars with CIs."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .framework import ci_or_zero

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from .framework import Context, Stat


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg back end (figures are files; no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def grouped_bars(ax: Axes, groups: Sequence[str], series: Mapping[str, Sequence[Stat]],
                 colors: Mapping[str, str] | None = None, labels: Mapping[str, str] | None = None,
                 capsize: float = 3) -> None:
    """One group of bars per ``groups`` entry, one bar per series (mean, 95 % CI as error bar)."""
    width = 0.8 / max(len(series), 1)
    for j, (name, stats) in enumerate(series.items()):
        xs = [i - 0.4 + width * (j + 0.5) for i in range(len(groups))]
        ys = [0.0 if math.isnan(s.mean) else s.mean for s in stats]
        ax.bar(xs, ys, width, yerr=[ci_or_zero(s) for s in stats], capsize=capsize,
               label=(labels or {}).get(name, name), color=(colors or {}).get(name),
               edgecolor="black", linewidth=0.5)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.grid(axis="y", alpha=0.3)


def bar_panels(ctx: Context, name: str, caption: str, groups: Sequence[str],
               panels: Sequence[tuple[str, Mapping[str, Sequence[Stat]]]], ylabel: str, *,
               colors: Mapping[str, str] | None = None, xlabel: str | None = None,
               panel_width: float = 3.4) -> None:
    """A row of grouped-bar panels (title, series) sharing groups and y label, saved as ``name``."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(panel_width * len(panels), 3.6), squeeze=False)
    for ax, (title, series) in zip(axes[0], panels):
        grouped_bars(ax, groups, series, colors)
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        if xlabel:
            ax.set_xlabel(xlabel)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    ctx.figure(name, fig, caption)


def finish(ax: Any, xlabel: str, ylabel: str, title: str) -> None:
    """Axis labels, title, legend and a light grid: the end of every line plot."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
