"""Sweeps: one base scenario over parameter grids, zipped lists and seeds.

A sweep file (TOML)::

    name = "cc-vs-buffer"
    base = "../demo.toml"          # a scenario file (relative to this file), or a [base] table
    seeds = 10                     # seeds 1..10; or a list: [1, 7, 42]

    [set]                          # overrides applied to the base for every run
    duration = "20s"

    [grid]                         # every combination of these axes
    "flows[0].cc" = ["newreno", "reno"]
    topology.bottleneck_queue.limit = ["50KB", "500KB"]

    [[zip]]                        # these lists move together (all the same length)
    "topology.bottleneck.rate" = ["2Mbps", "10Mbps"]
    "topology.access.rate" = ["10Mbps", "50Mbps"]

Runs = grid axes x zip groups x seeds. Each run is identified by ``run_id``, a
content hash of (resolved scenario with its seed, bloatlab version): the key of
the results store (see :mod:`bloatlab.sweeps.store`), so a re-run skips what is done.
"""

from __future__ import annotations

import builtins
import copy
import functools
import hashlib
import itertools
import json
import os
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from ..scenario import ScenarioLike, _plain, apply_overrides, check_seed, format_path, load, parse_path, set_path

SWEEP_KEYS = ("name", "base", "seeds", "set", "grid", "zip")
# Keys a sweep may not vary on an axis: the seed has its own list; the name labels every run.
_RESERVED_AXES = {"seed": "vary seeds with `seeds = [...]`, not an axis"}


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


