"""``bloatlab reproduce``: the six papers' experiments."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..clikit import cli_errors


@click.command()
@click.argument("experiment", metavar="EXPERIMENT")
@click.option("--quick", is_flag=True, help="Fewer seeds and shorter runs: a fast look (all six in ~15 min).")
@click.option("--seeds", type=int, metavar="N", help="Seeds per configuration (default: the paper's, "
              "30 where it used 30 or gave confidence intervals; 2 with --quick).")
@click.option("--jobs", "-j", type=int, metavar="N", help="Worker processes (default: one per core).")
@click.option("--out", type=click.Path(path_type=Path), metavar="DIR",
              help="Output directory (default: out/reproduce/EXPERIMENT). Finished runs are cached in "
              "DIR/cache: run the same command again to resume.")
@click.option("--backend", default="local", metavar="local|ray|serial", show_default=True,
              help="Where the simulations run (as for `bloatlab sweep`).")
@click.option("--engine", default="sim", metavar="sim|emulate|both", show_default=True,
              help="sim: the simulator; emulate: the configurations Linux can run, on real Linux TCP through "
              "bloatlab's bottleneck (root; docs/emulation.md); both: the simulated reproduction, then those "
              "configurations in both engines side by side (DIR/engines.md).")
def reproduce(experiment: str, quick: bool, seeds: int | None, jobs: int | None, out: Path | None,
              backend: str, engine: str) -> None:
    """Reproduce a paper's experiments: cubic-plus, cellular-bufferbloat, ewt, abrwda, dccp-bbr or all.

    Writes tables (Markdown and CSV, the paper's value beside ours), figures (PNG and SVG),
    claims.json (every headline claim of the paper, evaluated from the runs) and
    report.md / report.html into DIR.
    """
    import time

    from .. import experiments

    err = lambda msg: click.echo(msg, err=True)  # noqa: E731
    try:
        with cli_errors():
            # experiments.reproduce checks every argument before it writes anything.
            target = out if out is not None else Path("out") / "reproduce" / experiment
            t0 = time.monotonic()
            claims = experiments.reproduce(experiment, target, quick=quick, seeds=seeds, jobs=jobs,
                                           backend=backend, progress=True, engine=engine)
    except KeyboardInterrupt:
        err("interrupted: finished runs are cached; run the same command again to resume")
        sys.exit(130)
    held = sum(c.holds for c in claims)
    for c in claims:
        mark = "[holds]" if c.holds else "[FAILS]"
        click.echo(f"{mark:8} {c.experiment}/{c.id}: {c.ours}")
    err(f"{held} of {len(claims)} claims hold; wrote {target}/report.md, report.html, claims.json, "
        f"tables/ and figures/ in {time.monotonic() - t0:.0f} s")
