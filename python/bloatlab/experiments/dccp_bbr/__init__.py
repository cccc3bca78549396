"""Liu Ming-Hao 2021, DCCP based on an improved BBR (paper 004): Fig. 6 and Fig. 7.

Setup (§4, a Mininet dumbbell): 100 Mbit/s bottleneck with 100 ms RTT, 1 Gbit/s elsewhere
with no added delay, a 4000-packet drop-tail queue.

- Fig. 6: the RTT of one DCCP connection (CCID2, or DCCP-BBR) over 15 s while two TCP
  Vegas flows load the link. The paper: DCCP-BBR's mean delay is 20 % below CCID2's.
- Fig. 7: the throughput of CCID2, BBR and DCCP-BBR, each alone, against random loss on
  the bottleneck from 0 to 0.4. The paper: CCID2 is unusable above 1 % loss, BBR
  collapses above 20 %, DCCP-BBR resists about 10 % more loss than BBR.

The paper gives figures, not tables, and no seeds or intervals: the numbers below it
states in the text are what we compare with. We run 5 seeds per point (2 with --quick).
"""

from __future__ import annotations

from ..framework import Experiment
from .claims import reproduce

EXPERIMENT = Experiment(
    name="dccp-bbr",
    title="DCCP based on an improved BBR (Liu Ming-Hao 2021)",
    paper="Liu Ming-Hao, Datagram Congestion Control Protocol Based on Improved BBR, "
          "Computer Systems & Applications, 2021",
    reproduce=reproduce,
    seeds_full=5,
    seeds_quick=2,
    summary="DCCP with CCID2, with BBR, and with the loss-adaptive DCCP-BBR: delay under load "
            "(Fig. 6) and throughput against random loss (Fig. 7).",
)
