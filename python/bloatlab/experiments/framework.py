"""The machinery every paper experiment shares: running batches of scenarios (in
parallel, cached by content so an interrupted reproduction resumes), and collecting
the tables, figures and claims that the report is written from.

An experiment module defines an :class:`Experiment`; its ``reproduce(ctx)`` function
builds scenarios, calls :meth:`Context.run` (a batch at a time, so adaptive searches
such as the RFC 7928 calibration can look at one batch before building the next),
computes its numbers from the results, and records them with :meth:`Context.table`,
:meth:`Context.figure`, :meth:`Context.claim` and :meth:`Context.text`. Nothing in
the report is written by hand: every number comes from the runs of this reproduction.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ScenarioError, SimulationError
from ..outputs.numbers import sig
from ..sweeps.aggregate import jain_index, mean_ci
from ..sweeps.store import RUNS

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ..sweeps.backends import Backend
    from ..sweeps.store import StoreWriter


# --------------------------------------------------------------------------- statistics


@dataclass(frozen=True)
class Stat:
    """A mean over seeds with its 95 % confidence half-width (NaN for one sample)."""

    mean: float
    ci_half: float
    n: int

    @classmethod
    def of(cls, values: Iterable[float | None]) -> Stat:
        s = mean_ci([v for v in values if v is not None])
        return cls(s["mean"], s["ci_half"], s["n"])

    @classmethod
    def one(cls, value: float) -> Stat:
        return cls(float(value), float("nan"), 1)

    def fmt(self, digits: int = 3) -> str:
        if math.isnan(self.mean):
            return "n/a"
        text = sig(self.mean, digits)
        if self.n > 1 and not math.isnan(self.ci_half):
            text += f" ± {sig(self.ci_half, 2)}"
        return text

    def to_json(self) -> dict[str, Any]:
        return {"mean": _finite(self.mean), "ci95_half": _finite(self.ci_half), "n": self.n}


def ci_or_zero(s: Stat) -> float:
    """The CI half-width, 0 where there is none (one seed): for error bars and overlap tests."""
    return 0.0 if math.isnan(s.ci_half) else s.ci_half


def cis_overlap(stats: Sequence[Stat]) -> bool:
    """Whether every pair of the 95 % confidence intervals overlaps (no significant difference);
    False when a mean is missing (NaN)."""
    if any(math.isnan(s.mean) for s in stats):
        return False
    return max(s.mean - ci_or_zero(s) for s in stats) <= min(s.mean + ci_or_zero(s) for s in stats)


def _finite(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), 6)


def ratio(ours: float | None, paper: float | None) -> float | None:
    """ours / paper, None when either is missing or the paper's value is zero."""
    if ours is None or paper is None or not math.isfinite(ours) or paper == 0:
        return None
    return ours / paper


# --------------------------------------------------------------------------- runs


@dataclass
class Spec:
    """One simulation of an experiment: a resolved scenario and labels that say what it is."""

    scenario: dict[str, Any]
    labels: dict[str, Any] = field(default_factory=dict)

    @property
    def seed(self) -> int:
        return int(self.scenario.get("seed", 1))


class RunResult:
    """A finished run: its summary dict, and its time series loaded on demand."""

    def __init__(self, spec: Spec, run_id: str, directory: Path) -> None:
        self.spec = spec
        self.run_id = run_id
        self.dir = directory
        with open(directory / "summary.json", encoding="utf-8") as f:
            self.summary: dict[str, Any] = json.load(f)

    @property
    def labels(self) -> dict[str, Any]:
        return self.spec.labels

    @property
    def seed(self) -> int:
        return self.spec.seed

    @property
    def flows(self) -> list[dict[str, Any]]:
        return self.summary["flows"]

    @property
    def bottleneck(self) -> dict[str, Any]:
        return self.summary["bottleneck"]

    def group(self, name: str) -> list[dict[str, Any]]:
        """The flows of one group (a flow entry's ``group`` key, or its cc by default)."""
        return [f for f in self.flows if f["group"] == name]

    @cached_property
    def timeseries(self) -> pd.DataFrame:
        import pandas as pd

        return pd.read_parquet(self.dir / "timeseries.parquet")

    @cached_property
    def queues(self) -> pd.DataFrame:
        import pandas as pd

        return pd.read_parquet(self.dir / "queues.parquet")


# --------------------------------------------------------------------------- report items


@dataclass
class TableRow:
    """One compared value: what it is (``keys``), the paper's number and ours."""

    keys: dict[str, Any]
    metric: str
    ours: Stat
    paper: float | None = None
    unit: str = ""


