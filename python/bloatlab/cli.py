"""The ``bloatlab`` command line.

Exit codes: 0 success; 2 invalid input (one ``error: <path>: <message>`` line on
stderr, no traceback, nothing written); 1 anything else (a failed internal check
of the simulator, an I/O error, a bug). Set ``BLOATLAB_DEBUG=1`` to see the
traceback of an unexpected error.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from .clikit import EXIT_FAILURE, EXIT_INVALID, EXIT_OK, call_interruptibly, cli_errors, fail, unexpected
from .errors import ScenarioError
from .simcore import __version__
__all__ = ["main", "EXIT_OK", "EXIT_FAILURE", "EXIT_INVALID"]


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True)


class _Group(click.Group):
    """Click's usage errors (a malformed option value, a missing argument) as one
    ``error: <option>: <message>`` line with exit status 2, like every other bad input."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.UsageError as e:
            if type(e).__name__ == "NoArgsIsHelpError":  # `bloatlab` alone: the help, as click prints it
                click.echo(e.format_message(), err=True)
                sys.exit(EXIT_INVALID)
            param = getattr(e, "param", None)
            where = ""
            if isinstance(param, click.Argument):
                where = param.human_readable_name
            elif param is not None:
                where = (param.opts[0] if getattr(param, "opts", None) else param.name or "").strip()
            where = f"{where}: " if where else ""
            message = e.format_message()
            if e.ctx is not None and "No such command" in message:
                message += f" (commands: {', '.join(sorted(self.commands))})"
            fail(EXIT_INVALID, f"{where}{message}")
        except click.exceptions.Abort:
            sys.stderr.write("interrupted\n")
            sys.exit(130)
        except click.exceptions.Exit as e:
            sys.exit(e.exit_code)
        except click.ClickException as e:
            fail(EXIT_INVALID, e.format_message())


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
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
    help="Write summary.json, scenario.json, timeseries.parquet and queues.parquet (and the --pcap "
    "captures) into DIR.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary JSON on stdout instead of a table.")
@click.option(
    "--pcap",
    "pcap",
    multiple=True,
    metavar="LINK",
    help="Capture the packets crossing LINK into DIR/LINK.pcap (needs --out). Links: bottleneck, "
    "bottleneck_rev, fN_src_up, fN_dst_down, fN_dst_up, fN_src_down (N = flow id). Repeatable.",
)
def run(scenario: str | None, seed: int | None, overrides: tuple[str, ...], out: Path | None, as_json: bool,
        pcap: tuple[str, ...]) -> None:
    """Run one scenario and print its summary.

    With no SCENARIO.toml, runs the built-in demo scenario.
    """
    from .api import run_resolved
    from .scenario import demo, resolve

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
        doc = resolve(source, seed=seed, set=list(overrides))
        if pcap:
            _add_capture(doc, pcap)

        def simulate():
            # Always sample the time series, also without --out: sampling adds engine events,
            # and the summary must not depend on whether --out was given.
            return run_resolved(doc, series=True)

        if sys.stderr.isatty():
            with _stderr_console().status(f"simulating {doc.get('name', 'scenario')} ...", spinner="dots"):
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

        from .display import render_summary

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


@main.command()
@click.option("--quick", is_flag=True, help="Shorter simulated durations (about 10x faster).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON on stdout.")
@click.option("--time-scale", "scale", type=float, default=1.0, hidden=True, help="Multiply every simulated duration (tests).")
@click.option("--sweep", "sweep_mode", is_flag=True,
              help="Instead: time a sweep of --runs short runs (direct, serial, 1 worker, all cores) and report "
              "the speed-up and the overhead per run.")
@click.option("--runs", type=int, default=60, show_default=True, metavar="N", help="--sweep: number of runs.")
@click.option("--jobs", type=int, default=None, metavar="N", help="--sweep: workers of the parallel sweep (default: cores).")
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

    from . import bench as benchmod

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

        from .plot import save
        from .atomic import write_bytes

        Path(out_dir).mkdir(parents=True, exist_ok=True)
        write_bytes(Path(out_dir) / "scale.json", (json.dumps(rep, indent=2) + "\n").encode())
        save(benchmod.scale_figure(rep), Path(out_dir) / "scale.svg")
    if as_json:
        click.echo(json.dumps(rep, indent=2))
    else:
        from rich.console import Console

        benchmod.render_scale(rep, Console())


def _safe_name(name: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9._+-]+", "-", name).strip("-.") or "sweep"


@main.command()
@click.argument("sweep_file", metavar="SWEEP.toml")
@click.option("--jobs", "-j", type=int, metavar="N",
              help="Worker processes (local; default: one per core) or Ray tasks in flight (ray).")
@click.option("--backend", default="local", metavar="local|ray|serial", show_default=True,
              help="local: a process pool on this machine; ray: Ray tasks (on the cluster at --address, "
              "or on a local Ray instance); serial: one run after another in this process.")
