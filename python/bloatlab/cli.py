"""The ``bloatlab`` command line.

Exit codes: 0 success; 2 invalid input (one ``error: <path>: <message>`` line on
stderr, no traceback, nothing written); 1 anything else (a failed internal check
of the simulator, an I/O error, a bug). Set ``BLOATLAB_DEBUG=1`` to see the
traceback of an unexpected error.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from . import __version__, _core
from .errors import ScenarioError, SimulationError

T = TypeVar("T")

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_INVALID = 2


def _err(message: str) -> None:
    click.echo(f"error: {message}", err=True)


def _fail(code: int, message: str) -> NoReturn:
    _err(message)
    sys.exit(code)


def _unexpected(e: BaseException) -> NoReturn:
    if os.environ.get("BLOATLAB_DEBUG"):
        traceback.print_exception(e)
    msg = str(e).strip() or type(e).__name__
    hint = "" if os.environ.get("BLOATLAB_DEBUG") else " (set BLOATLAB_DEBUG=1 for a traceback)"
    _fail(EXIT_FAILURE, f"{type(e).__name__}: {msg}{hint}")


def _call_interruptibly(fn: Callable[[], T]) -> T:
    """Runs ``fn`` in a worker thread so that Ctrl-C ends the program at once.

    The simulator releases the GIL but does not poll for signals, so without
    this a KeyboardInterrupt would wait until the run finished.
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # re-raised in the calling thread
            box["error"] = e

    worker = threading.Thread(target=target, name="bloatlab-run", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.1)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.stderr.flush()
        os._exit(130)
    if "error" in box:
        raise box["error"]
    return box["value"]


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="bloatlab")
def main() -> None:
    """bloatlab: a deterministic packet-level network simulator for bufferbloat research.

    Start with `bloatlab run` (a built-in demo) or `bloatlab run scenarios/demo.toml`.
    """


@main.command()
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
    help="Write summary.json, scenario.json, timeseries.parquet and queues.parquet into DIR.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary JSON on stdout instead of a table.")
def run(scenario: str | None, seed: int | None, overrides: tuple[str, ...], out: Path | None, as_json: bool) -> None:
    """Run one scenario and print its summary.

    With no SCENARIO.toml, runs the built-in demo scenario.
    """
    from .api import run_resolved
    from .scenario import demo, resolve

    if out is not None and out.exists() and not out.is_dir():
        _fail(EXIT_INVALID, f"--out: {out} exists and is not a directory")
    try:
        if scenario is None:
            click.echo(
                "note: no scenario file given; running the built-in demo (bloatlab/scenarios/demo.toml). "
                "Run `bloatlab run SCENARIO.toml` for your own.",
                err=True,
            )
            source: Any = demo()
        else:
            source = scenario
        doc = resolve(source, seed=seed, set=list(overrides))

        def simulate():
            # Always sample the time series, also without --out: sampling adds engine events,
            # and the summary must not depend on whether --out was given.
            return run_resolved(doc, series=True)

        if sys.stderr.isatty():
            with _stderr_console().status(f"simulating {doc.get('name', 'scenario')} ...", spinner="dots"):
                result = _call_interruptibly(simulate)
        else:
            result = _call_interruptibly(simulate)
    except _core.ScenarioError as e:
        _fail(EXIT_INVALID, str(e if isinstance(e, ScenarioError) else ScenarioError.from_core(e)))
    except SimulationError as e:
        _fail(EXIT_FAILURE, f"simulation failed: {e}")
    except Exception as e:  # noqa: BLE001 - the CLI turns everything into an exit code
        _unexpected(e)

    if out is not None:
        try:
            result.to_dir(out)
        except OSError as e:
            _fail(EXIT_FAILURE, f"--out: cannot write {out}: {e.strerror or e}")
        except Exception as e:  # noqa: BLE001
            _unexpected(e)

    if as_json:
        text = result.summary_json
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
    else:
        from rich.console import Console

        from .display import render_summary

        render_summary(result.summary, Console())
    if out is not None:
        click.echo(f"wrote {out}/ (summary.json, scenario.json, timeseries.parquet, queues.parquet)", err=True)


@main.command()
@click.option("--quick", is_flag=True, help="Shorter simulated durations (about 10x faster).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON on stdout.")
@click.option("--scale", type=float, default=1.0, hidden=True, help="Multiply every simulated duration (tests).")
def bench(quick: bool, as_json: bool, scale: float) -> None:
    """Measure simulator speed and memory on fixed scenarios.

    Each scenario runs in a fresh subprocess with time series off; reported are
    bottleneck packets and events per wall-clock second and the peak resident
    memory. The 400 Mbit/s scenario runs at two simulated durations to show
    that memory does not grow with simulated time.
    """
    import json

    from . import bench as benchmod

    if not scale > 0:
        _fail(EXIT_INVALID, f"--scale: must be greater than 0 (got {scale})")
    progress = None if as_json else (lambda msg: click.echo(msg, err=True))
    try:
        report = benchmod.run_suite(quick=quick, scale=scale, progress=progress)
    except benchmod.BenchError as e:
        _fail(EXIT_FAILURE, str(e))
    except Exception as e:  # noqa: BLE001
        _unexpected(e)
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        from rich.console import Console

        benchmod.render(report, Console())


if __name__ == "__main__":  # pragma: no cover
    main(prog_name="bloatlab")
