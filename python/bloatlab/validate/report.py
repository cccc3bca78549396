"""The outputs of ``bloatlab validate``: ``validate.json`` (every cell, matrix order),
``report.md`` and ``report.html`` (the cells worst first, the summary line, and ``heatmap.png``
— the error per metric per cell — embedded in the HTML). Each file is written atomically."""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..atomic import write_bytes
from ..outputs.numbers import floats
from .metrics import ALL_METRICS, METRICS, Metric, is_both_ways, score, target

FILES = ("validate.json", "report.md", "report.html", "heatmap.png")


def write_json(result: Mapping[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_bytes(out / "validate.json", (json.dumps(result, indent=2, allow_nan=False) + "\n").encode())


def worst_first(cells: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Failed cells, then by distance to the targets (largest first); ties in matrix order."""
    def key(ic: tuple[int, Mapping[str, Any]]) -> tuple[float, int]:
        i, c = ic
        s = float("inf") if c["verdict"] == "failed" else score(c.get("errors"), is_both_ways(c))
        return (-s, i)
    return [c for _, c in sorted(enumerate(cells), key=key)]


def shown(result: Mapping[str, Any]) -> list[Metric]:
    """The metrics some cell has (the ``up_*`` ones only in the both-ways slice)."""
    have = {k for c in result["cells"] for k in (c.get("sim") or {})}
    return [m for m in ALL_METRICS if m.key in have] if have else list(METRICS)


def _num(x: Any) -> str:
    return floats(x, ".3g" if isinstance(x, float) and abs(x) < 100 else ".0f", missing="–")


def _err(x: float | None) -> str:
    return "–" if x is None else f"{x * 100:+.1f} %"


def _cell_values(c: Mapping[str, Any], key: str) -> tuple[str, str, str]:
    sim = (c.get("sim") or {}).get(key)
    lin = (c.get("linux") or {}).get(key)
    e = (c.get("errors") or {}).get(key)
    return _num(sim), _num(lin), _err(e)


def _notes(c: Mapping[str, Any]) -> str:
    notes = []
    if c.get("error"):
        notes.append(c["error"])
    if c.get("outside"):
        notes.append("outside: " + ", ".join(c["outside"]))
    sp = c.get("spread")
    if sp and sp.get("error"):
        notes.append(f"spread not judged: {sp['error']}")
    elif sp:
        parts = [f"{k} sim mean {_num(sp['sim_mean'].get(k))} vs linux "
                 f"{', '.join(_num(v) for v in sp['linux'].get(k, []))} ({'within' if ok else 'outside'})"
                 for k, ok in sp["within"].items()]
        notes.append(f"seeds +{', +'.join(str(x) for x in sp['extra_seeds'])}: " + "; ".join(parts))
    dist = (c.get("emulation") or {}).get("disturbed")
    if dist:
        notes.append("disturbed: " + "; ".join(dist))
    return "; ".join(notes)


def markdown(result: Mapping[str, Any]) -> str:
    lines = [
        f"# bloatlab validate: simulator vs Linux ({result['matrix']} matrix"
        f"{', incomplete' if not result.get('complete') else ''})",
        "",
        f"{result['summary']}.",
        "",
        f"{len(result['cells'])} cells, {_link(result)}, {result['duration_s']:g} s per run "
        f"(metrics after {result['warmup_s']:g} s), seed {result['seed']}. Error = {result['error_definition']}; "
        "each cell shows sim / linux (error). Worst first.",
        "",
    ]
    reused = sorted({c["linux_from"] for c in result["cells"] if c.get("linux_from")})
    if reused:
        n = sum(1 for c in result["cells"] if c.get("linux_from"))
        lines[-1:-1] = [f"The Linux side of {n} cells is from an earlier run ({', '.join(reused)}), "
                        "not emulated again.", ""]
    if result.get("sim_set"):
        lines[-1:-1] = ["The simulator ran with " + ", ".join(f"`{x}`" for x in result["sim_set"])
                        + " (`--sim-set`; the emulator with the cells as they are).", ""]
    metrics = shown(result)
    head = ["cell", "verdict"] + [m.label for m in metrics] + ["notes"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for c in worst_first(result["cells"]):
        vals = []
        for m in metrics:
            s, lnx, e = _cell_values(c, m.key)
            vals.append(f"{s} / {lnx} ({e})" if c.get("linux") else s)
        lines.append("| " + " | ".join([f"`{c['id']}`", c["verdict"], *vals, _notes(c).replace("|", "/")]) + " |")
    return "\n".join(lines) + "\n"


def heatmap_png(result: Mapping[str, Any]) -> bytes | None:
    """Signed error per metric (columns) per cell (rows, worst first), colour clipped at ±100 %,
    each square labelled; None when no cell has errors (simulation only)."""
    cells = [c for c in worst_first(result["cells"]) if c.get("errors")]
    if not cells:
        return None
    cols = shown(result)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    data = np.array([[np.nan if c["errors"].get(m.key) is None else c["errors"][m.key] for m in cols]
                     for c in cells])
    fig, ax = plt.subplots(figsize=(8.5, 1.6 + 0.26 * len(cells)))
    im = ax.imshow(np.clip(data, -1, 1), cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    both = "reverse_rate_mbps" in result
    labels = [m.label.replace(" ", "\n", 1) + (f"\n(±{t * 100:g} %)" if (t := target(m, both)) else "") for m in cols]
    ax.set_xticks(range(len(cols)), labels, fontsize=7)
    ax.set_yticks(range(len(cells)), [c["id"] for c in cells], fontsize=7)
    for i, row in enumerate(data):
        for j, v in enumerate(row):
            m = cols[j]
            t = target(m, is_both_ways(cells[i]))
            bold = t is not None and not np.isnan(v) and abs(v) > t
            ax.text(j, i, "–" if np.isnan(v) else f"{v * 100:+.0f}%", ha="center", va="center", fontsize=6.5,
                    fontweight="bold" if bold else "normal",
                    color="white" if not np.isnan(v) and abs(v) > 0.6 else "black")
    fig.colorbar(im, ax=ax, label="(sim − linux) / linux, clipped at ±100 %", shrink=0.6)
    ax.set_title("simulator vs Linux: error per metric (bold: outside the target)", fontsize=9)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


_CSS = ("body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;font-size:12px}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td.l{text-align:left}"
        ".outside{background:#fde0dc}.failed{background:#f4b6b6}.within{background:#e3f4e1}")


def _link(result: Mapping[str, Any]) -> str:
    if "reverse_rate_mbps" in result:
        return f"{result['rate_mbps']:g} / {result['reverse_rate_mbps']:g} Mbit/s dumbbell (both ways)"
    return f"{result['rate_mbps']} Mbit/s dumbbell"


def html_report(result: Mapping[str, Any], png: bytes | None) -> str:
    e = html.escape
    cols = shown(result)
    both = "reverse_rate_mbps" in result
    rows = []
    for c in worst_first(result["cells"]):
        tds = [f"<td class=l><code>{e(c['id'])}</code></td>", f"<td class=l>{e(c['verdict'])}</td>"]
        for m in cols:
            s, lnx, er = _cell_values(c, m.key)
            tds.append(f"<td>{e(s)}</td><td>{e(lnx)}</td><td>{e(er)}</td>")
        tds.append(f"<td class=l>{e(_notes(c))}</td>")
        rows.append(f"<tr class=\"{e(c['verdict'])}\">{''.join(tds)}</tr>")
    head1 = "<th rowspan=2>cell</th><th rowspan=2>verdict</th>" + "".join(
        f"<th colspan=3>{e(m.label)}{' (' + e(m.unit) + ')' if m.unit else ''}"
        f"{'<br>target ±' + format(t * 100, 'g') + ' %' if (t := target(m, both)) else ''}</th>" for m in cols
    ) + "<th rowspan=2>notes</th>"
    head2 = "<th>sim</th><th>linux</th><th>error</th>" * len(cols)
    img = (f"<img alt=\"error heat map\" src=\"data:image/png;base64,{base64.b64encode(png).decode()}\">"
           if png else "<p>No heat map: no cell was compared with Linux.</p>")
    meta = (f"{len(result['cells'])} cells ({e(result['matrix'])} matrix"
            f"{', incomplete' if not result.get('complete') else ''}), {e(_link(result))}, "
            f"{result['duration_s']:g} s per run, metrics after {result['warmup_s']:g} s, seed {result['seed']}. "
            + (f"The simulator ran with {e(', '.join(result['sim_set']))} (--sim-set). "
               if result.get("sim_set") else "")
            + f"Error = {e(result['error_definition'])}; floors: "
            + ", ".join(f"{e(m.label)} {m.floor:g} {e(m.unit)}".strip() for m in cols) + ".")
    return (f"<!doctype html><html><head><meta charset=utf-8><title>bloatlab validate</title>"
            f"<style>{_CSS}</style></head><body><h1>bloatlab validate: simulator vs Linux</h1>"
            f"<p><b>{e(result['summary'])}</b></p><p>{meta}</p>"
            f"<table><tr>{head1}</tr><tr>{head2}</tr>{''.join(rows)}</table>"
            f"<h2>Error per metric per cell (worst first)</h2>{img}</body></html>\n")


def write(result: Mapping[str, Any], out: Path) -> list[str]:
    """Writes every output into ``out``; returns the names written."""
    write_json(result, out)
    write_bytes(out / "report.md", markdown(result).encode())
    png = heatmap_png(result)
    names = ["validate.json", "report.md"]
    if png is not None:
        write_bytes(out / "heatmap.png", png)
        names.append("heatmap.png")
    write_bytes(out / "report.html", html_report(result, png).encode())
    names.append("report.html")
    return names
