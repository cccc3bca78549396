"""``bloatlab.run``, ``bloatlab.sweep``: the Python entry points."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .result import Result
from .scenario import ScenarioLike, resolve, to_json
from .simcore import call_core, validate_scenario, wants_capture

__all__ = ["run", "run_resolved", "sweep", "call_core", "validate_scenario", "wants_capture"]

if TYPE_CHECKING:
    import os

    import pandas as pd

    from .sweeps.spec import Sweep


def run_resolved(doc: Mapping[str, Any], *, series: bool = True) -> Result:
    """Runs an already resolved scenario dict (see :func:`bloatlab.scenario.resolve`).

    A scenario with a ``capture`` table has its pcap files written into a temporary
    directory that the :class:`Result` owns until :meth:`Result.to_dir` copies them.
    """
    text = to_json(doc)
    capture_dir = None
    if wants_capture(doc):
        capture_dir = tempfile.mkdtemp(prefix="bloatlab-pcap-")
    try:
        summary_json, tables = call_core(text, series=series, capture_dir=capture_dir)
    except BaseException:
        if capture_dir is not None:
            shutil.rmtree(capture_dir, ignore_errors=True)
        raise
    result = Result(summary_json, tables, doc)
    if capture_dir is not None:
        result._adopt_capture_dir(Path(capture_dir))
    return result


def run(
    scenario: ScenarioLike,
    *,
    seed: int | None = None,
    set: Iterable[str] | Mapping[str, Any] | None = None,  # noqa: A002 - mirrors the CLI's --set
    series: bool = True,
) -> Result:
    """Runs one scenario and returns its :class:`Result`.

    Args:
        scenario: a path to a ``.toml`` (or ``.json``) scenario file, or a dict
            with the same structure. A dict is copied, never modified.
        seed: overrides the scenario's ``seed``.
        set: overrides, applied in order before ``seed``: either
            ``["flows[0].cc=reno", "duration=10s"]`` (values parsed as TOML
            literals, else taken as strings, like ``--set``) or
            ``{"flows[0].cc": "reno"}`` (values used as they are).
            ``set={"threads": 4}`` runs a graph topology on 4 threads (``"auto"``,
            the default: every core for 128 hosts or more); the results are the
            same bytes for any thread count (docs/scenario.md, ``threads``).
        series: collect the sampled time series (``Result.timeseries``,
            ``Result.queues``). Turn off to save memory on long runs.

    Raises:
        ScenarioError: invalid input; ``e.path`` names the key, ``e.message`` says why.
        SimulationError: the run failed an internal check.
    """
    doc = resolve(scenario, seed=seed, set=set)
    return run_resolved(doc, series=series)


# --------------------------------------------------------------------------- sweeps


def sweep(
    base: ScenarioLike | Sweep,
    axes: Mapping[str, Sequence[Any]] | None = None,
    seeds: int | Iterable[int] | None = None,
    *,
    zip: Iterable[Mapping[str, Sequence[Any]]] | None = None,  # noqa: A002 - mirrors [[zip]]
    set: Iterable[str] | Mapping[str, Any] | None = None,  # noqa: A002 - mirrors --set
    backend: str = "local",
    jobs: int | None = None,
    address: str | None = None,
    out: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
    name: str | None = None,
) -> pd.DataFrame:
    """Runs a scenario over parameter axes and seeds; returns one row per flow per run.

    Args:
        base: the base scenario (a file path or a dict), or a :class:`~bloatlab.sweeps.Sweep`
            (e.g. from :func:`bloatlab.load_sweep`; then give no axes, seeds, zip or set).
        axes: grid axes ``{"flows[0].cc": ["cubic", "reno"], "topology.bottleneck_queue.limit":
            ["50KB", "500KB"]}``: every combination runs.
        seeds: ``N`` (seeds 1..N) or a list of seeds; default: the base scenario's seed.
        zip: groups of zipped axes, ``[{"a": [1, 2], "b": ["x", "y"]}]``.
        set: overrides applied to the base for every run.
        backend: ``"local"`` (a process pool, one worker per core), ``"ray"`` (Ray tasks;
            ``address`` of an existing cluster, or none to start a local Ray instance) or
            ``"serial"`` (in this process, one run after another).
        jobs: worker processes (local; default: the number of cores) or tasks in flight (ray).
        out: the results store directory. Runs already in it are not run again; an
            interrupted sweep resumes. ``None``: a temporary store, deleted afterwards.
        progress: show a progress bar on stderr (default: when stderr is a terminal or notebook).

    Returns:
        A DataFrame with the parameter columns (named by key path), ``seed``, ``run_id`` and the
        per-flow summary fields. Failed runs are not in it (a warning says how many failed;
        ``bloatlab.Store(out).runs`` has their errors). ``df.attrs["store"]`` is the store path.

    Raises:
        ScenarioError: invalid sweep or scenario (checked for every run before anything runs),
            an unknown back end, Ray missing or unreachable.
    """
    import warnings

    from .sweeps.driver import execute_sweep
    from .sweeps.spec import Sweep, make_sweep
    from .sweeps.store import Store

    if isinstance(base, Sweep):
        if axes is not None or seeds is not None or zip is not None or set is not None:
            raise TypeError("sweep(Sweep, ...): give no axes, seeds, zip or set with a Sweep")
        spec = base
        if name is not None:
            spec.name = name
    else:
        spec = make_sweep(base, axes, seeds, zip=zip, set=set, name=name)
    tmp = None
    if out is None:
        tmp = tempfile.mkdtemp(prefix="bloatlab-sweep-")
        out_dir = Path(tmp) / "store"
    else:
        out_dir = Path(out)
    try:
        outcome = execute_sweep(spec, backend=backend, jobs=jobs, address=address, out=out_dir, progress=progress)
        df = Store(out_dir).flows
        if outcome.failed:
            warnings.warn(
                f"{outcome.failed} of {outcome.total} runs failed; their errors are in "
                f"bloatlab.Store({str(out_dir)!r}).runs" if tmp is None else
                f"{outcome.failed} of {outcome.total} runs failed (give out=DIR to keep their errors)",
                RuntimeWarning, stacklevel=2,
            )
        df.attrs["store"] = None if tmp is not None else str(out_dir)
        return df
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
