"""Latency under load: an RRUL-like test on any bloatlab topology.

Flent's RRUL ("Realtime Response Under Load") runs bulk TCP flows both ways at once and
measures latency beside them. Here: ``flows`` bulk flows each way (downloads cross the forward
bottleneck, uploads the reverse one), an isochronous UDP probe flow whose receiver echoes
every probe (irtt-like), and a voice-like flow each way. The same topology is first run
*idle* (probes and voice only), then *loaded*; the grade comes from the latency the load adds
to the probes' round trip, with the thresholds of the DSLReports/Waveform bufferbloat grade
(A+ < 5 ms, A < 30, B < 60, C < 200, D < 400, else F), capped at C when 3 % or more of the
probes are lost (ITU-T G.1010's loss target for conversational voice; docs/latency-under-load.md).

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
#: Probe loss (%) from which the grade is at most :data:`LOSS_CAP`. The latency grade alone
#: rewards a queue that drops the probes it would have delayed; ITU-T G.1010 (Table I.1) sets
#: < 3 % packet loss as the target for conversational voice, the most loss-tolerant
#: interactive class, so from 3 % on the link fails interactive use however short the queue.
LOSS_BOUND_PCT = 3.0
LOSS_CAP = "C"
_ORDER = ("A+", "A", "B", "C", "D", "F")

PROBE_GROUP = "probe"
GROUPS = ("download", "upload", PROBE_GROUP, "voip-down", "voip-up")


def grade(added_ms: float, loss_pct: float = 0.0) -> str:
    """The bufferbloat grade of an added round-trip latency in ms, at most :data:`LOSS_CAP`
    when ``loss_pct`` of the probes (%) reaches :data:`LOSS_BOUND_PCT`."""
    letter = "F"
    for bound, g in GRADES:
        if added_ms < bound:
            letter = g
            break
    if loss_pct >= LOSS_BOUND_PCT and _ORDER.index(letter) < _ORDER.index(LOSS_CAP):
        return LOSS_CAP
    return letter


def home_text() -> str:
    """The TOML text of the built-in base scenario: a bloated home access link."""
    return resources.files("bloatlab").joinpath("scenarios", "rrul-home.toml").read_text(encoding="utf-8")


def home() -> dict[str, Any]:
    return loads(home_text(), source="<built-in rrul-home>")


def counts(flows: int = 4, down: int | None = None, up: int | None = None) -> tuple[int, int]:
    """Bulk flows (down, up): ``down``/``up`` where given, else ``flows``. Raises a
    ScenarioError naming the option for a value outside 0..1000 or for no flow at all."""
    got = {"--down" if down is not None else "--flows": flows if down is None else down,
           "--up" if up is not None else "--flows": flows if up is None else up}
    for option, n in got.items():
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= 1000:
            raise ScenarioError(option, f"must be an integer in 0..1000 (got {n!r})")
    d = flows if down is None else down
    u = flows if up is None else up
    if d == 0 and u == 0:
        option = "--flows" if down is None and up is None else "--down/--up"
        raise ScenarioError(option, "no bulk flow in either direction: nothing loads the link")
    return d, u


def _check(probe_interval: str) -> None:
    if not isinstance(probe_interval, str):
        raise ScenarioError("--probe-interval", f"expected a duration such as \"100ms\" (got {probe_interval!r})")


def scenarios(base: Mapping[str, Any], *, flows: int = 4, cc: str = "cubic",
              probe_interval: str = "100ms", down: int | None = None, up: int | None = None,
              keep_flows: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """The idle and the loaded scenario built on ``base`` (its topology, duration, warm-up,
    TCP settings and seed). ``down``/``up`` bulk flows each way (default ``flows``). The
    base's own flows are replaced, or with ``keep_flows`` kept in the loaded run before the
    test's (the idle run stays idle: probes and voice only). The time series are sampled at
    the probe interval, so each probe sample is about one probe."""
    n_down, n_up = counts(flows, down, up)
    _check(probe_interval)
    own = copy.deepcopy(list(base.get("flows") or [])) if keep_flows else []
    clash = sorted({str(f.get("group")) for f in own if isinstance(f, dict)} & set(GROUPS))
    if clash:
        raise ScenarioError("--keep-flows", f"the scenario's flows use the test's group names "
                            f"({', '.join(clash)}); rename their group")
    common = {k: copy.deepcopy(v) for k, v in base.items() if k != "flows"}
    common["metrics"] = {**common.get("metrics", {}), "interval": probe_interval}
    latency = [
        {"transport": "udp", "app": "probe", "interval": probe_interval, "group": PROBE_GROUP},
        {"transport": "udp", "app": "voip", "group": "voip-down"},
        {"transport": "udp", "app": "voip", "group": "voip-up", "direction": "reverse"},
    ]
    load = []
    if n_down:
        load.append({"cc": cc, "count": n_down, "group": "download"})
    if n_up:
        load.append({"cc": cc, "count": n_up, "group": "upload", "direction": "reverse"})
    name = str(base.get("name", "scenario"))
    wifi = _wifi_stations(base)
    if wifi:
        latency, load = _on_wifi(latency, wifi), _on_wifi(load, wifi)
    idle = {**copy.deepcopy(common), "name": f"{name}-rrul-idle", "flows": copy.deepcopy(latency)}
    loaded = {**copy.deepcopy(common), "name": f"{name}-rrul-loaded",
              "flows": own + load + copy.deepcopy(latency)}
    return idle, loaded


def _wifi_stations(base: Mapping[str, Any]) -> list[str]:
    """The station names of a ``kind = "wifi"`` base (docs/wifi.md), else none."""
    topo = base.get("topology")
    if not isinstance(topo, Mapping) or topo.get("kind") != "wifi":
        return []
    stations = topo.get("stations")
    if not isinstance(stations, list):
        return []
    return [str(st.get("name", f"sta{i}")) if isinstance(st, Mapping) else f"sta{i}" for i, st in enumerate(stations)]


def _on_wifi(flows: list[dict[str, Any]], stations: list[str]) -> list[dict[str, Any]]:
    """The test's flows on a Wi-Fi BSS: downloads from the wired ``server`` to the stations in
    turn, uploads (``direction = "reverse"``) from them in turn; the probe and voice to the first."""
    out: list[dict[str, Any]] = []
    for f in flows:
        bulk = f.get("group") in ("download", "upload")
        for i in range(int(f.get("count", 1)) if bulk else 1):
            g = {key: v for key, v in f.items() if key not in ("count", "direction")}
            st = stations[i % len(stations)] if bulk else stations[0]
            g["src"], g["dst"] = (st, "server") if f.get("direction") == "reverse" else ("server", st)
            out.append(g)
    return out


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
    #: the grade of the added latency alone (``grade`` also accounts for probe loss)
    latency_grade: str = ""
    #: why a number may look wrong but is what real stacks do (e.g. BBR v1 with uploads)
    note: str | None = None


def _flows(summary: Mapping[str, Any], group: str) -> list[dict[str, Any]]:
    return [f for f in summary["flows"] if f["group"] == group]


def _voice(summary: Mapping[str, Any], group: str) -> Voice:
    (f,) = _flows(summary, group)
    return Voice(f.get("owd_mean_ms"), f.get("jitter_ms"), f["loss_pct"])


#: TCP congestion controls that are BBR v1 (cwnd capped at cwnd_gain = 2 BDPs of the min RTT).
BBR_V1 = ("bbr",)


def bbr_note(loaded: Mapping[str, Any]) -> str | None:
    """The explanation for BBR v1 downloads beside uploads, when the run has that case: BBR
    v1 downloads, uploads, and the downloads below half the forward bottleneck's rate."""
    down = _flows(loaded, "download")
    up = _flows(loaded, "upload")
    if not down or not up or not any(f.get("cc") in BBR_V1 and f.get("transport", "tcp") == "tcp"
                                     for f in down):
        return None
    rate = (loaded.get("bottleneck") or {}).get("rate_mbps")
    if isinstance(rate, (int, float)) and sum(f["goodput_mbps"] for f in down) >= 0.5 * rate:
        return None
    return ("BBR v1 beside uploads: the downloads' ACKs wait behind the uploads' queue and "
            "v1's cwnd cap (2 min-RTT BDPs) holds the downloads back; real Linux BBR v1 does the "
            "same (5.37 Mbit/s of 20 on the home link; docs/latency-under-load.md)")


