"""Running the cells: the simulator (fast, deterministic), then the emulation (real time, one
cell at a time), then the errors and the verdict. A cell whose emulation fails is recorded as
``failed`` with the reason and the matrix goes on."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import platform
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..scenario import apply_overrides
from . import matrix, metrics
from .matrix import Cell, scenario, warmup_s

#: An emulated cell is flagged ``disturbed`` when its writes were this late on average (µs), or
#: when a TUN device dropped packets outside the emulated queue: the machine did not keep up.
LATE_MEAN_LIMIT_US = 1000.0
#: ... or when the bottleneck process stalled for over 1 ms more often than this per second of
#: the run: packets held by a stall leave together, a bunching no real link adds, and BBR's
#: ACK-aggregation allowance grows with it (docs/fidelity.md, "The emulator's own stalls").
STALLS_PER_S_LIMIT = 1.0


def _emulation_health(summary: Mapping[str, Any]) -> dict[str, Any]:
    e = summary.get("emulation", {}) or {}
    io = e.get("io", {}) or {}
    drops = sum(int(d.get("tx_dropped", 0) or 0) + int(d.get("rx_dropped", 0) or 0)
                for d in (e.get("device_drops") or {}).values() if d)
    late = io.get("write_late_mean_us")
    stalls = io.get("write_late_over_1ms")
    duration = float(summary.get("duration_s") or 0.0)
    reasons = []
    if drops:
        reasons.append(f"{drops} packets dropped at the TUN devices")
    if late is not None and late > LATE_MEAN_LIMIT_US:
        reasons.append(f"writes late by {late:.0f} µs on average")
    if stalls is not None and duration > 0 and stalls / duration > STALLS_PER_S_LIMIT:
        reasons.append(f"{stalls} writes over 1 ms late ({stalls / duration:.1f} per second)")
    if e.get("errors"):
        reasons.append("endpoint errors: " + "; ".join(map(str, e["errors"])))
    return {
        "kernel": e.get("kernel"),
        "write_late_mean_us": late,
        "write_late_max_us": io.get("write_late_max_us"),
        "write_late_over_1ms": stalls,
        "device_drops": drops,
        "realtime": io.get("realtime"),
        "disturbed": reasons,
    }


def scenario_digest(doc: Mapping[str, Any]) -> str:
    """What a stored Linux result must have run to stand in for a cell (--linux-from)."""
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


def _judge(rec: dict[str, Any]) -> None:
    rec["errors"] = metrics.errors(rec["sim"], rec["linux"])
    rec["outside"] = metrics.outside(rec["errors"], metrics.is_both_ways(rec))
    rec["verdict"] = "outside" if rec["outside"] else "within"


def reverse_ids(cell: Cell) -> frozenset[int]:
    """The uploads' flow ids of a both-ways cell (they follow the downloads)."""
    return frozenset(range(cell.flows, 2 * cell.flows)) if cell.both_ways else frozenset()


def sim_doc(doc: Mapping[str, Any], sim_set: Sequence[str]) -> dict[str, Any]:
    """The simulator's scenario of a cell: ``doc`` with the ``--sim-set`` overrides applied
    (``run --set`` syntax). The emulator runs ``doc`` itself."""
    return apply_overrides(copy.deepcopy(dict(doc)), list(sim_set))


