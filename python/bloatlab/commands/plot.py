"""``bloatlab plot``: figures of a run directory or a sweep store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..clikit import cli_errors
from ..errors import ScenarioError


@click.command()
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.argument("kind", required=False, metavar="[timeseries|bars|cdf]")
@click.option("--metric", "metrics", multiple=True, metavar="NAME",
              help="bars/cdf: a summary field (goodput_mbps, rtt_p95_ms, mean_sojourn_ms, jain, ...); "
              "cdf of a run: a time-series column (srtt_ms, sojourn_ms, ...). Repeatable.")
@click.option("--x", "x", metavar="COL", help="bars: the x axis (a parameter key path; default: every parameter).")
@click.option("--hue", metavar="COL",
              help="bars: one bar per value of COL (default: the flow group); cdf: one line per value.")
@click.option("--link", default="bottleneck", show_default=True, metavar="LINK", help="timeseries: the queue to show.")
@click.option("--format", "formats", multiple=True, metavar="png|svg", help="Image format(s); default png.")
@click.option("--out", type=click.Path(path_type=Path), metavar="DIR", help="Where to write (default: DIR/plots).")
def plot(directory: Path, kind: str | None, metrics: tuple[str, ...], x: str | None, hue: str | None, link: str,
         formats: tuple[str, ...], out: Path | None) -> None:
    """Plot a run directory (time series, CDF) or a sweep store (bars with CI, CDF).

    DIR is what `bloatlab run --out` or `bloatlab sweep --out` wrote (or a sweep's
    DIR/runs/RUN_ID). Prints the paths of the files written.
    """
    import matplotlib

    matplotlib.use("Agg")
    from ..outputs import plot as P
    from ..sweeps.store import is_store

    with cli_errors():
        if not directory.is_dir():
            raise ScenarioError(str(directory), "no such directory")
        sweep_dir = is_store(directory)
        run_dir = (directory / "summary.json").is_file()
        if not sweep_dir and not run_dir:
            raise ScenarioError(str(directory), "not a run directory (summary.json) or a sweep store (sweep.json)")
        kind = kind or ("bars" if sweep_dir else "timeseries")
        if kind not in P.KINDS:
            raise ScenarioError("KIND", f'unknown plot "{kind}" (known: {", ".join(P.KINDS)})')
        if kind == "timeseries" and not run_dir:
            raise ScenarioError("KIND", "timeseries needs a run directory: DIR/runs/RUN_ID of a sweep, "
                                "or what `bloatlab run --out` wrote")
        if kind == "bars" and not sweep_dir:
            raise ScenarioError("KIND", "bars need a sweep store (what `bloatlab sweep` wrote)")
        fmts = list(dict.fromkeys(f.lower().lstrip(".") for f in formats)) or ["png"]
        for f in fmts:
            if f not in P.FORMATS:
                raise ScenarioError("--format", f'unknown format "{f}" (known: {", ".join(P.FORMATS)})')
        figures: list[tuple[str, Any]] = []
        if kind == "timeseries":
            figures.append(("timeseries", P.timeseries_figure(directory, link=link)))
        elif kind == "bars":
            for m in metrics or ("goodput_mbps",):
                figures.append((f"bars-{m}", P.sweep_bars(directory, m, x=x, hue=hue)))
        elif sweep_dir:
            for m in metrics or ("rtt_p95_ms",):
                figures.append((f"cdf-{m}", P.sweep_cdf(directory, m, by=hue)))
        else:
            for m in metrics or ("srtt_ms",):
                figures.append((f"cdf-{m}", P.run_cdf_figure(directory, m)))
        target = out if out is not None else directory / "plots"
        for name, fig in figures:
            for f in fmts:
                click.echo(str(P.save(fig, target / f"{name}.{f}")))
