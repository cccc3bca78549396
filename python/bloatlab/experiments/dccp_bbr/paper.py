"""The published numbers of the dccp-bbr experiment's paper, compared with ours in its tables and
claims."""

from __future__ import annotations

#: what the paper states (§4.1, §4.2)
PAPER_DELAY_CUT = 0.20  # DCCP-BBR's mean delay under load is 20 % below CCID2's

PAPER_CCID2_LIMIT = 0.01  # CCID2 unusable above 1 % loss

PAPER_BBR_LIMIT = 0.20  # BBR collapses above 20 % loss

PAPER_EXTRA = 0.10  # DCCP-BBR holds about 10 % more loss
