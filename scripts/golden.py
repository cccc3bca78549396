#!/usr/bin/env python3
"""The golden manifest: a fingerprint of what the simulator computes, for refactors that must
not change a byte.

Runs a fixed set of short scenarios that between them exercise every congestion control, queue
discipline, ACK rewriter, receive-window policy, transport, application and topology kind, with
the example binary (`cargo run --release --example run`, no Python in the way), and records for
each the SHA-256 of its summary JSON (wall-clock fields removed) and of each time-series table.

    python3 scripts/golden.py            # build the example, compare with tests/golden/manifest.json
    python3 scripts/golden.py --write    # rewrite the manifest (say why in the commit message)
    python3 scripts/golden.py --only cc-  # the cases whose name starts with cc-

Exit status: 0 identical, 1 a case differs (each is named), 2 bad usage.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "tests" / "golden" / "manifest.json"
WALL_FIELDS = ("wall_s", "packets_per_wall_s", "setup_s")

DUMBBELL = """
name = "{name}"
duration = "{duration}"
seed = {seed}
[metrics]
interval = "100ms"
links = ["bottleneck_rev"]
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "{rate}", delay = "5ms"{loss} }}
bottleneck_queue = {queue}
access = {{ rate = "100Mbps", delay = "2.5ms" }}
{gateway}
[tcp]
recovery = "{recovery}"
{tcp}
"""

TCP_FLOW = """
[[flows]]
transport = "tcp"
cc = "{cc}"
count = {count}
start = {start}
{extra}
"""

QUEUES = {
    "droptail": '{ kind = "droptail", limit = "100KB" }',
    "droptail-p": '{ kind = "droptail", limit = "50p" }',
    "red": '{ kind = "red", limit = "200KB" }',
    "ared": '{ kind = "ared", limit = "200KB" }',
    "codel": '{ kind = "codel", limit = "1000p" }',
    "codel-ecn": '{ kind = "codel", limit = "1000p", ecn = true }',
    "pie": '{ kind = "pie", limit = "1000p" }',
    "step": '{ kind = "step", limit = "1000p", threshold = "1ms" }',
    "fq_codel": '{ kind = "fq_codel", limit = "10240p" }',
    "cake": '{ kind = "cake", limit = "1000p", bandwidth = "10Mbps" }',
    "dualpi2": '{ kind = "dualpi2", limit = "1000p" }',
}


def dumbbell(name, flows, queue="droptail", *, duration="8s", seed=1, rate="10Mbps", loss=0.0,
             gateway="", recovery="sack", tcp=""):
    text = DUMBBELL.format(
        name=name, duration=duration, seed=seed, rate=rate,
        loss=f", loss = {loss}" if loss else "", queue=QUEUES.get(queue, queue),
        gateway=f"gateway = {gateway}" if gateway else "", recovery=recovery, tcp=tcp)
    return text + "".join(flows)


def tcp(cc, count=1, start='"0s"', extra=""):
    return TCP_FLOW.format(cc=cc, count=count, start=start, extra=extra)


def cases() -> dict[str, str]:
    c: dict[str, str] = {}
    for cc in ["reno", "newreno", "cubic", "vegas", "westwood+", "bbr", "cubic+", "reno+", "bbr+"]:
        c[f"cc-{cc}"] = dumbbell(f"cc-{cc}", [tcp(cc), tcp("cubic", start='"2s"')])
    c["cc-dctcp-step"] = dumbbell("cc-dctcp-step", [tcp("dctcp", 2)], "step")
    c["cc-prague-dualpi2"] = dumbbell(
        "cc-prague-dualpi2", [tcp("prague"), tcp("cubic", start='"1s"')], "dualpi2")
    for q in ["red", "ared", "codel", "codel-ecn", "pie", "fq_codel", "cake", "dualpi2", "droptail-p"]:
        extra = 'tcp = { ecn = true }' if q == "codel-ecn" else ""
        c[f"queue-{q}"] = dumbbell(f"queue-{q}", [tcp("cubic", 2, extra=extra), tcp("reno", extra=extra)], q)
    for rec in ["newreno", "reno"]:
        c[f"recovery-{rec}"] = dumbbell(f"recovery-{rec}", [tcp("newreno")], recovery=rec, loss=0.01)
    c["loss-sack-pacing"] = dumbbell(
        "loss-sack-pacing", [tcp("cubic", 2)], loss=0.005, tcp="pacing = true")
    c["tcp-options-off"] = dumbbell(
        "tcp-options-off", [tcp("cubic")], loss=0.005,
        tcp="timestamps = false\nrack = false\ntlp = false\nfrto = false\nundo = false\n"
            "dsack = false\nprr = false\nrcvbuf_auto = false\nsack_compress = false\nhz = 1000")
    c["tcp-accecn"] = dumbbell("tcp-accecn", [tcp("cubic", extra='tcp = { ecn = "accecn" }')], "codel-ecn")
    c["gateway-ewt"] = dumbbell("gateway-ewt", [tcp("cubic", 2)], "droptail",
                                gateway='{ kind = "ewt", start = "29KB" }')
    c["gateway-ewa"] = dumbbell("gateway-ewa", [tcp("cubic", 2)], "droptail", gateway='{ kind = "ewa" }')
    c["gateway-awm"] = dumbbell("gateway-awm", [tcp("cubic", 2)], "droptail", gateway='{ kind = "awm", flows = 2 }')
    c["rwnd-drwa"] = dumbbell("rwnd-drwa", [tcp("cubic", extra='rwnd = "drwa"')])
    c["apps-mixed"] = dumbbell("apps-mixed", [
        tcp("cubic"),
        tcp("cubic", 4, start='{ uniform = ["0.5s", "3s"] }', extra='size = "300KB"'),
        tcp("cubic", extra='app = "web"\nsize = "50KB"\nthink = "200ms"'),
        tcp("cubic", extra='direction = "reverse"'),
        '\n[[flows]]\ntransport = "udp"\napp = "cbr"\nrate = "1Mbps"\n',
        '\n[[flows]]\ntransport = "udp"\napp = "probe"\ninterval = "50ms"\n',
        '\n[[flows]]\ntransport = "udp"\napp = "voip"\n',
    ], "fq_codel")
    for cc in ["ccid2", "bbr", "bbr-adaptive"]:
        c[f"dccp-{cc}"] = dumbbell(f"dccp-{cc}", [
            f'\n[[flows]]\ntransport = "dccp"\ncc = "{cc}"\n', tcp("cubic", start='"1s"')], loss=0.002)
    c["app-page"] = dumbbell("app-page", [
        tcp("cubic", extra='app = "page"\nthink = "500ms"'),
        tcp("cubic", extra='app = "page"\nmultiplex = true\nconnections = 1\nobjects = 20\nsize = "500KB"'),
        tcp("cubic", start='"1s"', extra='direction = "reverse"')], "fq_codel")
    c["rpm-both"] = dumbbell("rpm-both", [tcp("cubic")], duration="6s") + """
