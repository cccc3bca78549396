"""bloatlab: a deterministic packet-level network simulator for bufferbloat research.

    >>> import bloatlab
    >>> r = bloatlab.run("scenarios/demo.toml", set=["duration=10s"])
    >>> r.flows[["id", "cc", "goodput_mbps", "rtt_p95_ms"]]
    >>> r.to_dir("out/demo")

    >>> df = bloatlab.sweep("scenarios/demo.toml", {"flows[0].cc": ["newreno", "reno"]}, seeds=5,
    ...                     set={"duration": "10s"}, out="out/cc")
    >>> bloatlab.Store("out/cc").bottleneck      # and .runs, .flows, .timeseries, .queues
"""

from .api import run, sweep
from .errors import ScenarioError, SimulationError
from .result import Result
from .simcore import __version__
from .sweeps.spec import Sweep, load_sweep, make_sweep
from .sweeps.store import Store

__all__ = [
    "run", "sweep", "load_sweep", "make_sweep", "Sweep", "Store", "Result",
    "ScenarioError", "SimulationError", "__version__",
]
