"""Talau, Fonseca & Wille 2019, Early Window Tailoring (paper 002): Tables 2-6, Fig. 5-17.

A dumbbell (Fig. 4) where every TCP source sends a 5 MB file starting at a random time in
[1 s, 8 s], with six gateway schemes: drop-tail, RED, ARED (queue disciplines), EWA, AWM and
EWT (ACK rewriters over a drop-tail queue), 97 kB of gateway memory.

- Scenario 1 (Table 4): 4 Mbit/s everywhere, 360 ms bottleneck RTT, 5 ms access RTTs.
- Scenario 2 (Table 5): 45 Mbit/s, 80 ms bottleneck; 100 Mbit/s, 2 ms access; plus one
  13.35 Mbit/s UDP flow of 1400-byte datagrams.

The flow counts of the mild / medium / heavy levels come from the RFC 7928 search with
drop-tail (Table 2), redone in bloatlab (:mod:`.calibration`); the same search with every
scheme gives the flows each one serves per level (Fig. 16, 17). At each level and scheme:
TCP efficiency, file transfer latency, goodput, Jain fairness of goodput, mean loss ratio
(Fig. 5-9, 11-15), UDP efficiency and Table 6's TCP/UDP loss in scenario 2, and the window
of one flow under RED and EWT (Fig. 10). 30 seeds (the paper's), 95 % CIs.
"""

from __future__ import annotations

from ..framework import Experiment
from .claims import reproduce

EXPERIMENT = Experiment(
    name="ewt",
    title="Early Window Tailoring (Talau, Fonseca & Wille 2019)",
    paper="M. Talau, M. Fonseca, E. C. G. Wille, Early Window Tailoring: A New Approach to Increase the "
          "Number of TCP Connections Served, Journal of Computer Networks and Communications, 2019",
    reproduce=reproduce,
    seeds_full=30,
    seeds_quick=2,
    summary="EWT, EWA, AWM, drop-tail, RED and ARED at the RFC 7928 mild/medium/heavy levels of a "
            "long-delay dumbbell (scenario 1) and one with UDP traffic (scenario 2), and how many flows each "
            "serves per level.",
    emulation_ccs=("cubic",),
)
