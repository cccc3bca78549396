"""``python -m bloatlab.emulate emulate|compare ...``: the bloatlab CLI with the emulation
commands registered (works before and after `bloatlab.cli` registers them itself)."""

from __future__ import annotations

from ..cli import main
from .cli import register

if "emulate" not in main.commands:
    register(main)

if __name__ == "__main__":
    main()
