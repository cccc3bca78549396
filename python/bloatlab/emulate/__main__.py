"""``python -m bloatlab.emulate emulate|compare ...``: the bloatlab CLI (which has the
emulation commands)."""

from __future__ import annotations

from ..cli import main

if __name__ == "__main__":
    main()
