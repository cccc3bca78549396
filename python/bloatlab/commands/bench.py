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
              help="Instead: 1 to 100,000 CUBIC flows on a 10 Gbit/s dumbbell and a fat-tree, on one thread (one "
              "process per point): wall time, set-up time, peak RSS, bottleneck packets and transmissions over all "
              "hops per wall second; then the parallel cases (--cases) at each of --threads.")
@click.option("--max-flows", type=int, default=None, metavar="N", help="--scale: largest flow count (default 100000).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="--scale: also write DIR/scale.json and the figure DIR/scale.svg.")
@click.option("--repeat", type=int, default=None, metavar="N",
              help="--scale: run the curve N times, round after round, and report each point's run of median "
              "wall time (default 1; the parallel cases run once).")
@click.option("--cases", "cases", default=None, metavar="LIST",
              help="--scale: the parallel cases run after the curve, comma-separated: e5 (Days' E5, k = 32 "
              "fat-tree, 8,192 1 MiB flows, to completion), fat_tree_4096 (4,096 CUBIC flows, k = 16), or none "
              "(default e5,fat_tree_4096).")
@click.option("--threads", "threads", default=None, metavar="LIST",
              help="--scale: thread counts of each parallel case, comma-separated: N (1-1024) or all (every core) "
              "(default 1,2,all; 1 always runs first, the reference of the speed-up and of the same-bytes check).")
@click.option("--case-time", "case_time", type=float, default=None, metavar="S",
              help="--scale: simulated seconds of fat_tree_4096 (default 1; --quick: 0.002). 1 s takes about two "
              "hours of one core. E5 always runs whole (1 s).")
@click.option("--case-k", "case_k", type=int, default=None, hidden=True,
              help="--scale: build every parallel case's fat-tree at this k (tests).")
def bench(quick: bool, as_json: bool, scale: float, sweep_mode: bool, runs: int, jobs: int | None,
          scale_mode: bool, max_flows: int | None, out_dir: str | None, repeat: int | None, cases: str | None,
          threads: str | None, case_time: float | None, case_k: int | None) -> None:
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
                     as_json=as_json, progress=progress, repeat=repeat, cases=cases, threads=threads,
                     case_time=case_time, case_k=case_k)
        return
    if max_flows is not None or out_dir is not None or repeat is not None:
        fail(EXIT_INVALID, "--max-flows, --out and --repeat go with --scale")
    if cases is not None or threads is not None or case_time is not None or case_k is not None:
        fail(EXIT_INVALID, "--cases, --threads and --case-time go with --scale")
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
                 as_json: bool, progress: Any, repeat: int | None, cases: str | None, threads: str | None,
                 case_time: float | None, case_k: int | None) -> None:
    """``bloatlab bench --scale``: the curve, then the parallel cases; their tables or JSON, and
    optionally the files."""
    import json

    if max_flows is not None and max_flows < 1:
        fail(EXIT_INVALID, f"--max-flows: must be at least 1 (got {max_flows})")
    if repeat is not None and repeat < 1:
        fail(EXIT_INVALID, f"--repeat: must be at least 1 (got {repeat})")
    try:
        case_names = benchmod.parse_cases(cases if cases is not None else "e5,fat_tree_4096")
        thread_counts = benchmod.parse_threads(threads if threads is not None else "1,2,all")
    except ValueError as e:
        fail(EXIT_INVALID, str(e))
    if case_time is not None and not case_time > 0:
        fail(EXIT_INVALID, f"--case-time: must be greater than 0 (got {case_time:g})")
    if case_k is not None and not (2 <= case_k <= 64 and case_k % 2 == 0):
        fail(EXIT_INVALID, f"--case-k: must be an even number from 2 to 64 (got {case_k})")
    if case_time is None:
        case_time = benchmod.CASE_TIME_S[1 if quick else 0] * time_scale
    try:
        rep = benchmod.run_scale(max_flows=max_flows or benchmod.SCALE_FLOWS[-1], quick=quick,
                                 time_scale=time_scale, progress=progress, repeat=repeat or 1)
        rep["cases"] = benchmod.run_parallel_cases(case_names, threads=thread_counts, case_time_s=case_time,
                                                   k=case_k, progress=progress)
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

        console = Console()
        benchmod.render_scale(rep, console)
        if rep["cases"]:
            benchmod.render_cases(rep["cases"], console)
    if not benchmod.cases_all_same(rep["cases"]):
        # The parallel engine must give the one-thread run's bytes: anything else is a bug.
        bad = [f"{c['name']} on {r['threads']} threads" for c in rep["cases"] for r in c["runs"] if not r["same_bytes"]]
        fail(EXIT_FAILURE, f"--scale: the summary differs from the one-thread run's ({', '.join(bad)}): "
             "a bug in the parallel engine")
