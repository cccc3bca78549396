"""``bloatlab.run``: the Python entry point."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from . import _core
from .errors import ScenarioError
from .result import Result
from .scenario import ScenarioLike, resolve, to_json


def run_resolved(doc: Mapping[str, Any], *, series: bool = True) -> Result:
    """Runs an already resolved scenario dict (see :func:`bloatlab.scenario.resolve`)."""
    text = to_json(doc)
    try:
        summary_json, tables = _core.run_json(text, None, bool(series))
    except ScenarioError:
        raise
    except _core.ScenarioError as e:
        raise ScenarioError.from_core(e) from None
    return Result(summary_json, tables, doc)


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
        series: collect the sampled time series (``Result.timeseries``,
            ``Result.queues``). Turn off to save memory on long runs.

    Raises:
        ScenarioError: invalid input; ``e.path`` names the key, ``e.message`` says why.
        SimulationError: the run failed an internal check.
    """
    doc = resolve(scenario, seed=seed, set=set)
    return run_resolved(doc, series=series)