def outcome(idle: Mapping[str, Any], loaded: Mapping[str, Any]) -> Outcome:
    """Reads the two summaries: throughput each way, the probes' RTT idle and loaded, the
    added latency and its grade (with probe loss), and the voice flows under load."""
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
        grade=grade(added, p_load["loss_pct"]),
        probe_loss_pct=p_load["loss_pct"],
        voip_down=_voice(loaded, "voip-down"),
        voip_up=_voice(loaded, "voip-up"),
        latency_grade=grade(added),
        note=bbr_note(loaded),
    )


def _queue_text(q: Any) -> str:
    """A queue table as one short phrase: ``{"kind": "droptail", "limit": "500p"}`` ->
    ``droptail 500p``; other parameters as key=value."""
    if not isinstance(q, Mapping):
        return "default"
    rest = [f"{k}={v}" for k, v in q.items() if k not in ("kind", "limit")]
    return " ".join(str(x) for x in (q.get("kind", "droptail"), q.get("limit"), *rest) if x is not None)


def tested(doc: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What the test ran on: the link and the queue settings of a (resolved) scenario."""
    t = doc.get("topology") or {}
    kind = t.get("kind", "dumbbell")
    rows: list[tuple[str, str]] = []
    if kind == "cellular":
        rows.append(("link", f"cellular, profile {t.get('profile', '?')}, {t.get('ues', 1)} UE"))
        rows.append(("queues", f"base station {_queue_text(t.get('bs_queue'))}, "
                               f"UE {_queue_text(t.get('ue_queue'))}"))
    elif kind == "dumbbell":
        b = t.get("bottleneck") or {}
        rate, delay = b.get("rate", "?"), b.get("delay", "?")
        sched = b.get("schedule")
        if isinstance(sched, dict):  # the LEO generator: ranges drawn per interval
            rate = "-".join(map(str, sched.get("rate", ["?"]))) + " (LEO schedule)"
            delay = "-".join(map(str, sched.get("delay", ["?"])))
        elif isinstance(sched, str):
            rate = b.get("rate", "scheduled")
            delay = f"scheduled ({Path(sched).name})"
        rev = b.get("reverse_rate", rate)
        rows.append(("link", f"{rate} down / {rev} up, {delay} one way "
                             f"(+ access {(t.get('access') or {}).get('rate', '?')}, "
                             f"{(t.get('access') or {}).get('delay', '?')})"))
        rows.append(("queues", f"down {_queue_text(t.get('bottleneck_queue'))}, "
                               f"up {_queue_text(t.get('reverse_queue'))}"))
    else:
        rows.append(("link", f"{kind} topology (see the scenario file)"))
    return rows


@dataclass
class RrulResult:
    idle: Any  # bloatlab.Result
    loaded: Any
    outcome: Outcome

    @property
    def tested(self) -> list[tuple[str, str]]:
        return tested(self.loaded.scenario)

    def to_json(self) -> str:
        doc = {"outcome": asdict(self.outcome), "tested": dict(self.tested),
               "idle": self.idle.summary, "loaded": self.loaded.summary}
        return json.dumps(doc, indent=2, sort_keys=False) + "\n"


def run(base: Any = None, *, seed: int | None = None, set: Any = None,  # noqa: A002 - as bloatlab.run
        flows: int = 4, cc: str = "cubic", probe_interval: str = "100ms", down: int | None = None,
        up: int | None = None, keep_flows: bool = False) -> RrulResult:
    """Runs the idle and the loaded scenario on ``base`` (a scenario file, dict, or None for
    the built-in home link) and returns both results with the :class:`Outcome`."""
    from . import _core
    from .api import run_resolved

    counts(flows, down, up)  # the options' errors before the scenario's
    doc = resolve(home() if base is None else base, seed=seed, set=set)
    idle_doc, loaded_doc = scenarios(doc, flows=flows, cc=cc, probe_interval=probe_interval,
                                     down=down, up=up, keep_flows=keep_flows)
    try:
        idle = run_resolved(resolve(idle_doc), series=True)
        loaded = run_resolved(resolve(loaded_doc), series=True)
    except _core.ScenarioError as e:
        kept = len(doc.get("flows") or []) if keep_flows else 0
        raise _option_error(e, kept) from None
    return RrulResult(idle, loaded, outcome(idle.summary, loaded.summary))


def _option_error(e: Exception, kept: int = 0) -> ScenarioError:
    """An error in a generated flow is the user's option: name the option, not the flow (the
    first ``kept`` flows are the scenario's own, kept with ``keep_flows``: their paths stay)."""
    path, message = e.args if len(e.args) == 2 else ("", str(e))
    if path == "metrics.interval":
        return ScenarioError("--probe-interval", message)
    index = path[len("flows["):].split("]", 1)[0] if path.startswith("flows[") else ""
    if index.isdigit() and int(index) >= kept:
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


def _window(res: RrulResult, step_s: float) -> int:
    """Samples per goodput window: two loaded round trips (the probes' 95th percentile; a
    loss repair takes about one, and the data held behind it is released at its end), at
    least 1 s."""
    p95 = res.outcome.loaded_rtt_p95_ms
    rtt_s = max(2 * (p95 if p95 is not None and math.isfinite(p95) else 0.0) / 1e3, 1.0)
    return max(1, math.ceil(rtt_s / step_s - 1e-9))


def _warmup_s(result: Any) -> float:
    from .outputs.numbers import seconds

    return seconds(result.scenario.get("warmup", "0s"))


def figures(res: RrulResult, out: Path) -> list[Path]:
    """Draws the two figures practitioners know from Flent: goodput of every flow and each
    direction's total with the probe latency over time, and the latency CDF idle vs loaded.
    Returns the files written."""
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    from .experiments.plotting import pyplot

    plt = pyplot()
    written = []
    ts = res.loaded.timeseries
    groups = {f["id"]: f["group"] for f in res.loaded.summary["flows"]}
    ts = ts.assign(group=ts["flow"].map(groups))
    times = sorted(ts["t_s"].unique())
    step = float(times[1] - times[0]) if len(times) > 1 else 0.1
    k = _window(res, step)
    warm = _warmup_s(res.loaded)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6.4), sharex=True)
    # Goodput as bytes delivered per trailing window of >= 2 loaded RTTs: data held at the
    # receiver until a loss is repaired is released at once, and one sample's rate would show
    # it as a spike above the link rate.
    for g, color in (("download", "tab:blue"), ("upload", "tab:orange")):
        part = ts[ts["group"] == g]
        if part.empty:
            continue
        for _fid, one in part.groupby("flow"):
            smooth = one.set_index("t_s")["goodput_mbps"].rolling(k, min_periods=1).mean()
            ax1.plot(smooth.index, smooth.values, color=color, lw=0.6, alpha=0.45)
        total = part.groupby("t_s")["goodput_mbps"].sum().rolling(k, min_periods=1).mean()
        n = part["flow"].nunique()
        ax1.plot(total.index, total.values, color=color, lw=1.8, label=f"{g}: total of {n} (thin: each flow)")
    ax1.set_ylabel("goodput (Mbit/s)")
    ax1.legend(loc="upper right", fontsize="small")
    ax1.grid(alpha=0.3)
    ax1.set_title(f"goodput: bytes delivered per {k * step:g} s trailing window (>= 2 loaded RTTs); "
                  "above the link rate: data held\nbehind a loss repair, released when it is repaired",
                  fontsize="x-small")
    loaded = _probe_rtts(res.loaded)
    idle = _probe_rtts(res.idle)
    ax2.plot(loaded.index, loaded.values, label="probe RTT, loaded", color="tab:red")
    ax2.plot(idle.index, idle.values, label="probe RTT, idle", color="tab:gray")
    ax2.set_ylabel("round trip (ms)")
    ax2.set_xlabel("time (s)")
    ax2.legend(loc="upper right", fontsize="small")
    ax2.grid(alpha=0.3)
    if warm > 0:
        for ax in (ax1, ax2):
            ax.axvspan(0, warm, color="0.85", alpha=0.5, lw=0)
        ax1.text(warm / 2, 0.02, "warm-up\n(not measured)", transform=ax1.get_xaxis_transform(),
                 ha="center", va="bottom", fontsize="x-small", color="0.35")
    o = res.outcome
    fig.suptitle(f"{res.loaded.summary['name']}: grade {o.grade} "
                 f"(+{o.added_latency_ms:.1f} ms under load, {o.probe_loss_pct:.1f} % probes lost)")
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
    ax.set_title(f"after the {warm:g} s warm-up", fontsize="small")
    ax.set_xscale("log")
    # Labels on 1-2-3-5 steps only; matplotlib's default labels every minor tick of a short
    # log range and they overprint.
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 3.0, 5.0)))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
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


