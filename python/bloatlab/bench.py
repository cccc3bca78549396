"""``bloatlab bench``: simulator speed and memory on fixed scenarios.

Every scenario runs in a fresh ``python -m bloatlab.bench --child`` process with
time series off, so that its peak resident set size (``ru_maxrss``) belongs to
that run alone. Speeds come from the summary's ``engine`` block. The 400 Mbit/s
scenario runs at two simulated durations: with series off, memory must not
grow with simulated time. ``--scale`` instead runs a growing number of flows
(1 to 100,000) on a 10 Gbit/s dumbbell and a fat-tree, one process per point, on one thread;
then the parallel cases (Days' E5, the 4,096-flow fat-tree) at several thread counts, each
run in its own process too, checking that every thread count gives the same summary.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import resource
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class BenchError(RuntimeError):
    """A benchmark run failed."""


def dumbbell(
    name: str,
    *,
    duration_s: float,
    rate: str,
    delay: str,
    limit: str,
    access_rate: str,
    access_delay: str,
    flows: int = 1,
    cc: str = "cubic",
) -> dict[str, Any]:
    return {
        "name": name,
        "duration": f"{duration_s:g}s",
        "seed": 1,
        "metrics": {"interval": "0s"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": rate, "delay": delay},
            "bottleneck_queue": {"kind": "droptail", "limit": limit},
            "access": {"rate": access_rate, "delay": access_delay},
        },
        # SACK loss recovery keeps a single long flow near the link rate after the slow-start
        # overshoot (with NewReno recovery it retransmits one segment per RTT for minutes),
        # so the bench measures a loaded link.
        "tcp": {"mss": "1448B", "rcvbuf": "32MB", "recovery": "sack"},
        "flows": [{"transport": "tcp", "cc": cc, "count": flows, "size": "unlimited"}],
    }


@dataclass(frozen=True)
class Case:
    key: str
    description: str
    full_s: float
    quick_s: float
    build: Callable[[float], dict[str, Any]]

    def scenario(self, duration_s: float) -> dict[str, Any]:
        return self.build(duration_s)


def _wang_ii(d: float) -> dict[str, Any]:
    # 400 Mbit/s, base RTT 2 * (2 * 2.5 + 55) = 120 ms, 1 Gbit/s access, 1500 KB drop-tail.
    return dumbbell(
        "wang2016-II", duration_s=d, rate="400Mbps", delay="55ms", limit="1500KB",
        access_rate="1Gbps", access_delay="2.5ms",
    )


def _wang_ii_vegas(d: float) -> dict[str, Any]:
    # The same path with Vegas (ns-3 3.44 forwards about 41,000 packets/s here, 10,500 with CUBIC).
    s = _wang_ii(d)
    s["flows"][0]["cc"] = "vegas"
    return s


def _wang_i(d: float) -> dict[str, Any]:
    # 2 Mbit/s, base RTT 2 * (2 * 2.5 + 5) = 20 ms, 500 KB drop-tail.
    return dumbbell(
        "wang2016-I", duration_s=d, rate="2Mbps", delay="5ms", limit="500KB",
        access_rate="10Mbps", access_delay="2.5ms",
    )


def _ten_flows(d: float) -> dict[str, Any]:
    # 100 Mbit/s, base RTT 2 * (2 * 2.5 + 10) = 30 ms, buffer = 1 BDP (375 KB), 10 flows.
    return dumbbell(
        "dumbbell-10x100M", duration_s=d, rate="100Mbps", delay="10ms", limit="375KB",
        access_rate="1Gbps", access_delay="2.5ms", flows=10,
    )


def _wifi_ten(d: float) -> dict[str, Any]:
    # A 10-station 802.11n BSS (HT20 MCS 15, 7, 4, 15, 2, 7, 15, 0, 5, 15; short GI) behind a
    # 1 Gbit/s uplink, FQ-MAC with airtime fairness, one bulk TCP flow each way per station.
    mcs = [15, 7, 4, 15, 2, 7, 15, 0, 5, 15]
    stations = [{"name": f"sta{i}", "mcs": m, "short_gi": True} for i, m in enumerate(mcs)]
    flows = []
    for i in range(len(mcs)):
        flows.append({"transport": "tcp", "cc": "cubic", "src": "server", "dst": f"sta{i}"})
        flows.append({"transport": "tcp", "cc": "cubic", "src": f"sta{i}", "dst": "server"})
    return {
        "name": "wifi-10sta",
        "duration": f"{d}s",
        "seed": 1,
        "topology": {"kind": "wifi", "ap_queue": "airtime", "stations": stations},
        "tcp": {"recovery": "sack"},
        "flows": flows,
    }


WANG_II = "wang2016-II"

#: The cases in run order (simulated seconds: full, --quick). The 400 Mbit/s case runs twice.
CASES: list[Case] = [
    Case(f"{WANG_II}/short", "400 Mbit/s, 120 ms RTT, 1500 KB, 1 flow", 30.0, 5.0, _wang_ii),
    Case(f"{WANG_II}/long", "400 Mbit/s, 120 ms RTT, 1500 KB, 1 flow", 120.0, 20.0, _wang_ii),
    Case(f"{WANG_II}/vegas", "400 Mbit/s, 120 ms RTT, 1500 KB, 1 Vegas flow", 30.0, 5.0, _wang_ii_vegas),
    Case("wang2016-I", "2 Mbit/s, 20 ms RTT, 500 KB, 1 flow", 1000.0, 100.0, _wang_i),
    Case("dumbbell-10x100M", "100 Mbit/s, 30 ms RTT, 375 KB, 10 flows", 100.0, 10.0, _ten_flows),
    Case("wifi-10sta", "Wi-Fi BSS, 10 stations, airtime fairness, bulk TCP both ways", 60.0, 10.0, _wifi_ten),
]


def _maxrss_bytes() -> int:
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(r if sys.platform == "darwin" else r * 1024)  # macOS: bytes; Linux: KiB


def _child() -> int:
    """Runs one scenario from stdin (JSON) and prints engine stats and peak RSS as JSON."""
    from .errors import ScenarioError
    from .simcore import call_core

    scenario_json = sys.stdin.read()
    baseline = _maxrss_bytes()
    try:
        summary_json, _ = call_core(scenario_json, series=False)
    except Exception as e:  # noqa: BLE001 - reported to the parent
        args = getattr(e, "args", ())
        msg = ": ".join(str(a) for a in args if a) if isinstance(e, ScenarioError) else str(e)
        print(json.dumps({"error": f"{type(e).__name__}: {msg}"}))
        return 1
    summary = json.loads(summary_json)
    flows = summary.get("flows", [])
    print(json.dumps({"engine": summary.get("engine", {}), "baseline_rss_bytes": baseline,
                      "peak_rss_bytes": _maxrss_bytes(),
                      # What the parallel cases compare with the one-thread run, and their flows.
                      "summary_sha256": hashlib.sha256(stable_summary(summary_json).encode()).hexdigest(),
                      "flows": len(flows),
                      "flows_completed": sum(1 for f in flows if f.get("fct_s") is not None)}))
    return 0


#: The summary's wall-clock fields: the only ones that may differ between two runs of a scenario.
_WALL_CLOCK = re.compile(r'("(?:wall_s|packets_per_wall_s|setup_s)"\s*:\s*)(?:[-+0-9.eE]+|null)')


def stable_summary(summary_json: str) -> str:
    """The summary text with the wall-clock values (``engine.wall_s``, ``engine.packets_per_wall_s``,
    ``engine.setup_s``) blanked: everything else is the same bytes for any thread count."""
    return _WALL_CLOCK.sub(lambda m: m.group(1) + "X", summary_json)


def _run_child(scenario: dict[str, Any], what: str) -> dict[str, Any]:
    """Runs ``scenario`` in a fresh ``--child`` process: its engine block and peak RSS."""
    proc = subprocess.run(
        [sys.executable, "-m", "bloatlab.bench", "--child"],
        input=json.dumps(scenario),
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        out = json.loads(proc.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise BenchError(f"bench {what}: child exited {proc.returncode}: " + " | ".join(tail)) from None
    if "error" in out or proc.returncode != 0:
        raise BenchError(f"bench {what}: {out.get('error', f'child exited {proc.returncode}')}")
    # The core's notes (e.g. how many threads a run used when it asked for more than it could).
    out["notes"] = [ln[len("note: "):] for ln in proc.stderr.splitlines() if ln.startswith("note: ")]
    return out


def run_case(case: Case, duration_s: float) -> dict[str, Any]:
    out = _run_child(case.scenario(duration_s), case.key)
    e = out["engine"]
    wall = float(e.get("wall_s") or 0.0)
    events = int(e.get("events") or 0)
    return {
        "name": case.key,
        "description": case.description,
        "simulated_s": duration_s,
        "wall_s": wall,
        "events": events,
        "events_per_wall_s": events / wall if wall > 0 else None,
        "bottleneck_packets": int(e.get("bottleneck_packets") or 0),
        "packets_per_wall_s": e.get("packets_per_wall_s"),
        "peak_rss_mb": out["peak_rss_bytes"] / 2**20,
        "baseline_rss_mb": out["baseline_rss_bytes"] / 2**20,
    }


def run_suite(
    *, quick: bool = False, scale: float = 1.0, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Runs every case; returns the report (what ``bloatlab bench --json`` prints)."""
    from .simcore import __version__

    runs = []
    for case in CASES:
        d = (case.quick_s if quick else case.full_s) * scale
        if progress:
            progress(f"bench: {case.key} ({case.description}), {d:g} s simulated ...")
        runs.append(run_case(case, d))
    by_name = {r["name"]: r for r in runs}
    short, long_ = by_name[f"{WANG_II}/short"], by_name[f"{WANG_II}/long"]
    growth = (long_["peak_rss_mb"] / short["peak_rss_mb"] - 1.0) * 100.0
    return {
        "bloatlab": __version__,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus",
        "quick": quick,
        "runs": runs,
        "memory_vs_duration": {
            "scenario": WANG_II,
            "simulated_s": [short["simulated_s"], long_["simulated_s"]],
            "peak_rss_mb": [short["peak_rss_mb"], long_["peak_rss_mb"]],
            "growth_pct": growth,
        },
    }