@dataclass
class Table:
    name: str  # file stem: tables/<name>.md, .csv
    title: str
    rows: list[TableRow]
    note: str = ""

    def columns(self) -> list[str]:
        keys: list[str] = []
        for r in self.rows:
            for k in r.keys:
                if k not in keys:
                    keys.append(k)
        return keys


@dataclass
class FigureItem:
    name: str  # file stem: figures/<name>.png, .svg
    caption: str


@dataclass
class Claim:
    experiment: str
    id: str
    text: str
    paper: str
    ours: str
    holds: bool
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"experiment": self.experiment, "id": self.id, "text": self.text, "paper": self.paper,
                "ours": self.ours, "holds": bool(self.holds), "why": self.why}


@dataclass
class Text:
    markdown: str
    heading: str | None = None


# --------------------------------------------------------------------------- the experiment


@dataclass
class Experiment:
    """A paper's experiment: what ``bloatlab reproduce NAME`` runs."""

    name: str
    title: str
    paper: str  # the citation
    reproduce: Callable[[Context], None]
    #: seeds per configuration: the paper's (30 where it used 30 or gave confidence intervals)
    seeds_full: int = 30
    seeds_quick: int = 2
    #: a sentence on the setup, shown at the top of the report
    summary: str = ""
    #: the emulation plan (``--engine emulate|both``, :mod:`.engines`): the configurations Linux
    #: runs, with the experiment's tables and claims; None: Linux cannot run this experiment
    emulation: Callable[[Context], None] | None = None
    #: the kernel congestion controls the plan needs (checked before anything runs)
    emulation_ccs: tuple[str, ...] = ()
    #: why Linux cannot run the experiment (when there is no plan)
    emulation_refused: str = ""
    #: seeds per configuration of the plan in full mode (it runs on the wall clock)
    emulation_seeds_full: int = 10
    #: claim id -> why the engines' verdicts differ, as checked (the plan module's
    #: ENGINE_NOTES); engines.md prints it under a claim whose verdicts differ
    engine_notes: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Options:
    quick: bool = False
    seeds: int | None = None  # overrides the experiment's seed count
    progress: bool | None = None  # None: a bar on a terminal
    #: the smallest configuration of every experiment (the tests' end-to-end check)
    smoke: bool = False


