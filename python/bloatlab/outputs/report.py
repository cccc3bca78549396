"""``bloatlab report DIR``: one self-contained HTML page of a sweep (or of one run).

The page has no JavaScript and loads nothing: styles are inline and every figure is
an SVG embedded as a ``data:`` URI, so the file can be mailed, archived or opened
offline. For a sweep it shows the definition (base scenario, axes, seeds), the run
status, tables of mean ± confidence interval per parameter combination (flows,
bottleneck, Jain's index), bar charts with confidence intervals, CDFs, time series
of one run per combination, and the errors of failed runs.
"""

from __future__ import annotations

import base64
import datetime
import html
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ScenarioError
from .numbers import compact, mean_ci, short_value

if TYPE_CHECKING:
    import pandas as pd

REPORT_FILE = "report.html"
MAX_TIMESERIES = 6  # time-series figures: the first seed of at most this many combinations

FLOW_METRICS = ["goodput_mbps", "throughput_mbps", "rtt_mean_ms", "rtt_p95_ms", "loss_pct", "fct_s"]
QUEUE_METRICS = ["mean_sojourn_ms", "p95_sojourn_ms", "buffer_usage_pct", "drop_pct", "utilization_pct"]

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #1d2330;
       background: #fafbfc; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 32px 64px; }
h1 { font-size: 26px; margin: 8px 0 4px; } h2 { font-size: 19px; margin-top: 36px; border-bottom: 1px solid #dde;
  padding-bottom: 4px; } h3 { font-size: 15px; margin: 22px 0 6px; }
