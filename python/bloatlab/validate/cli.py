"""``bloatlab validate`` (:mod:`bloatlab.cli` adds it to the group).

Exit codes: 0 done (whatever the verdicts: they are the report's content), 2 invalid input or
not root (one line, nothing created), 1 a failure outside the cells (no TUN device, cannot
write --out), 130 on Ctrl-C (the JSON of the finished cells stays in --out).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import click

from ..clikit import EXIT_FAILURE, EXIT_INVALID, cli_errors, fail

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s)?\s*$")
MIN_DURATION_S = 4.0
MAX_DURATION_S = 3600.0
MAX_SPREAD = 5


def _is_root() -> bool:
    """Patched by the tests to see what an unprivileged user sees."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def parse_duration(text: str) -> float:
    m = _DURATION.match(text)
    if not m or not MIN_DURATION_S <= float(m.group(1)) <= MAX_DURATION_S:
        raise ValueError(f"--duration: \"{text}\" (allowed: seconds from {MIN_DURATION_S:g} to "
                         f"{MAX_DURATION_S:g}, e.g. 30 or 30s)")
    return float(m.group(1))


def parse_spread(text: str) -> int:
    if not text.strip().isdigit() or not 2 <= int(text) <= MAX_SPREAD:
        raise ValueError(f"--spread: \"{text}\" (allowed: a number of seeds from 2 to {MAX_SPREAD})")
    return int(text)


def _say(msg: str) -> None:
    click.echo(msg, err=True)


def _progress(rec: dict, i: int, n: int) -> str:
    if rec["verdict"] in ("sim-only", "failed"):
        extra = rec.get("error", "")
        return f"[{i + 1}/{n}] {rec['id']}: {rec['verdict']} {extra}".rstrip()
    e = rec["errors"]
    parts = [f"{k} {e[k] * 100:+.1f} %" for k in ("goodput_mbps", "queue_delay_mean_ms", "retransmits",
                                                   "up_goodput_mbps", "up_queue_delay_mean_ms", "up_retransmits")
             if e.get(k) is not None]
    return f"[{i + 1}/{n}] {rec['id']}: {rec['verdict']} ({', '.join(parts)})"


def _check_sim_set(sim_sets: tuple[str, ...], doc: dict) -> None:
    """Every --sim-set override parses and the simulator takes the first cell with them (the
    cells differ only in values the matrix sets): exit 2 with the key path before anything
    runs or is written."""
    from ..errors import ScenarioError
    from ..simcore import validate_scenario
    from .run import sim_doc

    try:
        validate_scenario(sim_doc(doc, sim_sets))
    except ScenarioError as e:
        where = "" if e.path in ("", "--set") else f"{e.path}: "
        fail(EXIT_INVALID, f"--sim-set: {where}{e.args[1]}")


@click.command()
@click.option("--quick", is_flag=True,
              help="The 8-cell subset (reno/cubic/bbr at 2 BDP, 40 ms, one flow; cubic with 4 flows, "
              "with 1 % loss, behind EWT, CoDel, PIE), 20 s each: about 3 minutes.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("out/validate"), show_default=True,
              metavar="DIR", help="Write validate.json, report.md, report.html, heatmap.png here.")
@click.option("--duration", "duration_text", metavar="SECONDS",
              help="Length of every run (default 30 s, 20 s with --quick); metrics skip the first "
              "min(5 s, duration / 4).")
@click.option("--filter", "filters", multiple=True, metavar="KEY=V[,V]",
              help="Keep the cells whose KEY (cc, buffer_bdp, rtt_ms, loss_pct, flows, gateway) is one of "
              "the values, e.g. --filter cc=cubic,bbr --filter flows=1. Repeatable.")
@click.option("--seed", type=click.IntRange(0), default=1, show_default=True, help="Seed of every cell.")
@click.option("--rate", "rate_text", metavar="MBPS",
              help="Bottleneck rate of every cell: 10 (the default) or 100 Mbit/s; buffers stay in BDP.")
@click.option("--both-ways", is_flag=True,
              help="The both-ways slice instead of the matrix: as many bulk flows up as down over a "
              "4:1 asymmetric link, drop-tail buffers of 2 and 8 BDP each way, reno/cubic/bbr, 1 and 4 "
              "flows each way, 40 ms (12 cells; 3 with --quick); upload metrics and drops are judged too.")
@click.option("--spread", "spread_text", metavar="N",
              help="Run every cell outside its targets again at N-1 more seeds (seed+1, ...) on both "
              "engines and judge it against Linux's own spread over the N runs (2-5; default: off).")
@click.option("--sim-only", is_flag=True,
              help="Run only the simulator (no root needed): the sim column, no errors.")
