"""Wang & Yuan 2016, TCP delayed window update mechanism for fighting the bufferbloat
(paper 000): Table 2-5, Fig. 6-9.

The paper's Cubic+ is CUBIC inside a wrapper that, every ``period``, estimates the
bandwidth utilisation U from the share of RTT samples above the minimum and the delay jitter,
suspends window growth under mild congestion and cuts the window by 1 − θ under serious
congestion (bloatlab: ``cc = "cubic+"``, docs/congestion-control.md). It was evaluated in
OPNET Modeler on a dumbbell with two parameter sets (Table 1):

- scenario I: 2 Mbit/s bottleneck, 20 ms RTT, 10 Mbit/s access, buffer 500 KB / 50 KB,
  period 100 ms, threshold 30 ms;
- scenario II: 400 Mbit/s, 120 ms RTT, 1 Gbit/s access, buffer 1500 KB / 300 KB, period
  200 ms, threshold 0.6 ms; θ = 0.9, 1500-byte packets, FIFO (drop-tail), 200 s.

Tables and figures reproduced: Table 2 (one flow of Cubic, Cubic+ or Vegas), Table 3 (two
flows of the same protocol) and Table 4 (their Jain index), Fig. 6 (one Reno flow against
Vegas / Cubic+ / Cubic), Fig. 7 and 8 (a Reno or SACK transfer starting 15 s after a
Cubic / Cubic+ background flow: completion time and loss), Table 5 (heterogeneous RTT in
scenario I), Fig. 9 (two Cubic / Cubic+ flows with two Reno flows in scenario II).

The paper gives one run per configuration and no confidence intervals; we run 5 seeds
(2 with --quick). The paper's numbers live in :mod:`.paper`, the scenarios in :mod:`.scenarios`, the
plotting in :mod:`.plots`, the runs, tables, claims and report text in :mod:`.claims`.
"""

from __future__ import annotations

from ..framework import Experiment
from .claims import reproduce

EXPERIMENT = Experiment(
    name="cubic-plus",
    title="TCP delayed window update, Cubic+ (Wang & Yuan 2016)",
    paper="Min Wang and Lingyun Yuan, TCP Delayed Window Update Mechanism for Fighting the Bufferbloat, "
          "KSII Transactions on Internet and Information Systems, 2016",
    reproduce=reproduce,
    seeds_full=5,
    seeds_quick=2,
    emulation_ccs=("cubic", "reno"),
    summary="Cubic+ (CUBIC with the delayed window update) against Cubic, Vegas and Reno on the paper's "
            "two dumbbells: one and two flows (Table 2-4), beside Reno (Fig. 6), background to a "
            "transfer (Fig. 7, 8), heterogeneous RTTs (Table 5), TCP-friendliness (Fig. 9).",
)
