"""Every fix on one workload: the papers' sender-, receiver- and gateway-side fixes and the
field's AQMs side by side, each under the latency-under-load test (:mod:`bloatlab.rrul`), on
the papers' main scenarios. ``bloatlab fixes`` runs the grid and writes an HTML report.

A *fix* is a function that edits the two RRUL scenarios (idle and loaded) of a base: a queue
discipline on both directions of the bottleneck, a congestion control for the bulk flows, an
ACK rewriter at the gateway, a receive-window policy at the receivers, or DCCP instead of TCP
for the bulk flows. Fixes that need something a base lacks (ABRWDA reads a radio link) are
skipped on that base, and the report says so.
"""

from __future__ import annotations

import base64
import copy
import io
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .errors import ScenarioError
from .rrul import LOSS_BOUND_PCT, Outcome, outcome, scenarios

Doc = dict[str, Any]


def _dumbbell(rate: str, delay: str, limit: str, access_rate: str, access_delay: str) -> Doc:
    return {"topology": {"kind": "dumbbell", "bottleneck": {"rate": rate, "delay": delay},
                         "bottleneck_queue": {"kind": "droptail", "limit": limit},
                         "reverse_queue": {"kind": "droptail", "limit": limit},
                         "access": {"rate": access_rate, "delay": access_delay}}}


#: The papers' main scenarios as RRUL bases (their flows are replaced by the test's).
BASES: dict[str, tuple[str, Doc]] = {
    "wang2016-I": ("Wang & Yuan 2016 scenario I: 2 Mbit/s, 20 ms base RTT, 500 KB drop-tail",
                   _dumbbell("2Mbps", "5ms", "500KB", "10Mbps", "2.5ms")),
    "talau-1": ("Talau et al. 2019 scenario 1: 4 Mbit/s, 370 ms base RTT, 97 KB drop-tail",
                _dumbbell("4Mbps", "180ms", "97KB", "4Mbps", "2.5ms")),
    # The profile's 1000-packet base-station buffer, written out so a fix that changes the
    # discipline keeps it (a bs_queue table replaces the profile's whole queue).
    "cellular-3.5g": ("Alfredsson et al. 2013 3.5G link (bloatlab's 3.5g profile), one UE",
                      {"topology": {"kind": "cellular", "profile": "3.5g", "ues": 1,
                                    "bs_queue": {"kind": "droptail", "limit": "1000p"}}}),
    # scenarios/leo.toml's path with lower rates (a grid of runs stays affordable): satellite
    # reassignments every 15 s, a delay step and a loss burst at each (docs/topology.md).
    "leo": ("LEO access (Starlink-like): 15 s reassignments, 12-25 ms one way, 40-120 Mbit/s down, "
            "10 Mbit/s up, 1 MB drop-tail",
            {"topology": {"kind": "dumbbell",
                          "bottleneck": {"schedule": {"model": "leo", "delay": ["12ms", "25ms"],
                                                      "rate": ["40Mbps", "120Mbps"], "switch_loss": 0.3,
                                                      "switch_time": "50ms"},
                                         "reverse_rate": "10Mbps"},
                          "bottleneck_queue": {"kind": "droptail", "limit": "1MB"},
                          "access": {"rate": "1Gbps", "delay": "1ms"}}}),
    # The "Ending the Anomaly" testbed shape (docs/wifi.md): the AP's qdisc, written out so a
    # fix that changes the discipline keeps its limit, over ath9k's 123-packet driver queue.
    "wifi-home": ("A home Wi-Fi AP (Høiland-Jørgensen et al. 2017 shape): stations at HT MCS 15, 15 and 0, "
                  "a 1000-packet FIFO over the driver's 123 packets",
                  {"topology": {"kind": "wifi", "ap_queue": "qdisc",
                                "qdisc": {"kind": "droptail", "limit": "1000p"},
                                "uplink": {"rate": "1Gbps", "delay": "5ms"},
                                "stations": [{"name": "laptop1", "mcs": 15, "short_gi": True},
                                             {"name": "laptop2", "mcs": 15, "short_gi": True},
                                             {"name": "far", "mcs": 0}]}}),
}


def _queues(doc: Doc) -> list[dict[str, Any]]:
    """The queue tables of the bottleneck pair (dumbbell: forward and reverse; cellular: the
    base station's and the UE's)."""
    t = doc["topology"]
    if t.get("kind") == "wifi":
        # The AP's qdisc (over the driver's queue); the stations' queues are not the AP's.
        return [t.setdefault("qdisc", {})] if t.get("ap_queue", "qdisc") == "qdisc" else []
    keys = ("bs_queue", "ue_queue") if t.get("kind") == "cellular" else ("bottleneck_queue", "reverse_queue")
    return [t.setdefault(k, {}) for k in keys]


