#!/usr/bin/env python3
"""Tables of numbers in README.md and docs/*.md that the build regenerates, so they cannot go
stale.

A generated table sits between two markers in a Markdown file:

    <!-- doctable: NAME -->
    | ... the table, written by this script ... |
    <!-- /doctable -->

NAME maps to a function below that runs a `bloatlab` command (`python -m bloatlab` of the
interpreter running this script, i.e. the installed build) and renders its output as Markdown.
The simulator is deterministic, so a table is the same bytes for the same build; no table holds
a wall-clock number (those are measurements, marked as such in the docs and never checked).

    python3 scripts/doctables.py --write          # regenerate every quick table in place
    python3 scripts/doctables.py --check          # exit 1 naming each quick table that differs
    python3 scripts/doctables.py --check --slow   # the slow ones too (minutes)
    python3 scripts/doctables.py --list           # every table: its file, class and command,
                                                  # and the measurements marked in the docs
    python3 scripts/doctables.py --write fixes    # only the named tables

Classes: `quick` tables take seconds and are checked by tests/python/test_docs_tables.py;
`slow` ones (minutes) only with --slow. Exit status: 0 up to date (or written), 1 a table
differs (each is named, with a diff), 2 bad usage (an unknown or missing table, a marker
without its end).
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"(<!-- doctable: (?P<name>[a-z0-9-]+) -->\n)(?P<body>.*?)(<!-- /doctable -->)",
                   re.S)
OPEN = re.compile(r"<!-- doctable: (?P<name>[a-z0-9-]+) -->")


def bloatlab(*args: str, cwd: Path | None = None) -> str:
    """Runs the installed build's command line; its stdout."""
    done = subprocess.run([sys.executable, "-m", "bloatlab", *args], capture_output=True,
                          text=True, check=False, cwd=cwd or ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"bloatlab {' '.join(args)} exited {done.returncode}: "
                           f"{done.stderr.strip()}")
    return done.stdout


def table(header: list[str], rows: list[list[str]], align: list[str] | None = None) -> str:
    align = align or ["---"] * len(header)
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


# --- latency under load: `bloatlab rrul` ----------------------------------------------------------

RRUL_QUEUES = [
    ([], None),
    (["--set", "topology.bottleneck_queue.kind=codel",
      "--set", "topology.reverse_queue.kind=codel"], "CoDel"),
    (["--set", "topology.bottleneck_queue.kind=fq_codel",
      "--set", "topology.reverse_queue.kind=fq_codel"], "FQ-CoDel"),
]


def _queue_label(topology: dict[str, Any]) -> str:
    down, up = topology["bottleneck_queue"], topology["reverse_queue"]
    if down["kind"] == "droptail" and up["kind"] == "droptail":
        return f"drop-tail {down['limit'][:-1]} p down / {up['limit'][:-1]} p up"
    return down["kind"]


def rrul_home() -> str:
    """`bloatlab rrul` on the built-in home link, per queue discipline (both directions)."""
    rows = []
    for args, label in RRUL_QUEUES:
        with tempfile.TemporaryDirectory() as tmp:
            bloatlab("rrul", *args, "--out", tmp)
            o = json.loads((Path(tmp) / "summary.json").read_text())["outcome"]
            scen = json.loads((Path(tmp) / "loaded" / "scenario.json").read_text())
        rows.append([label or _queue_label(scen["topology"]),
                     f"{o['download_mbps']:.2f} Mbit/s", f"{o['upload_mbps']:.2f} Mbit/s",
                     f"{o['idle_rtt_ms']:.1f} → {o['loaded_rtt_ms']:.1f} ms",
                     f"{o['added_latency_ms']:.1f} ms", o["grade"],
                     f"{o['probe_loss_pct']:.1f} %"])
    return table(["queues (both directions)", "download", "upload", "probe RTT idle → loaded",
                  "added", "grade", "probe loss"], rows)


# --- every fix, one workload: `bloatlab fixes` ----------------------------------------------------

FIX_BASES = [("wang2016-I", "Wang I"), ("talau-1", "Talau 1"), ("cellular-3.5g", "3.5G"), ("wifi-home", "Wi-Fi home"),
             ("leo", "LEO")]


def _fixes(*args: str) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        bloatlab("fixes", *args, "--out", tmp)
        return json.loads((Path(tmp) / "results.json").read_text())


def _ms(x: float) -> str:
    return f"{x:.1f}" if x < 10 else f"{x:.0f}"


def _grade(o: dict[str, Any]) -> str:
    """The grade, and the latency-only grade when probe loss capped it."""
    lat = o.get("latency_grade") or o["grade"]
    return o["grade"] if lat == o["grade"] else f"{o['grade']}, {lat} by latency"


