"""``bloatlab fixes``: every fix side by side under the latency-under-load test."""

from __future__ import annotations

from pathlib import Path

import click

from ..clikit import EXIT_INVALID, call_interruptibly, cli_errors, fail


@click.command()
@click.option("--base", "bases", multiple=True, metavar="NAME", help="Only this base scenario (repeatable).")
@click.option("--fix", "fix_names", multiple=True, metavar="LABEL", help="Only this fix (repeatable).")
@click.option("--duration", default="30s", show_default=True, metavar="TIME", help="Simulated time per run.")
@click.option("--flows", type=int, default=4, show_default=True, metavar="N", help="Bulk TCP flows each way.")
@click.option("--seed", type=int, default=1, show_default=True, metavar="N")
@click.option("--jobs", "-j", type=int, metavar="N", help="Worker processes (default: one per core).")
@click.option("--out", type=click.Path(path_type=Path), default=Path("out/fixes"), show_default=True, metavar="DIR")
def fixes(bases: tuple[str, ...], fix_names: tuple[str, ...], duration: str, flows: int, seed: int,
          jobs: int | None, out: Path) -> None:
    """Every fix side by side under the latency-under-load test, on the papers' main scenarios.

    Writes DIR/report.html (tables and figures), report.md and results.json.
    """
    from .. import fixes as every_fix

    if out.exists() and not out.is_dir():
        fail(EXIT_INVALID, f"--out: {out} exists and is not a directory")
    if jobs is not None and jobs < 1:
        fail(EXIT_INVALID, f"--jobs: must be at least 1 (got {jobs})")
    with cli_errors(simulation=True):
        every_fix.plan(bases=list(bases), fixes=list(fix_names), duration=duration, flows=flows, seed=seed)
        rows = call_interruptibly(lambda: every_fix.run(jobs=jobs, bases=list(bases) or None,
                                                         fixes=list(fix_names) or None, duration=duration,
                                                         flows=flows, seed=seed))
        every_fix.write(rows, out)
    for r in rows:
        o = r.outcome
        line = f"skipped ({r.skipped})" if o is None else (
            f"{o.download_mbps:6.2f} / {o.upload_mbps:5.2f} Mbit/s  +{o.added_latency_ms:7.1f} ms  "
            f"loss {o.probe_loss_pct:5.1f} %  {every_fix.grade_text(o)}  "
            f"video/page/RPM {every_fix.felt_cells(r.felt).replace(' | ', ' / ')}")
        click.echo(f"{r.base:14} {r.fix:20} {line}")
    click.echo(f"wrote {out}/report.html, report.md, results.json", err=True)
