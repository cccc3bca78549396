"""``bloatlab reproduce --engine sim|emulate|both`` (issue 16): the refusals (exit 2, one
line, nothing created) and, with root, the EWT plan in both engines side by side in its
smallest configuration (8 emulated runs of a few seconds each)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import assert_invalid, cli

ROOT_OK = hasattr(os, "geteuid") and os.geteuid() == 0 and os.path.exists("/dev/net/tun") and shutil.which("ip")


def _patched(tmp_path: Path, patch: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI with a patch applied first (as an unprivileged user would see it, a kernel
    without a congestion control ...)."""
    code = (f"import sys; {patch}; sys.argv = ['bloatlab', *sys.argv[1:]]; "
            "from bloatlab.cli import main; main()")
    return subprocess.run([sys.executable, "-c", code, *args], check=False, capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)


def test_unknown_engine_is_refused(tmp_path):
    out = tmp_path / "out"
    assert_invalid(cli("reproduce", "ewt", "--engine", "qemu", "--out", str(out)), "--engine", "sim, emulate, both")
    assert not out.exists()


@pytest.mark.parametrize("engine", ["emulate", "both"])
def test_emulation_without_root_exits_2_and_creates_nothing(tmp_path, engine):
    out = tmp_path / "out"
    r = _patched(tmp_path, "import os; os.geteuid = lambda: 1000", "reproduce", "ewt", "--engine", engine,
                 "--out", str(out))
    assert_invalid(r, "--engine", "needs root", "allowed without root: sim")
    assert not out.exists()


@pytest.mark.skipif(not ROOT_OK, reason="needs root, /dev/net/tun and iproute2")
def test_dccp_bbr_cannot_run_on_linux(tmp_path):
    out = tmp_path / "out"
    line = assert_invalid(cli("reproduce", "dccp-bbr", "--engine", "emulate", "--out", str(out)), "EXPERIMENT",
                          "DCCP", "removed",
                          "allowed with --engine emulate: cubic-plus, cellular-bufferbloat, ewt, abrwda")
    assert line.startswith("error: EXPERIMENT: dccp-bbr cannot run on Linux")
    assert not out.exists()


@pytest.mark.skipif(not ROOT_OK, reason="needs root, /dev/net/tun and iproute2")
def test_a_kernel_without_the_congestion_control_is_refused(tmp_path):
    out = tmp_path / "out"
    r = _patched(tmp_path, "from bloatlab.emulate import netns; netns.ensure_cc = lambda name: name != 'cubic'",
                 "reproduce", "all", "--quick", "--engine", "both", "--out", str(out))
    assert_invalid(r, "--engine", 'no "cubic" congestion control', "ewt needs", "available:")
    assert not out.exists()


def test_every_experiment_has_a_plan_or_says_why_not():
    from bloatlab import experiments

    for name in experiments.MODULES:
        e = experiments.get(name)
        assert (e.emulation is None) != (not e.emulation_refused), name
        if e.emulation is not None:
            assert e.emulation_ccs, name


@pytest.mark.skipif(not ROOT_OK, reason="needs root, /dev/net/tun and iproute2")
def test_ewt_both_engines_side_by_side(tmp_path):
    from bloatlab import experiments
    from bloatlab.emulate import netns

    out = tmp_path / "ewt"
    claims = experiments.reproduce("ewt", out, smoke=True, engine="both", progress=False)
    # The simulated reproduction is written as with --engine sim ...
    assert json.loads((out / "claims.json").read_text()) == [c.to_json() for c in claims]
    # ... the plan in each engine beside it, and the comparison.
    for d in ("emulate", "emulate-sim"):
        assert (out / d / "report.md").exists() and (out / d / "tables" / "receive-window.csv").exists()
    assert "engine: **emulation**" in (out / "emulate" / "report.md").read_text()
    cmp = json.loads((out / "engines.json").read_text())[0]
    ids = [c["id"] for c in cmp["claims"]]
    assert ids == ["ewt-no-loss", "ewt-best-goodput-latency", "droptail-least-fair", "ewt-keeps-efficiency",
                   "ewt-cut-needs-matched-window"]
    for c in cmp["claims"]:
        assert isinstance(c["sim"], bool) and isinstance(c["emulate"], bool)
        assert c["same_verdict"] == (c["sim"] == c["emulate"])
    assert {c["id"]: c["sim_paper_configs"] for c in cmp["claims"]}["ewt-cut-needs-matched-window"] is None
    assert [c["id"] for c in cmp["not_emulated"]] == ["ewt-serves-most"]
    assert [s["what"] for s in cmp["skipped"]] == ["the RFC 7928 searches (Table 2, Fig. 16-17; claim ewt-serves-most)"]
    # Every table row in both engines; scenario 1's goodput within 20 % (same configurations,
    # 4 short transfers; real runs on a shared machine); scenario 2 has the UDP flow's
    # efficiency and Table 6.
    tables = {t["name"]: t for t in cmp["tables"]}
    assert set(tables) == {"scenario1-metrics", "scenario2-metrics", "table6-loss", "receive-window"}
    rows = [r for r in tables["scenario1-metrics"]["rows"] if r["metric"] == "goodput"]
    assert len(rows) == 6 and all(0.8 < r["ratio"] < 1.25 for r in rows), rows
    udp = [r for r in tables["scenario2-metrics"]["rows"] if r["metric"] == "UDP efficiency"]
    assert len(udp) == 6 and all(r["emulate"]["mean"] > 90 for r in udp)
    assert "| ewt-no-loss |" in (out / "engines.md").read_text()
    # Emulated runs are cached: a second reproduction runs none again.
    import time

    t = time.monotonic()
    again = experiments.reproduce("ewt", tmp_path / "again", smoke=True, engine="emulate", progress=False,
                                  cache=out / "cache")
    assert [c.id for c in again] == ids and time.monotonic() - t < 60
    assert (tmp_path / "again" / "report.md").exists() and not (tmp_path / "again" / "engines.md").exists()
    assert not [n for n in netns.list_netns() if n.startswith(f"blemu-{os.getpid()}-")]


