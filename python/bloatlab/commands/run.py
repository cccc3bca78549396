"""``bloatlab run``: one scenario (the built-in demo without a file), its summary table or JSON."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..clikit import EXIT_FAILURE, EXIT_INVALID, call_interruptibly, cli_errors, fail, stderr_console, unexpected
from ..errors import ScenarioError


@click.command()
@click.argument("scenario", required=False, metavar="[SCENARIO.toml]")
@click.option("--seed", type=int, metavar="N", help="Override the scenario's seed.")
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a key, e.g. --set topology.bottleneck.rate=20Mbps --set flows[0].cc=reno. "
    "VALUE is read as a TOML literal if it is one (5, true, [1, 2], {uniform = [\"1s\", \"2s\"]}), "
    "else as a string. Repeatable; applied in order.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="Write summary.json, scenario.json, timeseries.parquet and queues.parquet (and the --pcap "
    "captures) into DIR.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary JSON on stdout instead of a table.")
@click.option(
    "--threads",
    metavar="N",
    help="Worker threads: N (1-1024) or auto (the default: every core for a graph of 128 hosts or more, "
    "else one). The same as --set threads=N; results are the same bytes for any N (docs/performance.md).",
)
@click.option(
    "--pcap",
    "pcap",
    multiple=True,
    metavar="LINK",
    help="Capture the packets crossing LINK into DIR/LINK.pcap (needs --out). Links: bottleneck, "
    "bottleneck_rev, fN_src_up, fN_dst_down, fN_dst_up, fN_src_down (N = flow id). Repeatable.",
)
def run(scenario: str | None, seed: int | None, overrides: tuple[str, ...], out: Path | None, as_json: bool,
        threads: str | None, pcap: tuple[str, ...]) -> None:
    """Run one scenario and print its summary.

    With no SCENARIO.toml, runs the built-in demo scenario.
    """
    from ..api import run_resolved
    from ..scenario import demo, resolve

    if out is not None and out.exists() and not out.is_dir():
        fail(EXIT_INVALID, f"--out: {out} exists and is not a directory")
    if pcap and out is None:
        fail(EXIT_INVALID, "--pcap: needs --out DIR (the capture files are written there)")
    with cli_errors(simulation=True):
        if scenario is None:
            click.echo(
                "note: no scenario file given; running the built-in demo (bloatlab/scenarios/demo.toml). "
                "Run `bloatlab run SCENARIO.toml` for your own.",
                err=True,
            )
            source: Any = demo()
        else:
            source = scenario
        sets = list(overrides) + ([f"threads={threads}"] if threads is not None else [])
        doc = resolve(source, seed=seed, set=sets)
        if pcap:
            _add_capture(doc, pcap)

        def simulate():
            # Always sample the time series, also without --out: sampling adds engine events,
            # and the summary must not depend on whether --out was given.
            return run_resolved(doc, series=True)

        if sys.stderr.isatty():
            with stderr_console().status(f"simulating {doc.get('name', 'scenario')} ...", spinner="dots"):
                result = call_interruptibly(simulate)
        else:
            result = call_interruptibly(simulate)

    if out is not None:
        try:
            result.to_dir(out)
        except OSError as e:
            fail(EXIT_FAILURE, f"--out: cannot write {out}: {e.strerror or e}")
        except Exception as e:  # noqa: BLE001
            unexpected(e)

    if as_json:
        text = result.summary_json
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
    else:
        from rich.console import Console

        from ..outputs.tables import render_summary

        render_summary(result.summary, Console())
    if out is not None:
        click.echo(f"wrote {out}/ ({', '.join(result.output_files())})", err=True)


def _add_capture(doc: dict[str, Any], links: tuple[str, ...]) -> None:
    """Adds ``--pcap`` links to the scenario's ``capture.links`` (keeping ones already there)."""
    capture = doc.get("capture")
    if capture is None:
        capture = doc["capture"] = {}
    if not isinstance(capture, dict):
        raise ScenarioError("capture", "expected a table, e.g. { links = [\"bottleneck\"], snaplen = 128 }")
    existing = capture.get("links", [])
    if not isinstance(existing, list):
        raise ScenarioError("capture.links", "expected an array of link names")
    for link in links:
        if link not in existing:
            existing.append(link)
    capture["links"] = existing