def _per_fix(cell) -> str:
    """One row per fix (in `bloatlab fixes` order), one column per base, ``cell(result)`` in each."""
    cells: dict[tuple[str, str], str] = {}
    order: list[str] = []
    for r in _fixes():
        if r["fix"] not in order:
            order.append(r["fix"])
        cells[(r["fix"], r["base"])] = cell(r)
    rows = [[fix] + [cells.get((fix, base), "–") for base, _ in FIX_BASES] for fix in order]
    return table(["fix"] + [label for _, label in FIX_BASES], rows,
                 ["---"] + ["---:"] * len(FIX_BASES))


def fixes() -> str:
    """`bloatlab fixes` (defaults: 30 s, 4 CUBIC flows each way, seed 1), one cell per base."""
    def cell(r) -> str:
        o = r["outcome"]
        return ("–" if o is None else
                f"{o['download_mbps']:.2f} / {o['upload_mbps']:.2f}, "
                f"{_ms(o['added_latency_ms'])} ms, {o['probe_loss_pct']:.1f} % lost ({_grade(o)})")
    return _per_fix(cell)


def fixes_felt() -> str:
    """`bloatlab fixes` (defaults), what a person feels: video frame delay p95 (frames lost),
    page load time, RPM, and the mean of the fix's ranks, one cell per base."""
    def cell(r) -> str:
        f = r.get("felt")
        if f is None:
            return "–"
        video = "–" if f["frame_p95_ms"] is None else f"{f['frame_p95_ms']:.0f} ms ({f['frame_loss_pct']:.1f} %)"
        page = "–" if f["plt_mean_s"] is None else f"{f['plt_mean_s']:.2f} s"
        rpm = "–" if f["rpm"] is None else f"{f['rpm']:.0f} {f['rpm_class']}"
        return f"{video}, {page}, {rpm}"
    return _per_fix(cell)


def fixes_35g_seeds() -> str:
    """FQ-CoDel against CAKE on the 3.5G base over three seeds: the hash collision."""
    rows = []
    for seed in (1, 2, 3):
        res = {r["fix"]: r["outcome"] for r in
               _fixes("--base", "cellular-3.5g", "--fix", "FQ-CoDel", "--fix", "CAKE",
                      "--seed", str(seed))}
        row = [str(seed)]
        for fix in ("FQ-CoDel", "CAKE"):
            o = res[fix]
            row.append(f"{o['added_latency_ms']:.1f} ms, {o['probe_loss_pct']:.1f} %")
        rows.append(row)
    return table(["seed", "FQ-CoDel: added, probe loss", "CAKE: added, probe loss"], rows,
                 ["---", "---:", "---:"])


# --- web responses on the 3.5G profile: `bloatlab run` per background flow ---------------------

WEB_35G = """duration = "60s"
warmup = "10s"
seed = 1
[topology]
kind = "cellular"
profile = "3.5g"
[[flows]]
cc = "cubic"
app = "web"
size = "320KB"
think = "1s"
start = "5s"
"""
WEB_BACKGROUND = ["", "cubic", "newreno", "westwood+"]


def web_35g() -> str:
    """crates/sim/tests/web.rs's path: 320 kB web responses on 3.5G, alone or beside one flow."""
    with tempfile.TemporaryDirectory() as tmp:

        def response(background: str) -> dict[str, Any]:
            path = Path(tmp) / f"web-{background or 'alone'}.toml"
            extra = f'[[flows]]\ncc = "{background}"\n' if background else ""
            path.write_text(WEB_35G + extra)
            return json.loads(bloatlab("run", str(path), "--json"))["flows"][0]["responses"]

        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(response, WEB_BACKGROUND))
    alone = results[0]["mean_s"]
    rows = [[f"one {bg} flow" if bg else "none", f"{r['mean_s']:.2f} s",
             f"×{r['mean_s'] / alone:.1f}", str(r["n"])]
            for bg, r in zip(WEB_BACKGROUND, results)]
    return table(["background", "mean response time", "against alone", "responses"], rows,
                 ["---", "---:", "---:", "---:"])


# --- AQM against a deep buffer: `bloatlab run` per discipline -------------------------------------

AQM_PATH = """duration = "60s"
warmup = "10s"
seed = 1
[topology]
bottleneck = { rate = "10Mbps", delay = "20ms" }
bottleneck_queue = { kind = "droptail", limit = "1000p" }
access = { rate = "100Mbps", delay = "2.5ms" }
[[flows]]
cc = "cubic"
count = 4
"""
AQM_QUEUES = [("droptail", "drop-tail", False), ("codel", "CoDel", False),
              ("pie", "PIE", False), ("red", "RED", False), ("codel", "CoDel", True),
              ("pie", "PIE", True), ("red", "RED", True)]


