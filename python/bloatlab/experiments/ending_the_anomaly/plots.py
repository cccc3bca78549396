"""The ending-the-anomaly experiment's figures."""

from __future__ import annotations

from ..framework import Context, Stat, ci_or_zero
from ..plotting import finish, pyplot
from .scenarios import LABEL, MODES, STATIONS


def plot_airtime(ctx: Context, test: str, share: dict[str, list[Stat]]) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    width = 0.8 / len(STATIONS)
    for j, st in enumerate(STATIONS):
        xs = [i + (j - 1) * width for i in range(len(MODES))]
        ax.bar(xs, [share[m][j].mean for m in MODES], width, yerr=[ci_or_zero(share[m][j]) for m in MODES],
               capsize=2, label=st)
    ax.set_xticks(range(len(MODES)), [LABEL[m] for m in MODES])
    finish(ax, "AP queueing", "airtime share", f"Airtime share per station ({test.upper()} downloads)")
    ctx.figure(f"airtime-{test}", fig, f"Airtime share of each station under each AP queueing, {test.upper()} test "
               "(mean and 95 % CI over seeds): under the FIFO the slow station holds most of the air.")


def plot_latency(ctx: Context, q: dict[str, Stat]) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.bar(range(len(MODES)), [q[m].mean for m in MODES], yerr=[ci_or_zero(q[m]) for m in MODES], capsize=3,
           label="probe to fast1")
    ax.set_xticks(range(len(MODES)), [LABEL[m] for m in MODES])
    ax.set_yscale("log")
    finish(ax, "AP queueing", "probe queueing delay (ms)", "Latency under load (TCP downloads to all stations)")
    ctx.figure("latency", fig, "Mean queueing delay of a sparse probe flow to a fast station beside TCP "
               "downloads to all three (one-way delay minus the 5 ms wire; log scale).")
