"""Emulation: bloatlab scenarios on real Linux TCP in network namespaces, through bloatlab's
own bottleneck process (crates/emu), and the comparison with the simulator.

See docs/emulation.md. Entry points: :func:`emulate` (``bloatlab emulate``),
:func:`bloatlab.emulate.compare.compare` (``bloatlab compare``),
:func:`bloatlab.emulate.netns.cleanup_leftovers` (``bloatlab emulate --cleanup``).
"""

from __future__ import annotations

from .runner import emulate, plan

__all__ = ["emulate", "plan"]
