"""Human-readable rendering of a run summary (the ``bloatlab run`` default output)."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .numbers import DASH, num, per_second, size


def jain(values: list[float]) -> float | None:
    """Jain's fairness index (Σx)² / (n·Σx²) (Jain, Chiu & Hawe 1984); None for no flow,
    1.0 when every value is 0."""
    xs = [float(x) for x in values if isinstance(x, (int, float)) and not isinstance(x, bool)]
    if not xs:
        return None
    sq = sum(x * x for x in xs)
    return 1.0 if sq == 0 else sum(xs) ** 2 / (len(xs) * sq)


def by_group(flows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The flows by ``group``, groups in order of their first flow."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for f in flows:
        groups.setdefault(str(f.get("group", DASH)), []).append(f)
    return groups


def flows_table(flows: list[dict[str, Any]], *, show_group: bool = False) -> Table:
    """One row per flow. One-way delay and jitter columns when there is a UDP flow (a UDP
    flow's RTT is — unless it is an echoed probe), a completion-time column when there is
    a TCP or DCCP flow, page counts and load times when there is a page flow, frame-delay
    percentiles, frame loss and freezes when there is a video flow."""
    udp = any(f.get("transport") == "udp" or f.get("owd_mean_ms") is not None for f in flows)
    sized = any(f.get("transport", "tcp") != "udp" for f in flows)
    table = Table(box=box.SIMPLE_HEAVY, show_edge=False, pad_edge=False, collapse_padding=True)
    table.add_column("id", justify="right")
    if show_group:
        table.add_column("group")
    table.add_column("cc")
    table.add_column("thput\nMbit/s", justify="right")
    table.add_column("goodput\nMbit/s", justify="right")
    table.add_column("loss\n%", justify="right")
    table.add_column("RTT mean\nms", justify="right")
    table.add_column("RTT p95\nms", justify="right")
    if udp:
        table.add_column("one-way\nmean ms", justify="right")
        table.add_column("one-way\np95 ms", justify="right")
        table.add_column("jitter\nms", justify="right")
    if sized:
        table.add_column("FCT\ns", justify="right")
    pages = any(f.get("pages") is not None for f in flows)
    if pages:
        table.add_column("pages", justify="right")
        table.add_column("load\nmean s", justify="right")
        table.add_column("load\np95 s", justify="right")
    video = any(f.get("frame_delay_p95_ms") is not None for f in flows)
    if video:
        table.add_column("frame\np50 ms", justify="right")
        table.add_column("frame\np95 ms", justify="right")
        table.add_column("frame\np99 ms", justify="right")
        table.add_column("frames\nlost %", justify="right")
        table.add_column("freezes", justify="right")
    for f in flows:
        cells = [
            str(f.get("id", DASH)),
            *([str(f.get("group", DASH))] if show_group else []),
            str(f.get("cc", DASH)) if f.get("frame_delay_p95_ms") is not None
            else "udp" if f.get("transport") == "udp" else str(f.get("cc", DASH)),
            num(f.get("throughput_mbps"), ".3f"),
            num(f.get("goodput_mbps"), ".3f"),
            num(f.get("loss_pct"), ".2f"),
            num(f.get("rtt_mean_ms"), ".1f"),
            num(f.get("rtt_p95_ms"), ".1f"),
        ]
        if udp:
            cells += [num(f.get("owd_mean_ms"), ".1f"), num(f.get("owd_p95_ms"), ".1f"),
                      num(f.get("jitter_ms"), ".2f")]
        if sized:
            cells.append(num(f.get("fct_s"), ".3f"))
        if pages:
            cells += [num(f.get("pages"), "d"), num(f.get("plt_mean_s"), ".3f"), num(f.get("plt_p95_s"), ".3f")]
        if video:
            cells += [num(f.get("frame_delay_p50_ms"), ".1f"), num(f.get("frame_delay_p95_ms"), ".1f"),
                      num(f.get("frame_delay_p99_ms"), ".1f"), num(f.get("frame_loss_pct"), ".2f"),
                      num(f.get("freezes"), "d")]
        table.add_row(*cells)
    return table


def group_heading(name: str, members: list[dict[str, Any]]) -> Text:
    """``download: 2 flows, goodput 18.954 Mbit/s, Jain 1.000`` — Jain's index within the
    group: fairness among flows that compete for the same thing (a download and a voice flow
    are not meant to get equal shares)."""
    total = sum(float(f.get("goodput_mbps") or 0.0) for f in members)
    text = Text.assemble((f"{name}", "bold"), f": {len(members)} flow{'' if len(members) == 1 else 's'}, "
                         f"goodput {total:.3f} Mbit/s")
    if len(members) > 1:
        text.append(f", Jain {num(jain([f.get('goodput_mbps') for f in members]), '.3f')}")
    return text


def key_values(rows: list[tuple[str, str]]) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    for k, v in rows:
        grid.add_row(k, v)
    return grid


def queues(summary: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(title, fields) of the forward bottleneck and of every link in the summary's ``links``
    (``[metrics] links``); a graph's first link, the bottleneck itself, once."""
    out = [("bottleneck", summary.get("bottleneck") or {})]
    for link in summary.get("links") or []:
        name = str(link.get("name", "link"))
        fields = {k: v for k, v in link.items() if k != "name"}
        if fields == out[0][1] or name == "bottleneck":
            continue
        out.append((f"queue {name}", fields))
    return out


def queue_rows(b: dict[str, Any]) -> list[tuple[str, str]]:
    random_losses = f", plus {b['random_losses']:,} random losses" if b.get("random_losses") else ""
    return [
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


def wifi_table(w: dict[str, Any]) -> Table:
    """The Wi-Fi BSS's stations (docs/wifi.md): rate, throughput each way, airtime share,
    aggregation, collisions and retries."""
    # station_queue is in the summary only when the stations run FQ-MAC (a FIFO run's is unchanged).
    sta_q = f", stations {w['station_queue']}" if w.get("station_queue") else ""
    table = Table(title=f"Wi-Fi ({w.get('ap_queue', DASH)}{sta_q}; "
                        f"Jain over airtime {num(w.get('jain_airtime'), '.3f')}, "
                        f"{num(w.get('collision_events'), ',')} collisions)", title_justify="left")
    for col in ("station", "PHY Mbit/s", "down Mbit/s", "up Mbit/s", "airtime %", "MPDUs/agg", "retries"):
        table.add_column(col, justify="left" if col == "station" else "right")
    for st in w.get("stations") or []:
        share = st.get("airtime_share")
        table.add_row(str(st.get("name", DASH)), num(st.get("phy_rate_mbps"), ".1f"), num(st.get("down_mbps"), ".2f"),
                      num(st.get("up_mbps"), ".2f"), num(100 * share if share is not None else None, ".1f"),
                      num(st.get("mean_aggregate_mpdus"), ".1f"), num(st.get("retries"), ","))
    return table


def _sectioned(groups: dict[str, list[dict[str, Any]]]) -> bool:
    """One table per group when there are several groups and one of them has several flows."""
    return len(groups) > 1 and any(len(m) > 1 for m in groups.values())


def render_summary(summary: dict[str, Any], console: Console) -> None:
    """Prints the per-flow table (by group, with each group's Jain index), the bottleneck
    and every other reported queue, fairness and engine speed."""
    title = Text.assemble(
        (str(summary.get("name", "scenario")), "bold"),
        f"   seed {summary.get('seed', DASH)}, {num(summary.get('duration_s'), 'g')} s simulated",
    )
    console.print(title)
    flows = summary.get("flows") or []
    groups = by_group(flows)
    if not _sectioned(groups):
        # no group to be fair within: one table
        console.print(flows_table(flows, show_group=len(groups) > 1))
    else:
        for name, members in groups.items():
            console.print()
            console.print(group_heading(name, members))
            console.print(flows_table(members))

    for name, q in queues(summary):
        console.print()
        console.print(Text(name, style="bold underline"))
        console.print(key_values(queue_rows(q)))

    if summary.get("wifi"):
        console.print()
        console.print(wifi_table(summary["wifi"]))

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
                 f"(goodput, all {len(flows)} flow{'' if len(flows) == 1 else 's'} together"
                 + ("; per group in the table)" if _sectioned(by_group(flows)) else ")")),
                (
                    "engine",
                    f"{num(wall, '.3f')} s wall, {num(events, ',')} events ({per_second(ev_rate)} events/s), "
                    f"{num(e.get('bottleneck_packets'), ',')} bottleneck packets "
                    f"({per_second(e.get('packets_per_wall_s'))} packets/s)",
                ),
            ]
        )
    )
