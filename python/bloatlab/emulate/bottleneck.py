"""The bottleneck process: ``python -m bloatlab.emulate.bottleneck CONFIG.json OUT.json``.

Started by the controller inside the run's link namespace (with PR_SET_PDEATHSIG, so it dies
with the controller). It creates the two TUN devices, writes the ready file, waits for the go
file and then runs ``bloatlab._core.emu_run`` (crates/emu) until the scenario's duration has
passed; its measurements go to OUT.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..atomic import write_text


def main(argv: list[str]) -> int:
    from bloatlab import _core

    config, out = Path(argv[1]), Path(argv[2])
    try:
        stats = _core.emu_run(config.read_text())
    except _core.ScenarioError as e:
        path, message = e.args
        sys.stderr.write(f"{path}: {message}\n" if path else f"{message}\n")
        return 2
    except OSError as e:
        sys.stderr.write(f"{e}\n")
        return 1
    write_text(out, stats)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
