"""RFC 7928 congestion-level calibration and the flows-served search, for any scenario.

RFC 7928 (§4.4, "Varying congestion levels") characterises an AQM at a *mild*, *medium* and
*heavy* congestion level: the traffic load at which a drop-tail bottleneck loses about 0.1 %,
0.5 % and 1 % of its packets. Talau, Fonseca & Wille (2019) found those loads by adding flows
until drop-tail's loss reached each level (their Table 2), then ran the same search with every
scheme to count how many flows each one serves at each level (their Fig. 16 and 17).

Both are the same monotone search over one flow entry's ``count``:

- :func:`congestion_levels` — on a drop-tail scenario: the smallest number of flows whose mean
  loss (over seeds) reaches each level;
- :func:`flows_served` — on any scheme's scenario: the number of flows at which its loss reaches
  one level (a level name or a loss percentage), i.e. how many flows it carries at that level;
- :func:`search_counts` — either one for several scenarios and levels at once, advancing every
  search in lockstep so each step is one parallel batch of runs.

The search assumes loss grows with the number of flows: it doubles the count (1, 2, 4, ...)
until the level is reached, then bisects between the last count below it and the first above.
Counts are evaluated once and shared by every level of a scenario.

How runs are made is a parameter, ``run``: a callable that takes a list of resolved scenario
dicts and returns their summary dicts (the JSON contract of docs/scenario.md) in the same order.
:func:`serial_runner` (the default) runs them one after another in this process,
:func:`pool_runner` on a local process pool, and :func:`context_runner` through an experiment's
cached ``ctx.run``.

Example::

    from bloatlab.experiments.calibration import congestion_levels, flows_served, pool_runner

    base = {
        "duration": "300s",
        "topology": {"bottleneck": {"rate": "4Mbps", "delay": "180ms"},
                     "bottleneck_queue": {"kind": "droptail", "limit": "97KB"},
                     "access": {"rate": "4Mbps", "delay": "2.5ms"}},
        "flows": [{"cc": "cubic", "size": "5MB", "start": {"uniform": ["1s", "8s"]}}],
    }
    with pool_runner(jobs=2) as run:
        levels = congestion_levels(base, seeds=[1, 2, 3], max_flows=64, run=run)
        # {"mild": 3, "medium": 3, "heavy": 4}
        red = {**base, "topology": {**base["topology"],
                                    "bottleneck_queue": {"kind": "red", "limit": "97KB"}}}
        served = flows_served(red, criterion="medium", seeds=[1, 2, 3], max_flows=64, run=run)
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Generator, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ScenarioError, SimulationError

if TYPE_CHECKING:
    from ..sweeps.backends import Backend
    from .framework import Context

Summary = dict[str, Any]
#: runs resolved scenario dicts, returns their summaries in the same order
Runner = Callable[[list[dict[str, Any]]], list[Summary]]
#: a summary -> the loss percentage the levels are compared with
LossFn = Callable[[Summary], float]
#: (a copy of the scenario, the flow count) -> the scenario to run (e.g. a duration that grows)
WithCount = Callable[[dict[str, Any], int], dict[str, Any]]

#: RFC 7928 §4.4: loss rates (%) that define the three congestion levels
RFC7928_LEVELS: dict[str, float] = {"mild": 0.1, "medium": 0.5, "heavy": 1.0}
DEFAULT_SEEDS: tuple[int, ...] = (1, 2, 3)
DEFAULT_MAX_FLOWS = 256


# --------------------------------------------------------------------------- runners


def serial_runner(scenarios: list[dict[str, Any]]) -> list[Summary]:
    """Runs each scenario in this process, one after another (no time series)."""
    from .. import run

    return [run(s, series=False).summary for s in scenarios]


class pool_runner:  # noqa: N801 - used like a function: ``with pool_runner(jobs=2) as run:``
    """A :data:`Runner` on a local process pool (``bloatlab.sweeps.backends.make_backend("local")``).

    Use it as a context manager so the worker processes stop at the end::

        with pool_runner(jobs=4) as run:
            congestion_levels(scenario, run=run)
    """

    def __init__(self, jobs: int | None = None, backend: str = "local") -> None:
        from ..sweeps.backends import make_backend

        self.backend: Backend = make_backend(backend, jobs=jobs)

    def __enter__(self) -> pool_runner:
        self.backend.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.backend.close()

    def __call__(self, scenarios: list[dict[str, Any]]) -> list[Summary]:
        import json

        from ..scenario import to_json
        from ..sweeps.spec import run_id

        tasks = [{"run_id": f"{i}-{run_id(s)}", "scenario_json": to_json(s), "capture": False}
                 for i, s in enumerate(scenarios)]
        index = {t["run_id"]: i for i, t in enumerate(tasks)}
        out: list[Summary | None] = [None] * len(tasks)
        for outcome in self.backend.run(tasks):  # outcomes arrive in completion order
            if outcome["status"] != "ok":
                err = outcome["error"]
                if err.get("type") == "ScenarioError":
                    raise ScenarioError(err.get("path", ""), err["message"])
                raise SimulationError(f"calibration run failed: {err['type']}: {err['message']}")
            out[index[outcome["run_id"]]] = json.loads(outcome["files"]["summary.json"])
        return [s for s in out if s is not None]


def context_runner(ctx: Context, what: str = "calibration") -> Runner:
    """A :data:`Runner` through an experiment's ``ctx.run`` (parallel, cached by content)."""
    from .framework import Spec

    def run(scenarios: list[dict[str, Any]]) -> list[Summary]:
        specs = [Spec(s, {"name": s.get("name", ""), "count": _total_count(s), "seed": s.get("seed")})
                 for s in scenarios]
        return [r.summary for r in ctx.run(specs, what)]

    return run


