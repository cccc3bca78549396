"""``bloatlab sweep``: a sweep file into a results store, with the table of its results."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from ..clikit import EXIT_FAILURE, cli_errors


@click.command()
@click.argument("sweep_file", metavar="SWEEP.toml")
@click.option("--jobs", "-j", type=int, metavar="N",
              help="Worker processes (local; default: one per core) or Ray tasks in flight (ray).")
@click.option("--backend", default="local", metavar="local|ray|serial", show_default=True,
              help="local: a process pool on this machine; ray: Ray tasks (on the cluster at --address, "
              "or on a local Ray instance); serial: one run after another in this process.")
@click.option("--address", metavar="ADDR",
              help="Address of an existing Ray cluster (HOST:PORT, ray://HOST:PORT or auto).")
@click.option("--out", type=click.Path(path_type=Path), metavar="DIR",
              help="The results store (default: out/NAME). Runs already in it are skipped: run the same "
              "command again to resume an interrupted sweep.")
@click.option("--dry-run", is_flag=True, help="Check every run's scenario and list the runs; run nothing.")
def sweep(sweep_file: str, jobs: int | None, backend: str, address: str | None, out: Path | None,
          dry_run: bool) -> None:
    """Run a scenario over parameter grids and seeds (a sweep file) into a results store.

    Every run's scenario is checked before anything runs. Each finished run is stored at
    once (atomically), so Ctrl-C or a crash loses only the runs in progress. Failed runs are
    recorded with their error (exit status 1) and retried by the next start.
    """
    from ..sweeps.driver import SweepInterrupted, execute_sweep
    from ..sweeps.spec import load_sweep, validate

    err = lambda msg: click.echo(msg, err=True)  # noqa: E731
    try:
        with cli_errors():
            spec = load_sweep(sweep_file)
            store = out if out is not None else Path("out") / _safe_name(spec.name)
            if dry_run:
                runs = validate(spec)
                _print_plan(spec, runs)
                return
            outcome = execute_sweep(spec, backend=backend, jobs=jobs, address=address, out=store, progress=True,
                                    log=err)
    except SweepInterrupted as e:
        o = e.outcome
        err(f"interrupted: {o.done} of {o.total} runs are stored in {o.store}; "
            "run the same command again to finish the others")
        sys.exit(130)
    except KeyboardInterrupt:
        err("interrupted (nothing was run)")
        sys.exit(130)

    try:
        _print_sweep_results(store)
    except Exception as e:  # noqa: BLE001 - the runs are stored; a display problem is not fatal
        err(f"note: cannot show the results table: {type(e).__name__}: {e}")
    per_run = ""
    if outcome.ran:
        per_run = f" in {outcome.wall_s:.1f} s on {outcome.backend}"
    err(f"stored {outcome.done} of {outcome.total} runs in {store}/ ({outcome.ok} new{per_run}, "
        f"{outcome.skipped} already done, {outcome.failed} failed). "
        f"Next: bloatlab report {store}")
    if outcome.failed:
        for e in outcome.errors[:10]:
            where = f"{e['path']}: " if e.get("path") else ""
            err(f"failed: {e['label']}: {e['type']}: {where}{e['message']}")
        if len(outcome.errors) > 10:
            err(f"... and {len(outcome.errors) - 10} more (bloatlab.Store({str(store)!r}).runs)")
        sys.exit(EXIT_FAILURE)


def _print_plan(spec: Any, runs: list[Any]) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAVY, show_edge=False, pad_edge=False,
                  title=f"{spec.name}: {len(runs)} runs, all valid (dry run: nothing was run)")
    for col in ["point", *spec.param_names, "seeds"]:
        table.add_column(col)
    seen: dict[int, list[int]] = {}
    params: dict[int, dict[str, Any]] = {}
    for r in runs:
        seen.setdefault(r.point, []).append(r.seed)
        params[r.point] = r.params
    for point, seeds in seen.items():
        seed_text = ", ".join(map(str, seeds)) if len(seeds) <= 4 else f"{seeds[0]}..{seeds[-1]} ({len(seeds)})"
        table.add_row(str(point), *(str(params[point][p]) for p in spec.param_names), seed_text)
    Console().print(table)


def _short_param(path: str, all_paths: list[str]) -> str:
    """``topology.bottleneck_queue.limit`` -> ``limit`` when no other column ends the same way."""
    last = path.rsplit(".", 1)[-1]
    same = [p for p in all_paths if p.rsplit(".", 1)[-1] == last]
    return last if len(same) == 1 else path


def _print_sweep_results(store: Path) -> None:
    """Mean ± CI half-width per parameter combination (and flow group) on stdout."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from ..outputs.numbers import mean_ci, num, short_value
    from ..sweeps.aggregate import summarize
    from ..sweeps.store import Store

    st = Store(store)
    flows = st.flows
    if flows.empty:
        return
    params = st.params
    by = [*params, "group"]
    metrics = [m for m in ("goodput_mbps", "rtt_mean_ms", "rtt_p95_ms", "loss_pct") if m in flows.columns]
    agg = summarize(flows, by, metrics)
    bq = st.bottleneck
    qagg = summarize(bq, params, ["mean_sojourn_ms"]) if params and "mean_sojourn_ms" in bq.columns else None
    table = Table(box=box.SIMPLE_HEAVY, show_edge=False, pad_edge=False, collapse_padding=True,
                  title=f"{st.name}: mean ± 95 % CI over seeds")
    for col in by:
        table.add_column(_short_param(col, by), overflow="fold")
    table.add_column("n", justify="right")
    heads = {"goodput_mbps": "goodput\nMbit/s", "rtt_mean_ms": "RTT mean\nms", "rtt_p95_ms": "RTT p95\nms",
             "loss_pct": "loss\n%"}
    for m in metrics:
        table.add_column(heads[m], justify="right", no_wrap=True)
    if qagg is not None:
        table.add_column("queue delay\nms", justify="right")
    for key, part in agg.groupby(by, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        cells = [short_value(k) for k in key]
        cells.append(str(int(part["n"].max())))
        for m in metrics:
            r = part[part["metric"] == m].iloc[0]
            mean, half = mean_ci(float(r["mean"]), float(r["ci_half"]), spec="#.3g")
            cells.append(f"{mean}±{half}" if half else mean)
        if qagg is not None:
            mask = True
            for p, k in zip(params, key):
                mask = mask & (qagg[p] == k)
            q = qagg[mask]
            cells.append(num(float(q["mean"].iloc[0]), ".4g") if len(q) else "—")
        table.add_row(*cells)
    console = Console()
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(width=160)  # a log file or a pipe: no need to fold the table
    console.print(table)


def _safe_name(name: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9._+-]+", "-", name).strip("-.") or "sweep"
