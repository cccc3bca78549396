"""Latency under load: an RRUL-like test on any bloatlab topology.

Flent's RRUL ("Realtime Response Under Load") runs bulk TCP flows both ways at once and
measures latency beside them. Here: ``flows`` bulk flows each way (downloads cross the forward
bottleneck, uploads the reverse one), an isochronous UDP probe flow whose receiver echoes
every probe (irtt-like), and a voice-like flow each way. The same topology is first run
*idle* (probes and voice only), then *loaded*; the grade comes from the latency the load adds
to the probes' round trip, with the thresholds of the DSLReports/Waveform bufferbloat grade
(A+ < 5 ms, A < 30, B < 60, C < 200, D < 400, else F; docs/latency-under-load.md).

The two scenarios are plain bloatlab scenarios (:func:`scenarios`), so a sweep or another
tool can run them too; :func:`run` runs both and :func:`write` draws the figures.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from .atomic import staged_dir
from .errors import ScenarioError
from .scenario import loads, resolve

#: Added round-trip latency (ms, loaded minus idle) below which each grade is given; F above
#: the last. DSLReports' speed-test FAQ and the Waveform bufferbloat test use these bounds.
GRADES: tuple[tuple[float, str], ...] = ((5.0, "A+"), (30.0, "A"), (60.0, "B"), (200.0, "C"), (400.0, "D"))

PROBE_GROUP = "probe"
GROUPS = ("download", "upload", PROBE_GROUP, "voip-down", "voip-up")


def grade(added_ms: float) -> str:
    """The bufferbloat grade of an added round-trip latency in ms."""
    for bound, letter in GRADES:
        if added_ms < bound:
            return letter
    return "F"


def home_text() -> str:
    """The TOML text of the built-in base scenario: a bloated home access link."""
    return resources.files("bloatlab").joinpath("scenarios", "rrul-home.toml").read_text(encoding="utf-8")


def home() -> dict[str, Any]:
    return loads(home_text(), source="<built-in rrul-home>")


def _check(flows: int, probe_interval: str) -> None:
    if not isinstance(flows, int) or isinstance(flows, bool) or not 1 <= flows <= 1000:
        raise ScenarioError("--flows", f"must be an integer in 1..1000 (got {flows!r})")
    if not isinstance(probe_interval, str):
        raise ScenarioError("--probe-interval", f"expected a duration such as \"100ms\" (got {probe_interval!r})")


def scenarios(base: Mapping[str, Any], *, flows: int = 4, cc: str = "cubic",
              probe_interval: str = "100ms") -> tuple[dict[str, Any], dict[str, Any]]:
    """The idle and the loaded scenario built on ``base`` (its topology, duration, warm-up,
    TCP settings and seed; its own flows are replaced). The time series are sampled at the
    probe interval, so each probe sample is about one probe."""
    _check(flows, probe_interval)
    common = {k: copy.deepcopy(v) for k, v in base.items() if k != "flows"}
    common["metrics"] = {**common.get("metrics", {}), "interval": probe_interval}
    latency = [
        {"transport": "udp", "app": "probe", "interval": probe_interval, "group": PROBE_GROUP},
        {"transport": "udp", "app": "voip", "group": "voip-down"},
        {"transport": "udp", "app": "voip", "group": "voip-up", "direction": "reverse"},
    ]
    load = [
        {"cc": cc, "count": flows, "group": "download"},
        {"cc": cc, "count": flows, "group": "upload", "direction": "reverse"},
    ]
    name = str(base.get("name", "scenario"))
    idle = {**copy.deepcopy(common), "name": f"{name}-rrul-idle", "flows": copy.deepcopy(latency)}
    loaded = {**copy.deepcopy(common), "name": f"{name}-rrul-loaded", "flows": load + copy.deepcopy(latency)}
    return idle, loaded


@dataclass(frozen=True)
class Voice:
    owd_mean_ms: float | None
    jitter_ms: float | None
    loss_pct: float


@dataclass(frozen=True)
class Outcome:
    """What an RRUL run found (all from the simulator's summaries)."""

    download_mbps: float
    upload_mbps: float
    idle_rtt_ms: float
    loaded_rtt_ms: float
    loaded_rtt_p95_ms: float
    added_latency_ms: float
    grade: str
    probe_loss_pct: float
    voip_down: Voice
    voip_up: Voice


def _flows(summary: Mapping[str, Any], group: str) -> list[dict[str, Any]]:
    return [f for f in summary["flows"] if f["group"] == group]


def _voice(summary: Mapping[str, Any], group: str) -> Voice:
    (f,) = _flows(summary, group)
    return Voice(f.get("owd_mean_ms"), f.get("jitter_ms"), f["loss_pct"])


def outcome(idle: Mapping[str, Any], loaded: Mapping[str, Any]) -> Outcome:
    """Reads the two summaries: throughput each way, the probes' RTT idle and loaded, the
    added latency and its grade, and the voice flows under load."""
    (p_idle,) = _flows(idle, PROBE_GROUP)
    (p_load,) = _flows(loaded, PROBE_GROUP)
    if p_idle["rtt_mean_ms"] is None or p_load["rtt_mean_ms"] is None:
        raise ScenarioError("duration", "too short for a probe to return after the warm-up")
    added = p_load["rtt_mean_ms"] - p_idle["rtt_mean_ms"]
    return Outcome(
        download_mbps=sum(f["goodput_mbps"] for f in _flows(loaded, "download")),
        upload_mbps=sum(f["goodput_mbps"] for f in _flows(loaded, "upload")),
        idle_rtt_ms=p_idle["rtt_mean_ms"],
        loaded_rtt_ms=p_load["rtt_mean_ms"],
        loaded_rtt_p95_ms=p_load["rtt_p95_ms"],
        added_latency_ms=added,
        grade=grade(added),
        probe_loss_pct=p_load["loss_pct"],
        voip_down=_voice(loaded, "voip-down"),
        voip_up=_voice(loaded, "voip-up"),
    )


@dataclass
class RrulResult:
    idle: Any  # bloatlab.Result
    loaded: Any
    outcome: Outcome

    def to_json(self) -> str:
        doc = {"outcome": asdict(self.outcome), "idle": self.idle.summary, "loaded": self.loaded.summary}
        return json.dumps(doc, indent=2, sort_keys=False) + "\n"


def run(base: Any = None, *, seed: int | None = None, set: Any = None,  # noqa: A002 - as bloatlab.run
        flows: int = 4, cc: str = "cubic", probe_interval: str = "100ms") -> RrulResult:
    """Runs the idle and the loaded scenario on ``base`` (a scenario file, dict, or None for
    the built-in home link) and returns both results with the :class:`Outcome`."""
    from . import _core
    from .api import run_resolved

    doc = resolve(home() if base is None else base, seed=seed, set=set)
    idle_doc, loaded_doc = scenarios(doc, flows=flows, cc=cc, probe_interval=probe_interval)
    try:
        idle = run_resolved(resolve(idle_doc), series=True)
        loaded = run_resolved(resolve(loaded_doc), series=True)
    except _core.ScenarioError as e:
        raise _option_error(e) from None
    return RrulResult(idle, loaded, outcome(idle.summary, loaded.summary))


def _option_error(e: Exception) -> ScenarioError:
    """An error in a generated flow is the user's option: name the option, not the flow."""
    path, message = e.args if len(e.args) == 2 else ("", str(e))
    if path == "metrics.interval":
        return ScenarioError("--probe-interval", message)
    if path.startswith("flows["):
        key = path.split(".", 1)[-1]
        option = {"interval": "--probe-interval", "cc": "--cc"}.get(key)
        if option is not None:
            return ScenarioError(option, message)
    return e if isinstance(e, ScenarioError) else ScenarioError(path, message)


# --------------------------------------------------------------------------- figures


def _probe_rtts(result: Any) -> Any:
    """The probe's RTT samples (the mean of each sampling interval's echoes, about one probe),
    as a Series indexed by time. Before the warm-up ends the probe records nothing (NaN)."""
    ts = result.timeseries
    (probe,) = [f["id"] for f in result.summary["flows"] if f["group"] == PROBE_GROUP]
    return ts[ts["flow"] == probe].set_index("t_s")["rtt_ms"].dropna()


def figures(res: RrulResult, out: Path) -> list[Path]:
    """Draws the two figures practitioners know from Flent: throughput each way with the probe
    latency over time, and the latency CDF idle vs loaded. Returns the files written."""
    from .experiments.plotting import pyplot

    plt = pyplot()
    written = []
    ts = res.loaded.timeseries
    groups = {f["id"]: f["group"] for f in res.loaded.summary["flows"]}
    ts = ts.assign(group=ts["flow"].map(groups))
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for g, color in (("download", "tab:blue"), ("upload", "tab:orange")):
        tput = ts[ts["group"] == g].groupby("t_s")["goodput_mbps"].sum()
        ax1.plot(tput.index, tput.values, label=g, color=color)
    ax1.set_ylabel("goodput (Mbit/s)")
    ax1.legend(loc="upper right")
    ax1.grid(alpha=0.3)
    loaded = _probe_rtts(res.loaded)
    idle = _probe_rtts(res.idle)
    ax2.plot(loaded.index, loaded.values, label="probe RTT, loaded", color="tab:red")
    ax2.plot(idle.index, idle.values, label="probe RTT, idle", color="tab:gray")
    ax2.set_ylabel("round trip (ms)")
    ax2.set_xlabel("time (s)")
    ax2.legend(loc="upper right")
    ax2.grid(alpha=0.3)
    o = res.outcome
    fig.suptitle(f"{res.loaded.summary['name']}: grade {o.grade} (+{o.added_latency_ms:.1f} ms under load)")
    fig.tight_layout()
    written.append(_save(fig, out / "rrul.png"))
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    for series, label, color in ((idle, "idle", "tab:gray"), (loaded, "loaded", "tab:red")):
        xs = sorted(series.values)
        if xs:
            ax.step(xs, [(i + 1) / len(xs) for i in range(len(xs))], where="post", label=label, color=color)
    ax.set_xlabel("probe round trip (ms)")
    ax.set_ylabel("fraction of probes")
    ax.set_xscale("log")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    written.append(_save(fig, out / "latency_cdf.png"))
    plt.close(fig)
    return written


def _save(fig: Any, path: Path) -> Path:
    # Fixed metadata: the same run draws the same bytes.
    fig.savefig(path, dpi=100, metadata={"Software": None})
    return path


def write(res: RrulResult, out: Path) -> Path:
    """Writes summary.json (outcome + both summaries), the two runs' time series and the
    figures into ``out``, atomically: a temporary sibling directory renamed into place."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"{out}: exists and is not a directory")
    with staged_dir(out, replace=True) as tmp:
        (tmp / "summary.json").write_text(res.to_json(), encoding="utf-8")
        res.idle.to_dir(tmp / "idle")
        res.loaded.to_dir(tmp / "loaded")
        figures(res, tmp)
    return out


def describe(o: Outcome) -> list[tuple[str, str]]:
    """Rows for a console table."""
    def ms(x: float | None) -> str:
        return "-" if x is None or math.isnan(x) else f"{x:.1f} ms"

    return [
        ("download", f"{o.download_mbps:.2f} Mbit/s"),
        ("upload", f"{o.upload_mbps:.2f} Mbit/s"),
        ("probe RTT idle", ms(o.idle_rtt_ms)),
        ("probe RTT loaded (mean / p95)", f"{ms(o.loaded_rtt_ms)} / {ms(o.loaded_rtt_p95_ms)}"),
        ("added latency", ms(o.added_latency_ms)),
        ("grade", o.grade),
        ("probe loss", f"{o.probe_loss_pct:.2f} %"),
        ("voice down (delay / jitter / loss)",
         f"{ms(o.voip_down.owd_mean_ms)} / {ms(o.voip_down.jitter_ms)} / {o.voip_down.loss_pct:.2f} %"),
        ("voice up (delay / jitter / loss)",
         f"{ms(o.voip_up.owd_mean_ms)} / {ms(o.voip_up.jitter_ms)} / {o.voip_up.loss_pct:.2f} %"),
    ]
