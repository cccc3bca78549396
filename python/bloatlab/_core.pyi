"""Type stubs for the Rust extension ``bloatlab._core`` (crates/py)."""

class ScenarioError(ValueError):
    """Invalid scenario; ``args == (path, message)``."""

class SimulationError(RuntimeError):
    """A run failed an internal check."""

def run_json(
    scenario_json: str, seed: int | None = None, series: bool = True
) -> tuple[str, dict[str, dict[str, list[float] | list[int] | list[str]]]]:
    """Runs a scenario given as JSON text; returns (summary_json, tables). Releases the GIL."""

def version() -> str: ...
