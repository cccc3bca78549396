"""bloatlab: a deterministic packet-level network simulator for bufferbloat research.

    >>> import bloatlab
    >>> r = bloatlab.run("scenarios/demo.toml", set=["duration=10s"])
    >>> r.flows[["id", "cc", "goodput_mbps", "rtt_p95_ms"]]
    >>> r.to_dir("out/demo")
"""

from . import _core
from .api import run
from .errors import ScenarioError, SimulationError
from .result import Result

__version__: str = _core.version()

__all__ = ["run", "Result", "ScenarioError", "SimulationError", "__version__"]