def _total_count(scenario: Mapping[str, Any]) -> int:
    return sum(int(f.get("count", 1)) for f in scenario.get("flows", []))


# --------------------------------------------------------------------------- loss measures


def bottleneck_loss(summary: Summary) -> float:
    """The forward bottleneck's drop percentage (drops / arrivals, every flow's packets): in a
    dumbbell the one place a segment can be lost, so RFC 7928's "loss rate" of the link."""
    return float(summary["bottleneck"]["drop_pct"])


# --------------------------------------------------------------------------- checks


def _check_inputs(scenario: Mapping[str, Any], flow_index: int, levels: Mapping[str, float],
                  seeds: Sequence[int], max_flows: int) -> None:
    flows = scenario.get("flows")
    if not isinstance(flows, list) or not flows:
        raise ScenarioError("flows", "the scenario needs at least one flow entry to vary")
    if isinstance(flow_index, bool) or not isinstance(flow_index, int) or not 0 <= flow_index < len(flows):
        raise ScenarioError("flow_index", f"{flow_index!r} is out of range: the scenario has {len(flows)} "
                                          f"flow entr{'y' if len(flows) == 1 else 'ies'} (0..{len(flows) - 1})")
    if not levels:
        raise ScenarioError("levels", "give at least one congestion level")
    for name, pct in levels.items():
        if isinstance(pct, bool) or not isinstance(pct, (int, float)) or not 0 < pct <= 100:
            raise ScenarioError(f"levels.{name}", f"a loss level is a percentage in (0, 100] (got {pct!r})")
    if not seeds:
        raise ScenarioError("seeds", "give at least one seed")
    if isinstance(max_flows, bool) or not isinstance(max_flows, int) or max_flows < 1:
        raise ScenarioError("max_flows", f"must be an integer ≥ 1 (got {max_flows!r})")


def _level_of(criterion: str | float) -> tuple[str, float]:
    """A criterion: an RFC 7928 level name or a loss percentage."""
    if isinstance(criterion, str):
        if criterion not in RFC7928_LEVELS:
            raise ScenarioError("criterion", f"unknown level {criterion!r} (known: {', '.join(RFC7928_LEVELS)}, "
                                             "or a loss percentage)")
        return criterion, RFC7928_LEVELS[criterion]
    return f"{criterion}%", criterion