def queue(kind: str, **params: Any) -> Callable[[Doc], Doc | None]:
    def apply(doc: Doc) -> Doc:
        for q in _queues(doc):
            limit = q.get("limit")
            q.clear()
            q.update({"kind": kind, **params})
            if limit is not None:
                q["limit"] = limit
        return doc
    return apply


def bulk_cc(cc: str) -> Callable[[Doc], Doc | None]:
    def apply(doc: Doc) -> Doc:
        for f in doc["flows"]:
            if f.get("group") in ("download", "upload"):
                f["cc"] = cc
        return doc
    return apply


def gateway(kind: str) -> Callable[[Doc], Doc | None]:
    def apply(doc: Doc) -> Doc | None:
        if doc["topology"].get("kind") in ("cellular", "wifi"):
            return None  # no gateway router in front of a base station or an access point
        g: dict[str, Any] = {"kind": kind}
        if kind == "awm":
            # AWM needs the number of flows whose ACKs it rewrites: the downloads.
            g["flows"] = max(1, sum(f.get("count", 1) for f in doc["flows"] if f.get("group") == "download"))
        doc["topology"]["gateway"] = g
        return doc
    return apply


def rwnd(policy: str, cellular_only: bool = False) -> Callable[[Doc], Doc | None]:
    def apply(doc: Doc) -> Doc | None:
        if cellular_only and doc["topology"].get("kind") != "cellular":
            return None
        for f in doc["flows"]:
            if f.get("group") == "download":
                f["rwnd"] = policy
        return doc
    return apply


def dccp(cc: str) -> Callable[[Doc], Doc | None]:
    def apply(doc: Doc) -> Doc:
        for f in doc["flows"]:
            if f.get("group") in ("download", "upload"):
                f.pop("cc", None)
                f.update({"transport": "dccp", "cc": cc})
        return doc
    return apply


def wifi_ap(ap_queue: str) -> Callable[[Doc], Doc | None]:
    """The AP's own queueing (docs/wifi.md): FQ-MAC, or FQ-MAC with airtime fairness."""
    def apply(doc: Doc) -> Doc | None:
        t = doc["topology"]
        if t.get("kind") != "wifi":
            return None
        t.pop("qdisc", None)
        t.pop("driver_limit", None)
        t["ap_queue"] = ap_queue
        return doc
    return apply


def both(*fixes: Callable[[Doc], Doc | None]) -> Callable[[Doc], Doc | None]:
    """Several edits at once (a gateway discipline with the senders it is made for)."""
    def apply(doc: Doc) -> Doc | None:
        for f in fixes:
            if f(doc) is None:
                return None
        return doc
    return apply


#: (label, where the fix lives, how it edits a scenario). The first is the reference.
FIXES: list[tuple[str, str, Callable[[Doc], Doc | None]]] = [
    ("drop-tail", "none", lambda d: d),
    ("Cubic+", "sender", bulk_cc("cubic+")),
    ("BBR", "sender", bulk_cc("bbr")),
    # BBRv3 (draft-ietf-ccwg-bbr): BBR with loss/ECN bounds; LEDBAT and LEDBAT++: scavengers
    # that hold 100 ms / 60 ms of queueing delay (docs/congestion-control.md).
    ("BBRv3", "sender", bulk_cc("bbr3")),
    ("LEDBAT", "sender", bulk_cc("ledbat")),
    ("LEDBAT++", "sender", bulk_cc("ledbat++")),
    ("DCCP-BBR (adaptive)", "sender", dccp("bbr-adaptive")),
    ("DRWA", "receiver", rwnd("drwa")),
    ("ABRWDA", "receiver", rwnd("abrwda", cellular_only=True)),
    ("EWT", "gateway", gateway("ewt")),
    ("EWA", "gateway", gateway("ewa")),
    ("AWM", "gateway", gateway("awm")),
    ("RED", "gateway", queue("red")),
    ("CoDel", "gateway", queue("codel")),
    ("PIE", "gateway", queue("pie")),
    ("FQ-CoDel", "gateway", queue("fq_codel")),
    # CAKE as SQM deploys it on a home router, without its own shaper here: the bottleneck
    # link is the rate limit (tc cake unlimited), so the difference to FQ-CoDel is COBALT,
    # set-associative hashing and triple-isolate host fairness.
    ("CAKE", "gateway", queue("cake")),
    # L4S: the coupled dual queue with scalable senders; the probes and voice (Not-ECT) share
    # the classic queue's PI2 control.
    ("DualPI2 + Prague", "gateway+sender", both(queue("dualpi2"), bulk_cc("prague"))),
    # Wi-Fi (Høiland-Jørgensen et al. 2017): the queueing moves into the AP's MAC.
    ("FQ-MAC", "Wi-Fi AP", wifi_ap("fq_mac")),
    ("Airtime fairness", "Wi-Fi AP", wifi_ap("airtime")),
]


