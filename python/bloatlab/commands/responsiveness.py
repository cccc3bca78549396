"""``bloatlab responsiveness``: the RPM test (draft-ietf-ippm-responsiveness-09) of a scenario."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from ..clikit import EXIT_INVALID, call_interruptibly, cli_errors, fail


def _doc(scenario: str | None, seed: int | None, overrides: tuple[str, ...], direction: str,
         interval: str, probe_interval: str, max_connections: int) -> dict[str, Any]:
    """The base scenario (the built-in home link without one) with its flows replaced by the
    test's own: a ``[responsiveness]`` table."""
    from ..rrul import home
    from ..scenario import resolve

    doc = resolve(home() if scenario is None else scenario, seed=seed, set=list(overrides))
    doc = dict(doc)
    doc.pop("flows", None)
    doc["responsiveness"] = {"direction": direction, "interval": interval,
                             "probe_interval": probe_interval, "max_connections": max_connections}
    return doc


def _describe(r: dict[str, Any]) -> str:
    def ms(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.1f} ms"

    def rpm(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.0f} RPM"

    f, lo = r["foreign"], r["loaded"]
    return (f"{rpm(r['rpm'])} ({r['class'] or 'no result'}); foreign {rpm(f['rpm'])}: handshake "
            f"{ms(f['tcp_ms'])}, request {ms(f['http_ms'])} ({f['probes']} probes); loaded "
            f"{rpm(lo['rpm'])}: {ms(lo['http_ms'])} "
            f"({lo['probes']} probes); {r['connections_down']}+{r['connections_up']} load "
            "connections "
            f"(down+up), {r['goodput_mbps']:.1f} Mbit/s")


@click.command()
@click.argument("scenario", required=False, metavar="[SCENARIO.toml]")
@click.option("--direction", type=click.Choice(["download", "upload", "both"]), default="download",
              show_default=True, help="Which way the load-generating connections carry data.")
@click.option("--interval", default="1s", show_default=True, metavar="TIME",
              help="The draft's interval (its default is 5s; 1s fits the test into the home "
                   "link's 30 s): one more load connection per interval, up to --max-connections.")
@click.option("--probe-interval", default="100ms", show_default=True, metavar="TIME",
              help="Time between probes.")
@click.option("--max-connections", type=int, default=16, show_default=True, metavar="N",
              help="Load-generating connections per direction, at most.")
@click.option("--seed", type=int, metavar="N", help="Override the scenario's seed.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a key of the base scenario, e.g. "
                   "--set topology.bottleneck_queue.kind=cake.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the summary's responsiveness block as JSON.")
def responsiveness(scenario: str | None, direction: str, interval: str, probe_interval: str,
                   max_connections: int, seed: int | None, overrides: tuple[str, ...],
                   as_json: bool) -> None:
    """Responsiveness under working conditions (RPM), after draft-ietf-ippm-responsiveness-09.

    SCENARIO.toml gives the topology (its flows are replaced by the test's); without it, the
    bloated home link of `bloatlab rrul` (20/5 Mbit/s, drop-tail).
    """
    from .. import _core
    from ..api import run_resolved
    from ..errors import ScenarioError
    from ..scenario import resolve

    with cli_errors(simulation=True):
        doc = _doc(scenario, seed, overrides, direction, interval, probe_interval, max_connections)
        try:
            res = call_interruptibly(lambda: run_resolved(resolve(doc), series=False))
        except _core.ScenarioError as e:
            path, message = e.args if len(e.args) == 2 else ("", str(e))
            option = {"responsiveness.interval": "--interval",
                      "responsiveness.probe_interval": "--probe-interval",
                      "responsiveness.max_connections": "--max-connections"}.get(path)
            raise ScenarioError(option or path, message) from None
    block = res.summary.get("responsiveness")
    if block is None:  # pragma: no cover - the table is always set
        fail(EXIT_INVALID, "the run has no responsiveness block")
    if as_json:
        sys.stdout.write(json.dumps(block, indent=2) + "\n")
    else:
        click.echo(f"responsiveness ({res.summary['name']}, {direction}): {_describe(block)}")
