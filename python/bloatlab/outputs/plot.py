"""Figures: time series of a run, bar charts with confidence intervals and CDFs of a sweep.

Everything here builds :class:`matplotlib.figure.Figure` objects directly (no pyplot,
no GUI, no global state), so it works headless and in threads; :func:`save` writes
PNG or SVG.

    >>> from bloatlab import plot
    >>> plot.save(plot.timeseries_figure("out/demo"), "out/demo/timeseries.png")
    >>> plot.save(plot.sweep_bars("out/cc", "goodput_mbps"), "goodput.svg")
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ScenarioError

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ..sweeps.store import Store

FORMATS = ("png", "svg")
KINDS = ("timeseries", "bars", "cdf")

_UNITS = [("_mbps", "Mbit/s"), ("_ms", "ms"), ("_pct", "%"), ("_bytes", "bytes"), ("_pkts", "packets"), ("_s", "s")]
_NAMES = {
    "goodput_mbps": "goodput", "throughput_mbps": "throughput", "rtt_mean_ms": "mean RTT",
    "rtt_p95_ms": "95th-percentile RTT", "loss_pct": "loss", "efficiency_pct": "efficiency",
    "fct_s": "flow completion time", "mean_sojourn_ms": "mean queueing delay",
    "p95_sojourn_ms": "95th-percentile queueing delay", "utilization_pct": "bottleneck utilization",
    "drop_pct": "bottleneck drops", "buffer_usage_pct": "buffer occupancy", "mean_bytes": "mean backlog",
    "jain": "Jain's fairness index", "jain_goodput": "Jain's fairness index (goodput)",
    "srtt_ms": "smoothed RTT", "rtt_ms": "RTT", "cwnd_bytes": "congestion window",
    "sojourn_ms": "queueing delay", "backlog_bytes": "queue backlog",
}


def label(metric: str) -> str:
    """``"goodput_mbps"`` -> ``"goodput (Mbit/s)"``."""
    name = _NAMES.get(metric, metric)
    for suffix, unit in _UNITS:
        if metric.endswith(suffix):
            return f"{name} ({unit})"
    return name


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def save(fig: Figure, path: str | os.PathLike[str], *, dpi: int = 120) -> Path:
    """Writes ``fig`` as PNG or SVG (by the file suffix), atomically."""
    from ..atomic import write_bytes

    p = Path(path)
    fmt = p.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ScenarioError(os.fspath(path), f"unknown image format (known: {', '.join(FORMATS)})")
    p.parent.mkdir(parents=True, exist_ok=True)
    write_bytes(p, to_bytes(fig, fmt, dpi=dpi))
    return p


def to_bytes(fig: Figure, fmt: str = "png", *, dpi: int = 120) -> bytes:
    import io

    import matplotlib

    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "bloatlab"}):
        fig.savefig(buf, format=fmt, dpi=dpi, metadata={"Date": None} if fmt == "svg" else None)
    return buf.getvalue()


# --------------------------------------------------------------------------- one run


def load_run(run: str | os.PathLike[str] | Any) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]:
    """(summary, per-flow samples, per-link samples) of a run directory (``bloatlab run --out``,
    or ``runs/<id>/`` of a sweep store) or of a :class:`bloatlab.Result`."""
    import pandas as pd

    if hasattr(run, "summary") and hasattr(run, "timeseries"):
        return run.summary, run.timeseries, run.queues
    d = Path(run)
    if not (d / "summary.json").is_file():
        raise ScenarioError(os.fspath(run), "not a run directory (no summary.json)")
    summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
    ts = pd.read_parquet(d / "timeseries.parquet") if (d / "timeseries.parquet").is_file() else pd.DataFrame()
    qs = pd.read_parquet(d / "queues.parquet") if (d / "queues.parquet").is_file() else pd.DataFrame()
    return summary, ts, qs


def warmup_s(run: Any) -> float:
    """The warm-up of a run (a directory with scenario.json, or a Result), in seconds; 0.0
    when not known."""
    from .numbers import seconds

    if hasattr(run, "scenario"):
        return seconds(run.scenario.get("warmup", "0s"))
    f = Path(run) / "scenario.json"
    if not f.is_file():
        return 0.0
    try:
        return seconds(json.loads(f.read_text(encoding="utf-8")).get("warmup", "0s"))
    except (OSError, ValueError, AttributeError):
        return 0.0


def _mark_warmup(axes: Sequence[Any], warm: float) -> None:
    if warm <= 0:
        return
    for a in axes:
        a.axvspan(0, warm, color="0.88", alpha=0.6, lw=0, zorder=0)
    axes[0].text(warm / 2, 0.97, "warm-up\n(not in the summary)", transform=axes[0].get_xaxis_transform(),
                 ha="center", va="top", fontsize="x-small", color="0.35")


def timeseries_figure(run: Any, *, flows: Sequence[int] | None = None, link: str = "bottleneck",
                      title: str | None = None) -> Figure:
    """Congestion window of every TCP/DCCP flow and RTT of every flow, and the backlog and
    queueing delay of ``link``, over time: three panels sharing the time axis; the warm-up
    shaded."""
    summary, ts, qs = load_run(run)
    fig = _figure(9, 7.5)
    axes = fig.subplots(3, 1, sharex=True)
    groups = {f.get("id"): f.get("group", "") for f in summary.get("flows") or []}
    transports = {f.get("id"): f.get("transport", "tcp") for f in summary.get("flows") or []}
    if ts.empty or "flow" not in ts.columns:
        for ax in axes[:2]:
            ax.text(0.5, 0.5, "no per-flow samples (metrics.interval = \"0s\"?)", ha="center", va="center",
                    transform=ax.transAxes, color="0.4")
    else:
        ids = sorted(ts["flow"].unique()) if flows is None else list(flows)
        many = len(ids) > 10
        for i, fid in enumerate(ids):
            part = ts[ts["flow"] == fid]
            name = f"flow {fid} ({groups.get(fid, '')})" if not many else None
            kw: dict[str, Any] = {"lw": 1.0 if not many else 0.6, "color": f"C{i % 10}"}
            # UDP has no congestion window: drawing its zero column would read as "cwnd 0".
            if "cwnd_bytes" in part and transports.get(fid) != "udp":
                axes[0].plot(part["t_s"], part["cwnd_bytes"] / 1e3, label=name, **kw)
            rtt_col = "srtt_ms" if "srtt_ms" in part else "rtt_ms"
            if rtt_col in part and part[rtt_col].notna().any():
                axes[1].plot(part["t_s"], part[rtt_col], label=name, **kw)
        if not many and ids:
            for a in axes[:2]:
                if a.get_legend_handles_labels()[0]:
                    a.legend(loc="upper right", fontsize="small", ncol=min(len(ids), 3))
    axes[0].set_ylabel("cwnd (KB)")
    axes[1].set_ylabel("smoothed RTT (ms)")
    for f in summary.get("flows") or []:
        if f.get("base_rtt_ms"):
            axes[1].axhline(f["base_rtt_ms"], color="0.5", lw=0.8, ls=":")
            break
    ax = axes[2]
    if qs.empty or "link" not in qs.columns or not (qs["link"] == link).any():
        ax.text(0.5, 0.5, f"no samples of link {link!r}", ha="center", va="center", transform=ax.transAxes,
                color="0.4")
    else:
        q = qs[qs["link"] == link]
        ax.plot(q["t_s"], q["backlog_bytes"] / 1e3, color="C0", lw=1.0, label="backlog")
        ax.set_ylabel(f"{link} backlog (KB)", color="C0")
        cap = (summary.get("bottleneck") or {}).get("capacity_bytes") if link == "bottleneck" else None
        peak = float(q["backlog_bytes"].max()) if len(q) else 0.0
        # The axis follows the data; the limit is drawn only when the data come near it
        # (FQ-CoDel's 15 MB limit would flatten a backlog of a few KB into the axis).
        if cap and cap <= 2 * max(peak, 1.0):
            ax.axhline(cap / 1e3, color="C0", lw=0.8, ls="--")
        elif cap:
            ax.text(0.01, 0.95, f"queue limit {cap / 1e3:,.0f} KB (off scale)", transform=ax.transAxes,
                    va="top", fontsize="x-small", color="C0")
        ax.set_ylim(bottom=0)
        if "sojourn_ms" in q:
            ax2 = ax.twinx()
            ax2.plot(q["t_s"], q["sojourn_ms"], color="C3", lw=0.8, alpha=0.8)
            ax2.set_ylabel("queueing delay (ms)", color="C3")
            ax2.set_ylim(bottom=0)
    axes[2].set_xlabel("time (s)")
    for a in axes:
        a.grid(True, alpha=0.3)
    _mark_warmup(axes, warmup_s(run))
    fig.suptitle(title or f"{summary.get('name', 'run')} (seed {summary.get('seed')})")
    return fig


def run_cdf_figure(run: Any, column: str = "srtt_ms", *, title: str | None = None) -> Figure:
    """CDF of one time-series column (default: smoothed RTT samples) after the warm-up, one
    line per flow."""
    summary, ts, qs = load_run(run)
    warm = warmup_s(run)
    # The summary ignores the warm-up; so does the CDF (slow start would add its own tail).
    if warm > 0:
        ts = ts[ts["t_s"] >= warm] if "t_s" in ts.columns else ts
        qs = qs[qs["t_s"] >= warm] if "t_s" in qs.columns else qs
    samples: dict[str, Any] = {}
    if column in ts.columns:
        groups = {f.get("id"): f.get("group", "") for f in summary.get("flows") or []}
        for fid, part in ts.groupby("flow"):
            samples[f"flow {fid} ({groups.get(fid, '')})"] = part[column].dropna().to_numpy()
    elif column in qs.columns:
        for link_name, part in qs.groupby("link"):
            samples[str(link_name)] = part[column].dropna().to_numpy()
    else:
        raise ScenarioError(column, "no such time-series column "
                            f"(per flow: {', '.join(ts.columns)}; per link: {', '.join(qs.columns)})")
    after = f" after the {warm:g} s warm-up" if warm > 0 else ""
    return cdf_figure(samples, xlabel=label(column),
                      title=title or f"{summary.get('name', 'run')}: {label(column)}{after}")


# --------------------------------------------------------------------------- generic


def cdf_figure(samples: Mapping[str, Any], *, xlabel: str, title: str = "") -> Figure:
    """Empirical CDFs, one step line per label."""
    import numpy as np

    fig = _figure(7, 4.2)
    ax = fig.subplots()
    drawn = 0
    for name, values in samples.items():
        v = np.sort(np.asarray([x for x in values if x is not None], dtype=float))
        v = v[np.isfinite(v)]
        if not len(v):
            continue
        y = np.arange(1, len(v) + 1) / len(v)
        ax.step(np.concatenate([[v[0]], v]), np.concatenate([[0.0], y]), where="post", label=str(name), lw=1.2)
        drawn += 1
    if not drawn:
        ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes, color="0.4")
    elif drawn <= 12:
        ax.legend(fontsize="small", loc="lower right")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    if title:
        ax.set_title(title)
    return fig


def bars_figure(summary: pd.DataFrame, *, x: str, hue: str | None = None, title: str = "",
                ylabel: str | None = None) -> Figure:
    """Grouped bars of ``mean`` with ``ci_low``..``ci_high`` error bars, from a tidy
    :func:`bloatlab.sweeps.aggregate.summarize` frame (one metric)."""
    import numpy as np

    from .numbers import short_value

    xs = list(dict.fromkeys(summary[x].tolist()))
    hues = list(dict.fromkeys(summary[hue].tolist())) if hue else [None]
    fig = _figure(max(5.0, min(16.0, 1.0 + 0.55 * len(xs) * len(hues) + 0.4 * len(xs))), 4.4)
    ax = fig.subplots()
    width = 0.8 / len(hues)
    pos = np.arange(len(xs))
    for j, h in enumerate(hues):
        part = summary if h is None else summary[summary[hue] == h]
        means, lo, hi = [], [], []
        for xv in xs:
            row = part[part[x] == xv]
            if row.empty:
                means.append(np.nan)
                lo.append(0.0)
                hi.append(0.0)
                continue
            r = row.iloc[0]
            m = float(r["mean"])
            means.append(m)
            ok = math.isfinite(float(r["ci_low"])) and math.isfinite(float(r["ci_high"]))
            lo.append(m - float(r["ci_low"]) if ok else 0.0)
            hi.append(float(r["ci_high"]) - m if ok else 0.0)
        ax.bar(pos + (j - (len(hues) - 1) / 2) * width, means, width * 0.95, yerr=[lo, hi], capsize=3,
               label=None if h is None else short_value(h), color=f"C{j % 10}", error_kw={"lw": 1.0})
    names = [short_value(v) for v in xs]
    ax.set_xticks(pos, names, rotation=30 if len(xs) > 4 or max(len(v) for v in names) > 12 else 0,
                  ha="right" if len(xs) > 4 else "center", fontsize="small")
    ax.set_xlabel(x)
    metric = str(summary["metric"].iloc[0]) if "metric" in summary and len(summary) else ""
    ax.set_ylabel(ylabel or label(metric))
    ax.grid(True, axis="y", alpha=0.3)
    if hue:
        ax.legend(title=hue, fontsize="small")
    conf = summary.attrs.get("confidence", 0.95)
    n = summary["n"].min() if "n" in summary and len(summary) else 0
    ax.set_title(title or f"{label(metric)}: mean and {conf:.0%} CI (Student t, n ≥ {n})", fontsize="medium")
    return fig


# --------------------------------------------------------------------------- sweeps

POINT = "point_label"


def point_labels(df: pd.DataFrame, params: Sequence[str]) -> pd.Series:
    """One text label per row from its parameter values (``"reno, 50KB"``; a table value as
    its values, ``"droptail 1000p"``, not its JSON)."""
    from .numbers import short_value

    if not params:
        return df["run_id"].map(lambda _: "all runs") if "run_id" in df else None  # type: ignore[return-value]
    return df[list(params)].apply(lambda row: ", ".join(short_value(v) for v in row), axis=1)


def metric_frame(store: Store, metric: str, *, where: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """The store table that holds ``metric`` (flows, bottleneck or runs; ``jain``: Jain's index
    of goodput across all flows of each run) with a ``point_label`` column."""
    from ..sweeps.aggregate import jain

    flows = store.flows
    params = store.params
    if flows.empty:
        status = store.status()
        raise ScenarioError(os.fspath(store.path), f"no finished runs to plot ({status['error']} failed, "
                            f"{status['missing']} not run yet)")
    if metric == "jain":
        df = jain(flows, "goodput_mbps", where=where)
    else:
        df = None
        for name in ("flows", "bottleneck", "runs"):
            t = flows if name == "flows" else store.table(name)
            if metric in t.columns:
                df = t
                if name == "runs":
                    df = df[df["status"] == "ok"]
                break
        if df is None:
            known = sorted((set(flows.columns) | set(store.bottleneck.columns))
                           - {"run_id", "point", "seed", "queue", *params})
            raise ScenarioError("--metric", f'unknown metric "{metric}" (known: jain, {", ".join(known)})')
        if where:
            for col, want in where.items():
                wanted = list(want) if isinstance(want, (list, tuple, set)) else [want]
                df = df[df[col].isin(wanted)]
    df = df.copy()
    df[POINT] = point_labels(df, params) if len(df) else []
    df.attrs["params"] = params
    return df


def sweep_bars(store: Store | str | os.PathLike[str], metric: str = "goodput_mbps", *, x: str | None = None,
               hue: str | None = None, confidence: float = 0.95) -> Figure:
    """Bars of the mean of ``metric`` with its confidence interval across seeds.

    Default grouping: one bar group per parameter combination; for per-flow metrics one
    bar per flow ``group`` (when the runs have several groups).
    """
    from ..sweeps.aggregate import summarize
    from ..sweeps.store import Store

    st = store if isinstance(store, Store) else Store(store)
    df = metric_frame(st, metric)
    x = x or POINT
    if hue is None and "group" in df.columns and df["group"].nunique() > 1 and x != "group":
        hue = "group"
    for col in (x, hue):
        if col and col not in df.columns:
            raise ScenarioError("--x" if col == x else "--hue", f'no column "{col}" (parameters: '
                                f'{", ".join(st.params) or "none"}; or group, id, seed)')
    agg = summarize(df, [c for c in (x, hue) if c], metric, confidence=confidence)
    fig = bars_figure(agg, x=x, hue=hue)
    if x == POINT:
        fig.axes[0].set_xlabel(" / ".join(st.params) if st.params else "")
    fig.suptitle(st.name, fontsize="large")
    return fig


def sweep_cdf(store: Store | str | os.PathLike[str], metric: str = "rtt_p95_ms", *, by: str | None = None) -> Figure:
    """CDF of a per-flow (or per-run) metric over all seeds and flows, one line per parameter
    combination (or per value of ``by``)."""
    from ..sweeps.store import Store

    st = store if isinstance(store, Store) else Store(store)
    df = metric_frame(st, metric)
    by = by or POINT
    if by not in df.columns:
        raise ScenarioError("--hue", f'no column "{by}"')
    from .numbers import short_value

    samples = {short_value(k): part[metric].tolist() for k, part in df.groupby(by, sort=False)}
    return cdf_figure(samples, xlabel=label(metric), title=f"{st.name}: {label(metric)} over runs and flows")
