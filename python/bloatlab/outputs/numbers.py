"""Number formatting for everything bloatlab prints or writes as text: console tables, the
HTML report, the reproductions' tables and claims, the validation and comparison reports.

Each function keeps the rendering its output has always had (the reproductions' reports are
compared byte for byte); ``missing`` is what a value that is not there (None, NaN) prints as.
"""

from __future__ import annotations

import math
from typing import Any

#: what the console tables and the HTML report print for a missing value
DASH = "—"


def num(value: Any, spec: str = ".2f", *, missing: str = DASH) -> str:
    """``format(value, spec)``; ``missing`` for None (and bools), ``str(value)`` for what
    ``spec`` cannot format."""
    if value is None or isinstance(value, bool):
        return missing
    try:
        return format(value, spec)
    except (TypeError, ValueError):
        return str(value)


def floats(value: Any, spec: str, *, missing: str = DASH) -> str:
    """Floats with ``spec``, ``missing`` for None, anything else (ints, strings) as ``str``."""
    if value is None:
        return missing
    if isinstance(value, float):
        return format(value, spec)
    return str(value)


def sig(x: float | None, digits: int = 3, *, missing: str = "n/a") -> str:
    """``x`` with ``digits`` significant digits, in fixed notation for everyday sizes
    (scientific at 1e7 and above or below 1e-4); ``missing`` for None, NaN and infinities."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return missing
    x = float(x)
    if x == 0:
        return "0"
    mag = math.floor(math.log10(abs(x)))
    decimals = max(0, digits - 1 - mag)
    if abs(x) >= 1e7 or abs(x) < 1e-4:
        return f"{x:.{digits - 1}e}"
    return f"{x:.{decimals}f}"


def compact(v: Any, *, missing: str = DASH) -> str:
    """A table cell: floats with four significant digits, thousands separated from 1e4 up,
    scientific below 1e-3; ``missing`` for None, NaN and infinities; others as ``str``."""
    if v is None:
        return missing
    if isinstance(v, float):
        if not math.isfinite(v):
            return missing
        a = abs(v)
        if a >= 1e4:
            return f"{v:,.0f}"
        if a == 0:
            return "0"
        if a < 1e-3:
            return f"{v:.2e}"
        return f"{v:.4g}"
    return str(v)


def size(nbytes: Any, *, missing: str = DASH) -> str:
    """Bytes in SI units (1 KB = 1000 B, as in scenario files)."""
    if not isinstance(nbytes, (int, float)) or isinstance(nbytes, bool):
        return missing
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(nbytes) >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.0f} B"


def per_second(value: Any, *, missing: str = DASH) -> str:
    """A large number with an SI prefix: 1234567 -> '1.23M'."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return missing
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:.3g}"


_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "m": 60.0, "h": 3600.0}


def seconds(value: Any) -> float:
    """A scenario duration (``"5s"``, ``"500ms"``, a number of seconds) in seconds, for
    figures and tables; 0.0 for what it cannot read (the simulator validates durations)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, str):
        return 0.0
    text = value.strip()
    for unit in sorted(_TIME_UNITS, key=len, reverse=True):
        if text.endswith(unit):
            try:
                return float(text[: -len(unit)]) * _TIME_UNITS[unit]
            except ValueError:
                return 0.0
    return 0.0


def mean_ci(mean: Any, half: Any, *, spec: str = ".4g", missing: str = DASH) -> tuple[str, str]:
    """A mean and its confidence-interval half-width as text, the half-width rounded to the
    decimals the mean is shown with (``0.0256`` and ``1.1e-17`` -> ``("0.0256", "0")``):
    a half-width finer than the mean's last digit says nothing. ``""`` for a missing
    half-width (one sample)."""
    if mean is None or not isinstance(mean, (int, float)) or not math.isfinite(mean):
        return missing, ""
    m = compact(float(mean)) if spec == ".4g" else format(mean, spec)
    if "#" in spec and m.endswith("."):
        m = m[:-1]
    if half is None or not isinstance(half, (int, float)) or not math.isfinite(half):
        return m, ""
    text = m.replace(",", "")
    if "e" in text or "E" in text:
        return m, format(half, ".2g")
    decimals = len(text.split(".", 1)[1]) if "." in text else 0
    h = round(abs(float(half)), decimals)
    if h == 0:
        return m, "0"
    return m, f"{h:,.{decimals}f}" if h >= 1e4 else f"{h:.{decimals}f}"


def short_value(value: Any) -> str:
    """A parameter value as a short label: a table (or its JSON text) as its values,
    ``{"kind": "droptail", "limit": "1000p"}`` -> ``droptail 1000p``; other keys as key=value
    after ``kind``/``limit``/``rate``; a list as comma-separated values."""
    import json

    v = value
    if isinstance(v, str) and v[:1] in "{[":
        try:
            v = json.loads(v)
        except ValueError:
            return value
    if isinstance(v, dict):
        lead = [str(v[k]) for k in ("kind", "limit", "rate") if k in v]
        rest = [f"{k}={short_value(x)}" for k, x in v.items() if k not in ("kind", "limit", "rate")]
        return " ".join(lead + rest) or "{}"
    if isinstance(v, list):
        return ", ".join(short_value(x) for x in v)
    if isinstance(v, float) and v.is_integer():
        return str(v)
    return str(v)
