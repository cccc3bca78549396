"""Type stubs for the Rust extension ``bloatlab._core`` (crates/py)."""

import os

class ScenarioError(ValueError):
    """Invalid scenario; ``args == (path, message)``."""

class SimulationError(RuntimeError):
    """A run failed an internal check."""

def run_json(
    scenario_json: str,
    seed: int | None = None,
    series: bool = True,
    capture_dir: str | os.PathLike[str] | None = None,
) -> tuple[str, dict[str, dict[str, list[float] | list[int] | list[str]]]]:
    """Runs a scenario given as JSON text; returns (summary_json, tables). Releases the GIL.

    With ``capture_dir``, the links named in the scenario's ``capture`` are written there as
    ``{link}.pcap``."""

def validate_json(scenario_json: str) -> None:
    """Checks a scenario given as JSON text without running it; raises ScenarioError (the
    same key path and message as run_json would)."""

def summary_json(measure_json: str) -> str:
    """The summary JSON (pretty, the simulator's shape) built from a run's measurements
    (``bloatlab_sim::metrics::RunMeasure`` as JSON). Raises ValueError on malformed input."""

def version() -> str: ...

#: Kernel congestion controls `bloatlab emulate` may use (crates/emu/src/config.rs).
KERNEL_CCS: list[str]

def emu_plan(scenario_json: str) -> str:
    """Validates a scenario for emulation; returns the plan (expanded flows, timing) as JSON
    text. Raises ScenarioError."""

def emu_run(config_json: str) -> str:
    """Runs the emulation bottleneck (crates/emu) until the scenario's duration has passed;
    returns its measurements as JSON text. Releases the GIL. Linux only; raises ScenarioError
    or OSError."""

def packetdrill_run(script: str, tolerance_usecs: int = 4000) -> str:
    """Runs one packetdrill script (its text) against the simulated TCP endpoint; returns the
    outcome as JSON text: ``{"status": "passed"|"failed"|"unsupported"|"malformed", "line",
    "column", "message"}``. Releases the GIL."""
