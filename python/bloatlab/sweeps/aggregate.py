"""Aggregation across seeds: mean, standard deviation, Student-t confidence intervals, Jain's index.

    >>> from bloatlab.sweeps.aggregate import summarize, jain
    >>> flows = bloatlab.Store("out/cc").flows
    >>> summarize(flows, by=["flows[0].cc", "group"], metrics=["goodput_mbps", "rtt_p95_ms"])
    >>> per_run = jain(flows, value="goodput_mbps", where={"group": ["cubic", "reno"]})
    >>> summarize(per_run, by=["flows[0].cc"], metrics=["jain"])

The confidence interval of a mean over n samples is ``mean ± t(1 - α/2, n - 1) · s / √n``
with ``s`` the sample standard deviation (ddof = 1): it assumes independent samples
(runs with different seeds) and is exact for normal data. With n = 1 the standard
deviation and the interval are NaN.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

# --------------------------------------------------------------------------- Student t


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(lbeta + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """CDF of Student's t distribution with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be > 0 (got {df})")
    x = df / (df + t * t)
    tail = 0.5 * _betainc(df / 2.0, 0.5, x)
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """Inverse CDF (quantile) of Student's t: ``t_quantile(0.975, 9) == 2.2621571...``."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1) (got {p})")
    if df <= 0:
        raise ValueError(f"degrees of freedom must be > 0 (got {df})")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2.0 * p - 1.0) * math.sqrt(2.0 / (4.0 * p * (1.0 - p)))
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
    for _ in range(200):  # bisection to full double precision
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


# --------------------------------------------------------------------------- statistics


def mean_ci(values: Iterable[float], confidence: float = 0.95) -> dict[str, float]:
    """``{"n", "mean", "std", "sem", "ci_low", "ci_high", "ci_half"}`` of the finite values."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(xs)
    nan = float("nan")
    if n == 0:
        return {"n": 0, "mean": nan, "std": nan, "sem": nan, "ci_low": nan, "ci_high": nan, "ci_half": nan}
    mean = math.fsum(xs) / n
    if n == 1:
        return {"n": 1, "mean": mean, "std": nan, "sem": nan, "ci_low": nan, "ci_high": nan, "ci_half": nan}
    var = math.fsum((x - mean) ** 2 for x in xs) / (n - 1)
    std = math.sqrt(var)
    sem = std / math.sqrt(n)
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * sem
    return {"n": n, "mean": mean, "std": std, "sem": sem, "ci_low": mean - half, "ci_high": mean + half,
            "ci_half": half}


def summarize(
    df: pd.DataFrame,
    by: Sequence[str] | str | None,
    metrics: Sequence[str] | str,
    *,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Mean, standard deviation and Student-t confidence interval of ``metrics`` per group.

    Returns a tidy frame: the ``by`` columns, ``metric``, ``n``, ``mean``, ``std``, ``sem``,
    ``ci_low``, ``ci_high``, ``ci_half`` (half-width), one row per group and metric, groups
    in order of first appearance. Non-finite values (NaN, null) are left out of n.
    """
    import pandas as pd

    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1) (got {confidence})")
    by_cols = [by] if isinstance(by, str) else list(by or [])
    metric_cols = [metrics] if isinstance(metrics, str) else list(metrics)
    missing = [c for c in [*by_cols, *metric_cols] if c not in df.columns]
    if missing:
        raise KeyError(f"no column {missing[0]!r} (columns: {', '.join(map(str, df.columns))})")
    rows = []
    groups = df.groupby(by_cols, sort=False, dropna=False) if by_cols else [((), df)]
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        for m in metric_cols:
            vals = pd.to_numeric(part[m], errors="coerce")
            rows.append({**dict(zip(by_cols, key)), "metric": m, **mean_ci(vals.tolist(), confidence)})
    out = pd.DataFrame.from_records(rows, columns=[*by_cols, "metric", "n", "mean", "std", "sem",
                                                   "ci_low", "ci_high", "ci_half"])
    out.attrs.update(df.attrs)
    out.attrs["confidence"] = confidence
    return out


def jain_index(values: Iterable[float]) -> float:
    """Jain's fairness index (Σx)² / (n·Σx²), between 1/n and 1; 1 for no values or all zeros
    (as the simulator's ``fairness.jain_goodput``)."""
    xs = [float(v) for v in values]
    s2 = math.fsum(x * x for x in xs)
    if not xs or s2 == 0.0:
        return 1.0
    s = math.fsum(xs)
    return s * s / (len(xs) * s2)


def jain(
    flows: pd.DataFrame,
    value: str = "goodput_mbps",
    *,
    where: Mapping[str, Any] | Callable[[pd.DataFrame], Any] | None = None,
    by: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Jain's index of ``value`` across chosen flows, one row per run.

    Args:
        flows: one row per flow per run (``Store.flows`` or ``bloatlab.sweep(...)``).
        value: the per-flow quantity (goodput by default).
        where: which flows count: ``{"group": ["cubic", "reno"], "id": [0, 1]}`` (column ->
            value or list of values), or a function of the frame returning a boolean mask.
        by: the columns that identify a run (default: ``run_id`` plus the parameter columns and
            ``seed`` when present). They are kept in the result.

    Returns:
        The ``by`` columns, ``jain`` and ``n_flows``.
    """
    import pandas as pd

    if value not in flows.columns:
        raise KeyError(f"no column {value!r}")
    sel = flows
    if callable(where):
        sel = flows[where(flows)]
    elif where:
        mask = pd.Series(True, index=flows.index)
        for col, want in where.items():
            wanted = list(want) if isinstance(want, (list, tuple, set)) else [want]
            mask &= flows[col].isin(wanted)
        sel = flows[mask]
    if by is None:
        params = list(flows.attrs.get("params") or [])
        by = [c for c in ["run_id", "point", *params, "seed"] if c in flows.columns] or ["run_id"]
    rows = []
    for key, part in sel.groupby(list(by), sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key)), "jain": jain_index(part[value].astype(float)), "n_flows": len(part)})
    out = pd.DataFrame.from_records(rows, columns=[*by, "jain", "n_flows"])
    out.attrs.update(flows.attrs)
    return out
