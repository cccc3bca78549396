"""The sweep driver: validate, connect, plan, skip what is done, run, record, show progress.

Order matters for "nothing written on invalid input": every run's scenario is
checked against the simulator and the back end is connected before the store
directory is created. The driver is the only writer of the store; each finished
run (ok or failed) is committed as soon as it arrives, atomically, so an
interruption at any point loses at most the runs that were still running.
"""

from __future__ import annotations

import datetime
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from ..scenario import to_json
from .backends import Backend, make_backend
from .spec import RunSpec, Sweep, validate
from .store import StoreWriter, is_store

Log = Callable[[str], None]


@dataclass
class SweepOutcome:
    store: Path
    total: int  # distinct runs in the plan
    skipped: int  # already done before this start
    ran: int = 0  # finished in this start (ok or failed)
    ok: int = 0
    failed: int = 0
    wall_s: float = 0.0
    interrupted: bool = False
    backend: str = ""
    errors: list[dict[str, Any]] = field(default_factory=list)  # {run_id, label, type, message}
    elapsed: list[float] = field(default_factory=list)  # worker-side seconds per run (this start)
    sim: list[float] = field(default_factory=list)  # of which in the simulator

    @property
    def done(self) -> int:
        return self.skipped + self.ok


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep; ``outcome`` tells what is stored."""

    def __init__(self, outcome: SweepOutcome) -> None:
        super().__init__()
        self.outcome = outcome


def check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ScenarioError("--out", f"{out} exists and is not a directory")
    if out.is_dir() and not is_store(out) and any(out.iterdir()):
        raise ScenarioError("--out", f"{out} is a non-empty directory that is not a bloatlab results store; "
                            "give a new or empty directory")


def execute_sweep(
    spec: Sweep,
    *,
    backend: str | Backend = "local",
    jobs: int | None = None,
    address: str | None = None,
    out: str | os.PathLike[str],
    progress: bool | None = None,
    log: Log | None = None,
    fsync: bool = True,
    on_plan: Callable[[list[RunSpec], int], None] | None = None,
) -> SweepOutcome:
    """Runs a sweep into the store ``out``; see :func:`bloatlab.sweep`.

    Raises ScenarioError (nothing written) for invalid input, SweepInterrupted on Ctrl-C.
    """
    out = Path(out)
    runs = validate(spec)
    check_out(out)
    be = make_backend(backend, jobs=jobs, address=address) if isinstance(backend, str) else backend
    t0 = time.perf_counter()
    be.start()
    outcome = SweepOutcome(store=out, total=0, skipped=0, backend=be.describe())
    try:
        with StoreWriter(out, fsync=fsync) as writer:
            writer.write_plan(spec, runs)
            todo, done, records = pending(writer, runs)
            outcome.total, outcome.skipped = len(todo) + len(done), len(done)
            if on_plan is not None:
                on_plan(runs, len(done))
            if log is not None:
                n_points = len({r.point for r in runs})
                retry = sum(1 for r in todo if r.run_id in records)
                log(f"sweep {spec.name}: {outcome.total} runs ({n_points} point{'s' if n_points != 1 else ''} x "
                    f"{len(spec.seeds)} seed{'s' if len(spec.seeds) != 1 else ''}) on {be.describe()}, "
                    f"store {out}" + (f"; {len(done)} already done" if done else "")
                    + (f"; retrying {retry} that failed before" if retry else ""))
            with SweepProgress(len(todo), spec.name, enabled=progress, skipped=len(done)) as bar:
                for run, record, res in run_and_commit(writer, todo, be):
                    outcome.ran += 1
                    if record["status"] == "ok":
                        outcome.ok += 1
                        if res.get("elapsed_s") is not None:
                            outcome.elapsed.append(float(res["elapsed_s"]))
                            outcome.sim.append(float(res.get("sim_s") or 0.0))
                    else:
                        outcome.failed += 1
                        err = record["error"] or {}
                        outcome.errors.append({"run_id": run.run_id, "label": f"{run.label()}, seed {run.seed}",
                                               "type": err.get("type"), "path": err.get("path"),
                                               "message": err.get("message")})
                    bar.advance(ok=record["status"] == "ok")
    except KeyboardInterrupt:
        outcome.interrupted = True
        outcome.wall_s = time.perf_counter() - t0
        be.close()
        raise SweepInterrupted(outcome) from None
    finally:
        be.close()
    outcome.wall_s = time.perf_counter() - t0
    return outcome


def pending(writer: StoreWriter, runs: Sequence[RunSpec]) -> tuple[list[RunSpec], set[str], dict[str, Any]]:
    """The distinct runs still to do (first occurrence of each run_id, in order), the run_ids
    already done (stored with status ok, every file whole) and the stored records of all."""
    unique: dict[str, RunSpec] = {}
    for r in runs:
        unique.setdefault(r.run_id, r)
    records = writer.records(unique)
    done = {rid for rid in unique if records.get(rid, {}).get("status") == "ok"}
    return [r for rid, r in unique.items() if rid not in done], done, records


def run_and_commit(writer: StoreWriter, todo: Sequence[RunSpec],
                   be: Backend) -> Iterator[tuple[RunSpec, dict[str, Any], dict[str, Any]]]:
    """Runs ``todo`` on the back end and commits each run to the store as it finishes (ok or
    failed); yields (run, its record, the back end's result) after each commit. The one
    run-and-store path of sweeps and of ``bloatlab reproduce``."""
    from ..simcore import __version__, wants_capture

    tasks = [{"run_id": r.run_id, "scenario_json": to_json(r.scenario), "capture": wants_capture(r.scenario)}
             for r in todo]
    by_id = {r.run_id: r for r in todo}
    for res in be.run(tasks):
        run = by_id[res["run_id"]]
        record, files = _record(run, res, __version__)
        files["scenario.json"] = _scenario_bytes(run.scenario)
        writer.commit(record, files)
        yield run, record, res


def _scenario_bytes(doc: dict[str, Any]) -> bytes:
    import json

    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _record(run: RunSpec, res: dict[str, Any], version: str) -> tuple[dict[str, Any], dict[str, bytes]]:
    status = res.get("status", "error")
    error = res.get("error")
    files = dict(res.get("files") or {})
    worker = res.get("worker") or {}
    if status == "ok" and worker.get("bloatlab") not in (None, version):
        status, files = "error", {}
        error = {"type": "VersionMismatch",
                 "message": f"the worker on {worker.get('host')} has bloatlab {worker.get('bloatlab')}, "
                            f"this sweep needs {version}: install the same version on every node"}
    record = {
        "run_id": run.run_id,
        "status": status,
        "error": error,
        "point": run.point,
        "seed": run.seed,
        "params": run.params,
        "name": run.scenario.get("name", "scenario"),
        "bloatlab": version,
        "worker": worker or None,
        "elapsed_s": res.get("elapsed_s"),
        "sim_s": res.get("sim_s"),
        "finished_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    return record, (files if status == "ok" else {})


# --------------------------------------------------------------------------- progress


class SweepProgress:
    """A rich progress bar with an ETA on a terminal or in a notebook; plain lines on stderr
    otherwise (``enabled=True``, e.g. CI logs of ``bloatlab sweep``); nothing when disabled.
    ``enabled=None``: the bar when there is a terminal or notebook, else nothing."""

    PLAIN_EVERY_S = 10.0

    def __init__(self, total: int, name: str, *, enabled: bool | None, skipped: int = 0) -> None:
        self.total = total
        self.name = name
        self.skipped = skipped
        self.count = 0
        self.failed = 0
        self._progress: Any = None
        self._task: Any = None
        self._plain = False
        self._t0 = time.monotonic()
        self._last = self._t0
        if enabled is False or total == 0:
            return
        from rich.console import Console

        console = Console(stderr=True)
        if console.is_terminal or console.is_jupyter:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TaskProgressColumn(), TextColumn("elapsed"), TimeElapsedColumn(), TextColumn("ETA"),
                TimeRemainingColumn(), TextColumn("{task.fields[failed]}"),
                console=console, speed_estimate_period=120.0,
            )
        elif enabled:
            self._plain = True

    def __enter__(self) -> SweepProgress:
        if self._progress is not None:
            self._progress.start()
            self._task = self._progress.add_task(self.name, total=self.total, failed="")
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.stop()
        elif self._plain and self.count and self.count != self.total:
            self._line()

    def _eta(self) -> str:
        elapsed = time.monotonic() - self._t0
        if not self.count:
            return "?"
        remaining = elapsed / self.count * (self.total - self.count)
        return _hms(remaining)

    def _line(self) -> None:
        elapsed = time.monotonic() - self._t0
        failed = f", {self.failed} failed" if self.failed else ""
        sys.stderr.write(f"sweep {self.name}: {self.count}/{self.total} runs{failed}, "
                         f"{_hms(elapsed)} elapsed, ETA {self._eta()}\n")
        sys.stderr.flush()

    def advance(self, *, ok: bool) -> None:
        self.count += 1
        if not ok:
            self.failed += 1
        if self._progress is not None:
            self._progress.update(self._task, advance=1,
                                  failed=f"[red]{self.failed} failed" if self.failed else "")
        elif self._plain:
            now = time.monotonic()
            if now - self._last >= self.PLAIN_EVERY_S or self.count == self.total:
                self._last = now
                self._line()


def _hms(seconds: float) -> str:
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}"
