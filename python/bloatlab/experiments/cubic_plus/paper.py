"""The published numbers of Wang & Yuan 2016 (paper 000), transcribed from its Table 2-5 and
from the values its text states for Fig. 7 and 8 (the figures themselves give no numbers).
Rates are Mbit/s at the wire, losses and buffer usage %, delays ms (the paper gives scenario I
delays in seconds)."""

from __future__ import annotations

#: Table 2: (scenario, buffer) -> protocol -> (throughput Mbit/s, loss %, buffer usage %, queueing delay ms)
PAPER_T2: dict[tuple[str, str], dict[str, tuple[float, float, float, float]]] = {
    ("I", "500KB"): {"cubic": (1.9992, 3.27, 81.68, 1610.0), "cubic+": (1.9988, 0.0, 1.74, 30.0),
                     "vegas": (1.9992, 0.0, 0.31, 6.4)},
    ("I", "50KB"): {"cubic": (1.9992, 0.52, 67.14, 130.0), "cubic+": (1.9988, 0.0, 17.38, 30.0),
                    "vegas": (1.9992, 0.0, 3.10, 6.4)},
    ("II", "1500KB"): {"cubic": (368.67, 0.0284, 0.11, 0.13), "cubic+": (348.87, 0.0298, 0.11, 0.13),
                       "vegas": (375.66, 0.0021, 0.11, 0.102)},
    ("II", "300KB"): {"cubic": (203.93, 0.2187, 1.81, 0.42), "cubic+": (285.68, 0.0537, 0.56, 0.13),
                      "vegas": (166.83, 0.0046, 0.11, 0.027)},
}

#: Table 3: (scenario, buffer) -> protocol -> (throughput 1, throughput 2 [Mbit/s], loss 1, loss 2 [%],
#: queueing delay [ms]); flows "1" and "2" as the paper numbers them
PAPER_T3: dict[tuple[str, str], dict[str, tuple[float, float, float, float, float]]] = {
    ("I", "50KB"): {"cubic": (1.0291, 0.9805, 1.01, 0.87, 130.0), "cubic+": (0.7900, 1.1800, 0.02, 0.04, 40.0),
                    "vegas": (1.0246, 0.9752, 0.0, 0.0, 3.741)},
    ("I", "500KB"): {"cubic": (1.0631, 0.9269, 3.97, 4.15, 1630.0), "cubic+": (0.9335, 0.9632, 0.0, 0.0, 41.0),
                     "vegas": (1.0246, 0.9752, 0.0, 0.0, 3.7)},
    ("II", "300KB"): {"cubic": (186.85, 186.69, 0.0091, 0.0107, 0.98),
                      "cubic+": (169.53, 174.28, 0.0053, 0.0020, 0.07),
                      "vegas": (130.42, 159.05, 0.0084, 0.0038, 0.036)},
    ("II", "1500KB"): {"cubic": (195.78, 191.52, 0.0243, 0.0221, 2.36),
                       "cubic+": (195.07, 183.21, 0.0104, 0.0097, 0.12),
                       "vegas": (173.81, 202.33, 0.0146, 0.0147, 0.12)},
}

#: Table 4: Jain's index of the two same flows, (scenario, buffer) -> protocol -> FI
PAPER_T4: dict[tuple[str, str], dict[str, float]] = {
    ("I", "50KB"): {"cubic": 0.9996, "cubic+": 0.9623},
    ("I", "500KB"): {"cubic": 0.9953, "cubic+": 0.9997},
    ("II", "300KB"): {"cubic": 0.9999, "cubic+": 0.9998},
    ("II", "1500KB"): {"cubic": 0.9999, "cubic+": 0.9990},
}

#: Table 5 (scenario I): (buffer, RTT ratio) -> protocol -> (T1, T2, EI [Mbit/s], FI); T1 is
#: the long-RTT flow (it is the smaller in every row of the paper)
PAPER_T5: dict[tuple[str, int], dict[str, tuple[float, float, float, float]]] = {
    ("50KB", 2): {"reno": (0.96, 1.02, 1.98, 0.9989), "cubic": (0.99, 1.01, 2.00, 0.9999),
                  "cubic+": (0.94, 1.06, 2.00, 0.9963)},
    ("50KB", 3): {"reno": (0.86, 1.10, 1.97, 0.9854), "cubic": (0.87, 1.13, 2.00, 0.9838),
                  "cubic+": (0.97, 1.03, 2.00, 0.9990)},
    ("500KB", 2): {"reno": (0.96, 1.04, 2.00, 0.9982), "cubic": (0.71, 1.29, 2.00, 0.9215),
                   "cubic+": (0.99, 1.01, 2.00, 0.9998)},
    ("500KB", 3): {"reno": (0.94, 1.06, 2.00, 0.9959), "cubic": (0.73, 1.27, 2.00, 0.9325),
                   "cubic+": (0.87, 1.13, 2.00, 0.9830)},
}

#: Fig. 7 (completion time of the foreground transfer, s), values the text states:
#: (scenario, buffer, background, foreground) -> s
PAPER_FIG7: dict[tuple[str, str, str, str], float] = {
    ("I", "50KB", "cubic", "reno"): 117.0, ("I", "50KB", "cubic", "sack"): 117.0,
    ("I", "50KB", "cubic+", "reno"): 38.0, ("I", "50KB", "cubic+", "sack"): 32.0,
    ("II", "300KB", "cubic", "reno"): 123.0, ("II", "300KB", "cubic", "sack"): 44.0,
    ("II", "300KB", "cubic+", "reno"): 69.0, ("II", "300KB", "cubic+", "sack"): 38.0,
}

#: Fig. 7(I b): the text gives only the reduction beside Cubic+ at 500 KB: foreground -> %
PAPER_FIG7_CUT_500KB = {"reno": 87.74, "sack": 75.47}

#: Fig. 8 (scenario I, loss of the foreground flow, %): no loss beside Cubic+ at 500 KB; the
#: largest beside Cubic is 3.08 % (SACK; the text does not say at which buffer)
PAPER_FIG8: dict[tuple[str, str, str], float] = {("500KB", "cubic+", "reno"): 0.0, ("500KB", "cubic+", "sack"): 0.0}

PAPER_FIG8_MAX_BESIDE_CUBIC = 3.08
