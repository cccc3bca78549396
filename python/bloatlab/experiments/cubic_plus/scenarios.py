"""The cubic-plus experiment's setup: its constants, the scenarios it runs (as scenario
dicts and :class:`~bloatlab.experiments.framework.Spec`), and what it reads from a run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..framework import RunResult, Spec, Stat

# --------------------------------------------------------------------------- the paper's setup

THETA = 0.9

#: the paper's "average throughput" is what a flow gets through the link, at the wire (Table 2:
#: 1.9992 Mbit/s on a 2 Mbit/s link); ours is the flow's goodput (unique TCP payload delivered,
#: 1448 B per 1500-byte packet) scaled by 1500/1448. (bloatlab's ``throughput_mbps`` counts what
#: the sender sent, dropped packets included, so it exceeds the link rate under loss.)
WIRE = 1500 / 1448

#: every flow starts at a uniform random time in [0, START_JITTER] (after its nominal start):
#: the paper starts its flows together, and a deterministic simulator with simultaneous starts
#: gives the same run for every seed (the wrapper's suspend timer is the only other random
#: element, and plain CUBIC/Vegas/Reno have none). 100 ms is five scenario-I RTTs and under one
#: scenario-II RTT: small against 200 s.
START_JITTER_S = 0.1

#: Fig. 7: the foreground transfer starts this long after the background flow
FG_DELAY_S = 15.0


@dataclass(frozen=True)
class Setting:
    """One column of the paper's Table 1 (plus what the dumbbell needs to realise it)."""

    rate: str
    delay: str  # bottleneck one-way delay: base RTT = 2 * (2 * access_delay + delay)
    access: str
    access_delay: str
    buffers: tuple[str, str]  # (large, small), in the paper's column order
    period: str
    threshold: str
    rcvbuf: str  # larger than BDP + buffer, so the receiver never limits a flow
    fg_size: dict[str, str]  # Fig. 7: foreground transfer size per buffer


SETTINGS: dict[str, Setting] = {
    "I": Setting("2Mbps", "5ms", "10Mbps", "2.5ms", ("500KB", "50KB"), "100ms", "30ms", "6MB",
                 {"500KB": "500KB", "50KB": "5MB"}),
    "II": Setting("400Mbps", "55ms", "1Gbps", "2.5ms", ("1500KB", "300KB"), "200ms", "0.6ms", "32MB",
                  {"1500KB": "300MB", "300KB": "300MB"}),
}

#: protocol -> (bloatlab cc, loss recovery). "TCP Reno" is Reno without SACK (ns/OPNET's Reno),
#: "TCP SACK" is Reno with SACK recovery; CUBIC, Cubic+ and Vegas recover with SACK (Linux).
PROTOCOLS: dict[str, tuple[str, str]] = {
    "cubic": ("cubic", "sack"),
    "cubic+": ("cubic+", "sack"),
    "vegas": ("vegas", "sack"),
    "reno": ("reno", "reno"),
    "sack": ("reno", "sack"),
}

SINGLE = ("cubic", "cubic+", "vegas")


# --------------------------------------------------------------------------- scenario builders

def _start(offset_s: float = 0.0) -> dict[str, list[str]]:
    return {"uniform": [f"{offset_s}s", f"{offset_s + START_JITTER_S}s"]}


def flow(proto: str, sc: str, group: str, *, offset_s: float = 0.0, size: str | None = None,
         rtt: str | None = None) -> dict[str, Any]:
    """One TCP flow of ``proto`` (a key of PROTOCOLS) with the scenario's Cubic+ parameters."""
    cc, recovery = PROTOCOLS[proto]
    f: dict[str, Any] = {"transport": "tcp", "cc": cc, "group": group, "start": _start(offset_s),
                         "tcp": {"recovery": recovery}}
    if proto == "cubic+":
        s = SETTINGS[sc]
        f["cc_params"] = {"period": s.period, "threshold": s.threshold, "theta": THETA}
    if size is not None:
        f["size"] = size
    if rtt is not None:
        f["rtt"] = rtt
    return f


def scenario(sc: str, buffer: str, flows: list[dict[str, Any]], seed: int, duration: str,
             name: str) -> dict[str, Any]:
    """The Table 1 dumbbell of scenario ``sc`` with a drop-tail ``buffer`` and these flows."""
    s = SETTINGS[sc]
    return {
        "name": f"wang2016-{sc}-{buffer}-{name}",
        "duration": duration,
        "seed": seed,
        "metrics": {"interval": "500ms"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": s.rate, "delay": s.delay},
            "bottleneck_queue": {"kind": "droptail", "limit": buffer},
            "access": {"rate": s.access, "delay": s.access_delay},
        },
        "tcp": {"mss": "1448B", "rcvbuf": s.rcvbuf},  # 1448 B + 52 B of headers: 1500-byte packets
        "flows": flows,
    }


def make_spec(part: str, sc: str, buffer: str, flows: list[dict[str, Any]], seed: int, duration: str,
              **labels: Any) -> Spec:
    name = "-".join([part, *(str(v) for v in labels.values())])
    return Spec(scenario(sc, buffer, flows, seed, duration, name),
                {"part": part, "sc": sc, "buf": buffer, "seed": seed, **labels})


def all_buffers() -> list[tuple[str, str]]:
    return [(sc, b) for sc, s in SETTINGS.items() for b in s.buffers]


# --------------------------------------------------------------------------- reading results

def thr(f: dict[str, Any]) -> float:
    """A flow's delivered throughput at the wire (see WIRE), Mbit/s."""
    return f["goodput_mbps"] * WIRE


def thr_mean(results: list[RunResult], group: str) -> float:
    """Mean over runs of the throughput of the group's first flow."""
    return per_run(results, lambda r: thr(r.group(group)[0])).mean


def per_run(results: list[RunResult], value: Callable[[RunResult], float | None]) -> Stat:
    return Stat.of(value(r) for r in results)


def fct(r: RunResult, group: str) -> float:
    """Completion time of the group's transfer; an unfinished one counts as the time it had
    (a lower bound: the report says how many did not finish)."""
    f = r.group(group)[0]
    if f["fct_s"] is not None:
        return float(f["fct_s"])
    return float(r.summary["duration_s"]) - float(f["start_s"])


def unfinished(results: list[RunResult], group: str) -> int:
    return sum(1 for r in results if r.group(group)[0]["fct_s"] is None)