def run_cell(cell: Cell, *, duration_s: float, seed: int, sim_only: bool,
             stored: Mapping[str, Any] | None = None, sim_set: Sequence[str] = ()) -> dict[str, Any]:
    """One cell's record: parameters, both engines' metrics, errors, verdict (``within``,
    ``outside``, ``failed`` or ``sim-only``). Wall-clock values sit under ``wall_clock``.
    ``stored``: this cell's record from an earlier run (--linux-from), whose Linux side is
    taken instead of emulating again. ``sim_set``: overrides for the simulator's run only."""
    from ..api import run_resolved

    doc = scenario(cell, duration_s, seed)
    rec: dict[str, Any] = {"id": cell.id, "params": cell.params(), "buffer_bytes": cell.buffer_bytes,
                           "scenario_digest": scenario_digest(doc),
                           "sim": None, "linux": None, "errors": None, "outside": [], "verdict": "sim-only"}
    if not sim_only and stored is None:
        from ..emulate.runner import plan

        plan(doc)  # a cell the emulation refuses fails before anything runs (a bug in the matrix)
    sim = run_resolved(sim_doc(doc, sim_set) if sim_set else doc, series=False)
    rec["sim"] = metrics.extract(sim.summary, reverse_ids(cell))
    if sim_only:
        return rec
    if stored is not None:
        rec["linux"] = stored["linux"]
        rec["linux_from"] = stored["linux_from"]
        for k in ("emulation", "wall_clock"):
            if k in stored:
                rec[k] = stored[k]
        _judge(rec)
        return rec
    from ..emulate.runner import emulate

    t = time.monotonic()
    try:
        emu = emulate(doc)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as e:  # noqa: BLE001 - one failed cell must not lose the matrix
        rec["verdict"] = "failed"
        rec["error"] = f"{type(e).__name__}: {e}"
        return rec
    rec["linux"] = metrics.extract(emu.summary, reverse_ids(cell))
    _judge(rec)
    health = _emulation_health(emu.summary)
    rec["emulation"] = {k: v for k, v in health.items() if k != "write_late_mean_us" and k != "write_late_max_us"}
    rec["wall_clock"] = {
        "emulation_s": round(time.monotonic() - t, 2),
        "loadavg_1min": round(os.getloadavg()[0], 2),
        "write_late_mean_us": health["write_late_mean_us"],
        "write_late_max_us": health["write_late_max_us"],
    }
    return rec


def header(*, quick: bool, duration_s: float, seed: int, sim_only: bool,
           filters: Mapping[str, Iterable[Any]], rate_mbps: int = matrix.RATE_MBPS, both_ways: bool = False,
           spread: int = 1, sim_set: Sequence[str] = ()) -> dict[str, Any]:
    head = {
        "tool": "bloatlab validate",
        "matrix": ("quick" if quick else "full") + (" both-ways" if both_ways else ""),
        "filter": {k: sorted(v, key=str) for k, v in sorted(filters.items())},
        "sim_only": sim_only,
        "rate_mbps": rate_mbps,
        "duration_s": duration_s,
        "warmup_s": warmup_s(duration_s),
        "seed": seed,
        "error_definition": "(sim - linux) / max(|linux|, floor)",
        "metrics": [{"key": m.key, "label": m.label, "unit": m.unit, "floor": m.floor,
                     "target": metrics.target(m, both_ways)}
                    for m in (metrics.ALL_METRICS if both_ways else metrics.METRICS)],
        "host": {"kernel": platform.release(), "cpus": os.cpu_count()},
    }
    if both_ways:
        head["reverse_rate_mbps"] = rate_mbps / matrix.BOTH_WAYS_RATIO
    if spread > 1:
        head["spread_seeds"] = spread
    if sim_set:
        head["sim_set"] = list(sim_set)
    return head


def stored_linux(path: str, data: Any, head: Mapping[str, Any], cells: list[Cell]) -> dict[str, dict[str, Any]]:
    """The Linux results of an earlier ``validate.json`` usable for ``cells``, by cell id: the
    file must have run the same cell length, seed and rate; a cell it did not emulate (or whose
    scenario changed since, by its digest) is left out and emulated again. Raises ValueError
    naming what does not match."""
    if not isinstance(data, dict) or data.get("tool") != "bloatlab validate" or not isinstance(data.get("cells"), list):
        raise ValueError(f"--linux-from: {path} is not a validate.json written by bloatlab validate")
    for key in ("duration_s", "seed", "rate_mbps"):
        if data.get(key) != head[key]:
            raise ValueError(f"--linux-from: {path} has {key} = {data.get(key)!r}, this run {head[key]!r} "
                             f"(allowed: the same {key}; e.g. --duration or --seed as that run)")
    wanted = {c.id: scenario_digest(scenario(c, head["duration_s"], head["seed"])) for c in cells}
    out: dict[str, dict[str, Any]] = {}
    for rec in data["cells"]:
        cid = rec.get("id") if isinstance(rec, dict) else None
        if cid not in wanted or not rec.get("linux"):
            continue
        if rec.get("scenario_digest", wanted[cid]) != wanted[cid]:
            continue
        out[cid] = {**rec, "linux_from": rec.get("linux_from") or str(path)}
    return out