@dataclass(frozen=True)
class Row:
    base: str
    fix: str
    place: str
    outcome: Outcome | None
    skipped: str | None = None


def _summaries(docs: list[Doc], jobs: int | None) -> list[dict[str, Any]]:
    """Runs the scenarios on a sweep back end (``serial`` for one job, else ``local`` worker
    processes); their summaries in order. The first failed run raises its error."""
    from .errors import ScenarioError, SimulationError
    from .scenario import resolve, to_json
    from .sweeps.backends import make_backend

    tasks = [{"run_id": str(i), "scenario_json": to_json(resolve(d)), "series": False}
             for i, d in enumerate(docs)]
    backend = make_backend("serial" if jobs == 1 else "local", jobs=jobs)
    backend.start()
    try:
        outs = {o["run_id"]: o for o in backend.run(tasks)}
    finally:
        backend.close()
    summaries = []
    for t in tasks:
        o = outs[t["run_id"]]
        if o["status"] != "ok":
            err = o["error"]
            if err["type"] == "ScenarioError":
                raise ScenarioError(err.get("path", ""), err["message"])
            if err["type"] == "SimulationError":
                raise SimulationError(err["message"])
            raise RuntimeError(err["message"])
        summaries.append(json.loads(o["files"]["summary.json"]))
    return summaries


def plan(*, duration: str = "30s", warmup: str = "5s", flows: int = 4, seed: int = 1,
         bases: list[str] | None = None, fixes: list[str] | None = None) -> tuple[list[tuple[str, str, Doc, Doc]],
                                                                                  list[Row]]:
    """The runs (base, fix, idle scenario, loaded scenario) and the rows skipped."""
    names = bases or list(BASES)
    for b in names:
        if b not in BASES:
            raise ScenarioError("--base", f"unknown base \"{b}\" (known: {', '.join(BASES)})")
    labels = [f[0] for f in FIXES]
    for f in fixes or []:
        if f not in labels:
            raise ScenarioError("--fix", f"unknown fix \"{f}\" (known: {', '.join(labels)})")
    runs, skipped = [], []
    for b in names:
        doc = {"name": b, "duration": duration, "warmup": warmup, "seed": seed, "tcp": {"recovery": "sack"},
               **copy.deepcopy(BASES[b][1])}
        idle, loaded = scenarios(doc, flows=flows)
        for label, place, edit in FIXES:
            if fixes and label not in fixes:
                continue
            i, lo = edit(copy.deepcopy(idle)), edit(copy.deepcopy(loaded))
            if i is None or lo is None:
                why = {"receiver": "needs a cellular radio link",
                       "Wi-Fi AP": "needs a Wi-Fi access point"}.get(place, "needs a dumbbell's gateway router")
                skipped.append(Row(b, label, place, None, why))
                continue
            runs.append((b, label, i, lo))
    return runs, skipped


def run(*, jobs: int | None = None, **kw: Any) -> list[Row]:
    """Runs every (base, fix) pair on the sweep back ends (worker processes); rows in plan order."""
    runs, skipped = plan(**kw)
    places = {label: place for label, place, _ in FIXES}
    summaries = _summaries([doc for _, _, idle, loaded in runs for doc in (idle, loaded)], jobs)
    results = [(b, f, asdict(outcome(summaries[2 * k], summaries[2 * k + 1])))
               for k, (b, f, _, _) in enumerate(runs)]
    rows = [Row(b, f, places[f], Outcome(**{**o, "voip_down": _voice(o["voip_down"]), "voip_up": _voice(o["voip_up"])}))
            for b, f, o in results]
    order = {(b, f[0]): i for i, (b, f) in enumerate((b, f) for b in BASES for f in FIXES)}
    return sorted(rows + skipped, key=lambda r: order[(r.base, r.fix)])


def _voice(d: Mapping[str, Any]) -> Any:
    from .rrul import Voice

    return Voice(**d)


