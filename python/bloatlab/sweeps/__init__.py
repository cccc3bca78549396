"""Sweeps: the spec (:mod:`.spec`: a base scenario over grids, zipped lists and seeds), the
driver (:mod:`.driver`), the back ends that run a sweep's runs (:mod:`.backends`, with the
local back end's worker program :mod:`.worker` and its framing :mod:`.wire`), the results
store that records them (:mod:`.store`) and the statistics across seeds (:mod:`.aggregate`).

The spec's names are exported here (``bloatlab.sweeps.build_id()``, ``load_sweep``, ...);
the package imports nothing else, so that a worker importing :mod:`.backends` stays light.
"""

from .spec import RunSpec, Sweep, build_id, load_sweep, make_sweep, run_id, validate

__all__ = ["RunSpec", "Sweep", "build_id", "load_sweep", "make_sweep", "run_id", "validate"]