class Context:
    """What an experiment's ``reproduce`` works with. See the module docstring."""

    def __init__(self, experiment: Experiment, out: Path, options: Options, backend: Backend,
                 cache: StoreWriter, engine: str = "sim", emu_cache: Path | None = None,
                 runner: Callable[[Context, Sequence[Spec], str], list[RunResult]] | None = None) -> None:
        self.experiment = experiment
        #: "sim", or "emulate": :meth:`run` goes through the emulator (:mod:`.engines`)
        self.engine = engine
        #: how :meth:`run` runs specs when not in the simulator (the emulator's runner, given by
        #: :mod:`.engines`, so this module does not import it)
        self.runner = runner
        self.emu_cache = emu_cache if emu_cache is not None else out / "cache-emu"
        #: (what, why) of each configuration or item this engine did not run
        self.skipped: list[tuple[str, str]] = []
        #: claim id -> (what, value): the number ``--engine both`` compares between the engines
        self.keys: dict[str, tuple[str, float | None]] = {}
        self.wall_s = 0.0  # wall-clock time of the emulated runs of this invocation
        self.out = out
        self.options = options
        self.backend = backend
        self.cache = cache
        self.items: list[Table | FigureItem | Text] = []
        self.claims: list[Claim] = []
        self.simulations = 0  # runs simulated by this invocation (the others came from the cache)
        self.run_ids: set[str] = set()  # every run this experiment used, simulated now or cached
        self.sim_seconds = 0.0  # simulated time of the runs (for the report)

    # -- configuration

    @property
    def quick(self) -> bool:
        return self.options.quick or self.options.smoke

    @property
    def smoke(self) -> bool:
        return self.options.smoke

    @property
    def n_seeds(self) -> int:
        if self.options.seeds is not None:
            return self.options.seeds
        if self.options.smoke:
            return 1
        return self.experiment.seeds_quick if self.options.quick else self.experiment.seeds_full

    def seeds(self) -> list[int]:
        return list(range(1, self.n_seeds + 1))

    def pick(self, full: Any, quick: Any, smoke: Any = None) -> Any:
        """A setting by mode: the paper's value, the ``--quick`` one, the tests' smallest one."""
        if self.options.smoke and smoke is not None:
            return smoke
        return quick if self.quick else full

    # -- running

    def run(self, specs: Sequence[Spec], what: str = "") -> list[RunResult]:
        """Runs every spec (in parallel; runs already in the cache are not run again) and
        returns their results in the order of ``specs``. A run that fails raises
        :class:`SimulationError` (a scenario error: :class:`ScenarioError`); it is recorded in
        the cache as failed, so the next reproduction runs it again."""
        if self.runner is not None:
            return self.runner(self, specs, what)
        from ..scenario import to_json
        from ..simcore import validate_scenario
        from ..sweeps.driver import SweepProgress, pending, run_and_commit
        from ..sweeps.spec import RunSpec, build_id, run_id

        runs = []
        version = build_id()
        for i, spec in enumerate(specs):
            spec.scenario = json.loads(to_json(spec.scenario))  # plain JSON types, a private copy
            labels = json.loads(json.dumps(spec.labels, default=str))
            runs.append(RunSpec(run_id(spec.scenario, version), i, spec.seed, labels, spec.scenario))
        todo, _, _ = pending(self.cache, runs)
        for r in todo:
            validate_scenario(r.scenario)
        self.run_ids.update(r.run_id for r in runs)
        if todo:
            label = f"{self.experiment.name}: {what}" if what else self.experiment.name
            with SweepProgress(len(todo), label, enabled=self.options.progress) as bar:
                for run, record, _ in run_and_commit(self.cache, todo, self.backend):
                    ok = record["status"] == "ok"
                    bar.advance(ok=ok)
                    if not ok:
                        err = record["error"]
                        spec = specs[run.point]
                        where = ", ".join(f"{k}={v}" for k, v in spec.labels.items())
                        if err.get("type") == "ScenarioError":
                            raise ScenarioError(err.get("path", ""), f"{err['message']} (in {where})")
                        raise SimulationError(f"{self.experiment.name}: run {run.run_id} ({where}) "
                                              f"failed: {err['type']}: {err['message']}")
            self.simulations += len(todo)
        results = [RunResult(spec, r.run_id, self.cache.path / RUNS / r.run_id) for r, spec in zip(runs, specs)]
        for r in results:
            self.sim_seconds += float(r.summary.get("duration_s") or 0.0)
        return results

    # -- report items

    def text(self, markdown: str, heading: str | None = None) -> None:
        self.items.append(Text(markdown.strip(), heading))

    def table(self, name: str, title: str, rows: list[TableRow], note: str = "") -> Table:
        t = Table(name, title, rows, note)
        self.items.append(t)
        return t

    def figure(self, name: str, fig: Figure, caption: str) -> None:
        """Saves a matplotlib figure as figures/NAME.png and .svg (deterministic SVG ids)."""
        import matplotlib.pyplot as plt

        d = self.out / "figures"
        d.mkdir(parents=True, exist_ok=True)
        fig.savefig(d / f"{name}.png", dpi=120, bbox_inches="tight", metadata={"Software": None})
        with plt.rc_context({"svg.hashsalt": name}):
            fig.savefig(d / f"{name}.svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
        plt.close(fig)
        self.items.append(FigureItem(name, caption))

    def claim(self, id: str, text: str, *, paper: str, ours: str, holds: bool, why: str) -> Claim:  # noqa: A002
        c = Claim(self.experiment.name, id, text, paper, ours, bool(holds), why)
        self.claims.append(c)
        return c

    def key(self, claim_id: str, what: str, value: float | None) -> None:
        """The key number of a claim, which ``--engine both`` compares between the engines."""
        self.keys[claim_id] = (what, None if value is None else float(value))

    def skip(self, what: str, why: str) -> None:
        """Records a configuration (or report item) this engine does not run, and why."""
        if (what, why) not in self.skipped:
            self.skipped.append((what, why))


# --------------------------------------------------------------------------- helpers for experiments


def jain(xs: Sequence[float]) -> float:
    """Jain's index of ``xs``; NaN when every value is zero (no throughput, no fairness to
    speak of), so that :meth:`Stat.of` leaves such a run out."""
    return jain_index(xs) if any(xs) else math.nan


def by_label(results: Iterable[RunResult], **labels: Any) -> list[RunResult]:
    """The results whose labels include every ``key=value`` given."""
    return [r for r in results if all(r.labels.get(k) == v for k, v in labels.items())]


def fmt(x: float | None, digits: int = 3) -> str:
    return sig(x, digits)


def to_csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    import csv

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for row in rows:
        w.writerow(["" if v is None else v for v in row])
    return buf.getvalue()

