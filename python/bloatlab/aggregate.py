"""Public alias (docs/sweeps.md): the statistics live in :mod:`bloatlab.sweeps.aggregate`."""

from .sweeps.aggregate import jain, jain_index, mean_ci, summarize, t_cdf, t_quantile

__all__ = ["jain", "jain_index", "mean_ci", "summarize", "t_cdf", "t_quantile"]
