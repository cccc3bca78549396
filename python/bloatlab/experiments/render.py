"""Writing what an experiment recorded: tables (Markdown and CSV), claims.json and the
report (Markdown, and HTML rendered from the same Markdown)."""

from __future__ import annotations

import json
import math
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..atomic import write_bytes
from ..outputs.markdown import markdown_to_html
from ..outputs.numbers import sig
from .framework import Claim, Context, FigureItem, Table, Text, _finite, ratio, to_csv_text


def _cell(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v).replace("|", "\\|")


def table_markdown(t: Table) -> str:
    keys = t.columns()
    head = [*keys, "metric", "paper", "ours (mean ± 95 % CI)", "n", "ours / paper"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in t.rows:
        unit = f" {r.unit}" if r.unit else ""
        q = ratio(r.ours.mean, r.paper)
        cells = [_cell(r.keys.get(k)) for k in keys]
        cells += [r.metric + (f" ({r.unit})" if r.unit else ""),
                  "—" if r.paper is None else sig(r.paper) + unit,
                  r.ours.fmt() + (unit if not math.isnan(r.ours.mean) else ""),
                  str(r.ours.n), "—" if q is None else f"{q:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def table_csv(t: Table) -> str:
    keys = t.columns()
    header = [*keys, "metric", "unit", "paper", "ours_mean", "ours_ci95_half", "n", "ratio"]
    rows = []
    for r in t.rows:
        q = ratio(r.ours.mean, r.paper)
        rows.append([*(r.keys.get(k) for k in keys), r.metric, r.unit, r.paper,
                     _finite(r.ours.mean), _finite(r.ours.ci_half), r.ours.n,
                     None if q is None else round(q, 6)])
    return to_csv_text(header, rows)


def claims_markdown(claims: Sequence[Claim]) -> str:
    out = []
    for c in claims:
        mark = "✅ holds" if c.holds else "❌ does not hold"
        out.append(f"- **{c.id}** — {c.text}  \n  *Paper:* {c.paper}  \n  *Ours:* {c.ours}  \n"
                   f"  **{mark}.** {c.why}")
    return "\n".join(out)


def report_markdown(ctx: Context, meta: dict[str, Any]) -> str:
    e = ctx.experiment
    held = sum(c.holds for c in ctx.claims)
    parts = [f"# {e.title}", "", f"*{e.paper}*", ""]
    if e.summary:
        parts += [e.summary, ""]
    runs = f"{meta['simulations']} simulations, {meta['simulated_s']:.0f} s of simulated time"
    if meta.get("engine") == "emulate":
        runs = (f"engine: **emulation** (real Linux TCP, kernel {platform.release()}, through bloatlab's "
                f"bottleneck), {meta['simulations']} emulated runs")
    elif meta.get("engine") == "sim":
        runs = f"engine: **simulation** of the emulation plan's configurations, {runs}"
    parts += [
        f"Reproduced with bloatlab {meta['bloatlab']} — mode: **{meta['mode']}**, "
        f"{meta['seeds']} seed(s) per configuration, {runs}. "
        f"Claims: **{held} of {len(ctx.claims)} hold**.",
        "",
        "Numbers are means over seeds with the 95 % confidence interval (Student's t) where "
        "seeds vary; *ours / paper* is the ratio of our mean to the paper's value. The papers' "
        "numbers come from other simulators and testbeds: agreement is expected in direction "
        "and rough size, not in every digit.",
        "",
        "## Claims",
        "",
        claims_markdown(ctx.claims) if ctx.claims else "(none)",
        "",
    ]
    for item in ctx.items:
        if isinstance(item, Text):
            if item.heading:
                parts += [f"## {item.heading}", ""]
            parts += [item.markdown, ""]
        elif isinstance(item, Table):
            parts += [f"### {item.title}", "", table_markdown(item), ""]
            if item.note:
                parts += [item.note, ""]
            parts += [f"Files: [`tables/{item.name}.md`](tables/{item.name}.md), "
                      f"[`tables/{item.name}.csv`](tables/{item.name}.csv)", ""]
        elif isinstance(item, FigureItem):
            parts += [f"![{item.caption}](figures/{item.name}.png)", "",
                      f"*{item.caption}* ([SVG](figures/{item.name}.svg))", ""]
    return "\n".join(parts).rstrip() + "\n"


def write_outputs(ctx: Context, meta: dict[str, Any]) -> None:
    """tables/*.md|csv, claims.json, report.md, report.html (figures were saved as drawn)."""
    tdir = ctx.out / "tables"
    for item in ctx.items:
        if isinstance(item, Table):
            tdir.mkdir(parents=True, exist_ok=True)
            md = f"# {item.title}\n\n{table_markdown(item)}\n" + (f"\n{item.note}\n" if item.note else "")
            write_bytes(tdir / f"{item.name}.md", md.encode())
            write_bytes(tdir / f"{item.name}.csv", table_csv(item).encode())
    write_claims(ctx.out / "claims.json", ctx.claims)
    md = report_markdown(ctx, meta)
    write_bytes(ctx.out / "report.md", md.encode())
    write_bytes(ctx.out / "report.html", markdown_to_html(md, ctx.experiment.title).encode())


def write_claims(path: Path, claims: Sequence[Claim]) -> None:
    text = json.dumps([c.to_json() for c in claims], indent=2, ensure_ascii=False) + "\n"
    write_bytes(path, text.encode())


def index_markdown(entries: Sequence[tuple[str, str, Sequence[Claim]]]) -> str:
    """The top page of ``reproduce all``: one line per experiment, then every claim."""
    lines = ["# bloatlab: the six papers reproduced", "",
             "| experiment | claims holding | report |", "|---|---|---|"]
    for name, title, claims in entries:
        lines.append(f"| {title} | {sum(c.holds for c in claims)} / {len(claims)} | "
                     f"[{name}/report.md]({name}/report.md) |")
    lines.append("")
    for _name, title, claims in entries:
        lines += [f"## {title}", "", claims_markdown(claims), ""]
    return "\n".join(lines)