@click.option("--linux-from", "linux_from", type=click.Path(path_type=Path), metavar="FILE",
              help="Take the Linux side of every cell FILE (an earlier validate.json with the same "
              "--duration and --seed) emulated, and emulate only the others: re-checks a changed "
              "simulator in seconds, without root when FILE covers every cell.")
@click.option("--sim-set", "sim_sets", multiple=True, metavar="KEY=VALUE",
              help="Set a scenario key in the simulator's runs only, as `run --set` does (e.g. "
              "--sim-set tcp.tso_defer=true): judges a simulator setting against Linux; with "
              "--linux-from, against the stored Linux runs. Repeatable.")
def validate(quick: bool, out: Path, duration_text: str | None, filters: tuple[str, ...], seed: int,
             rate_text: str | None, both_ways: bool, spread_text: str | None, sim_only: bool,
             linux_from: Path | None, sim_sets: tuple[str, ...]) -> None:
    """Simulator vs real Linux TCP over a matrix of scenarios (needs root).

    Runs every cell in the simulator and in the emulator (kernel TCP in network namespaces,
    one cell at a time on the wall clock) and reports the error per metric — goodput,
    queueing delay mean and p95, retransmissions, Jain's index (and the queue's drops, for
    reference) — worst first, against the targets (goodput ±5 %, mean queueing delay ±15 %, retransmissions ±25 %).
    The full matrix is 126 cells (about 65 minutes); see docs/fidelity.md.
    """
    from . import matrix

    try:
        duration_s = (parse_duration(duration_text) if duration_text is not None
                      else matrix.QUICK_DURATION_S if quick else matrix.DEFAULT_DURATION_S)
        chosen = matrix.parse_filter(filters)
        rate = matrix.RATE_MBPS if rate_text is None else matrix.parse_rate(rate_text)
        spread = 1 if spread_text is None else parse_spread(spread_text)
    except ValueError as e:
        fail(EXIT_INVALID, str(e))
    if spread > 1 and sim_only:
        fail(EXIT_INVALID, "--spread: not with --sim-only (it compares with Linux's runs)")
    cells = matrix.select(matrix.cells_of(quick=quick, both_ways=both_ways, rate_mbps=rate), chosen)
    if not cells:
        name = ("quick" if quick else "full") + (" both-ways" if both_ways else "")
        fail(EXIT_INVALID, f"--filter: no cell of the {name} matrix matches {' '.join(filters)}")
    if out.exists() and not out.is_dir():
        fail(EXIT_INVALID, f"--out: {out} exists and is not a directory")
    from . import report, run

    if sim_sets:
        _check_sim_set(sim_sets, matrix.scenario(cells[0], duration_s, seed))
    head = run.header(quick=quick, duration_s=duration_s, seed=seed, sim_only=sim_only, filters=chosen,
                      rate_mbps=rate, both_ways=both_ways, spread=spread, sim_set=sim_sets)
    stored: dict = {}
    if linux_from is not None:
        if sim_only:
            fail(EXIT_INVALID, "--linux-from: not with --sim-only (it supplies the Linux side)")
        try:
            data = json.loads(linux_from.read_text())
        except OSError as e:
            fail(EXIT_INVALID, f"--linux-from: cannot read {linux_from}: {e.strerror or e}")
        except ValueError as e:
            fail(EXIT_INVALID, f"--linux-from: {linux_from} is not JSON ({e})")
        try:
            stored = run.stored_linux(str(linux_from), data, head, cells)
        except ValueError as e:
            fail(EXIT_INVALID, str(e))
    to_emulate = 0 if sim_only else sum(c.id not in stored for c in cells)
    if to_emulate:
        if not _is_root():
            fail(EXIT_INVALID, "bloatlab validate needs root for the emulation (network namespaces, TUN "
                 "devices): run it as root, or use --sim-only")
        from ..emulate.netns import EmulationError, check_environment

        try:
            check_environment()
        except EmulationError as e:
            fail(EXIT_FAILURE, str(e))
    est = to_emulate * (duration_s + 1.5) / 60
    _say(f"validate: {len(cells)} cells, {duration_s:g} s each"
         + (f", {len(stored)} with Linux results from {linux_from}" if stored else "")
         + (f", about {est:.0f} min of emulation" if to_emulate else "") + f"; writing {out}/")

    def on_cell(result: dict, i: int, n: int) -> None:
        _say(_progress(result["cells"][-1], i, n))
        report.write_json(result, out)

    with cli_errors():
        try:
            result = run.validate(cells, head=head, on_cell=on_cell, stored=stored)
        except KeyboardInterrupt:
            _say(f"interrupted: the finished cells are in {out}/validate.json")
            sys.exit(130)
        try:
            names = report.write(result, out)
        except OSError as e:
            fail(EXIT_FAILURE, f"--out: cannot write {out}: {e.strerror or e}")
    click.echo(result["summary"])
    _say(f"wrote {out}/ ({', '.join(names)})")
