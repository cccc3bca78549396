"""``bloatlab compare``: the same scenario simulated and emulated, summary fields side by side
with ratios (emulated / simulated), and the time series overlaid."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..atomic import staged_dir
from ..outputs.numbers import floats
from ..result import Result
from ..scenario import ScenarioLike, resolve

#: Summary fields compared for each flow, and for the bottleneck.
FLOW_FIELDS = ("throughput_mbps", "goodput_mbps", "loss_pct", "rtt_mean_ms", "rtt_p95_ms", "retransmits", "fct_s")
BOTTLENECK_FIELDS = ("mean_bytes", "mean_sojourn_ms", "p95_sojourn_ms", "drops", "utilization_pct")


@dataclass
class Comparison:
    scenario: dict[str, Any]
    sim: Result
    emu: Result
    table: list[dict[str, Any]]


def _ratio(sim: Any, emu: Any) -> float | None:
    if not isinstance(sim, (int, float)) or not isinstance(emu, (int, float)) or sim == 0:
        return None
    return emu / sim


def table(sim: Mapping[str, Any], emu: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows ``{field, sim, emu, ratio}``: the total goodput, each flow's fields, the bottleneck's
    and Jain's index."""
    rows = []

    def add(field: str, a: Any, b: Any) -> None:
        rows.append({"field": field, "sim": a, "emu": b, "ratio": _ratio(a, b)})

    add("total.goodput_mbps", sum(f["goodput_mbps"] for f in sim["flows"]),
        sum(f["goodput_mbps"] for f in emu["flows"]))
    for fs, fe in zip(sim["flows"], emu["flows"], strict=True):
        for k in FLOW_FIELDS:
            if fs.get(k) is None and fe.get(k) is None:
                continue
            add(f"flows[{fs['id']}].{k}", fs.get(k), fe.get(k))
    for k in BOTTLENECK_FIELDS:
        add(f"bottleneck.{k}", sim["bottleneck"][k], emu["bottleneck"][k])
    add("fairness.jain_goodput", sim["fairness"]["jain_goodput"], emu["fairness"]["jain_goodput"])
    return rows


def compare(
    scenario: ScenarioLike,
    *,
    seed: int | None = None,
    set: Iterable[str] | Mapping[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> Comparison:
    """Simulates, then emulates, the resolved scenario (validated for emulation first, so
    nothing runs when the emulation would refuse it)."""
    from ..api import run_resolved
    from .runner import emulate, plan

    say = progress or (lambda _m: None)
    doc = resolve(scenario, seed=seed, set=set)
    plan(doc)
    say("simulating ...")
    sim = run_resolved(doc, series=True)
    say("emulating ...")
    emu = emulate(doc, progress=say)
    return Comparison(doc, sim, emu, table(sim.summary, emu.summary))


def figure(c: Comparison):
    """Queue backlog, smoothed RTT and cwnd over time: simulated (solid) and emulated (dashed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
    for run, style, label in ((c.sim, "-", "sim"), (c.emu, "--", "emu")):
        q = run.queues
        if len(q):
            fwd = q[q["link"] == "bottleneck"]
            axes[0].plot(fwd["t_s"], fwd["backlog_bytes"] / 1e3, style, label=label)
        ts = run.timeseries
        for flow, g in (ts.groupby("flow") if len(ts) else []):
            axes[1].plot(g["t_s"], g["srtt_ms"], style, label=f"{label} flow {flow}")
            axes[2].plot(g["t_s"], g["cwnd_bytes"] / 1e3, style, label=f"{label} flow {flow}")
    axes[0].set_ylabel("bottleneck backlog (KB)")
    axes[1].set_ylabel("smoothed RTT (ms)")
    axes[2].set_ylabel("cwnd (KB)")
    axes[2].set_xlabel("time (s)")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    fig.suptitle(f"{c.scenario.get('name', 'scenario')}: simulated vs emulated")
    fig.tight_layout()
    return fig


def write(c: Comparison, out: str | os.PathLike[str]) -> Path:
    """Writes compare.json, compare.png, sim/ and emu/ (each a run's output files) into ``out``;
    it appears whole or not at all when it did not exist."""
    target = Path(out)
    with staged_dir(target) as tmp:
        (tmp / "compare.json").write_text(json.dumps({"scenario": c.scenario, "rows": c.table}, indent=2) + "\n")
        c.sim.to_dir(tmp / "sim")
        c.emu.to_dir(tmp / "emu")
        fig = figure(c)
        fig.savefig(tmp / "compare.png", dpi=110)
        import matplotlib.pyplot as plt

        plt.close(fig)
    return target


def _fmt(x: Any) -> str:
    return floats(x, ".4g", missing="-")


def render(c: Comparison) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"{c.scenario.get('name', 'scenario')}: simulated vs emulated (ratio = emu / sim)")
    for col in ("field", "sim", "emu", "ratio"):
        t.add_column(col, justify="left" if col == "field" else "right")
    for r in c.table:
        t.add_row(r["field"], _fmt(r["sim"]), _fmt(r["emu"]), "-" if r["ratio"] is None else f"{r['ratio']:.3f}")
    Console().print(t)
