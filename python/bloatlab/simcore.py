"""The one place the Python front calls the simulator (``bloatlab._core``, crates/py).

A low-level module: it imports only the extension, :mod:`bloatlab.errors` and
:mod:`bloatlab.scenario`, so every other module (the API, sweeps, back ends, workers, the
CLI) can use it without importing each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import _core
from .errors import ScenarioError
from .scenario import to_json

__version__: str = _core.version()


def wants_capture(doc: Mapping[str, Any]) -> bool:
    """True when the scenario asks for packet capture (a ``capture`` table)."""
    return "capture" in doc


def call_core(text: str, *, series: bool, capture_dir: str | None = None) -> tuple[str, dict[str, Any]]:
    """``_core.run_json`` (with a ``capture_dir`` when there is one); core ScenarioErrors become
    :class:`bloatlab.ScenarioError`."""
    try:
        if capture_dir is not None:
            return _core.run_json(text, None, bool(series), capture_dir)
        return _core.run_json(text, None, bool(series))
    except ScenarioError:
        raise
    except _core.ScenarioError as e:
        raise ScenarioError.from_core(e) from None


def extension_file() -> str:
    """The compiled simulator's file (``build_id`` digests it)."""
    return str(_core.__file__)


def packetdrill_json(text: str, tolerance_usecs: int) -> str:
    """``_core.packetdrill_run``: one packetdrill script against the simulated TCP endpoint."""
    return _core.packetdrill_run(text, tolerance_usecs)


def validate_scenario(doc: Mapping[str, Any]) -> None:
    """Checks a resolved scenario against the simulator without running it: one call to
    ``_core.validate_json``, which reads every key as a run would (nothing is built or
    simulated). Raises :class:`ScenarioError` naming the key path."""
    try:
        _core.validate_json(to_json(doc))
    except _core.ScenarioError as e:
        raise ScenarioError.from_core(e) from None
