"""The run types, technologies and per-run values of the cellular-bufferbloat experiment
(:mod:`.cellular_bufferbloat`), shared with its figures (:mod:`.cellular_bufferbloat_plots`)
so that neither of those imports the other."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .framework import RunResult, Stat, by_label

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


# --------------------------------------------------------------------------- per-run values


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