@pytest.mark.skipif(not ROOT_OK, reason="needs root, /dev/net/tun and iproute2")
def test_cubic_plus_plan_runs_the_linux_baseline_and_lists_the_rest(tmp_path):
    # Cubic+ is not in Linux: the plan runs the paper's CUBIC / SACK baseline on scenario I
    # (10 emulated runs of 4-5 s) and lists Cubic+, Vegas, Reno without SACK and scenario II.
    from bloatlab import experiments

    out = tmp_path / "cp"
    claims = experiments.reproduce("cubic-plus", out, smoke=True, engine="emulate", progress=False)
    assert [c.id for c in claims] == ["cubic-fills-the-buffer", "cubic-jain-homogeneous", "sack-loses-beside-cubic"]
    for t in ("table2-single-flow", "table3-4-two-flows", "fig7-8-foreground", "table5-heterogeneous-rtt"):
        assert (out / "tables" / f"{t}.csv").exists(), t
    report = (out / "report.md").read_text()
    for skipped in ("every Cubic+ configuration", "Vegas", "TCP Reno without SACK", "scenario II"):
        assert skipped in report, skipped
    assert "Not emulated" in report or "not emulated" in report


@pytest.mark.skipif(not ROOT_OK, reason="needs root, /dev/net/tun and iproute2")
def test_cellular_plan_runs_web_responses_on_the_one_ue_topology(tmp_path):
    # 3.5G: run A and runs B-D with one short-flow CC, and 4G runs B-D (the smallest
    # configuration: 12 emulated runs of 8-14 s); a CC the kernel lacks (Westwood+ without
    # tcp_westwood) is listed as skipped.
    from bloatlab import experiments
    from bloatlab.emulate import netns

    out = tmp_path / "cell"
    claims = experiments.reproduce("cellular-bufferbloat", out, smoke=True, engine="emulate", progress=False)
    ids = [c.id for c in claims]
    assert ids[:2] == ["one-background-flow-several-fold-3.5g", "short-flow-cc-of-limited-importance-3.5g"]
    assert ids[-2:] == ["4g-background-impact-minor", "4g-background-cc-not-significant"]
    for tech in ("3.5g", "4g"):
        table = (out / "tables" / f"response-{tech}.csv").read_text()
        assert "none" in table and "1 × CUBIC" in table and "5 × CUBIC" in table
        # Every response finished: the loaded ones too.
        assert "0 response(s) did not finish" in (out / "tables" / f"response-{tech}.md").read_text()
    report = (out / "report.md").read_text()
    assert "3G (Fig. 8, 9)" in report
    assert ("every run with Westwood+" in report) == (not netns.ensure_cc("westwood"))


@pytest.mark.skipif(not ROOT_OK, reason="needs root, /dev/net/tun and iproute2")
def test_abrwda_plan_runs_drwa_at_a_real_receiver(tmp_path):
    # ABRWDA cannot run (it reads the radio channel); its DRWA baseline can: TCP_WINDOW_CLAMP
    # from the receiver's own measurements, 2 emulated runs of 6 s, and one short flow of each
    # size beside the long flow (6 runs of 9 s).
    from bloatlab import experiments

    out = tmp_path / "ab"
    claims = experiments.reproduce("abrwda", out, smoke=True, engine="emulate", progress=False)
    assert [c.id for c in claims] == ["drwa-cuts-queue-and-rtt", "drwa-loses-effect-at-200"]
    assert "Fig. 9: DRWA's AFCT reduction" in (out / "tables" / "fig9-drwa-improvement.md").read_text()
    assert claims[0].holds, claims[0].ours  # a 500-packet buffer: DRWA's cut is large in both engines
    report = (out / "report.md").read_text()
    assert "ABRWDA (every figure and claim of the paper)" in report and "Vegas" in report


def test_a_claim_whose_engines_differ_shows_the_checked_cause_or_says_it_is_unchecked():
    from types import SimpleNamespace

    from bloatlab.experiments import engines, get
    from bloatlab.experiments.framework import Claim

    def claim(cid: str, holds: bool) -> Claim:
        return Claim("cubic-plus", cid, "t", "p", "ours", holds, "")

    def ctx(*claims: Claim) -> SimpleNamespace:
        return SimpleNamespace(claims=list(claims), keys={}, items=[], skipped=[])

    exp = get("cubic-plus")
    assert exp.engine_notes, "the cubic-plus plan explains the disagreements it found"
    noted = next(iter(exp.engine_notes))
    sim = ctx(claim(noted, True), claim("other", True), claim("same", True))
    emu = ctx(claim(noted, False), claim("other", False), claim("same", True))
    cmp = engines.compare(exp, [], sim, emu)
    why = {c["id"]: c["why_they_differ"] for c in cmp["claims"]}
    assert why == {noted: exp.engine_notes[noted], "other": engines.NOT_EXPLAINED, "same": None}
    md = engines.compare_markdown(cmp, "T")
    assert f"*Why the engines differ:* {exp.engine_notes[noted]}" in md
    assert f"*Why the engines differ:* {engines.NOT_EXPLAINED}" in md