def report_markdown(rows: list[Row], figures: Mapping[str, str]) -> str:
    out = ["# Every fix, one workload: latency under load", "",
           "Each fix runs bloatlab's RRUL-like test (`bloatlab rrul`: bulk TCP flows both ways, echoed "
           "probes, a voice flow each way; idle run, then loaded) on each base scenario. Added latency = "
           "the probes' mean round trip loaded minus idle; grade: A+ < 5 ms, A < 30, B < 60, C < 200, "
           "D < 400, else F, and at most C when 3 % or more of the probes are lost (ITU-T G.1010's "
           "loss target for conversational voice; docs/latency-under-load.md). Queue disciplines "
           "apply to both directions.", ""]
    for b, (desc, _) in BASES.items():
        these = [r for r in rows if r.base == b]
        if not these:
            continue
        out += [f"## {b}", "", desc, "",
                "| fix | where | download Mbit/s | upload Mbit/s | probe RTT idle → loaded ms | added ms "
                "| probe loss % | grade | voice down delay / jitter ms |",
                "| --- | --- | ---: | ---: | ---: | ---: | ---: | :---: | ---: |"]
        for r in these:
            if r.outcome is None:
                out.append(f"| {r.fix} | {r.place} | skipped: {r.skipped} | | | | | | |")
                continue
            o = r.outcome
            vd = o.voip_down
            voice = "-" if vd.owd_mean_ms is None else f"{vd.owd_mean_ms:.1f} / {vd.jitter_ms or 0:.1f}"
            out.append(f"| {r.fix} | {r.place} | {o.download_mbps:.2f} | {o.upload_mbps:.2f} | "
                       f"{o.idle_rtt_ms:.1f} → {o.loaded_rtt_ms:.1f} | {o.added_latency_ms:.1f} | "
                       f"{o.probe_loss_pct:.2f} | {grade_text(o)} | {voice} |")
        notes = [(r.fix, r.outcome.note) for r in these if r.outcome is not None and r.outcome.note]
        if notes:
            out.append("")
            out += [f"Note ({fix}): {note}." for fix, note in notes]
        if b in figures:
            out += ["", f"![{b}](data:image/png;base64,{figures[b]})"]
        out.append("")
    return "\n".join(out) + "\n"


def grade_text(o: Outcome) -> str:
    """The grade, with the latency-only grade when probe loss capped it: ``C (A, lossy)``."""
    if o.latency_grade and o.latency_grade != o.grade:
        return f"{o.grade} (latency: {o.latency_grade}; loss ≥ {LOSS_BOUND_PCT:g} %)"
    return o.grade


#: Marker colours of the places a fix lives (the figure's legend names them).
PLACE_COLORS = {"none": "black", "sender": "tab:blue", "receiver": "tab:green", "gateway": "tab:red",
                "gateway+sender": "tab:purple"}


def _figure(rows: list[Row], base: str) -> str | None:
    from .experiments.plotting import pyplot

    these = [r for r in rows if r.base == base and r.outcome is not None]
    if not these:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for place, color in PLACE_COLORS.items():
        pts = [r.outcome for r in these if r.place == place]
        if pts:
            ax.scatter([o.added_latency_ms for o in pts], [o.download_mbps + o.upload_mbps for o in pts],
                       color=color, label=place, zorder=3)
    ax.set_xscale("symlog", linthresh=10)
    # Labels: fixes with (nearly) the same point share one label; the others are placed
    # alternately above and below their point so neighbours do not overprint.
    spots: dict[tuple[float, float], list[str]] = {}
    for r in these:
        o = r.outcome
        key = (round(o.added_latency_ms, 0), round(o.download_mbps + o.upload_mbps, 1))
        lossy = f" ({o.probe_loss_pct:.0f} % probes lost)" if o.probe_loss_pct >= LOSS_BOUND_PCT else ""
        spots.setdefault(key, []).append(r.fix + lossy)
    for i, ((x, y), names) in enumerate(sorted(spots.items())):
        dy = 10 if i % 2 == 0 else -14
        ax.annotate(" = ".join(names), (x, y), fontsize=7.5, xytext=(5, dy), textcoords="offset points",
                    arrowprops={"arrowstyle": "-", "color": "0.6", "lw": 0.5})
    ax.legend(title="where the fix lives", fontsize="small", title_fontsize="small", loc="best")
    ax.margins(x=0.12, y=0.08)
    ax.set_xlabel("added latency under load (ms)")
    ax.set_ylabel("goodput down + up (Mbit/s)")
    ax.set_title(base)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, metadata={"Software": None})
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def write(rows: list[Row], out: Path) -> Path:
    """report.md, report.html (self-contained) and results.json into ``out``."""
    from .atomic import write_text
    from .outputs.markdown import markdown_to_html

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    figures = {b: f for b in BASES if (f := _figure(rows, b)) is not None}
    md = report_markdown(rows, figures)
    write_text(out / "report.md", report_markdown(rows, {}))
    write_text(out / "report.html", markdown_to_html(md, "Every fix, one workload"))
    data = [{"base": r.base, "fix": r.fix, "place": r.place, "skipped": r.skipped,
             "outcome": asdict(r.outcome) if r.outcome else None} for r in rows]
    write_text(out / "results.json", json.dumps(data, indent=2) + "\n")
    return out
