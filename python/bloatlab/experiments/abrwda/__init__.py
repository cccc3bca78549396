"""Liu, Ren et al., ABRWDA (paper 003): receiver-side window control against bufferbloat.

Setup (Table I, an ns-2 simulation): a server 1 Gbit/s / 50 ms from the base station (NB),
whose 500-packet drop-tail buffer feeds a radio link of 3.1-9.3 Mbit/s down and
1.8-5.4 Mbit/s up (25 ms) to one UE; 1500-byte packets, NewReno with an initial window
of 10 packets. The link rate is drawn from two random variables (signal regime, rate).

- Fig. 4 / 5: throughput, queue length and RTT over 60 s of one long flow for NewReno,
  ABRWDA, DRWA and Vegas; numbers the text states (max queue, time with an empty queue,
  RTT range, ...) are compared in a table, the abstract's ratios in another.
- Fig. 6 / 7: sensitivity of ABRWDA to α (λ = 1) and λ (α = 1/4): CDFs of link
  utilisation and RTT; the paper picks α = 1/4, λ = 1.2.
- Fig. 8 / 9: average completion time (AFCT) of 1-, 30- and 200-packet flows that start
  one after the other next to one long flow, at several propagation delays, and the
  reduction against NewReno.

The paper shows single runs of a random channel. Our seeds draw different channel
realisations (the only random element); 10 seeds give a confidence interval on the mean
over channels at a negligible cost (a 60 s run takes ~20 ms), 2 with --quick.
"""

from __future__ import annotations

from ..framework import Experiment
from .claims import reproduce

EXPERIMENT = Experiment(
    name="abrwda",
    title="ABRWDA: receiver-based window control against bufferbloat (Liu, Ren et al.)",
    paper="Xiaolan Liu, Fengyuan Ren, Ran Shu, Tong Zhang, Tao Dai, Mitigating Bufferbloat with Receiver-based "
          "TCP Flow Control Mechanism in Cellular Networks",
    reproduce=reproduce,
    seeds_full=10,
    seeds_quick=2,
    summary="One UE behind a 500-packet base-station buffer and a 3.1-9.3 Mbit/s radio link: NewReno, ABRWDA, "
            "DRWA and Vegas over 60 s (Fig. 4/5), ABRWDA's α and λ (Fig. 6/7), and short-flow completion times "
            "next to a long flow (Fig. 8/9).",
    emulation_ccs=("reno",),
)
