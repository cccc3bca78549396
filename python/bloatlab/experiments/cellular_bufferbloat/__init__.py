"""Alfredsson et al. 2013, Impact of TCP congestion control on bufferbloat in cellular
networks (paper 001): Fig. 2-10.

The paper measured a commercial Swedish operator's 3G, 3.5G and 4G networks with four run
types (its Fig. 1): A, long flows alone (3 minutes); B, 320 kB web responses alone;
C, a web response beside one long background flow; D, beside five. Short and long flows
use CUBIC, NewReno or Westwood+ in every combination; each configuration is repeated 30
times and reported as mean and 95 % confidence interval.

Here each repetition is one simulation on the ``cellular`` topology (docs/cellular.md,
profiles ``3g``, ``3.5g``, ``4g``) with its own seed, hence its own realization of the
variable radio rate: the background flows start first, then the UE fetches one 320 kB
response over a new connection (the ``web`` app, connection set-up included in the time).

- Fig. 2 / 8 / 10: mean web response time for B, C, D, all CC combinations (3.5G / 3G / 4G)
- Fig. 3, 4, 5: run A: throughput, RTT and outstanding window of single long flows
- Fig. 6: mean RTT of the short flows (3.5G); Fig. 7: RTT of one CUBIC short flow over time
- Fig. 9: packet loss of the short flows beside five background flows (3G)

The plotting lives in :mod:`.plots`.
"""

from __future__ import annotations

from ..framework import Experiment
from .claims import reproduce

EXPERIMENT = Experiment(
    name="cellular-bufferbloat",
    title="Impact of TCP congestion control on bufferbloat in cellular networks (Alfredsson et al. 2013)",
    paper="S. Alfredsson, G. Del Giudice, J. Garcia, A. Brunstrom, L. De Cicco, S. Mascolo, Impact of TCP "
          "Congestion Control on Bufferbloat in Cellular Networks, IEEE WoWMoM 2013",
    reproduce=reproduce,
    seeds_full=30,
    seeds_quick=3,
    summary="320 kB web responses alone and beside one or five long flows, every combination of CUBIC, "
            "NewReno and Westwood+, over 3G, 3.5G and 4G link profiles (Fig. 2-10).",
    emulation_ccs=("cubic",),
)
