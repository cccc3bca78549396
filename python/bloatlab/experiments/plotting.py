"""Plot helpers the experiments share: a headless pyplot and grouped bars with CIs."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from .framework import Stat


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg back end (figures are files; no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def ci_or_zero(s: Stat) -> float:
    """The CI half-width for an error bar; 0 where there is none (one seed)."""
    return 0.0 if math.isnan(s.ci_half) else s.ci_half


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
