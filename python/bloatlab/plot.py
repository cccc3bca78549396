"""Public alias (docs/sweeps.md): the figures live in :mod:`bloatlab.outputs.plot`."""

from .outputs.plot import (
    bars_figure,
    cdf_figure,
    label,
    load_run,
    metric_frame,
    point_labels,
    run_cdf_figure,
    save,
    sweep_bars,
    sweep_cdf,
    timeseries_figure,
    to_bytes,
)

__all__ = ["bars_figure", "cdf_figure", "label", "load_run", "metric_frame", "point_labels",
           "run_cdf_figure", "save", "sweep_bars", "sweep_cdf", "timeseries_figure", "to_bytes"]