def aqm_delay() -> str:
    """crates/sim/tests/aqm_delay.rs's path: 4 CUBIC flows, 10 Mbit/s, 1000-packet buffer."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "aqm.toml"
        path.write_text(AQM_PATH)

        def bottleneck(job: tuple[str, str, bool]) -> dict[str, Any]:
            kind, _, ecn = job
            ecn_args = ["--set", "topology.bottleneck_queue.ecn=true",
                        "--set", "tcp.ecn=true"] if ecn else []
            out = bloatlab("run", str(path), "--json", "--set",
                           f"topology.bottleneck_queue.kind={kind}", *ecn_args)
            return json.loads(out)["bottleneck"]

        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(bottleneck, AQM_QUEUES))
    rows = [[label, "on" if ecn else "off", f"{b['mean_sojourn_ms']:.1f}",
             f"{b['mean_bytes'] / 1000:.1f}", f"{b['utilization_pct']:.2f}", str(b["drops"])]
            for (_, label, ecn), b in zip(AQM_QUEUES, results)]
    return table(["queue", "ECN", "mean sojourn ms", "mean backlog kB", "utilisation %",
                  "drops"], rows, ["---", "---", "---:", "---:", "---:", "---:"])


# --- DCCP under random loss: `bloatlab run` over a grid -------------------------------------------

DCCP_PATH = """duration = "15s"
seed = 1
[topology]
bottleneck = { rate = "100Mbps", delay = "48ms" }
bottleneck_queue = { kind = "droptail", limit = "4000p" }
access = { rate = "1Gbps", delay = "1ms" }
[[flows]]
transport = "dccp"
cc = "ccid2"
"""
DCCP_LOSS = ["0", "0.01", "0.05", "0.1", "0.15", "0.2", "0.25", "0.3", "0.35", "0.4"]
DCCP_CC = ["ccid2", "bbr", "bbr-adaptive"]


def dccp_loss() -> str:
    """Goodput of one DCCP flow against random loss (crates/sim/tests/dccp_loss.rs's path)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "dccp.toml"
        path.write_text(DCCP_PATH)

        def goodput(job: tuple[str, str]) -> float:
            cc, loss = job
            out = bloatlab("run", str(path), "--json", "--set", f"flows[0].cc={cc}",
                           "--set", f"topology.bottleneck.loss={loss}")
            return json.loads(out)["flows"][0]["goodput_mbps"]

        jobs = [(cc, loss) for cc in DCCP_CC for loss in DCCP_LOSS]
        with ThreadPoolExecutor(2) as pool:
            g = dict(zip(jobs, pool.map(goodput, jobs)))
    def fmt(x: float) -> str:
        return f"{x:.1f}" if x >= 1 else f"{x:.2g}"

    rows = [[cc] + [fmt(g[(cc, loss)]) for loss in DCCP_LOSS] for cc in DCCP_CC]
    return table(["loss"] + DCCP_LOSS, rows)


# --- the papers' claims: `bloatlab reproduce all --quick` -----------------------------------------

def reproduce_quick_claims() -> str:
    """How many of each paper's claims hold in `reproduce all --quick` (minutes of CPU)."""
    with tempfile.TemporaryDirectory() as tmp:
        bloatlab("reproduce", "all", "--quick", "--out", tmp)
        claims = json.loads((Path(tmp) / "claims.json").read_text())
    counts: dict[str, list[int]] = {}
    for c in claims:
        n = counts.setdefault(c["experiment"], [0, 0])
        n[0] += 1
        n[1] += bool(c["holds"])
    rows = [[f"`{e}`", str(n), str(h)] for e, (n, h) in counts.items()]
    rows.append(["all", str(sum(n for n, _ in counts.values())),
                 str(sum(h for _, h in counts.values()))])
    return table(["experiment", "claims", "hold with `--quick`"], rows, ["---", "---:", "---:"])


# --- the simulator against the shipped Linux side: `bloatlab validate --linux-from` ---------------

def fidelity_matrix() -> str:
    """docs/fidelity-matrix.md's verdict line and table: the current simulator (126 cells × 30 s
    simulated, seconds of CPU) against the Linux side shipped in docs/fidelity-linux.json."""
    with tempfile.TemporaryDirectory() as tmp:
        bloatlab("validate", "--linux-from", str(ROOT / "docs" / "fidelity-linux.json"),
                 "--out", tmp)
        report = (Path(tmp) / "report.md").read_text()
    # The report's title and its line naming the file it read (a path) are the doc's own.
    paragraphs = [p.strip("\n") for p in report.split("\n\n")[1:]]
    paragraphs = ["\n".join(ln for ln in p.splitlines() if not ln.startswith("The Linux side of"))
                  for p in paragraphs]
    return "\n\n".join(p for p in paragraphs if p) + "\n"


@dataclass(frozen=True)
class Table:
    kind: str  # "quick" (checked by the tests) or "slow" (only with --slow)
    render: Callable[[], str]
    command: str


TABLES: dict[str, Table] = {
    "rrul-home": Table("quick", rrul_home, "bloatlab rrul [--set …queue.kind=codel|fq_codel]"),
    "fixes": Table("quick", fixes, "bloatlab fixes"),
    "fixes-felt": Table("quick", fixes_felt, "bloatlab fixes (results.json: felt)"),
    "fixes-35g-seeds": Table("quick", fixes_35g_seeds,
                             "bloatlab fixes --base cellular-3.5g --fix FQ-CoDel --fix CAKE "
                             "--seed 1|2|3"),
    "web-35g": Table("quick", web_35g, "bloatlab run (a web flow on 3.5G, a background "
                     "flow)"),
    "aqm-delay": Table("quick", aqm_delay, "bloatlab run (4 CUBIC flows, 1000-packet buffer) "
                       "--set topology.bottleneck_queue.kind=…[, ecn=true]"),
    "dccp-loss": Table("quick", dccp_loss, "bloatlab run (a DCCP flow) --set "
                       "flows[0].cc=ccid2|bbr|bbr-adaptive --set topology.bottleneck.loss=P"),
    "reproduce-quick-claims": Table("slow", reproduce_quick_claims,
                                    "bloatlab reproduce all --quick"),
    "fidelity-matrix": Table("quick", fidelity_matrix,
                             "bloatlab validate --linux-from docs/fidelity-linux.json"),
}


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks() -> dict[str, tuple[Path, str]]:
    """Every marked table: name -> (file, its current text). Exits 2 on a broken marker."""
    found: dict[str, tuple[Path, str]] = {}
    for path in documents():
        text = path.read_text()
        matched = list(BLOCK.finditer(text))
        if len(matched) != len(OPEN.findall(text)):
            sys.exit(f"error: {path.relative_to(ROOT)}: a doctable marker without its end")
        for m in matched:
            name = m["name"]
            if name in found:
                sys.exit(f"error: table {name} is marked twice")
            if name not in TABLES:
                sys.exit(f"error: {path.relative_to(ROOT)}: no generator for table {name}")
            found[name] = (path, m["body"])
    return found


def replace(path: Path, name: str, body: str) -> None:
    text = path.read_text()
    new = BLOCK.sub(lambda m: m.group(1) + body + m.group(4) if m["name"] == name
                    else m.group(0), text)
    path.write_text(new)


def diff(name: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                        f"{name} (in the docs)", f"{name} (the build)"))