# --------------------------------------------------------------------------- the search


def _first_reaching(level: float, max_flows: int, loss: dict[int, float]) -> Generator[int, None, int | None]:
    """The monotone search for one level, as a coroutine: yields a count whose mean loss it
    needs (the driver puts it in ``loss``), returns the smallest count whose loss reaches
    ``level``, or None if even ``max_flows`` does not."""
    lo, n = 0, 1  # lo: the largest count known to stay below the level (0: none yet)
    while True:  # exponential phase: 1, 2, 4, ..., max_flows
        if n not in loss:
            yield n
        if loss[n] >= level:
            hi = n
            break
        if n == max_flows:
            return None
        lo, n = n, min(2 * n, max_flows)
    while hi - lo > 1:  # bisection: lo stays below the level, hi reaches it
        mid = (lo + hi) // 2
        if mid not in loss:
            yield mid
        lo, hi = (lo, mid) if loss[mid] >= level else (mid, hi)
    return hi


def _default_with_count(doc: dict[str, Any], n: int) -> dict[str, Any]:
    return doc


def search_counts(scenarios: Mapping[Hashable, Mapping[str, Any]], *, flow_index: int = 0,
                  levels: Mapping[str, float] = RFC7928_LEVELS, seeds: Iterable[int] = DEFAULT_SEEDS,
                  max_flows: int = DEFAULT_MAX_FLOWS, run: Runner | None = None,
                  loss: LossFn = bottleneck_loss,
                  with_count: WithCount | Mapping[Hashable, WithCount] | None = None,
                  ) -> tuple[dict[Hashable, dict[str, int | None]], dict[Hashable, dict[int, float]]]:
    """The level search for several scenarios at once.

    Every (scenario, level) search advances in lockstep: each step gathers the counts all
    pending searches need and runs them (× seeds) in one call of ``run``, so a parallel runner
    stays busy. A count is run once per scenario whatever the number of levels.

    Args:
        scenarios: key -> scenario dict (resolved, or anything ``bloatlab.run`` accepts as a dict).
        flow_index: the ``flows[]`` entry whose ``count`` varies.
        levels: level name -> loss percentage in (0, 100].
        seeds: each count is run with each seed; the level is compared with the mean loss.
        max_flows: the largest count tried.
        run: a :data:`Runner` (default :func:`serial_runner`).
        loss: a summary's loss percentage (default :func:`bottleneck_loss`).
        with_count: called with a copy of the scenario (count already set) and the count;
            returns the scenario to run — e.g. to let ``duration`` grow with the load, or to
            keep AWM's ``flows`` parameter equal to the count. A mapping gives each
            scenario (by key) its own hook.

    Returns:
        (key -> level -> smallest count reaching it, or None when ``max_flows`` does not;
        key -> count -> mean loss % of every count run).

    Raises:
        ScenarioError: bad input (flow index out of range, a level outside (0, 100], no seeds, ...).
    """
    seeds = list(seeds)
    run = run or serial_runner
    hooks: dict[Hashable, WithCount] = {
        k: (with_count.get(k, _default_with_count) if isinstance(with_count, Mapping)
            else with_count or _default_with_count) for k in scenarios}
    for sc in scenarios.values():
        _check_inputs(sc, flow_index, levels, seeds, max_flows)
    losses: dict[Hashable, dict[int, float]] = {k: {} for k in scenarios}
    result: dict[Hashable, dict[str, int | None]] = {k: {} for k in scenarios}
    active: dict[tuple[Hashable, str], tuple[Generator[int, None, int | None], int]] = {}

    def advance(key: Hashable, name: str, gen: Generator[int, None, int | None]) -> None:
        try:
            active[(key, name)] = (gen, next(gen))
        except StopIteration as stop:
            result[key][name] = stop.value
            active.pop((key, name), None)

    for key in scenarios:
        for name, pct in levels.items():
            advance(key, name, _first_reaching(float(pct), max_flows, losses[key]))
    while active:
        wanted = sorted({(k, n) for (k, _), (_, n) in active.items()}, key=lambda kn: (str(kn[0]), kn[1]))
        docs = [_with_seed(hooks[k](_with_count(scenarios[k], flow_index, n), n), s)
                for k, n in wanted for s in seeds]
        summaries = run(docs)
        for i, (k, n) in enumerate(wanted):
            per_seed = [loss(s) for s in summaries[i * len(seeds):(i + 1) * len(seeds)]]
            losses[k][n] = math.fsum(per_seed) / len(per_seed)
        for (k, name), (gen, _) in list(active.items()):
            advance(k, name, gen)
    ordered = {k: {name: found[name] for name in levels} for k, found in result.items()}  # level order
    return ordered, {k: dict(sorted(v.items())) for k, v in losses.items()}