.meta { color: #5a6275; } .ok { color: #1a7f37; } .bad { color: #c62828; font-weight: 600; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; background: #fff; }
th, td { border: 1px solid #d8dbe3; padding: 4px 8px; text-align: right; white-space: nowrap; }
th { background: #eef1f6; font-weight: 600; } td.t, th.t { text-align: left; }
.ci { color: #6b7385; font-size: 12px; }
figure { margin: 12px 0 24px; background: #fff; border: 1px solid #e3e6ec; padding: 8px; display: inline-block; }
figure img { max-width: 100%; height: auto; display: block; }
figcaption { color: #5a6275; font-size: 12px; margin-top: 4px; }
pre { background: #f3f5f8; padding: 10px; overflow-x: auto; font-size: 12px; border: 1px solid #e3e6ec; }
details summary { cursor: pointer; color: #2456a6; }
.scroll { overflow-x: auto; }
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _img(fig: Any, alt: str, caption: str = "") -> str:
    from .plot import to_bytes

    data = base64.b64encode(to_bytes(fig, "svg")).decode("ascii")
    cap = f"<figcaption>{_e(caption)}</figcaption>" if caption else ""
    return f'<figure><img alt="{_e(alt)}" src="data:image/svg+xml;base64,{data}">{cap}</figure>'


def _table(df: pd.DataFrame, *, text_cols: Sequence[str] = ()) -> str:
    head = "".join(f'<th class="{"t" if c in text_cols else ""}">{_e(c)}</th>' for c in df.columns)
    rows = []
    for _, r in df.iterrows():
        cells = []
        for c in df.columns:
            v = r[c]
            if isinstance(v, str) and v.startswith("<span"):
                cells.append(f"<td>{v}</td>")  # preformatted mean ± CI
            else:
                text = short_value(v) if c in text_cols and c not in ("values", "error") else compact(v)
                cells.append(f'<td class="{"t" if c in text_cols else ""}">{_e(text)}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="scroll"><table><tr>{head}</tr>{"".join(rows)}</table></div>'


def _mean_ci_cell(mean: float, half: float) -> str:
    m, h = mean_ci(mean, half)
    if not h:
        return f"<span>{_e(m)}</span>"
    return f'<span>{_e(m)} <span class="ci">± {_e(h)}</span></span>'


def ci_table(df: pd.DataFrame, by: Sequence[str], metrics: Sequence[str], *, confidence: float = 0.95) -> pd.DataFrame:
    """Wide table: the ``by`` columns, ``n`` and one "mean ± half-width" cell per metric."""
    import pandas as pd

    from ..sweeps.aggregate import summarize

    metrics = [m for m in metrics if m in df.columns and pd.to_numeric(df[m], errors="coerce").notna().any()]
    if not metrics or df.empty:
        return pd.DataFrame()
    agg = summarize(df, list(by), metrics, confidence=confidence)
    rows: dict[tuple, dict[str, Any]] = {}
    for _, r in agg.iterrows():
        key = tuple(r[c] for c in by)
        row = rows.setdefault(key, {**dict(zip(by, key)), "n": 0})
        row["n"] = max(row["n"], int(r["n"]))
        row[m_label(str(r["metric"]))] = _mean_ci_cell(float(r["mean"]), float(r["ci_half"]))
    return pd.DataFrame(list(rows.values()))


def m_label(metric: str) -> str:
    from .plot import label

    return label(metric)


# --------------------------------------------------------------------------- pages


def write_report(path: str | os.PathLike[str], out: str | os.PathLike[str] | None = None, *,
                 confidence: float = 0.95) -> Path:
    """Writes the report of a sweep store or a run directory; returns the HTML file
    (default ``DIR/report.html``)."""
    from ..atomic import write_bytes
    from ..sweeps.store import is_store

    d = Path(path)
    if not d.is_dir():
        raise ScenarioError(os.fspath(path), "no such directory")
    if is_store(d):
        page = sweep_page(d, confidence=confidence)
    elif (d / "summary.json").is_file():
        page = run_page(d)
    else:
        raise ScenarioError(os.fspath(path), "not a sweep store (sweep.json) or a run directory (summary.json)")
    target = Path(out) if out is not None else d / REPORT_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    write_bytes(target, page.encode("utf-8"))
    return target


def _page(title: str, body: str) -> str:
    from ..simcore import __version__

    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body><main>"
        f"{body}<p class=\"meta\">bloatlab {_e(__version__)} — {stamp}</p></main></body></html>\n"
    )


def run_page(d: Path) -> str:
    import pandas as pd

    from .plot import run_cdf_figure, timeseries_figure

    summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
    parts = [f"<h1>{_e(summary.get('name', 'run'))}</h1>",
             f"<p class=\"meta\">seed {_e(summary.get('seed'))}, {_e(summary.get('duration_s'))} s simulated — "
             f"{_e(d)}</p>"]
    flows = pd.DataFrame.from_records(summary.get("flows") or [])
    cols = [c for c in ["id", "group", "cc", *FLOW_METRICS, "retransmits", "timeouts"] if c in flows.columns]
    parts += ["<h2>Flows</h2>", _table(flows[cols], text_cols=["group", "cc"])]
    b = {k: v for k, v in (summary.get("bottleneck") or {}).items() if not isinstance(v, dict)}
    parts += ["<h2>Bottleneck</h2>", _table(pd.DataFrame([b]), text_cols=["aqm"])]
    from .tables import by_group, jain

    groups = {g: m for g, m in by_group(summary.get("flows") or []).items() if len(m) > 1}
    per_group = "".join(f"; {_e(g)}: {_e(compact(jain([f.get('goodput_mbps') for f in m])))}"
                        for g, m in groups.items())
    parts.append(f"<p>Jain's index (goodput): {_e(compact((summary.get('fairness') or {}).get('jain_goodput')))} "
                 f"over all flows{'; within each group:' if groups else ''}{per_group.lstrip(';')}</p>")
    parts += ["<h2>Time series</h2>", _img(timeseries_figure(d), "time series")]
    parts.append(_img(run_cdf_figure(d, "srtt_ms"), "RTT CDF"))
    return _page(f"bloatlab: {summary.get('name', 'run')}", "".join(parts))


def sweep_page(d: Path, *, confidence: float = 0.95) -> str:
    import pandas as pd

    from ..sweeps.aggregate import jain
    from ..sweeps.store import Store
    from .plot import POINT, point_labels, sweep_bars, sweep_cdf, timeseries_figure

    st = Store(d)
    info = st.info
    sw = info.get("sweep") or {}
    params = st.params
    runs = st.runs
    flows = st.flows
    bottleneck = st.bottleneck
    status = st.status()
    parts = [f"<h1>{_e(st.name)}</h1>"]
    src = f" from {_e(sw.get('source'))}" if sw.get("source") else ""
    parts.append(f"<p class=\"meta\">sweep{src}, store {_e(d)}; plan written "
                 f"{_e(info.get('written_at', '?'))} by bloatlab {_e(info.get('bloatlab', '?'))}</p>")
    failed = status["error"]
    missing = status["missing"]
    state = (f'<span class="ok">{status["ok"]} ok</span>'
             + (f', <span class="bad">{failed} failed</span>' if failed else "")
             + (f', <span class="bad">{missing} not run yet</span>' if missing else ""))
    parts.append(f"<p><b>{status['total']} runs</b>: {state}.</p>")

    # -- definition
    parts.append("<h2>Sweep</h2>")
    axes_rows = []
    for a in sw.get("axes") or []:
        kind = "zip" if len(a["paths"]) > 1 else "grid"
        for i, p in enumerate(a["paths"]):
            vals = ", ".join(json.dumps(v[i], ensure_ascii=False) for v in a["values"])
            axes_rows.append({"axis": p, "kind": kind, "values": vals})
    if axes_rows:
        parts.append(_table(pd.DataFrame(axes_rows), text_cols=["axis", "kind", "values"]))
    seeds = sw.get("seeds") or []
    seed_text = (f"{len(seeds)} seeds ({seeds[0]}…{seeds[-1]})" if len(seeds) > 3
                 else f"seed{'s' if len(seeds) != 1 else ''} {', '.join(map(str, seeds))}")
    parts.append(f"<p>{_e(seed_text)}; confidence intervals: {confidence:.0%}, Student t over seeds.</p>")
    parts.append("<details><summary>base scenario</summary><pre>"
                 + _e(json.dumps(sw.get("base", {}), indent=2, ensure_ascii=False)) + "</pre></details>")

    # -- tables
    if not flows.empty:
        flows = flows.copy()
        flows[POINT] = point_labels(flows, params)
        by = [*params, "group"] if "group" in flows.columns else list(params)
        parts.append("<h2>Flows</h2><p class=\"meta\">mean ± half-width of the confidence interval over "
                     "seeds (and over the flows of a group).</p>")
        parts.append(_table(ci_table(flows, by or ["group"], FLOW_METRICS, confidence=confidence),
                            text_cols=[*params, "group"]))
        jn = jain(flows, "goodput_mbps")
        parts.append("<h3>Jain's fairness index (goodput, all flows of a run)</h3>")
        if params:
            jt = ci_table(jn, params, ["jain"], confidence=confidence)
        else:
            jt = ci_table(jn.assign(all="all runs"), ["all"], ["jain"], confidence=confidence)
        parts.append(_table(jt, text_cols=params or ["all"]))
    if not bottleneck.empty:
        parts.append("<h2>Bottleneck queue</h2>")
        bq = bottleneck.assign(all="all runs") if not params else bottleneck
        parts.append(_table(ci_table(bq, params or ["all"], QUEUE_METRICS, confidence=confidence),
                            text_cols=params or ["all"]))

    # -- figures
    if not flows.empty:
        parts.append("<h2>Figures</h2>")
        for metric in ("goodput_mbps", "rtt_p95_ms"):
            parts.append(_img(sweep_bars(st, metric, confidence=confidence), metric))
        if not bottleneck.empty:
            parts.append(_img(sweep_bars(st, "mean_sojourn_ms", confidence=confidence), "mean_sojourn_ms"))
        parts.append(_img(sweep_bars(st, "jain", confidence=confidence), "jain"))
        parts.append(_img(sweep_cdf(st, "rtt_p95_ms"), "CDF of rtt_p95_ms",
                          "each step is one flow of one run"))
        parts.append("<h3>Time series (first seed of each combination)</h3>")
        ok = runs[runs["status"] == "ok"]
        shown = ok.drop_duplicates("point").head(MAX_TIMESERIES)
        for _, r in shown.iterrows():
            label = ", ".join(f"{p}={short_value(r[p])}" for p in params) or "base"
            fig = timeseries_figure(st.run_dir(r["run_id"]), title=f"{label} (seed {r['seed']})")
            parts.append(_img(fig, f"time series {label}", f"run {r['run_id']}"))
        n_points = ok["point"].nunique()
        if n_points > MAX_TIMESERIES:
            parts.append(f"<p class=\"meta\">{n_points - MAX_TIMESERIES} more combinations: "
                         "<code>bloatlab plot DIR/runs/RUN_ID</code></p>")

    # -- failures
    bad = runs[runs["status"] == "error"]
    if len(bad):
        parts.append("<h2>Failed runs</h2>")
        cols = [c for c in ["run_id", *params, "seed", "error_type", "error_path", "error"] if c in bad.columns]
        parts.append(_table(bad[cols], text_cols=cols))
    return _page(f"bloatlab sweep: {st.name}", "".join(parts))
