"""The published numbers of the ending-the-anomaly experiment, compared with ours.

The throughputs are those published with the ath9k airtime-fairness scheduler (Linux commit
63fefa050477 "ath9k: Introduce airtime fairness scheduling between stations", by the paper's
first author): a three-station test, two stations at the highest HT20 rate and one at the
lowest, TCP downloads, before and after the scheduler."""

from __future__ import annotations

#: TCP download throughput (Mbit/s) per station: fast 1, fast 2, slow; and the total.
PAPER_BEFORE = (19.17, 19.83, 2.58)
PAPER_BEFORE_TOTAL = 41.58
PAPER_AFTER = (25.09, 25.21, 1.77)
PAPER_AFTER_TOTAL = 52.07

#: The abstract: "an order of magnitude reduction in latency under load".
PAPER_LATENCY_FACTOR = 10.0

#: The abstract: "nearly perfect airtime fairness"; the issue's target: Jain over airtime >= 0.95.
JAIN_TARGET = 0.95