def _with_count(scenario: Mapping[str, Any], flow_index: int, n: int) -> dict[str, Any]:
    doc = copy.deepcopy(dict(scenario))
    doc["flows"][flow_index]["count"] = n
    return doc


def _with_seed(doc: dict[str, Any], seed: int) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    doc["seed"] = seed
    return doc


def congestion_levels(scenario: Mapping[str, Any], *, flow_index: int = 0,
                      levels: Mapping[str, float] = RFC7928_LEVELS, seeds: Iterable[int] = DEFAULT_SEEDS,
                      max_flows: int = DEFAULT_MAX_FLOWS, run: Runner | None = None,
                      loss: LossFn = bottleneck_loss, with_count: WithCount | None = None,
                      ) -> dict[str, int | None]:
    """RFC 7928 calibration: for each level, the smallest ``flows[flow_index].count`` at which
    the scenario's mean loss over ``seeds`` reaches the level's loss percentage (None if even
    ``max_flows`` flows do not). RFC 7928 calibrates with a drop-tail bottleneck: pass a
    drop-tail scenario. Other arguments as in :func:`search_counts`.

    >>> congestion_levels(droptail_scenario, seeds=[1, 2, 3], max_flows=64)   # doctest: +SKIP
    {'mild': 3, 'medium': 3, 'heavy': 4}
    """
    found, _ = search_counts({0: scenario}, flow_index=flow_index, levels=levels, seeds=seeds,
                             max_flows=max_flows, run=run, loss=loss, with_count=with_count)
    return found[0]


def flows_served(scenario: Mapping[str, Any], *, criterion: str | float = "medium", flow_index: int = 0,
                 seeds: Iterable[int] = DEFAULT_SEEDS, max_flows: int = DEFAULT_MAX_FLOWS,
                 run: Runner | None = None, loss: LossFn = bottleneck_loss,
                 with_count: WithCount | None = None) -> int | None:
    """How many flows a scheme serves at a congestion level (Talau et al. 2019, §5.6, Fig. 16-17).

    The paper re-ran the RFC 7928 search with each scheme in place of drop-tail: the number of
    flows at which the scheme's loss reaches the level is the load it carries at that level (a
    scheme that controls congestion better needs more flows to lose as much). So this is the
    smallest ``flows[flow_index].count`` whose mean loss over ``seeds`` reaches ``criterion`` —
    an RFC 7928 level name (``"mild"``, ``"medium"``, ``"heavy"``) or a loss percentage in
    (0, 100]; every count below it stays under the level. None when even ``max_flows`` flows
    stay below it (the scheme serves at least that many). Other arguments as in
    :func:`search_counts`.

    >>> flows_served(ewt_scenario, criterion="heavy", seeds=[1, 2], max_flows=96)   # doctest: +SKIP
    24
    """
    name, pct = _level_of(criterion)
    found, _ = search_counts({0: scenario}, flow_index=flow_index, levels={name: pct}, seeds=seeds,
                             max_flows=max_flows, run=run, loss=loss, with_count=with_count)
    return found[0][name]
