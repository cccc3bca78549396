"""``bloatlab rrul``: the latency-under-load (RRUL-style) test of a scenario."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..clikit import EXIT_FAILURE, EXIT_INVALID, call_interruptibly, cli_errors, fail


@click.command()
@click.argument("scenario", required=False, metavar="[SCENARIO.toml]")
@click.option("--flows", type=int, default=4, show_default=True, metavar="N",
              help="Bulk TCP flows each way (--down/--up set one direction).")
@click.option("--down", type=int, metavar="N", help="Bulk download flows (default: --flows).")
@click.option("--up", type=int, metavar="N", help="Bulk upload flows (default: --flows).")
@click.option("--keep-flows", is_flag=True,
              help="Keep the scenario's own flows in the loaded run and add the test's to them.")
@click.option("--cc", default="cubic", show_default=True, metavar="NAME", help="Their congestion control.")
@click.option("--probe-interval", default="100ms", show_default=True, metavar="TIME",
              help="Time between latency probes (and the time-series step).")
@click.option("--seed", type=int, metavar="N", help="Override the scenario's seed.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a key of the base scenario, e.g. --set topology.bottleneck_queue.kind=codel. Repeatable.")
@click.option("--out", type=click.Path(path_type=Path), metavar="DIR",
              help="Write summary.json, both runs and the figures (rrul.png, latency_cdf.png) here.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome and both summaries as JSON on stdout.")
def rrul(scenario: str | None, flows: int, down: int | None, up: int | None, keep_flows: bool, cc: str,
         probe_interval: str, seed: int | None, overrides: tuple[str, ...], out: Path | None,
         as_json: bool) -> None:
    """Latency under load (RRUL-like): bulk flows both ways plus probes and voice, idle vs loaded.

    SCENARIO.toml gives the topology (its flows are replaced, or kept with --keep-flows);
    without it, a bloated home link (20/5 Mbit/s). Prints the link and queues tested,
    throughput each way, the probes' added latency, its grade and the probe loss.
    """
    from .. import rrul as rrul_test

    if out is not None and out.exists() and not out.is_dir():
        fail(EXIT_INVALID, f"--out: {out} exists and is not a directory")
    with cli_errors(simulation=True):
        try:
            rrul_test.counts(flows, down, up)
            res = call_interruptibly(lambda: rrul_test.run(scenario, seed=seed, set=list(overrides), flows=flows,
                                                            down=down, up=up, keep_flows=keep_flows, cc=cc,
                                                            probe_interval=probe_interval))
            if out is not None:
                rrul_test.write(res, out)
        except OSError as e:
            fail(EXIT_FAILURE, f"--out: cannot write {out}: {e.strerror or e}")
    if as_json:
        sys.stdout.write(res.to_json())
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"latency under load: {res.loaded.summary['name']}", show_header=False)
        for k, v in rrul_test.describe(res.outcome, res.tested):
            table.add_row(k, v)
        Console().print(table)
    if out is not None:
        click.echo(f"wrote {out}/ (summary.json, idle/, loaded/, rrul.png, latency_cdf.png)", err=True)