def check(name: str) -> str | None:
    """None if table NAME is up to date, else a unified diff (docs -> build)."""
    path, old = blocks()[name]
    new = TABLES[name].render()
    return None if new == old else diff(name, old, new)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate the tables in place")
    mode.add_argument("--check", action="store_true", help="exit 1 if a table differs")
    mode.add_argument("--list", action="store_true", help="every table, its file and class")
    ap.add_argument("--slow", action="store_true", help="the slow tables too")
    ap.add_argument("names", nargs="*", help="only these tables")
    a = ap.parse_args(argv)
    found = blocks()
    for name in TABLES:
        if name not in found:
            print(f"error: table {name} has no marker in README.md or docs/*.md",
                  file=sys.stderr)
            return 2
    if a.list:
        for name, t in TABLES.items():
            print(f"{name:22} {t.kind:6} {found[name][0].relative_to(ROOT)}  ({t.command})")
        # Measurements (root, hours, wall clock) are marked in prose instead; list them too.
        for path in documents():
            for i, line in enumerate(path.read_text().splitlines(), 1):
                if "not regenerated by CI" in line:
                    print(f"{'(measured)':29} {path.relative_to(ROOT)}:{i}")
        return 0
    for name in a.names:
        if name not in TABLES:
            print(f"error: unknown table {name}", file=sys.stderr)
            return 2
    names = a.names or [n for n, t in TABLES.items() if t.kind == "quick" or a.slow]
    stale = []
    for name in names:
        path, old = found[name]
        new = TABLES[name].render()
        if new == old:
            print(f"{name}: up to date")
        elif a.write:
            replace(path, name, new)
            print(f"{name}: written to {path.relative_to(ROOT)}")
        else:
            stale.append(name)
            print(f"{name}: differs from the build ({path.relative_to(ROOT)})")
            print(diff(name, old, new))
    if stale:
        print("stale: " + ", ".join(stale) + " (python3 scripts/doctables.py --write "
              + " ".join(stale) + ")", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
