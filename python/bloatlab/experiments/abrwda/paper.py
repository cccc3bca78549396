"""The published numbers of the abrwda experiment's paper, compared with ours in its tables and
claims."""

from __future__ import annotations

# --------------------------------------------------------------------------- the paper's numbers

#: Table I (simulation parameters), used as they are.
PAPER_TABLE1: dict[str, str] = {
    "packet size": "1500B",
    "queue management": "droptail",
    "buffer in NB": "500p",
    "server-NB bandwidth": "1Gbps",
    "NB-UE downlink": "3.1-9.3 Mbit/s",
    "NB-UE uplink": "1.8-5.4 Mbit/s",
    "server-NB delay": "50ms",
    "NB-UE delay": "25ms",
    "CWND_INIT": "10 packets",
}

#: Fig. 4 / 5, numbers stated in §V-A: (scheme, metric) -> value.
PAPER_FIG45: dict[tuple[str, str], float] = {
    ("newreno", "max_queue_pkts"): 500,  # "the queue size reaches the maximum ..."
    ("newreno", "t_full_s"): 3.51,  # "... at 3.51 seconds"
    ("newreno", "t_empty_s"): 8.92,  # "it decreases to the zero at 8.92 seconds"
    ("abrwda", "max_queue_pkts"): 63,  # "the maximum queue length does not exceed 63 packets"
    ("abrwda", "min_rtt_ms"): 154,  # "RTT ... in the range of 0.154 ..."
    ("abrwda", "max_rtt_ms"): 330,  # "... to 0.33 second"
    ("vegas", "mean_queue_pkts"): 6,  # "The average queue length is only 6 packets"
    ("vegas", "max_queue_pkts"): 84,  # "with the maximum of 84 packets"
    ("vegas", "empty_pct"): 40.76,  # "In 40.76% of simulation time, the queue length is zero"
    ("vegas", "mean_rtt_ms"): 166,  # "The average value is 0.166 second"
    ("vegas", "max_rtt_ms"): 449,  # "a 0.449 second of maximum at the very beginning"
}

#: The abstract: ABRWDA's queue and latency as a share of NewReno's and DRWA's
#: ("0.1x and 0.4x shorter queues, 0.5x and 0.8x lower latency"), read as ratios.
PAPER_RATIOS: dict[tuple[str, str], float] = {
    ("queue", "newreno"): 0.1,
    ("queue", "drwa"): 0.4,
    ("latency", "newreno"): 0.5,
    ("latency", "drwa"): 0.8,
}

#: §I: AFCT "reduced by 25% to 78% compared to TCP NewReno".
PAPER_AFCT_REDUCTION_PCT = (25.0, 78.0)

#: the paper's tuned parameters (§V-B)
PAPER_ALPHA = 0.25

PAPER_LAMBDA = 1.2
