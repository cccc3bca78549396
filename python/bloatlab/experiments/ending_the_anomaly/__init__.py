"""Høiland-Jørgensen, Kazior, Täht, Hurtig, Brunstrom 2017, "Ending the Anomaly" (issue 30).

Setup (the paper's testbed shape, §5): an 802.11n access point with three stations, two at
the top HT20 rate (MCS 15, short guard interval, 144.4 Mbit/s) and one at the lowest
(MCS 0, 6.5 Mbit/s), behind a wired server. Two tests: downstream UDP floods to every
station, and a TCP download to every station with a sparse ping-like probe flow beside them
(latency under load). Each for four ways of queueing at the AP: a FIFO qdisc over the
driver's queue (the bloated default), the FQ-CoDel qdisc over the same driver queue,
mac80211's FQ-MAC, and FQ-MAC with airtime fairness.

The paper's figures are compared where their numbers are stated in text: the throughputs
before and after airtime fairness published with the ath9k implementation (Linux commit
63fefa050477, same testbed shape), and the abstract's claims (an order of magnitude less
latency under load, nearly perfect airtime fairness, large multi-station gains). The model
has no rate control and an error-free channel (docs/wifi.md); 5 seeds (2 with --quick) draw
different backoffs and collisions.
"""

from __future__ import annotations

from ..framework import Experiment
from .claims import reproduce

EXPERIMENT = Experiment(
    name="ending-the-anomaly",
    title="Ending the Anomaly: low latency and airtime fairness in WiFi (Høiland-Jørgensen et al. 2017)",
    paper="Toke Høiland-Jørgensen, Michał Kazior, Dave Täht, Per Hurtig, Anna Brunstrom, Ending the Anomaly: "
          "Achieving Low Latency and Airtime Fairness in WiFi, USENIX ATC 2017 (arXiv 1703.00064)",
    reproduce=reproduce,
    seeds_full=5,
    seeds_quick=2,
    summary="An AP with two fast stations and one slow one: per-station throughput, airtime shares and latency "
            "under load for a FIFO, an FQ-CoDel qdisc, FQ-MAC and airtime fairness.",
)
