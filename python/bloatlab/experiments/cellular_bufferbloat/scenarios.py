"""The cellular-bufferbloat experiment's setup: run types, technologies, the scenarios it runs
and the per-run values read from them, shared by its figures (:mod:`.plots`), claims
(:mod:`.claims`) and emulation plan (:mod:`.emu`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..framework import RunResult, Spec, Stat, by_label

TECHS = ("3g", "3.5g", "4g")

TECH_LABEL = {"3g": "3G", "3.5g": "3.5G", "4g": "4G"}

CCS = ("cubic", "newreno", "westwood+")

CC_LABEL = {"cubic": "CUBIC", "newreno": "NewReno", "westwood+": "Westwood+"}

#: background flows per run type (the paper's Fig. 1)
N_BACKGROUND = {"B": 0, "C": 1, "D": 5}

RESPONSE_SIZE = "320KB"  # 320 kB: the average web page (the paper's ref. [18])


@dataclass(frozen=True)
class TechSetup:
    """Per-technology timing (all our choices, see the "Unstated" section)."""

    #: the long flows have left slow start and filled the base-station buffer by then (3G: 150
    #: packets at ~12 packets/s take ~13 s); run A's means leave out [0, settle_s)
    settle_s: float
    #: the web request starts uniformly in [settle_s, settle_s + spread_s]: the paper's 10
    #: back-to-back short flows of a run met the background flows at every phase of their
    #: window cycle over about 10 x (a loaded response time) -- ~1 min on 3.5G/4G, ~25 min on 3G
    spread_s: float
    #: simulated time of a B/C/D run: long enough for the slowest response to finish
    duration_s: float

    @property
    def last_start_s(self) -> float:
        return self.settle_s + self.spread_s


TECH_SETUP = {
    "3g": TechSetup(settle_s=30.0, spread_s=1500.0, duration_s=4500.0),
    "3.5g": TechSetup(settle_s=10.0, spread_s=60.0, duration_s=130.0),
    "4g": TechSetup(settle_s=10.0, spread_s=60.0, duration_s=100.0),
}


def web_configs(short_ccs: Sequence[str]) -> list[tuple[str, str, str | None]]:
    """(run, short CC, background CC) of runs B, C, D: the paper's 3 + 9 + 9 bars."""
    out: list[tuple[str, str, str | None]] = [("B", s, None) for s in short_ccs]
    out += [(run, s, bg) for run in ("C", "D") for bg in CCS for s in short_ccs]
    return out


def _short(r: RunResult) -> dict[str, Any]:
    return r.group("short")[0]


def response_time(r: RunResult) -> float | None:
    """The run's response time; None if it did not finish within the run."""
    resp = _short(r)["responses"]
    return resp["times_s"][0] if resp and resp["n"] else None


def mean_inflight_bytes(r: RunResult) -> float:
    """Run A: the flow's mean outstanding data after the start-up (the paper's Fig. 5)."""
    ts = r.timeseries
    warm = TECH_SETUP[r.labels["tech"]].settle_s
    return float(ts.inflight_bytes[ts.t_s >= warm].mean())


@dataclass
class WebResults:
    """Runs B, C, D of one technology, with per-configuration statistics."""

    runs: list[RunResult]

    def select(self, run: str, short: str | None = None, bg: str | None = None) -> list[RunResult]:
        labels: dict[str, Any] = {"run": run}
        if short is not None:
            labels["short"] = short
        if bg is not None:
            labels["bg"] = bg
        return by_label(self.runs, **labels)

    def response(self, run: str, short: str | None = None, bg: str | None = None) -> Stat:
        """Mean response time over seeds (and over short CCs when ``short`` is None)."""
        return Stat.of(response_time(r) for r in self.select(run, short, bg))

    def short_metric(self, metric: str, run: str, short: str | None = None, bg: str | None = None) -> Stat:
        return Stat.of(_short(r)[metric] for r in self.select(run, short, bg))

    def unfinished(self) -> int:
        return sum(response_time(r) is None for r in self.runs)


#: run A: the paper's 3 minutes; the first WEB_START seconds (start-up) are left out of its means
LONG_DURATION_S = {"full": 180.0, "quick": 180.0, "smoke": 40.0}


# --------------------------------------------------------------------------- scenarios

def _base(name: str, tech: str, seed: int, duration_s: float, interval: str) -> dict[str, Any]:
    # One UE (the paper's single laptop): every flow shares its base-station buffer.
    return {
        "name": name,
        "duration": f"{duration_s:g}s",
        "seed": seed,
        "metrics": {"interval": interval},
        "topology": {"kind": "cellular", "profile": tech},
    }


def _long_flows(cc: str, count: int) -> dict[str, Any]:
    # iperf's parallel streams start together; a start within the first half second (drawn per
    # flow) keeps them from being exactly synchronized.
    return {"cc": cc, "count": count, "group": "long", "start": {"uniform": ["0s", "500ms"]}}


def web_spec(tech: str, run: str, short: str, bg: str | None, seed: int) -> Spec:
    """Runs B, C, D: one 320 kB response (new connection) after the background has settled."""
    setup = TECH_SETUP[tech]
    # Fig. 7 plots the RTT of a CUBIC short flow over 3.5G alone and beside one flow.
    traced = tech == "3.5g" and short == "cubic" and run in ("B", "C") and seed == 1
    doc = _base(f"cellular-{tech}-{run}-{short}-{bg or 'none'}", tech, seed, setup.duration_s,
                "20ms" if traced else "0s")
    start = {"uniform": [f"{setup.settle_s:g}s", f"{setup.last_start_s:g}s"]}
    flows: list[dict[str, Any]] = [{"cc": short, "app": "web", "size": RESPONSE_SIZE, "requests": 1,
                                    "start": start, "group": "short"}]
    if N_BACKGROUND[run]:
        assert bg is not None
        flows.append(_long_flows(bg, N_BACKGROUND[run]))
    doc["flows"] = flows
    return Spec(doc, {"run": run, "tech": tech, "short": short, "bg": bg, "seed": seed})


def long_spec(tech: str, cc: str, seed: int, duration_s: float) -> Spec:
    """Run A: one long flow alone; its start-up is left out of the summary (``warmup``)."""
    doc = _base(f"cellular-{tech}-A-{cc}", tech, seed, duration_s, "200ms")
    doc["warmup"] = f"{TECH_SETUP[tech].settle_s:g}s"
    doc["flows"] = [_long_flows(cc, 1)]
    return Spec(doc, {"run": "A", "tech": tech, "cc": cc, "seed": seed})
