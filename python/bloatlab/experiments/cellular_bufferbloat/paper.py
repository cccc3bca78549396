"""The published numbers of the cellular-bufferbloat experiment's paper, compared with ours in its
tables and claims."""

from __future__ import annotations

# --------------------------------------------------------------------------- the paper's numbers

# The paper gives its results as bar charts; the values below are the ones its text states
# (§IV-A..C). Where the text says "the choice of congestion control for the short flow is of
# limited importance", the value applies to every short-flow CC. None: not stated.

#: Fig. 2 (3.5G), response time (s), by (run, background CC): "around 0.8 s" alone; one CUBIC or
#: NewReno background flow "increases five-fold" (5 x 0.8), Westwood+ "roughly a doubling"
#: (2 x 0.8); five flows "about 8 s" CUBIC, "about 6 s" NewReno, "about 5 s" Westwood+.
PAPER_FIG2: dict[tuple[str, str | None], float] = {
    ("B", None): 0.8,
    ("C", "cubic"): 4.0, ("C", "newreno"): 4.0, ("C", "westwood+"): 1.6,
    ("D", "cubic"): 8.0, ("D", "newreno"): 6.0, ("D", "westwood+"): 5.0,
}

#: Fig. 8 (3G), response time (s): "around 19 s" alone; with five CUBIC background flows a CUBIC
#: short flow takes "under 150 s", a Westwood+ one "just over 300 s" (per short CC here).
PAPER_FIG8_ALONE = 19.0

PAPER_FIG8_FIVE_CUBIC = {"cubic": 150.0, "westwood+": 300.0}

#: Fig. 9 (3G): short flows see "around 15 %" packet loss beside five CUBIC long flows.
PAPER_FIG9_LOSS_PCT = {"cubic": 15.0}

#: Fig. 3-5 (3.5G, run A): throughput of the flows of Fig. 4/5 (Mbit/s); CUBIC's mean RTT is
#: 1.5 x Westwood+'s, its mean outstanding window "roughly twice" Westwood+'s.
PAPER_LONG_TPUT = {"cubic": 16.1, "newreno": 15.5, "westwood+": 15.7}

PAPER_RTT_RATIO_CUBIC_WESTWOOD = 1.5

PAPER_WINDOW_RATIO_CUBIC_WESTWOOD = 2.0

#: Fig. 6 (3.5G): a short flow's mean RTT without background traffic is "about 80 ms".
PAPER_SHORT_RTT_ALONE_MS = 80.0