def _print_table(console: Any, title: str, columns: list[str], rows: list[list[str]]) -> None:
    """Prints a results table: the first column left-aligned, numbers right-aligned."""
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAVY, show_edge=False, pad_edge=False, collapse_padding=True, title=title)
    for i, col in enumerate(columns):
        table.add_column(col, justify="left" if i == 0 else "right", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    console.print(table)


def render(report: dict[str, Any], console: Any) -> None:
    from .outputs.numbers import num, per_second

    rows = [[r["name"], num(r["simulated_s"], "g"), num(r["wall_s"], ".2f"), per_second(r["events"]),
             per_second(r["events_per_wall_s"]), per_second(r["bottleneck_packets"]),
             per_second(r["packets_per_wall_s"]), num(r["peak_rss_mb"], ".1f")] for r in report["runs"]]
    _print_table(console, f"bloatlab {report['bloatlab']} bench ({report['machine']}, series off)",
                 ["scenario", "sim s", "wall s", "events", "events/s", "bn pkts", "pkts/s", "RSS MiB"], rows)
    seen = set()
    for r in report["runs"]:
        base = r["name"].split("/")[0]
        if base not in seen:
            seen.add(base)
            console.print(f"  [bold]{base}[/]: {r['description']}")
    console.print("  bn pkts: packets that crossed the bottleneck; /s: per wall-clock second;")
    console.print("  RSS: peak resident memory of the process that ran the scenario")
    m = report["memory_vs_duration"]
    console.print(
        f"memory vs simulated time ({m['scenario']}): {m['simulated_s'][0]:g} s -> "
        f"{m['peak_rss_mb'][0]:.1f} MiB, {m['simulated_s'][1]:g} s -> {m['peak_rss_mb'][1]:.1f} MiB "
        f"peak RSS ({m['growth_pct']:+.1f} %)"
    )


# --------------------------------------------------------------------------- scale

#: Flow counts of ``bloatlab bench --scale`` (capped by ``--max-flows``).
SCALE_FLOWS: list[int] = [1, 10, 100, 1_000, 10_000, 100_000]
#: Simulated seconds per point: full, --quick.
SCALE_DURATION_S = (2.0, 0.5)


def scale_dumbbell(flows: int, duration_s: float) -> dict[str, Any]:
    """``flows`` long CUBIC flows on a 10 Gbit/s dumbbell: base RTT 2 * (2 * 2.5 + 5) = 20 ms,
    10 Gbit/s access links, a 25 MB (1 BDP) drop-tail buffer, all flows starting at once."""
    doc = dumbbell(
        f"scale-dumbbell-{flows}", duration_s=duration_s, rate="10Gbps", delay="5ms", limit="25MB",
        access_rate="10Gbps", access_delay="2.5ms", flows=flows,
    )
    doc["tcp"] = {"mss": "1448B", "recovery": "sack"}
    return doc


def fat_tree_shape(flows: int) -> tuple[int, int]:
    """The fat-tree of a scale point: the smallest even k whose k³/4 hosts carry ``flows`` at
    no more than 4 flows per host, and the flows per host (so ``count * k**3 // 4`` >= flows)."""
    k = 2
    while k**3 < flows:
        k += 2
    hosts = k**3 // 4
    return k, -(-flows // hosts)


def scale_fat_tree(flows: int, duration_s: float) -> dict[str, Any]:
    """About ``flows`` long CUBIC flows in a permutation on a k-ary fat-tree (10 Gbit/s, 1 µs
    links, 1000-packet drop-tail queues, ECMP by flow hash): every host sends ``count`` flows to
    one other host, so the point runs ``count * k³/4`` flows (:func:`fat_tree_shape`)."""
    k, count = fat_tree_shape(flows)
    return {
        "name": f"scale-fat-tree-{flows}",
        "duration": f"{max(1, round(duration_s * 1e6))}us",
        "seed": 1,
        # The curve is a per-core measure (the parallel cases below time threads).
        "threads": 1,
        "metrics": {"interval": "0s"},
        "topology": {"kind": "fat_tree", "k": k, "link": {"rate": "10Gbps", "delay": "1us"}, "ecmp": "hash"},
        "tcp": {"mss": "1448B", "recovery": "sack"},
        "flows": [{"transport": "tcp", "cc": "cubic", "pattern": "permutation", "count": count, "size": "unlimited"}],
    }


#: Topologies of the scale bench: name -> scenario builder (flows, simulated seconds).
SCALE_TOPOLOGIES: dict[str, Callable[[int, float], dict[str, Any]]] = {
    "dumbbell": scale_dumbbell, "fat_tree": scale_fat_tree,
}
#: Each topology's share of the point's simulated time. The fat-tree's hosts all send at
#: 10 Gbit/s over ~12 µs RTTs: a millisecond of it is as many transmissions as seconds of
#: the dumbbell, so it runs 1/200 of the time (2 s -> 10 ms; --quick 0.5 s -> 2.5 ms).
SCALE_TIME_SHARE: dict[str, float] = {"dumbbell": 1.0, "fat_tree": 1 / 200}


def _flows_in(doc: dict[str, Any]) -> int:
    """The flows a scale scenario runs (a permutation table runs ``count`` per host)."""
    t = doc["topology"]
    hosts = t["k"] ** 3 // 4 if t["kind"] == "fat_tree" else 1
    return sum(f.get("count", 1) * (hosts if f.get("pattern") == "permutation" else 1) for f in doc["flows"])


def scale_point(topology: str, flows: int, duration_s: float) -> dict[str, Any]:
    """One point of the scale curve, run in its own process (so the peak RSS is its own)."""
    duration_s *= SCALE_TIME_SHARE[topology]
    doc = SCALE_TOPOLOGIES[topology](flows, duration_s)
    flows = _flows_in(doc)
    out = _run_child(doc, f"--scale {topology} {flows} flows")
    e = out["engine"]
    wall = float(e.get("wall_s") or 0.0)
    tx = int(e.get("transmissions") or 0)
    bn = int(e.get("bottleneck_packets") or 0)
    return {
        "topology": topology,
        "flows": flows,
        "simulated_s": duration_s,
        "setup_s": float(e.get("setup_s") or 0.0),
        "wall_s": wall,
        "events": int(e.get("events") or 0),
        "bottleneck_packets": bn,
        "transmissions": tx,
        "bottleneck_packets_per_wall_s": bn / wall if wall > 0 else None,
        "transmissions_per_wall_s": tx / wall if wall > 0 else None,
        "peak_rss_mb": out["peak_rss_bytes"] / 2**20,
        "baseline_rss_mb": out["baseline_rss_bytes"] / 2**20,
    }


def run_scale(
    *, max_flows: int = SCALE_FLOWS[-1], quick: bool = False, time_scale: float = 1.0,
    topologies: list[str] | None = None, progress: Callable[[str], None] | None = None, repeat: int = 1,
) -> dict[str, Any]:
    """The scale curve: every flow count of :data:`SCALE_FLOWS` up to ``max_flows`` on each
    topology; what ``bloatlab bench --scale --json`` prints.

    With ``repeat`` > 1 the whole curve runs that many times, round after round (so that a
    slow spell of a shared machine falls on every point alike, not on one), and each point
    reports its run of median wall time, with every run's wall time in ``wall_s_runs``."""
    from .simcore import __version__

    if max_flows < 1:
        raise ValueError(f"--max-flows: must be at least 1 (got {max_flows})")
    if repeat < 1:
        raise ValueError(f"--repeat: must be at least 1 (got {repeat})")
    topologies = topologies or list(SCALE_TOPOLOGIES)
    counts = [n for n in SCALE_FLOWS if n <= max_flows]
    if counts[-1] != max_flows:
        counts.append(max_flows)
    d = SCALE_DURATION_S[1 if quick else 0] * time_scale
    curve = [(topo, n) for topo in topologies for n in counts]
    runs: list[list[dict[str, Any]]] = [[] for _ in curve]
    for r in range(repeat):
        for i, (topo, n) in enumerate(curve):
            if progress:
                rnd = f" (round {r + 1} of {repeat})" if repeat > 1 else ""
                progress(f"bench --scale: {topo}, {n} flows, {d:g} s simulated{rnd} ...")
            runs[i].append(scale_point(topo, n, d))
    points = [_median_run(rs) for rs in runs] if repeat > 1 else [rs[0] for rs in runs]
    return {
        "bloatlab": __version__,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus",
        "quick": quick,
        "scenario": "CUBIC flows; dumbbell: 10 Gbit/s bottleneck and access links, 20 ms base RTT, 25 MB "
                    "drop-tail; fat_tree: permutation, k chosen per flow count, 10 Gbit/s 1 us links, "
                    "1/200 of the simulated time",
        "repeat": repeat,
        "points": points,
    }


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median wall time (the lower of the two middle ones for an even count), with
    every run's wall time beside it."""
    mid = sorted(runs, key=lambda p: p["wall_s"])[(len(runs) - 1) // 2]
    return {**mid, "wall_s_runs": [p["wall_s"] for p in runs]}


#: The figure's panels: (key of a point, axis label).
SCALE_PANELS = [
    ("wall_s", "wall time (s)"),
    ("setup_s", "set-up time (s)"),
    ("peak_rss_mb", "peak RSS (MiB)"),
    ("bottleneck_packets_per_wall_s", "bottleneck packets / wall s"),
    ("transmissions_per_wall_s", "transmissions (all hops) / wall s"),
]


def scale_figure(report: dict[str, Any]) -> Any:
    """One panel per measure against the flow count (log-log), one line per topology."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 6.5), layout="constrained")
    axes = fig.subplots(2, 3).flatten()
    topologies = sorted({p["topology"] for p in report["points"]})
    for ax, (key, label) in zip(axes, SCALE_PANELS):
        for topo in topologies:
            pts = [p for p in report["points"] if p["topology"] == topo and p[key]]
            ax.plot([p["flows"] for p in pts], [p[key] for p in pts], marker="o", label=topo)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("flows")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend()
    axes[-1].axis("off")
    fig.suptitle(f"bloatlab {report['bloatlab']} bench --scale ({report['machine']})")
    return fig


def render_scale(report: dict[str, Any], console: Any) -> None:
    from .outputs.numbers import num, per_second

    rows = [[p["topology"], str(p["flows"]), num(p["simulated_s"], "g"), num(p["setup_s"], ".3f"),
             num(p["wall_s"], ".2f"), num(p["peak_rss_mb"], ".1f"), per_second(p["bottleneck_packets_per_wall_s"]),
             per_second(p["transmissions_per_wall_s"])] for p in report["points"]]
    _print_table(console, f"bloatlab {report['bloatlab']} bench --scale ({report['machine']}, series off)",
                 ["topology", "flows", "sim s", "setup s", "wall s", "RSS MiB", "bn pkts/s", "tx/s"], rows)
    console.print(f"  scenario: {report['scenario']}")
    console.print("  bn pkts/s: bottleneck packets per wall second; tx/s: packet transmissions over "
                  "every link per wall second; RSS: peak resident memory of the point's own process")
    if report.get("repeat", 1) > 1:
        console.print(f"  each point: its run of median wall time of {report['repeat']}, the curve run "
                      f"{report['repeat']} times round after round")


# --------------------------------------------------------------------------- parallel cases


def days_e5(duration_s: float = 1.0, k: int = 32) -> dict[str, Any]:
    """Days' E5 (the iQua/days benchmark): the k = 32 fat-tree (8,192 hosts), 100 Gbit/s 1 µs
    links, 200-packet drop-tail queues, ECMP by flow hash, one 1 MiB CUBIC flow per host in a
    permutation, SACK, sampling off. Run to completion: 1 s simulated is enough (the last flows
    wait out Linux's 200 ms minimum RTO); the bench checks that every flow has an ``fct_s``.
    ``k`` is for tests (a smaller tree, the same shape)."""
    return {
        "name": "days-e5" if k == 32 else f"days-e5-k{k}",
        "duration": f"{max(1, round(duration_s * 1e6))}us",
        "seed": 1,
        "metrics": {"interval": "0s"},
        "topology": {"kind": "fat_tree", "k": k, "link": {"rate": "100Gbps", "delay": "1us"},
                     "queue": {"kind": "droptail", "limit": "200p"}, "ecmp": "hash"},
        "tcp": {"mss": "1448B", "recovery": "sack"},
        "flows": [{"transport": "tcp", "cc": "cubic", "pattern": "permutation", "size": "1MiB"}],
    }


def fat_tree_4096(duration_s: float = 1.0, k: int = 16) -> dict[str, Any]:
    """The scale curve's 4,096-flow k = 16 fat-tree (:func:`scale_fat_tree`; 4 long CUBIC flows
    per host), its threads set per run. ``k`` is for tests (k³ flows, 4 per host)."""
    return scale_fat_tree(k**3, duration_s)


@dataclass(frozen=True)
class ParallelCase:
    key: str
    description: str
    #: (simulated seconds, k) -> scenario.
    build: Callable[[float, int], dict[str, Any]]
    #: The tree's k at full size.
    k: int
    #: Simulated seconds: fixed (run to completion), or None (``--case-time``).
    fixed_s: float | None


#: The cases of ``bloatlab bench --scale`` that time the parallel engine, by ``--cases`` name.
PARALLEL_CASES: dict[str, ParallelCase] = {
    "e5": ParallelCase("e5", "Days' E5: k = 32 fat-tree, 8,192 hosts, 100 Gbit/s 1 us links, 200p drop-tail, "
                       "one 1 MiB CUBIC flow per host (permutation), to completion", days_e5, 32, 1.0),
    "fat_tree_4096": ParallelCase("fat_tree_4096", "k = 16 fat-tree, 1,024 hosts, 10 Gbit/s 1 us links, 1000p "
                                  "drop-tail, 4 long CUBIC flows per host (permutation)", fat_tree_4096, 16, None),
}
#: ``--case-time`` default: full, --quick (fat_tree_4096; 1 s is about two hours of one core).
CASE_TIME_S = (1.0, 0.002)
#: The most threads a run may ask for (the core's limit).
MAX_THREADS = 1024


def parse_threads(text: str) -> list[int]:
    """``--threads``: comma-separated thread counts (1..1024) or ``all`` (every core), in order,
    duplicates dropped, 1 first (the reference of the speed-up and of ``same_bytes``).
    Raises ValueError naming ``--threads``."""
    out = [1]
    for item in (t.strip() for t in text.split(",")):
        if item == "all":
            n = os.cpu_count() or 1
        elif item.isdigit() and 1 <= int(item) <= MAX_THREADS:
            n = int(item)
        else:
            raise ValueError(f"--threads: must be thread counts from 1 to {MAX_THREADS} or all, separated by "
                             f"commas, e.g. 1,2,all (got {text!r})")
        if n not in out:
            out.append(n)
    return out


def parse_cases(text: str) -> list[str]:
    """``--cases``: comma-separated names of :data:`PARALLEL_CASES`, or ``none``. Raises
    ValueError naming ``--cases`` and the allowed values."""
    names = [t.strip() for t in text.split(",")]
    allowed = ", ".join([*PARALLEL_CASES, "none"])
    if names == ["none"]:
        return []
    for name in names:
        if name not in PARALLEL_CASES:
            why = "none goes alone" if name == "none" else f"unknown case {name!r}"
            raise ValueError(f"--cases: {why} (allowed: {allowed})")
    return list(dict.fromkeys(names))


def _threads_used(asked: int, notes: list[str]) -> int:
    """How many threads a run used: the core says so (``threads = 8: 4 used (...)``) when it
    used fewer than asked."""
    for note in notes:
        m = re.match(rf"threads = {asked}: (\d+) used", note)
        if m:
            return int(m.group(1))
    return asked


def parallel_run(doc: dict[str, Any], threads: int, what: str) -> dict[str, Any]:
    """Runs ``doc`` on ``threads`` threads in its own process (as the scale points are)."""
    doc = {**doc, "threads": threads}
    out = _run_child(doc, f"{what}, {threads} threads")
    e = out["engine"]
    wall = float(e.get("wall_s") or 0.0)
    tx = int(e.get("transmissions") or 0)
    return {
        "threads": threads,
        "threads_used": _threads_used(threads, out["notes"]),
        "setup_s": float(e.get("setup_s") or 0.0),
        "wall_s": wall,
        "events": int(e.get("events") or 0),
        "transmissions": tx,
        "transmissions_per_wall_s": tx / wall if wall > 0 else None,
        "peak_rss_mb": out["peak_rss_bytes"] / 2**20,
        "flows": out["flows"],
        "flows_completed": out["flows_completed"],
        "summary_sha256": out["summary_sha256"],
    }


def run_parallel_cases(
    names: list[str], *, threads: list[int], case_time_s: float, k: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Each case of ``names`` at each thread count of ``threads`` (the first is 1: the
    reference), each run in its own process; what ``bloatlab bench --scale --json`` reports
    under ``cases``. Per run: the speed-up (wall time of one thread / this run's) and
    ``same_bytes`` (its summary, wall-clock fields aside, is the one-thread run's byte for
    byte; false is a bug). ``k`` builds every case's tree at that k instead (tests)."""
    if not threads or threads[0] != 1:
        raise ValueError("threads: the first run is the one-thread reference")
    cases = []
    for name in names:
        case = PARALLEL_CASES[name]
        d = case.fixed_s if case.fixed_s is not None else case_time_s
        doc = case.build(d, k or case.k)
        runs: list[dict[str, Any]] = []
        for n in threads:
            if progress:
                progress(f"bench --scale: {name} ({doc['name']}), {d:g} s simulated, {n} thread(s) ...")
            r = parallel_run(doc, n, f"--scale {name}")
            ref = runs[0] if runs else r
            r["speedup"] = ref["wall_s"] / r["wall_s"] if r["wall_s"] > 0 else None
            r["same_bytes"] = r["summary_sha256"] == ref["summary_sha256"]
            runs.append(r)
        description = case.description if doc["topology"]["k"] == case.k else \
            f"{case.description} -- built here at k = {doc['topology']['k']}"
        cases.append({"name": name, "scenario": doc["name"], "description": description,
                      "k": doc["topology"]["k"], "simulated_s": d, "to_completion": case.fixed_s is not None,
                      "runs": runs})
    return cases


def cases_all_same(cases: list[dict[str, Any]]) -> bool:
    """Whether every run of every case gave the one-thread run's summary."""
    return all(r["same_bytes"] for c in cases for r in c["runs"])


def render_cases(cases: list[dict[str, Any]], console: Any) -> None:
    from .outputs.numbers import num, per_second

    rows = []
    for c in cases:
        for r in c["runs"]:
            done = f"{r['flows_completed']}/{r['flows']}" if c["to_completion"] else "-"
            same = "yes" if r["same_bytes"] else "[bold red]NO (bug)[/]"
            threads = str(r["threads"])
            if r["threads_used"] != r["threads"]:
                threads += f" ({r['threads_used']})"
            rows.append([c["name"], threads, num(r["setup_s"], ".3f"), num(r["wall_s"], ".2f"),
                         num(r["speedup"], ".2f"), per_second(r["transmissions_per_wall_s"]),
                         num(r["peak_rss_mb"], ".1f"), done, same])
    _print_table(console, "parallel cases (series off)",
                 ["case", "threads", "setup s", "wall s", "speed-up", "tx/s", "RSS MiB", "done", "same"], rows)
    for c in cases:
        console.print(f"  [bold]{c['name']}[/]: {c['description']}; {c['simulated_s']:g} s simulated")
    console.print("  threads: asked (used, when fewer); speed-up: wall time of 1 thread / this run's; done: flows "
                  "with a completion time; same: the summary (wall-clock fields aside) is the 1-thread run's, "
                  "byte for byte")
    for c in cases:
        for r in c["runs"]:
            if not r["same_bytes"]:
                console.print(f"[bold red]BUG: {c['name']} on {r['threads']} threads: the summary differs from "
                              "the one-thread run's (it must be the same bytes)[/]")
        if c["to_completion"] and any(r["flows_completed"] < r["flows"] for r in c["runs"]):
            console.print(f"[bold yellow]note: {c['name']}: not every flow completed in "
                          f"{c['simulated_s']:g} s simulated[/]")


# --------------------------------------------------------------------------- sweeps


def sweep_case(duration_s: float) -> dict[str, Any]:
    """The scenario of the sweep benchmark: 10 flows on 100 Mbit/s, time series sampled every 100 ms."""
    doc = _ten_flows(duration_s)
    doc["name"] = "sweep-bench"
    doc["metrics"] = {"interval": "100ms"}
    return doc


def run_sweep_bench(
    *, runs: int = 60, duration_s: float = 20.0, jobs: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Times one sweep of ``runs`` seeds four ways and derives the speed-up and per-run overhead.

    - ``direct``: ``simcore.call_core`` (``_core.run_json``) in a loop in this process (the
      simulation alone);
    - ``serial``: ``bloatlab.sweep(backend="serial")`` (validation, store, Parquet, fsync);
    - ``local-1``: the local back end with one worker (adds the worker process round trip);
    - ``local-N``: the local back end with one worker per core (default).

    Each sweep writes a fresh temporary store. Overhead per run = (sweep wall time - direct
    wall time) / runs, for the one-worker back ends.
    """
    import shutil
    import tempfile
    import time

    from .scenario import to_json
    from .simcore import __version__, call_core
    from .sweeps.driver import execute_sweep
    from .sweeps.spec import make_sweep

    if runs < 1:
        raise BenchError("--runs must be at least 1")
    jobs = jobs or os.cpu_count() or 1
    base = sweep_case(duration_s)
    spec = make_sweep(base, None, runs)
    out: dict[str, Any] = {
        "bloatlab": __version__, "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus", "runs": runs,
        "scenario": f"10 flows, 100 Mbit/s, 30 ms RTT, {duration_s:g} s simulated, series every 100 ms",
        "timings": [],
    }

    def say(msg: str) -> None:
        if progress:
            progress(msg)

    say(f"sweep bench: {runs} runs, direct (simulator only) ...")
    t0 = time.perf_counter()
    sim = 0.0
    for seed in spec.seeds:
        doc = dict(base, seed=seed)
        summary_json, _ = call_core(to_json(doc), series=True)
        sim += json.loads(summary_json)["engine"]["wall_s"]
    direct = time.perf_counter() - t0
    out["timings"].append({"mode": "direct", "workers": 1, "wall_s": direct, "engine_s": sim})
    for mode, backend, workers in (("serial", "serial", 1), ("local-1", "local", 1), (f"local-{jobs}", "local", jobs)):
        say(f"sweep bench: {runs} runs, {mode} ...")
        tmp = tempfile.mkdtemp(prefix="bloatlab-bench-")
        try:
            t0 = time.perf_counter()
            outcome = execute_sweep(spec, backend=backend, jobs=workers, out=os.path.join(tmp, "store"), progress=False)
            wall = time.perf_counter() - t0
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        if outcome.failed:
            raise BenchError(f"sweep bench: {outcome.failed} runs failed: {outcome.errors[0]}")
        worker_s = sum(outcome.elapsed)
        sim_s = sum(outcome.sim)
        out["timings"].append({"mode": mode, "workers": workers, "wall_s": wall,
                               "worker_s": worker_s, "worker_sim_s": sim_s})
    t = {r["mode"]: r for r in out["timings"]}
    par = t[f"local-{jobs}"]["wall_s"]
    out["speedup_vs_direct"] = direct / par
    out["speedup_vs_local_1"] = t["local-1"]["wall_s"] / par
    out["efficiency_pct"] = 100.0 * out["speedup_vs_local_1"] / jobs
    out["overhead_ms_per_run"] = {
        "serial": 1e3 * (t["serial"]["wall_s"] - direct) / runs,
        "local-1": 1e3 * (t["local-1"]["wall_s"] - direct) / runs,
        "in_worker": 1e3 * (t["local-1"]["worker_s"] - t["local-1"]["worker_sim_s"]) / runs,
    }
    out["sim_ms_per_run"] = 1e3 * direct / runs
    return out


def render_sweep(report: dict[str, Any], console: Any) -> None:
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAVY, show_edge=False, pad_edge=False,
                  title=f"bloatlab {report['bloatlab']} sweep bench ({report['machine']}): {report['runs']} runs")
    for col in ["mode", "workers", "wall s", "s/run"]:
        table.add_column(col, justify="left" if col == "mode" else "right")
    for r in report["timings"]:
        table.add_row(r["mode"], str(r["workers"]), f"{r['wall_s']:.2f}", f"{r['wall_s'] / report['runs']:.4f}")
    console.print(table)
    o = report["overhead_ms_per_run"]
    console.print(f"  scenario: {report['scenario']} ({report['sim_ms_per_run']:.0f} ms of simulation per run)")
    console.print("  direct: _core.run_json in a loop; serial: bloatlab.sweep in this process; "
                  "local-N: N worker processes")
    console.print(f"  speed-up of local-{report['timings'][-1]['workers']}: "
                  f"{report['speedup_vs_direct']:.2f}x vs direct, "
                  f"{report['speedup_vs_local_1']:.2f}x vs local-1 "
                  f"({report['efficiency_pct']:.0f} % parallel efficiency)")
    console.print(f"  overhead per run on top of the simulation: serial {o['serial']:.1f} ms, "
                  f"local-1 {o['local-1']:.1f} ms "
                  f"(of which {o['in_worker']:.1f} ms encoding Parquet in the worker)")


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        sys.exit(_child())
    if sys.argv[1:2] == ["sweep"]:
        import argparse

        ap = argparse.ArgumentParser(prog="python -m bloatlab.bench sweep")
        ap.add_argument("--runs", type=int, default=60)
        ap.add_argument("--duration", type=float, default=20.0, help="simulated seconds per run")
        ap.add_argument("--jobs", type=int, default=None)
        ap.add_argument("--json", action="store_true")
        a = ap.parse_args(sys.argv[2:])
        rep = run_sweep_bench(runs=a.runs, duration_s=a.duration, jobs=a.jobs,
                              progress=None if a.json else (lambda m: print(m, file=sys.stderr)))
        if a.json:
            print(json.dumps(rep, indent=2))
        else:
            from rich.console import Console

            render_sweep(rep, Console())
        sys.exit(0)
    sys.exit("usage: python -m bloatlab.bench --child < scenario.json  (use `bloatlab bench`)\n"
             "       python -m bloatlab.bench sweep [--runs N] [--duration S] [--jobs N] [--json]")
