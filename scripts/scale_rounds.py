#!/usr/bin/env python3
"""Interleaved speed rounds of builds on the scale bench's dumbbell points (docs/performance.md,
"Per-flow cost at 10,000 flows"): 10 and 10,000 CUBIC flows exactly as
``bloatlab.bench.scale_dumbbell(n, SECONDS)`` builds them, and with ``--wang`` Wang II
(scenarios/wang2016-II.toml).

Each BUILD is either an example binary (``cargo build --release -p bloatlab-sim --example run``;
copy it before changing the code) or a directory holding an unpacked wheel (``maturin build
--release`` then ``unzip``), whose points run as ``bench --scale`` runs them: each in its own
child process (``bloatlab.bench.scale_point``). Round after round, every build runs every
point, so a slow spell of a shared machine falls on all builds alike.

    python3 scripts/scale_rounds.py --rounds 8 --wang /tmp/run-main target/release/examples/run
    python3 scripts/scale_rounds.py --rounds 6 --seconds 2 /tmp/py-base /tmp/py-new

Prints per build and point the minimum and median wall time (the summary's ``engine.wall_s``:
the run, without set-up) and, for binaries, the process's user CPU; then the 10,000 / 10-flow
ratio of bottleneck packets per wall second (from the minima and from the medians).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# What bloatlab.bench.scale_dumbbell(flows, seconds) builds (kept equal by hand: importing the
# package needs its compiled core, which a binary-only comparison need not build).
DUMBBELL = """name = "scale-dumbbell-{flows}"
duration = "{seconds:g}s"
seed = 1
[metrics]
interval = "0s"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Gbps", delay = "5ms" }}
bottleneck_queue = {{ kind = "droptail", limit = "25MB" }}
access = {{ rate = "10Gbps", delay = "2.5ms" }}
[tcp]
mss = "1448B"
recovery = "sack"
[[flows]]
transport = "tcp"
cc = "cubic"
count = {flows}
size = "unlimited"
"""


def run_binary(binary: str, scenario: Path) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    out = subprocess.run([binary, str(scenario)], capture_output=True, text=True, check=True).stdout
    user = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before
    e = json.loads(out)["engine"]
    return e["wall_s"], user, e["bottleneck_packets"]


def run_python(path: str, flows: int, seconds: float) -> tuple[float, float, int]:
    code = (
        "import json; from bloatlab.bench import scale_point; "
        f"print(json.dumps(scale_point('dumbbell', {flows}, {seconds})))"
    )
    env = dict(os.environ, PYTHONPATH=path)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    p = json.loads(out.stdout.strip().splitlines()[-1])
    return p["wall_s"], float("nan"), p["bottleneck_packets"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("builds", nargs="+", help="example binaries or unpacked-wheel directories")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=1.0, help="simulated seconds (default 1)")
    ap.add_argument("--wang", action="store_true", help="also Wang II (binaries only)")
    a = ap.parse_args()
    if a.rounds < 1 or a.seconds <= 0:
        print("scale_rounds: --rounds must be >= 1 and --seconds > 0", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        points: list[tuple[str, int | None, Path | None]] = []
        for n in (10, 10_000):
            f = Path(tmp) / f"dumbbell-{n}.toml"
            f.write_text(DUMBBELL.format(flows=n, seconds=a.seconds))
            points.append((f"{n} flows", n, f))
        if a.wang:
            points.append(("Wang II", None, ROOT / "scenarios" / "wang2016-II.toml"))
        res: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
        for _ in range(a.rounds):
            for name, n, f in points:
                for b in a.builds:
                    if os.path.isdir(b):
                        if n is None:
                            continue
                        r = run_python(b, n, a.seconds)
                    else:
                        r = run_binary(b, f)
                    res.setdefault((name, b), []).append(r)
    for b in a.builds:
        rate = {}
        for name, _, _ in points:
            runs = res.get((name, b))
            if not runs:
                continue
            wall = [r[0] for r in runs]
            user = [r[1] for r in runs]
            pk = runs[0][2]
            rate[name] = (pk / min(wall), pk / statistics.median(wall))
            cpu = "" if os.path.isdir(b) else (
                f", user CPU min {min(user):.3f} s median {statistics.median(user):.3f} s"
            )
            print(
                f"{b}  {name}: {pk} bottleneck packets, wall min {min(wall):.3f} s median "
                f"{statistics.median(wall):.3f} s{cpu}"
            )
        lo, hi = rate["10 flows"], rate["10000 flows"]
        print(f"{b}  ratio 10,000 / 10 flows: {hi[0] / lo[0]:.3f} (minima), {hi[1] / lo[1]:.3f} (medians)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
