"""``bloatlab emulate`` and ``bloatlab compare`` (:mod:`bloatlab.cli` adds them to the group).

Exit codes as everywhere: 0 success, 2 invalid input (one ``error: <key path>: message``
line, nothing created or written), 1 anything else (not root, a process failing), 130 on
Ctrl-C (after removing everything the run created).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..clikit import EXIT_FAILURE, EXIT_INVALID, cli_errors, fail

_SET_HELP = "Override a key (as for `bloatlab run`), e.g. --set topology.bottleneck.rate=20Mbps. Repeatable."


def _guard(fn):
    """Runs ``fn`` turning errors into the CLI's exit codes and messages (an emulation
    failure exits 1 with its message; Ctrl-C exits 130)."""
    from .netns import EmulationError

    with cli_errors():
        try:
            return fn()
        except EmulationError as e:
            fail(EXIT_FAILURE, str(e))
        except KeyboardInterrupt:
            sys.stderr.write("interrupted\n")
            sys.exit(130)


def _check_out(out: Path | None) -> None:
    if out is not None and out.exists() and not out.is_dir():
        fail(EXIT_INVALID, f"--out: {out} exists and is not a directory")


def _write(result: Any, out: Path | None) -> None:
    if out is None:
        return
    try:
        result.to_dir(out)
    except OSError as e:
        fail(EXIT_FAILURE, f"--out: cannot write {out}: {e.strerror or e}")


@click.command()
@click.argument("scenario", required=False, metavar="SCENARIO.toml")
@click.option("--seed", type=int, metavar="N", help="Override the scenario's seed.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=_SET_HELP)
@click.option("--out", type=click.Path(path_type=Path), metavar="DIR",
              help="Write summary.json, scenario.json, timeseries.parquet, queues.parquet (and --pcap files).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary JSON instead of a table.")
@click.option("--pcap", multiple=True, type=click.Choice(["sender", "receiver"]), metavar="SIDE",
              help="Capture the packets on the senders' or the receivers' side of the bottleneck into "
              "DIR/SIDE.pcap (needs --out). Repeatable.")
@click.option("--cleanup", is_flag=True,
              help="Instead of running: remove what killed runs left behind (blemu-* namespaces, devices, "
              "processes, work directories).")
def emulate(scenario: str | None, seed: int | None, overrides: tuple[str, ...], out: Path | None, as_json: bool,
            pcap: tuple[str, ...], cleanup: bool) -> None:
    """Run a scenario on real Linux TCP (network namespaces, needs root).

    Kernel TCP endpoints (reno, cubic, bbr, vegas, westwood) talk through bloatlab's bottleneck process,
    which applies the scenario's rate, delays, loss, queue discipline and ACK rewriter on
    the wall clock. Prints the same summary as `bloatlab run`.
    """
    if cleanup:
        from . import netns

        if scenario is not None:
            fail(EXIT_INVALID, "--cleanup: takes no scenario")
        if netns.os.geteuid() != 0:
            fail(EXIT_FAILURE, "bloatlab emulate --cleanup needs root")
        removed = netns.cleanup_leftovers()
        for r in removed:
            click.echo(f"removed {r}", err=True)
        click.echo(f"cleanup: {len(removed)} leftover(s) removed", err=True)
        return
    if scenario is None:
        fail(EXIT_INVALID, "SCENARIO.toml: missing argument (or use --cleanup)")
    _check_out(out)
    if pcap and out is None:
        fail(EXIT_INVALID, "--pcap: needs --out DIR (the capture files are written there)")
    from .runner import emulate as run_emulation

    progress = (lambda m: click.echo(m, err=True)) if not as_json else None
    result = _guard(lambda: run_emulation(scenario, seed=seed, set=list(overrides), pcap=pcap, progress=progress))
    _write(result, out)
    if as_json:
        sys.stdout.write(result.summary_json)
        sys.stdout.flush()
    else:
        from rich.console import Console

        from ..outputs.tables import render_summary

        render_summary(result.summary, Console())
        _print_emulation(result.summary)
    if out is not None:
        click.echo(f"wrote {out}/ ({', '.join(result.output_files())})", err=True)

@click.command()
@click.argument("scenario", metavar="SCENARIO.toml")
@click.option("--seed", type=int, metavar="N", help="Override the scenario's seed.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=_SET_HELP)
@click.option("--out", type=click.Path(path_type=Path), metavar="DIR",
              help="Write compare.json, compare.png and the two runs (DIR/sim/, DIR/emu/).")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def compare(scenario: str, seed: int | None, overrides: tuple[str, ...], out: Path | None, as_json: bool) -> None:
    """Simulate and emulate one scenario; print the summaries side by side with ratios.

    Needs root (the emulation). With --out, also plots the time series overlaid.
    """
    _check_out(out)
    from . import compare as cmp

    progress = (lambda m: click.echo(m, err=True)) if not as_json else None
    comparison = _guard(lambda: cmp.compare(scenario, seed=seed, set=list(overrides), progress=progress))
    if out is not None:
        try:
            cmp.write(comparison, out)
        except OSError as e:
                    fail(EXIT_FAILURE, f"--out: cannot write {out}: {e.strerror or e}")
    if as_json:
        import json

        sys.stdout.write(json.dumps(comparison.table, indent=2) + "\n")
    else:
        cmp.render(comparison)
    if out is not None:
        click.echo(f"wrote {out}/", err=True)


def _print_emulation(s: dict[str, Any]) -> None:
    e = s.get("emulation", {})
    io = e.get("io", {})
    click.echo(
        f"emulation: kernel {e.get('kernel')}, largest packet {io.get('max_packet_bytes')} B, "
        f"writes late by {io.get('write_late_mean_us', 0):.0f} µs on average "
        f"(max {io.get('write_late_max_us', 0) / 1e3:.1f} ms, {io.get('write_late_over_1ms', 0)} over 1 ms)"
    )
    for side, d in (e.get("device_drops") or {}).items():
        if d and (d.get("tx_dropped") or d.get("rx_dropped")):
            click.echo(f"warning: the {side.replace('_', ' ')} TUN device dropped packets outside the "
                       f"emulated queue: {d}", err=True)
    for err in e.get("errors", []):
        click.echo(f"warning: {err}", err=True)
