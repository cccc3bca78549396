"""Human-readable rendering of a run summary (the ``bloatlab run`` default output)."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .numbers import DASH, num, per_second, size


def flows_table(flows: list[dict[str, Any]]) -> Table:
    table = Table(box=box.SIMPLE_HEAVY, show_edge=False, pad_edge=False, collapse_padding=True)
    table.add_column("id", justify="right")
    table.add_column("group")
    table.add_column("cc")
    table.add_column("thput\nMbit/s", justify="right")
    table.add_column("goodput\nMbit/s", justify="right")
    table.add_column("loss\n%", justify="right")
    table.add_column("RTT mean\nms", justify="right")
    table.add_column("RTT p95\nms", justify="right")
    table.add_column("FCT\ns", justify="right")
    for f in flows:
        table.add_row(
            str(f.get("id", DASH)),
            str(f.get("group", DASH)),
            str(f.get("cc", DASH)),
            num(f.get("throughput_mbps"), ".3f"),
            num(f.get("goodput_mbps"), ".3f"),
            num(f.get("loss_pct"), ".2f"),
            num(f.get("rtt_mean_ms"), ".1f"),
            num(f.get("rtt_p95_ms"), ".1f"),
            num(f.get("fct_s"), ".3f"),
        )
    return table


def key_values(rows: list[tuple[str, str]]) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    for k, v in rows:
        grid.add_row(k, v)
    return grid


def render_summary(summary: dict[str, Any], console: Console) -> None:
    """Prints the per-flow table, the bottleneck block, fairness and engine speed."""
    title = Text.assemble(
        (str(summary.get("name", "scenario")), "bold"),
        f"   seed {summary.get('seed', DASH)}, {num(summary.get('duration_s'), 'g')} s simulated",
    )
    console.print(title)
    flows = summary.get("flows") or []
    console.print(flows_table(flows))

    b = summary.get("bottleneck") or {}
    random_losses = f", plus {b['random_losses']:,} random losses" if b.get("random_losses") else ""
    rows = [
        ("queue", f"{b.get('aqm', DASH)}, capacity {size(b.get('capacity_bytes'))}"),
        (
            "occupancy",
            f"mean {size(b.get('mean_bytes'))} ({num(b.get('buffer_usage_pct'), '.1f')} % of capacity)",
        ),
        (
            "sojourn",
            f"mean {num(b.get('mean_sojourn_ms'), '.1f')} ms, p95 {num(b.get('p95_sojourn_ms'), '.1f')} ms",
        ),
        ("drops", f"{num(b.get('drops'), ',')} ({num(b.get('drop_pct'), '.2f')} %)" + random_losses),
        ("utilization", f"{num(b.get('utilization_pct'), '.1f')} %"),
    ]
    console.print()
    console.print(Text("bottleneck", style="bold underline"))
    console.print(key_values(rows))

    fairness = summary.get("fairness") or {}
    e = summary.get("engine") or {}
    wall = e.get("wall_s")
    events = e.get("events")
    ev_rate = events / wall if isinstance(events, (int, float)) and isinstance(wall, (int,
                                                                                      float)) and wall > 0 else None
    console.print()
    console.print(
        key_values(
            [
                ("Jain index",
                 f"{num(fairness.get('jain_goodput'), '.4f')} "
                 f"(goodput, {len(flows)} flow{'' if len(flows) == 1 else 's'})"),
                (
                    "engine",
                    f"{num(wall, '.3f')} s wall, {num(events, ',')} events ({per_second(ev_rate)} events/s), "
                    f"{num(e.get('bottleneck_packets'), ',')} bottleneck packets "
                    f"({per_second(e.get('packets_per_wall_s'))} packets/s)",
                ),
            ]
        )
    )