def validate(
    cells: list[Cell],
    *,
    head: dict[str, Any],
    on_cell: Callable[[dict[str, Any], int, int], None] | None = None,
    stored: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Runs every cell in matrix order; ``on_cell(result_so_far, index, total)`` after each
    (the CLI writes the partial JSON and prints progress there). ``stored``: Linux results of
    an earlier run by cell id (:func:`stored_linux`), reused instead of emulating."""
    result = dict(head, complete=False, cells=[])
    stored = stored or {}
    t = time.time()
    seeds = head.get("spread_seeds", 1)
    sim_set = head.get("sim_set", ())
    for i, cell in enumerate(cells):
        rec = run_cell(cell, duration_s=head["duration_s"], seed=head["seed"],
                       sim_only=head["sim_only"], stored=stored.get(cell.id), sim_set=sim_set)
        if seeds > 1 and rec["verdict"] == "outside":
            spread_cell(rec, cell, duration_s=head["duration_s"],
                        seeds=[head["seed"] + k for k in range(1, seeds)], stored=stored.get(cell.id),
                        sim_set=sim_set)
        result["cells"].append(rec)
        finish(result, complete=i + 1 == len(cells))
        result["wall_clock"] = {"started_unix_s": round(t), "elapsed_s": round(time.time() - t, 1)}
        if on_cell:
            on_cell(result, i, len(cells))
    return result


def spread_cell(rec: dict[str, Any], cell: Cell, *, duration_s: float, seeds: list[int],
                stored: Mapping[str, Any] | None = None, sim_set: Sequence[str] = ()) -> None:
    """Runs a cell outside its targets again at ``seeds`` on both engines and judges it against
    Linux's own run-to-run spread (:func:`metrics.within_spread`): the verdict becomes
    ``within-spread`` when every metric outside is. A failed extra emulation leaves the verdict.
    ``stored``: the cell's record from --linux-from; its extra seeds' Linux runs are reused
    when they are the same seeds (only the simulator runs again)."""
    sims = [rec["sim"]]
    linuxes = [rec["linux"]]
    reused = _stored_spread_runs(stored, seeds, rec["outside"])
    for i, s in enumerate(seeds):
        given = None if reused is None else {"linux": reused[i], "linux_from": rec.get("linux_from")}
        extra = run_cell(cell, duration_s=duration_s, seed=s, sim_only=False, stored=given, sim_set=sim_set)
        if extra["verdict"] == "failed":
            rec["spread"] = {"extra_seeds": seeds, "error": extra.get("error")}
            return
        sims.append(extra["sim"])
        linuxes.append(extra["linux"])
    rec["spread"] = metrics.spread(sims, linuxes, rec["outside"], cell.both_ways)
    rec["spread"]["extra_seeds"] = seeds
    # Every metric of Linux's extra runs, so that a later --linux-from can judge a changed
    # simulator against the same spread without emulating again (not when only the metrics
    # judged in an older file were at hand).
    if all(set(x) >= set(rec["linux"]) for x in linuxes[1:]):
        rec["spread"]["linux_runs"] = linuxes[1:]
    if rec["outside"] and all(rec["spread"]["within"].values()):
        rec["verdict"] = "within-spread"


def _stored_spread_runs(stored: Mapping[str, Any] | None, seeds: list[int],
                        keys: list[str]) -> list[dict[str, Any]] | None:
    """Linux's extra runs of an earlier spread of this cell at ``seeds`` (a spread over more
    seeds holds them: `--spread 3` reuses a stored `--spread 5`), or None: every metric when
    the file has them (``linux_runs``), else the metrics that were judged then — enough when
    they cover ``keys``, the metrics outside now."""
    sp = (stored or {}).get("spread") or {}
    had = sp.get("extra_seeds")
    if not isinstance(had, list) or not set(seeds) <= set(had):
        return None
    at = [had.index(s) for s in seeds]
    runs = sp.get("linux_runs")
    if isinstance(runs, list) and len(runs) == len(had) and all(isinstance(r, dict) for r in runs):
        return [runs[i] for i in at]
    judged = sp.get("linux") or {}
    if not keys or not all(isinstance(judged.get(k), list) and len(judged[k]) == len(had) + 1
                           for k in keys):
        return None
    return [{k: judged[k][i + 1] for k in keys} for i in at]


def finish(result: dict[str, Any], *, complete: bool) -> dict[str, Any]:
    """Recomputes the counts and the summary line from the cells."""
    counts = metrics.within_counts(result["cells"])
    result["complete"] = complete
    result["counts"] = counts
    result["failed"] = [c["id"] for c in result["cells"] if c["verdict"] == "failed"]
    result["summary"] = metrics.summary_line(counts)
    return result