@functools.lru_cache(maxsize=1)
def build_id() -> str:
    """The bloatlab version and a digest of the compiled simulator (``0.1.0+1f2e...``): what a
    stored run is valid for, so that a rebuilt simulator (same version, new code) never reuses
    runs of the old one."""
    from ..simcore import __version__, extension_file

    h = hashlib.sha256()
    with open(extension_file(), "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return f"{__version__}+{h.hexdigest()[:16]}"


def run_id(scenario: Mapping[str, Any], version: str | None = None) -> str:
    """The content hash that keys a run in the store: sha256 of the canonical JSON of
    (resolved scenario including its seed, :func:`build_id`), first 16 hex digits."""
    if version is None:
        version = build_id()
    text = _canonical({"bloatlab": version, "scenario": scenario})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def value_label(value: Any) -> Any:
    """A parameter value as a table cell: scalars as they are, tables/arrays as compact JSON."""
    if isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Axis:
    """One dimension of a sweep: one key path (a grid axis) or several that move together (a zip group)."""

    paths: tuple[str, ...]
    values: tuple[tuple[Any, ...], ...]  # one tuple per step: a value for each path

    def __len__(self) -> int:
        return len(self.values)


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep."""

    run_id: str
    point: int  # index of the parameter combination (0-based, in plan order)
    seed: int
    params: dict[str, Any]  # key path -> value
    scenario: dict[str, Any]  # resolved, seed applied: what the simulator runs

    def label(self) -> str:
        return ", ".join(f"{k}={value_label(v)}" for k, v in self.params.items()) or "(base)"


@dataclass
class Sweep:
    """A sweep definition: a base scenario, axes and seeds. See the module docstring."""

    base: dict[str, Any]
    axes: list[Axis] = field(default_factory=list)
    seeds: list[int] = field(default_factory=lambda: [1])
    name: str = "sweep"
    source: str | None = None  # the sweep file, when loaded from one

    @property
    def param_names(self) -> list[str]:
        return [p for axis in self.axes for p in axis.paths]

    def points(self) -> list[dict[str, Any]]:
        """Every parameter combination, in plan order (the last axis varies fastest)."""
        out = []
        for combo in itertools.product(*(axis.values for axis in self.axes)):
            params: dict[str, Any] = {}
            for axis, step in builtins.zip(self.axes, combo):
                params.update(builtins.zip(axis.paths, step))
            out.append(params)
        return out

    def __len__(self) -> int:
        n = len(self.seeds)
        for axis in self.axes:
            n *= len(axis)
        return n

    def scenario_for(self, params: Mapping[str, Any], seed: int | None = None) -> dict[str, Any]:
        """The resolved scenario of one point (and seed); ScenarioError naming the path if an
        axis cannot be applied (e.g. an index past the end of an array)."""
        doc = copy.deepcopy(self.base)
        for path, value in params.items():
            set_path(doc, parse_path(path), copy.deepcopy(value))
        if seed is not None:
            doc["seed"] = seed
        return _plain(doc, [])

    def runs(self) -> list[RunSpec]:
        """Every run: points x seeds, seeds innermost."""
        version = build_id()
        out = []
        for i, params in enumerate(self.points()):
            doc = self.scenario_for(params)
            for seed in self.seeds:
                scenario = dict(doc)
                scenario["seed"] = seed
                out.append(RunSpec(run_id(scenario, version), i, seed, dict(params), scenario))
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready description (written as ``sweep.json`` in the store)."""
        return {
            "name": self.name,
            "source": self.source,
            "base": self.base,
            "axes": [{"paths": list(a.paths), "values": [list(v) for v in a.values]} for a in self.axes],
            "seeds": list(self.seeds),
        }


# --------------------------------------------------------------------------- building


def _norm_path(text: Any, where: str) -> str:
    if not isinstance(text, str):
        raise ScenarioError(where, f"a key path must be a string, got {text!r}")
    try:
        path = format_path(parse_path(text))
    except ScenarioError as e:
        raise ScenarioError(where, e.message) from None
    if path in _RESERVED_AXES:
        raise ScenarioError(f"{where}", f"{path}: {_RESERVED_AXES[path]}")
    return path


def _values(values: Any, where: str) -> list[Any]:
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise ScenarioError(where, f"an axis is a list of values, e.g. [\"a\", \"b\"] (got {values!r})")
    vals = list(values)
    if not vals:
        raise ScenarioError(where, "empty axis: give at least one value")
    seen: list[str] = []
    for v in vals:
        try:
            c = _canonical(_plain(v, []))
        except ScenarioError as e:
            raise ScenarioError(where, f"value {v!r}: {e.message}") from None
        if c in seen:
            raise ScenarioError(where, f"duplicate value {value_label(v)!r}")
        seen.append(c)
    return [_plain(v, []) for v in vals]


def _flatten_axes(table: Mapping[str, Any], prefix: str, where: str) -> dict[str, Any]:
    """``{"topology": {"bottleneck": {"rate": [...]}}}`` -> ``{"topology.bottleneck.rate": [...]}``:
    dotted keys that TOML turned into nested tables, down to the first non-table value."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(value, Mapping):
            out.update(_flatten_axes(value, path, where))
        else:
            out[path] = value
    return out


def _seeds(seeds: Any, base: Mapping[str, Any]) -> list[int]:
    if seeds is None:
        return [check_seed(base.get("seed", 1))]
    if isinstance(seeds, bool):
        raise ScenarioError("seeds", f"expected a count or a list of seeds (got {seeds!r})")
    if isinstance(seeds, int):
        if seeds < 1:
            raise ScenarioError("seeds", f"the number of seeds must be at least 1 (got {seeds})")
        return list(range(1, seeds + 1))
    if isinstance(seeds, (str, bytes, Mapping)) or not isinstance(seeds, Iterable):
        raise ScenarioError("seeds", f"expected a count (seeds 1..N) or a list of seeds (got {seeds!r})")
    out = []
    for i, s in enumerate(seeds):
        try:
            out.append(check_seed(s))
        except ScenarioError as e:
            raise ScenarioError(f"seeds[{i}]", e.message) from None
    if not out:
        raise ScenarioError("seeds", "empty list: give at least one seed")
    if len(set(out)) != len(out):
        raise ScenarioError("seeds", "duplicate seeds")
    return out


def make_sweep(
    base: ScenarioLike,
    axes: Mapping[str, Sequence[Any]] | None = None,
    seeds: int | Iterable[int] | None = None,
    *,
    zip: Iterable[Mapping[str, Sequence[Any]]] | None = None,  # noqa: A002 - mirrors [[zip]]
    set: Iterable[str] | Mapping[str, Any] | None = None,  # noqa: A002 - mirrors --set
    name: str | None = None,
    source: str | None = None,
    _where: tuple[str, str] = ("axes", "zip"),
) -> Sweep:
    """Builds and checks a :class:`Sweep` (the structure; scenarios are checked by :func:`validate`).

    Args:
        base: the base scenario: a path to a scenario file or a dict.
        axes: grid axes, ``{"flows[0].cc": ["cubic", "reno"], ...}``: every combination runs.
        seeds: ``N`` for seeds 1..N, or a list of seeds; default: the base scenario's seed.
        zip: groups of zipped axes, ``[{"a.b": [1, 2], "c": ["x", "y"]}]``: lists in a group
            move together and must have the same length.
        set: overrides applied to the base for every run (as in :func:`bloatlab.run`).
        name: label of the sweep (default: the base scenario's name).
    """
    grid_where, zip_where = _where
    doc = load(base)
    apply_overrides(doc, set)
    doc = _plain(doc, [])
    built: list[Axis] = []
    used: dict[str, str] = {}

    def claim(path: str, where: str) -> None:
        if path in used:
            raise ScenarioError(where, f"key {path} is already varied by {used[path]}")
        used[path] = where

    if axes is not None:
        if not isinstance(axes, Mapping):
            raise ScenarioError(grid_where, "expected a table of key path = [values]")
        for key, values in axes.items():
            where = f"{grid_where}.{key}" if isinstance(key, str) else grid_where
            path = _norm_path(key, where)
            where = f"{grid_where}.{path}"
            claim(path, where)
            built.append(Axis((path,), tuple((v,) for v in _values(values, where))))
    for gi, group in enumerate(zip or []):
        gwhere = f"{zip_where}[{gi}]"
        if not isinstance(group, Mapping) or not group:
            raise ScenarioError(gwhere, "a zip group is a non-empty table of key path = [values]")
        paths, columns = [], []
        for key, values in group.items():
            path = _norm_path(key, gwhere)
            where = f"{gwhere}.{path}"
            claim(path, where)
            paths.append(path)
            columns.append(_values(values, where))
        lengths = {len(c) for c in columns}
        if len(lengths) != 1:
            detail = ", ".join(f"{p}: {len(c)}" for p, c in builtins.zip(paths, columns))
            raise ScenarioError(gwhere, f"zipped lists must have the same length ({detail})")
        built.append(Axis(tuple(paths), tuple(builtins.zip(*columns))))
    label = name if name is not None else str(doc.get("name", "sweep"))
    return Sweep(base=doc, axes=built, seeds=_seeds(seeds, doc), name=label, source=source)


def load_sweep(path: str | os.PathLike[str]) -> Sweep:
    """Reads a sweep file (TOML; see the module docstring)."""
    p = Path(path)
    name = os.fspath(path)
    if not p.exists():
        raise ScenarioError(name, "no such file")
    if p.is_dir():
        raise ScenarioError(name, "is a directory, expected a sweep file (.toml)")
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(name, f"malformed TOML: {e}") from None
    except UnicodeDecodeError as e:
        raise ScenarioError(name, f"not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise ScenarioError(name, f"cannot read: {e.strerror or e}") from None
    unknown = [k for k in doc if k not in SWEEP_KEYS]
    if unknown:
        raise ScenarioError(unknown[0], f"unknown key in a sweep file (allowed: {', '.join(SWEEP_KEYS)})")
    if "base" not in doc:
        raise ScenarioError("base", "required: a scenario file path, or a [base] table with the scenario")
    base = doc["base"]
    if isinstance(base, str):
        base_path = Path(base)
        if not base_path.is_absolute():
            base_path = p.parent / base_path
        base = base_path
    elif isinstance(base, Mapping):
        from ..scenario import _resolve_files

        base = _resolve_files(copy.deepcopy(dict(base)), p.parent)  # trace files: relative to this file
    else:
        raise ScenarioError("base", "expected a scenario file path or a table")
    grid = doc.get("grid", {})
    if not isinstance(grid, Mapping):
        raise ScenarioError("grid", "expected a table: [grid] with key path = [values]")
    zips = doc.get("zip", [])
    if isinstance(zips, Mapping):
        zips = [zips]
    if not isinstance(zips, list):
        raise ScenarioError("zip", "expected [[zip]] tables of key path = [values]")
    zips = [_flatten_axes(z, "", "zip") if isinstance(z, Mapping) else z for z in zips]
    overrides = doc.get("set")
    if overrides is not None:
        if not isinstance(overrides, Mapping):
            raise ScenarioError("set", "expected a table of key path = value")
        # Nested tables (TOML dotted keys) are set key by key, so `topology.bottleneck.rate = ...`
        # changes that one key; quote a path to set a whole table at once.
        overrides = _flatten_set(overrides, "")
        for key in overrides:
            _norm_path(key, f"set.{key}")
    sweep_name = doc.get("name", p.stem)
    if not isinstance(sweep_name, str) or not sweep_name:
        raise ScenarioError("name", "expected a non-empty string")
    try:
        return make_sweep(
            base, _flatten_axes(grid, "", "grid"), doc.get("seeds"), zip=zips, set=overrides,
            name=sweep_name, source=os.fspath(p), _where=("grid", "zip"),
        )
    except ScenarioError as e:
        if isinstance(doc["base"], str) and e.path == os.fspath(base):
            raise ScenarioError("base", f"{doc['base']}: {e.message}") from None
        raise


def _flatten_set(table: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in table.items():
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(value, Mapping) and value and not prefix and ("." in key or "[" in key):
            out[path] = value  # a quoted path with a table value: set the table as a whole
        elif isinstance(value, Mapping) and value:
            out.update(_flatten_set(value, path))
        else:
            out[path] = value
    return out


# --------------------------------------------------------------------------- validation


def validate(sweep: Sweep, runs: list[RunSpec] | None = None) -> list[RunSpec]:
    """Builds every run and checks each distinct scenario against the simulator, before anything runs.

    Raises ScenarioError naming the key path, with the sweep point in the message.
    """
    from ..simcore import validate_scenario

    points = sweep.points()
    for params in points:  # apply every axis first: cheap, and errors name the axis
        try:
            sweep.scenario_for(params)
        except ScenarioError as e:
            raise _in_point(e, params) from None
    if runs is None:
        runs = sweep.runs()
    checked: dict[int, None] = {}
    for run in runs:
        if run.point in checked:
            continue
        try:
            validate_scenario(run.scenario)
        except ScenarioError as e:
            raise _in_point(e, run.params) from None
        checked[run.point] = None
    return runs


def _in_point(e: ScenarioError, params: Mapping[str, Any]) -> ScenarioError:
    if not params:
        return e
    where = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in params.items())
    return ScenarioError(e.path, f"{e.message} (in the sweep run with {where})")
