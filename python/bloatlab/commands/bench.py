"""``bloatlab bench``: the simulator's speed on fixed scenarios (``--sweep``: the sweep back
ends' overhead; ``--scale``: flow-count scaling)."""

from __future__ import annotations

from typing import Any

import click

from ..clikit import EXIT_FAILURE, EXIT_INVALID, fail, unexpected


@click.command()
@click.option("--quick", is_flag=True, help="Shorter simulated durations (about 10x faster).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON on stdout.")
@click.option("--time-scale", "scale", type=float, default=1.0, hidden=True,
              help="Multiply every simulated duration (tests).")
@click.option("--sweep", "sweep_mode", is_flag=True,
              help="Instead: time a sweep of --runs short runs (direct, serial, 1 worker, all cores) and report "
              "the speed-up and the overhead per run.")
@click.option("--runs", type=int, default=60, show_default=True, metavar="N", help="--sweep: number of runs.")
@click.option("--jobs", type=int, default=None, metavar="N",
              help="--sweep: workers of the parallel sweep (default: cores).")
@click.option("--scale", "scale_mode", is_flag=True,
              help="Instead: 1 to 100,000 CUBIC flows on a 10 Gbit/s dumbbell (one process per point): wall time, "
              "set-up time, peak RSS, bottleneck packets and transmissions over all hops per wall second.")
@click.option("--max-flows", type=int, default=None, metavar="N", help="--scale: largest flow count (default 100000).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="--scale: also write DIR/scale.json and the figure DIR/scale.svg.")
@click.option("--repeat", type=int, default=None, metavar="N",
              help="--scale: run the curve N times, round after round, and report each point's run of median "
              "wall time (default 1).")
def bench(quick: bool, as_json: bool, scale: float, sweep_mode: bool, runs: int, jobs: int | None,
          scale_mode: bool, max_flows: int | None, out_dir: str | None, repeat: int | None) -> None:
    """Measure simulator speed and memory on fixed scenarios.

    Each scenario runs in a fresh subprocess with time series off; reported are
    bottleneck packets and events per wall-clock second and the peak resident
    memory. The 400 Mbit/s scenario runs at two simulated durations to show
    that memory does not grow with simulated time.
    """
    import json

    from .. import bench as benchmod

    if not scale > 0:
        fail(EXIT_INVALID, f"--time-scale: must be greater than 0 (got {scale})")
    progress = None if as_json else (lambda msg: click.echo(msg, err=True))
    if scale_mode:
        _bench_scale(benchmod, quick=quick, time_scale=scale, max_flows=max_flows, out_dir=out_dir,
                     as_json=as_json, progress=progress, repeat=repeat)
        return
    if max_flows is not None or out_dir is not None or repeat is not None:
        fail(EXIT_INVALID, "--max-flows, --out and --repeat go with --scale")
    if sweep_mode:
        if runs < 1:
            fail(EXIT_INVALID, f"--runs: must be at least 1 (got {runs})")
        if jobs is not None and jobs < 1:
            fail(EXIT_INVALID, f"--jobs: must be at least 1 (got {jobs})")
        try:
            rep = benchmod.run_sweep_bench(runs=runs, duration_s=(5.0 if quick else 20.0) * scale, jobs=jobs,
                                           progress=progress)
        except benchmod.BenchError as e:
            fail(EXIT_FAILURE, str(e))
        except Exception as e:  # noqa: BLE001
            unexpected(e)
        if as_json:
            click.echo(json.dumps(rep, indent=2))
        else:
            from rich.console import Console

            benchmod.render_sweep(rep, Console())
        return
    try:
        report = benchmod.run_suite(quick=quick, scale=scale, progress=progress)
    except benchmod.BenchError as e:
        fail(EXIT_FAILURE, str(e))
    except Exception as e:  # noqa: BLE001
        unexpected(e)
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        from rich.console import Console

        benchmod.render(report, Console())


def _bench_scale(benchmod: Any, *, quick: bool, time_scale: float, max_flows: int | None, out_dir: str | None,
                 as_json: bool, progress: Any, repeat: int | None) -> None:
    """``bloatlab bench --scale``: the curve, its table or JSON, and optionally its files."""
    import json

    if max_flows is not None and max_flows < 1:
        fail(EXIT_INVALID, f"--max-flows: must be at least 1 (got {max_flows})")
    if repeat is not None and repeat < 1:
        fail(EXIT_INVALID, f"--repeat: must be at least 1 (got {repeat})")
    try:
        rep = benchmod.run_scale(max_flows=max_flows or benchmod.SCALE_FLOWS[-1], quick=quick,
                                 time_scale=time_scale, progress=progress, repeat=repeat or 1)
    except benchmod.BenchError as e:
        fail(EXIT_FAILURE, str(e))
    except Exception as e:  # noqa: BLE001
        unexpected(e)
    if out_dir is not None:
        from pathlib import Path

        from ..atomic import write_bytes
        from ..outputs.plot import save

        Path(out_dir).mkdir(parents=True, exist_ok=True)
        write_bytes(Path(out_dir) / "scale.json", (json.dumps(rep, indent=2) + "\n").encode())
        save(benchmod.scale_figure(rep), Path(out_dir) / "scale.svg")
    if as_json:
        click.echo(json.dumps(rep, indent=2))
    else:
        from rich.console import Console

        benchmod.render_scale(rep, Console())
