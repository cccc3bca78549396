"""``bloatlab report``: the self-contained HTML page of a sweep or run."""

from __future__ import annotations

from pathlib import Path

import click

from ..clikit import cli_errors


@click.command()
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), metavar="FILE",
              help="The HTML file (default: DIR/report.html).")
def report(directory: Path, out: Path | None) -> None:
    """Write a self-contained HTML report of a sweep store (or of a run directory).

    Tables of mean ± confidence interval per parameter combination, bar charts, CDFs,
    time series and failed runs, in one file with the figures inlined (no JavaScript,
    nothing loaded from elsewhere). Prints the path of the file.
    """
    import matplotlib

    matplotlib.use("Agg")
    from ..outputs.report import write_report

    with cli_errors():
        path = write_report(directory, out)
    click.echo(str(path))
