"""Every fix on one workload: the papers' sender-, receiver- and gateway-side fixes and the
field's AQMs side by side, each under the latency-under-load test (:mod:`bloatlab.rrul`), on
the papers' main scenarios. ``bloatlab fixes`` runs the grid and writes an HTML report.

A *fix* is a function that edits the two RRUL scenarios (idle and loaded) of a base: a queue
discipline on both directions of the bottleneck, a congestion control for the bulk flows, an
ACK rewriter at the gateway, a receive-window policy at the receivers, or DCCP instead of TCP
for the bulk flows. Fixes that need something a base lacks (ABRWDA reads a radio link) are
skipped on that base, and the report says so.

Beside the RRUL pair, each (base, fix) runs two side scenarios for what a person feels
(issue 32, part 5): a *media* run — the loaded run's bulk flows (as the fix left them) with a
GCC video call and a page-load flow downstream instead of the probes — for the video frame
delay p95 and the page load time, and an *RPM* run — the fixed topology with the RPM test of
draft-ietf-ippm-responsiveness-09 in both directions (1 s intervals; its load uses the fix's
TCP congestion control) — for responsiveness. The RRUL runs are unchanged, so their numbers
are the same as without these columns. RPM needs a dumbbell: the cellular base has none.
The report ranks the fixes by each measure and by their mean rank.
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


def wifi_stations(station_queue: str) -> Callable[[Doc], Doc | None]:
    """The stations' own queueing (docs/wifi.md): mac80211's FQ-MAC on their transmit path."""
    def apply(doc: Doc) -> Doc | None:
        t = doc["topology"]
        if t.get("kind") != "wifi":
            return None
        t["station_queue"] = station_queue
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
    # A station is a mac80211 device too: FQ-MAC on its transmit path gives the downloads' ACKs
    # a flow of their own beside the uploads (docs/wifi.md, the stations' queue).
    ("Station FQ-MAC", "Wi-Fi stations", wifi_stations("fq_mac")),
    ("FQ-MAC, AP and stations", "Wi-Fi AP+stations", both(wifi_ap("fq_mac"), wifi_stations("fq_mac"))),
    ("Airtime fairness + station FQ-MAC", "Wi-Fi AP+stations",
     both(wifi_ap("airtime"), wifi_stations("fq_mac"))),
]


@dataclass(frozen=True)
class Felt:
    """What a person feels, from the side runs: the video call's frame delay p95 (ms), the
    mean page load time (s), RPM and its class (None where a run has no sample)."""

    frame_p95_ms: float | None = None
    frame_loss_pct: float | None = None
    plt_mean_s: float | None = None
    rpm: float | None = None
    rpm_class: str | None = None
    #: the RPM test ran (a dumbbell); without a value then, no probe completed in its window
    rpm_ran: bool = False


@dataclass(frozen=True)
class Row:
    base: str
    fix: str
    place: str
    outcome: Outcome | None
    skipped: str | None = None
    felt: Felt | None = None


#: The side runs' video call and page loads (downstream, the user's direction).
VIDEO_FLOW = {"transport": "udp", "app": "video", "cc": "gcc", "group": "video"}
#: A light page (500 KB in 20 objects), not the HTTP Archive's 2 MB median: the papers' bases
#: run at 2-4 Mbit/s beside 4 bulk flows each way, where a 2 MB page takes longer than a run.
PAGE_FLOW = {"cc": "cubic", "app": "page", "group": "page", "think": "1s", "size": "500KB", "objects": 20}
#: The video ranking counts a lost frame as one that never arrives: with 5 % or more of the
#: frames lost the p95 of all frames is infinite, so such a fix ranks behind every fix below
#: that share, and among them by the share lost.
FRAME_LOSS_BOUND_PCT = 5.0


def side_scenarios(idle: Doc, loaded: Doc) -> tuple[Doc, Doc | None]:
    """The media run (the loaded run's bulk flows, a video call and page loads) and the RPM
    run (the idle run's topology with a ``[responsiveness]`` test; None off a dumbbell)."""
    media = copy.deepcopy(loaded)
    media["name"] = str(loaded.get("name", "scenario")).replace("-rrul-loaded", "") + "-felt"
    # On a graph topology (Wi-Fi) the call and the pages go where the probes go.
    probe = next((f for f in media["flows"] if f.get("group") == "probe"), {})
    ends = {k: probe[k] for k in ("src", "dst") if k in probe}
    media["flows"] = [f for f in media["flows"] if f.get("group") in ("download", "upload")]
    media["flows"] += [{**copy.deepcopy(VIDEO_FLOW), **ends}, {**copy.deepcopy(PAGE_FLOW), **ends}]
    if idle["topology"].get("kind", "dumbbell") != "dumbbell":
        return media, None
    rpm = copy.deepcopy(idle)
    rpm["name"] = media["name"].replace("-felt", "-rpm")
    rpm["flows"] = []
    ccs = {f.get("cc") for f in loaded["flows"] if f.get("group") == "download" and f.get("transport", "tcp") == "tcp"}
    rpm["responsiveness"] = {"direction": "both", "interval": "1s",
                             **({"cc": ccs.pop()} if len(ccs) == 1 else {})}
    return media, rpm


def felt(media: Mapping[str, Any], rpm: Mapping[str, Any] | None) -> Felt:
    video = [f for f in media["flows"] if f["group"] == "video"]
    page = [f for f in media["flows"] if f["group"] == "page"]
    block = (rpm or {}).get("responsiveness") or {}
    return Felt(frame_p95_ms=video[0].get("frame_delay_p95_ms") if video else None,
                frame_loss_pct=video[0].get("frame_loss_pct") if video else None,
                plt_mean_s=page[0].get("plt_mean_s") if page else None,
                rpm=block.get("rpm"), rpm_class=block.get("class"), rpm_ran=rpm is not None)


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
                why = ("needs a Wi-Fi access point" if place.startswith("Wi-Fi") else
                       {"receiver": "needs a cellular radio link"}.get(place, "needs a dumbbell's gateway router"))
                skipped.append(Row(b, label, place, None, why))
                continue
            runs.append((b, label, i, lo))
    return runs, skipped


def run(*, jobs: int | None = None, **kw: Any) -> list[Row]:
    """Runs every (base, fix) pair on the sweep back ends (worker processes); rows in plan order."""
    runs, skipped = plan(**kw)
    places = {label: place for label, place, _ in FIXES}
    docs: list[Doc] = []
    where: list[tuple[int, int, int, int | None]] = []
    for _, _, idle, loaded in runs:
        media, rpm = side_scenarios(idle, loaded)
        first = len(docs)
        docs += [idle, loaded, media] + ([rpm] if rpm is not None else [])
        where.append((first, first + 1, first + 2, first + 3 if rpm is not None else None))
    summaries = _summaries(docs, jobs)
    results = [(b, f, asdict(outcome(summaries[i], summaries[lo])),
                felt(summaries[m], summaries[r] if r is not None else None))
               for (b, f, _, _), (i, lo, m, r) in zip(runs, where)]
    rows = [Row(b, f, places[f], Outcome(**{**o, "voip_down": _voice(o["voip_down"]), "voip_up": _voice(o["voip_up"])}),
                felt=fe)
            for b, f, o, fe in results]
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
           "apply to both directions. What a person feels comes from two side runs per fix: the loaded "
           "run's bulk flows with a GCC video call and page loads downstream (video frame delay p95, "
           "mean page load time; - when no page finished) and the RPM test of "
           "draft-ietf-ippm-responsiveness-09 in both directions (- off a dumbbell); each base ends "
           "with the fixes ranked by these and the added latency.", ""]
    for b, (desc, _) in BASES.items():
        these = [r for r in rows if r.base == b]
        if not these:
            continue
        out += [f"## {b}", "", desc, "",
                "| fix | where | download Mbit/s | upload Mbit/s | probe RTT idle → loaded ms | added ms "
                "| probe loss % | grade | voice down delay / jitter ms | video frame p95 ms | page load s | RPM |",
                "| --- | --- | ---: | ---: | ---: | ---: | ---: | :---: | ---: | ---: | ---: | ---: |"]
        for r in these:
            if r.outcome is None:
                out.append(f"| {r.fix} | {r.place} | skipped: {r.skipped} | | | | | | | | | |")
                continue
            o = r.outcome
            vd = o.voip_down
            voice = "-" if vd.owd_mean_ms is None else f"{vd.owd_mean_ms:.1f} / {vd.jitter_ms or 0:.1f}"
            out.append(f"| {r.fix} | {r.place} | {o.download_mbps:.2f} | {o.upload_mbps:.2f} | "
                       f"{o.idle_rtt_ms:.1f} → {o.loaded_rtt_ms:.1f} | {o.added_latency_ms:.1f} | "
                       f"{o.probe_loss_pct:.2f} | {grade_text(o)} | {voice} | {felt_cells(r.felt)} |")
        notes = [(r.fix, r.outcome.note) for r in these if r.outcome is not None and r.outcome.note]
        if notes:
            out.append("")
            out += [f"Note ({fix}): {note}." for fix, note in notes]
        out += ranking(these)
        if b in figures:
            out += ["", f"![{b}](data:image/png;base64,{figures[b]})"]
        out.append("")
    return "\n".join(out) + "\n"


def felt_cells(f: Felt | None) -> str:
    """The three felt columns: frame delay p95 (with frame loss), page load, RPM (class)."""
    f = f or Felt()
    video = "-" if f.frame_p95_ms is None else f"{f.frame_p95_ms:.0f}"
    if f.frame_loss_pct:
        video += f" ({f.frame_loss_pct:.1f} % lost)"
    page = "-" if f.plt_mean_s is None else f"{f.plt_mean_s:.2f}"
    rpm = "-" if f.rpm is None else f"{f.rpm:.0f} ({f.rpm_class})"
    return f"{video} | {page} | {rpm}"


def _video_key(r: Row) -> tuple[bool, float] | None:
    f = r.felt
    if f is None or f.frame_p95_ms is None:
        return None
    loss = f.frame_loss_pct or 0.0
    return (True, loss) if loss >= FRAME_LOSS_BOUND_PCT else (False, f.frame_p95_ms)


#: The measures the report ranks by: (title, a row's sort key or None, higher is better,
#: whether a row without a value ran the measure and found nothing, so ranks last).
MEASURES: list[tuple[str, Callable[[Row], Any], bool, Callable[[Row], bool]]] = [
    ("added latency", lambda r: r.outcome.added_latency_ms if r.outcome else None, False, lambda r: False),
    ("video frame delay p95", _video_key, False, lambda r: r.felt is not None),
    ("page load time", lambda r: r.felt.plt_mean_s if r.felt else None, False, lambda r: r.felt is not None),
    ("RPM", lambda r: r.felt.rpm if r.felt else None, True, lambda r: bool(r.felt and r.felt.rpm_ran)),
]


def ranks(rows: list[Row]) -> dict[str, dict[str, int]]:
    """Each measure's ranking of the fixes (1 = best; ties share a rank). A fix whose run
    found no value (no page finished, no RPM probe completed) ranks after every fix with
    one; a measure no fix has is left out."""
    out: dict[str, dict[str, int]] = {}
    for title, get, higher, ran in MEASURES:
        vals = {r.fix: v for r in rows if (v := get(r)) is not None}
        if not vals:
            continue
        order = sorted(vals.values(), reverse=higher)
        out[title] = {fix: 1 + order.index(v) for fix, v in vals.items()}
        for r in rows:
            if r.fix not in vals and r.outcome is not None and ran(r):
                out[title][r.fix] = len(order) + 1
    return out


def ranking(rows: list[Row]) -> list[str]:
    """The report's ranking table: each fix's rank by every measure and the mean of its
    ranks, best mean first (a fix without a measure is ranked on the others)."""
    rk = ranks(rows)
    fixes = [r.fix for r in rows if r.outcome is not None]
    if len(fixes) < 2:
        return []
    titles = [t for t, *_ in MEASURES if t in rk]
    means = {f: sum(v) / len(v) for f in fixes if (v := [rk[t][f] for t in titles if f in rk[t]])}
    lines = ["", "Ranked by what a person feels (1 = best; mean of the ranks, best first; a run that "
             "found no value ranks last; a lost video frame counts as never arriving, so with "
             f"≥ {FRAME_LOSS_BOUND_PCT:g} % of frames lost a fix ranks behind any delay, by the share lost):", "",
             "| fix | " + " | ".join(titles) + " | mean rank |",
             "| --- | " + " | ".join("---:" for _ in titles) + " | ---: |"]
    for f in sorted(means, key=lambda f: (means[f], fixes.index(f))):
        cells = " | ".join(str(rk[t].get(f, "-")) for t in titles)
        lines.append(f"| {f} | {cells} | {means[f]:.1f} |")
    return lines


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
             "outcome": asdict(r.outcome) if r.outcome else None,
             "felt": asdict(r.felt) if r.felt else None} for r in rows]
    write_text(out / "results.json", json.dumps(data, indent=2) + "\n")
    return out