def describe(o: Outcome, settings: list[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    """Rows for a console table: the settings tested (when given), then the outcome."""
    def ms(x: float | None) -> str:
        return "-" if x is None or math.isnan(x) else f"{x:.1f} ms"

    if o.grade != o.latency_grade and o.latency_grade:
        graded = (f"{o.grade} (latency alone: {o.latency_grade}; capped at {LOSS_CAP}: "
                  f">= {LOSS_BOUND_PCT:g} % of probes lost)")
    else:
        graded = o.grade
    return [
        *(settings or []),
        ("download", f"{o.download_mbps:.2f} Mbit/s"),
        *([("  why so low", o.note)] if o.note else []),
        ("upload", f"{o.upload_mbps:.2f} Mbit/s"),
        ("probe RTT idle", ms(o.idle_rtt_ms)),
        ("probe RTT loaded (mean / p95)", f"{ms(o.loaded_rtt_ms)} / {ms(o.loaded_rtt_p95_ms)}"),
        ("added latency", ms(o.added_latency_ms)),
        ("grade, probe loss", f"{graded}, {o.probe_loss_pct:.2f} % lost"),
        ("voice down (delay / jitter / loss)",
         f"{ms(o.voip_down.owd_mean_ms)} / {ms(o.voip_down.jitter_ms)} / {o.voip_down.loss_pct:.2f} %"),
        ("voice up (delay / jitter / loss)",
         f"{ms(o.voip_up.owd_mean_ms)} / {ms(o.voip_up.jitter_ms)} / {o.voip_up.loss_pct:.2f} %"),
    ]