@click.option("--address", metavar="ADDR", help="Address of an existing Ray cluster (HOST:PORT, ray://HOST:PORT or auto).")
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
    from .sweeprun import SweepInterrupted, execute_sweep
    from .sweeps import load_sweep, validate

    err = lambda msg: click.echo(msg, err=True)  # noqa: E731
    try:
        with cli_errors():
            spec = load_sweep(sweep_file)
            store = out if out is not None else Path("out") / _safe_name(spec.name)
            if dry_run:
                runs = validate(spec)
                _print_plan(spec, runs)
                return
            outcome = execute_sweep(spec, backend=backend, jobs=jobs, address=address, out=store, progress=True, log=err)
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

    from .aggregate import summarize
    from .display import num
    from .store import Store

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
        cells = [str(k) for k in key]
        cells.append(str(int(part["n"].max())))
        for m in metrics:
            r = part[part["metric"] == m].iloc[0]
            half = "" if r["ci_half"] != r["ci_half"] else f"±{num(r['ci_half'], '.2g')}"
            cells.append(f"{num(r['mean'], '.3g')}{half}" if r["mean"] == r["mean"] else "—")
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


@main.command()
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.argument("kind", required=False, metavar="[timeseries|bars|cdf]")
@click.option("--metric", "metrics", multiple=True, metavar="NAME",
              help="bars/cdf: a summary field (goodput_mbps, rtt_p95_ms, mean_sojourn_ms, jain, ...); "
              "cdf of a run: a time-series column (srtt_ms, sojourn_ms, ...). Repeatable.")
@click.option("--x", "x", metavar="COL", help="bars: the x axis (a parameter key path; default: every parameter).")
@click.option("--hue", metavar="COL", help="bars: one bar per value of COL (default: the flow group); cdf: one line per value.")
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
    from . import plot as P
    from .store import is_store

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


@main.command()
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), metavar="FILE", help="The HTML file (default: DIR/report.html).")
def report(directory: Path, out: Path | None) -> None:
    """Write a self-contained HTML report of a sweep store (or of a run directory).

    Tables of mean ± confidence interval per parameter combination, bar charts, CDFs,
    time series and failed runs, in one file with the figures inlined (no JavaScript,
    nothing loaded from elsewhere). Prints the path of the file.
    """
    import matplotlib

    matplotlib.use("Agg")
    from .report import write_report

    with cli_errors():
        path = write_report(directory, out)
    click.echo(str(path))


if __name__ == "__main__":  # pragma: no cover
    main(prog_name="bloatlab")


@main.command()
@click.argument("experiment", metavar="EXPERIMENT")
@click.option("--quick", is_flag=True, help="Fewer seeds and shorter runs: a fast look (all five in ~15 min).")
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

    from . import experiments

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


@main.command()
@click.argument("scenario", required=False, metavar="[SCENARIO.toml]")
@click.option("--flows", type=int, default=4, show_default=True, metavar="N", help="Bulk TCP flows each way.")
@click.option("--cc", default="cubic", show_default=True, metavar="NAME", help="Their congestion control.")
@click.option("--probe-interval", default="100ms", show_default=True, metavar="TIME",
              help="Time between latency probes (and the time-series step).")
@click.option("--seed", type=int, metavar="N", help="Override the scenario's seed.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a key of the base scenario, e.g. --set topology.bottleneck_queue.kind=codel. Repeatable.")
@click.option("--out", type=click.Path(path_type=Path), metavar="DIR",
              help="Write summary.json, both runs and the figures (rrul.png, latency_cdf.png) here.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome and both summaries as JSON on stdout.")
def rrul(scenario: str | None, flows: int, cc: str, probe_interval: str, seed: int | None,
         overrides: tuple[str, ...], out: Path | None, as_json: bool) -> None:
    """Latency under load (RRUL-like): bulk flows both ways plus probes and voice, idle vs loaded.

    SCENARIO.toml gives the topology (its flows are replaced); without it, a bloated home
    link (20/5 Mbit/s). Prints throughput each way, the probes' added latency and its grade.
    """
    from . import rrul as rrul_test

    if out is not None and out.exists() and not out.is_dir():
        fail(EXIT_INVALID, f"--out: {out} exists and is not a directory")
    with cli_errors(simulation=True):
        try:
            res = call_interruptibly(lambda: rrul_test.run(scenario, seed=seed, set=list(overrides), flows=flows, cc=cc,
                                                            probe_interval=probe_interval))
            if out is not None:
                rrul_test.write(res, out)
        except OSError as e:
            fail(EXIT_FAILURE, f"--out: cannot write {out}: {e.strerror or e}")
    if as_json:
        sys.stdout.write(res.to_json())
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"latency under load: {res.loaded.summary['name']}", show_header=False)
        for k, v in rrul_test.describe(res.outcome):
            table.add_row(k, v)
        Console().print(table)
    if out is not None:
        click.echo(f"wrote {out}/ (summary.json, idle/, loaded/, rrul.png, latency_cdf.png)", err=True)


@main.command()
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
    from . import fixes as every_fix

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
            f"{o.download_mbps:6.2f} / {o.upload_mbps:5.2f} Mbit/s  +{o.added_latency_ms:7.1f} ms  {o.grade}")
        click.echo(f"{r.base:14} {r.fix:20} {line}")
    click.echo(f"wrote {out}/report.html, report.md, results.json", err=True)


# `bloatlab emulate` and `bloatlab compare` (real Linux TCP through bloatlab's bottleneck).
from .emulate.cli import register as _register_emulation  # noqa: E402

_register_emulation(main)

# `bloatlab packetdrill` (packetdrill scripts against the simulated TCP endpoint).
from .packetdrill import register as _register_packetdrill  # noqa: E402

_register_packetdrill(main)

# `bloatlab validate` (simulator vs Linux over a matrix).
from .validate.cli import register as _register_validate  # noqa: E402

_register_validate(main)
