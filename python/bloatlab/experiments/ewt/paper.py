"""The published numbers of the ewt experiment's paper, compared with ours in its tables and
claims."""

from __future__ import annotations

#: Table 2: flows per congestion level (found with drop-tail in ns-3)
PAPER_TABLE2 = {1: {"mild": 8, "medium": 17, "heavy": 24}, 2: {"mild": 13, "medium": 24, "heavy": 31}}

#: Table 6: mean loss ratio (%) in scenario 2, (TCP, UDP) per scheme and level
PAPER_TABLE6 = {
    "droptail": {"mild": (0.07, 0.029), "medium": (0.31, 0.31), "heavy": (0.52, 0.43)},
    "red": {"mild": (0.11, 0.07), "medium": (0.54, 0.37), "heavy": (0.83, 0.62)},
    "ared": {"mild": (0.09, 0.05), "medium": (0.41, 0.29), "heavy": (0.62, 0.50)},
    "ewa": {"mild": (0.0, 0.0), "medium": (0.07, 0.02), "heavy": (0.19, 0.05)},
    "awm": {"mild": (0.0, 0.0), "medium": (0.0, 0.0), "heavy": (0.04, 0.02)},
    "ewt": {"mild": (0.0, 0.0), "medium": (0.0, 0.0), "heavy": (0.0, 0.0)},
}

#: §5.6: EWT's flows served, on average over levels and scenarios, vs the best other scheme
#: and vs drop-tail (% more)
PAPER_SERVED_GAIN = {"best competitor": 49.3, "drop-tail": 75.8}