[responsiveness]
direction = "both"
interval = "1s"
"""
    c["heterogeneous-rtt"] = dumbbell("heterogeneous-rtt", [
        tcp("cubic", extra='rtt = "20ms"'), tcp("cubic", extra='rtt = "80ms"')])
    c["cellular-abrwda"] = """
name = "cellular-abrwda"
duration = "10s"
[topology]
kind = "cellular"
core = { rate = "1Gbps", delay = "50ms" }
bs_queue = { kind = "droptail", limit = "500p" }
ues = 2
[topology.radio]
delay = "25ms"
down = { model = "cellular", min = "3.1Mbps", max = "9.3Mbps", interval = "10ms", dwell = "2s" }
up = { model = "cellular", min = "1.8Mbps", max = "5.4Mbps", interval = "10ms", dwell = "2s" }
[[flows]]
cc = "newreno"
rwnd = "abrwda"
[[flows]]
cc = "cubic"
rwnd = "drwa"
"""
    c["graph-parking-lot"] = """
name = "graph-parking-lot"
duration = "5s"
[topology]
kind = "parking_lot"
k = 3
bottleneck = { rate = "10Mbps", delay = "5ms" }
bottleneck_queue = { kind = "droptail", limit = "100KB" }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
cc = "cubic"
pattern = "parking_lot"
"""
    c["graph-fat-tree"] = """
name = "graph-fat-tree"
duration = "20ms"
[topology]
kind = "fat_tree"
k = 4
link = { rate = "10Gbps", delay = "1us" }
queue = { kind = "droptail", limit = "200p" }
[[flows]]
cc = "cubic"
pattern = "permutation"
size = "1MB"
"""
    scen = ROOT / "scenarios"
    for f in ["demo", "wang2016-I", "random-loss", "file-transfers"]:
        text = (scen / f"{f}.toml").read_text()
        c[f"file-{f}"] = shorten(text, "10s")
    return c


def shorten(text: str, duration: str) -> str:
    out = []
    for line in text.splitlines():
        if line.startswith("duration ="):
            line = f'duration = "{duration}"'
        elif line.startswith("warmup ="):
            line = 'warmup = "1s"'
        out.append(line)
    return "\n".join(out) + "\n"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def run_case(binary: Path, name: str, text: str) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.toml"
        path.write_text(text)
        series = Path(tmp) / "series"
        proc = subprocess.run([str(binary), str(path), str(series)], capture_output=True, text=True)
        if proc.returncode != 0:
            return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"}
        summary = json.loads(proc.stdout)
        for key in WALL_FIELDS:
            summary.get("engine", {}).pop(key, None)
        result = {"summary": digest(json.dumps(summary, sort_keys=True).encode())}
        for csv in sorted(series.glob("*.csv")):
            result[csv.stem] = digest(csv.read_bytes())
        result["events"] = str(summary.get("engine", {}).get("events"))
        return result


def build() -> Path:
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "bloatlab-sim", "--example", "run"],
                   cwd=ROOT, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "release" / "examples" / "run"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite the manifest")
    ap.add_argument("--only", default="", help="only cases whose name starts with this")
    ap.add_argument("--binary", type=Path, help="the example binary (default: build it)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    binary = args.binary or build()
    all_cases = {k: v for k, v in cases().items() if k.startswith(args.only)}
    if not all_cases:
        print(f"--only: no case starts with {args.only!r}", file=sys.stderr)
        return 2
    with ThreadPoolExecutor(args.jobs) as pool:
        results = dict(zip(all_cases, pool.map(lambda kv: run_case(binary, *kv), all_cases.items())))
    if args.write:
        MANIFEST.parent.mkdir(parents=True, exist_ok=True)
        old = json.loads(MANIFEST.read_text()) if MANIFEST.exists() and args.only else {}
        old.update(results)
        tmp = MANIFEST.with_suffix(".tmp")
        tmp.write_text(json.dumps(dict(sorted(old.items())), indent=1) + "\n")
        tmp.replace(MANIFEST)
        print(f"wrote {len(results)} cases to {MANIFEST.relative_to(ROOT)}")
        return 0
    want = json.loads(MANIFEST.read_text())
    bad = 0
    for name, got in results.items():
        exp = want.get(name)
        if exp != got:
            bad += 1
            diff = sorted(k for k in set(got) | set(exp or {}) if (exp or {}).get(k) != got.get(k))
            print(f"DIFFERS {name}: {', '.join(diff)}")
    print(f"golden: {len(results) - bad} identical, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
