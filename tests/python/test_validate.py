"""`bloatlab validate`: the matrix, the error arithmetic, the reports from a synthetic result
set, bad input (exit 2, nothing created), and one real cell end to end (root only)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from bloatlab.cli import main
from bloatlab.validate import cli as vcli
from bloatlab.validate import matrix, metrics, report, run

ROOT_OK = hasattr(os, "geteuid") and os.geteuid() == 0 and os.path.exists("/dev/net/tun") and shutil.which("ip")


def invoke(*args: str):
    return CliRunner().invoke(main, ["validate", *args], catch_exceptions=False)


# --- the matrix ---------------------------------------------------------------------------

def test_full_matrix_is_108_droptail_cells_plus_18_gateway_cells():
    cells = matrix.full_matrix()
    assert len(cells) == 126
    assert len({c.id for c in cells}) == 126
    droptail = [c for c in cells if c.gateway == "droptail"]
    assert len(droptail) == 3 * 3 * 3 * 2 * 2 == 108
    assert {(c.cc, c.buffer_bdp, c.rtt_ms, c.loss_pct, c.flows) for c in droptail} == {
        (cc, b, r, loss, n) for cc in ("reno", "cubic", "bbr") for b in (0.5, 2.0, 8.0)
        for r in (10, 40, 150) for loss in (0.0, 1.0) for n in (1, 4)}
    assert sorted({c.gateway for c in cells}) == ["codel", "droptail", "ewt", "pie"]


def test_quick_matrix_is_a_subset_of_the_full_one():
    full = set(matrix.full_matrix())
    quick = matrix.quick_matrix()
    assert len(quick) == 8 and set(quick) <= full


def test_scenario_of_a_cell():
    c = matrix.Cell("bbr", 0.5, 150, 1.0, 4, "codel")
    doc = matrix.scenario(c, 30.0, 7)
    assert c.buffer_bytes == 93750  # 0.5 × 10 Mbit/s × 150 ms / 8
    assert doc["topology"]["bottleneck"] == {"rate": "10Mbps", "delay": "75000us", "loss": 0.01}
    assert doc["topology"]["bottleneck_queue"] == {"kind": "codel", "limit": "93750B"}
    assert "gateway" not in doc["topology"]
    assert doc["flows"] == [{"cc": "bbr", "count": 4}]
    assert (doc["duration"], doc["warmup"], doc["seed"]) == ("30000000us", "5000000us", 7)
    ewt = matrix.scenario(matrix.Cell("cubic", 2.0, 40, 0.0, 1, "ewt"), 8.0, 1)
    assert ewt["topology"]["gateway"] == {"kind": "ewt"}
    assert ewt["topology"]["bottleneck_queue"]["kind"] == "droptail"
    assert "loss" not in ewt["topology"]["bottleneck"]
    assert ewt["warmup"] == "2000000us"  # a quarter of a short run


def test_every_cell_is_a_valid_emulation_scenario():
    from bloatlab.emulate.runner import plan

    for c in matrix.full_matrix():
        plan(matrix.scenario(c, 30.0, 1))


def test_filter_selects_and_names_allowed_values():
    chosen = matrix.parse_filter(["cc=cubic,bbr", "flows=4", "buffer_bdp=0.5"])
    cells = matrix.select(matrix.full_matrix(), chosen)
    assert len(cells) == 2 * 3 * 2  # rtt × loss
    assert all(c.cc in ("cubic", "bbr") and c.flows == 4 and c.buffer_bdp == 0.5 for c in cells)
    with pytest.raises(ValueError, match=r"allowed: reno, cubic, bbr"):
        matrix.parse_filter(["cc=vegas"])
    with pytest.raises(ValueError, match=r"KEY one of cc, buffer_bdp"):
        matrix.parse_filter(["colour=red"])
    with pytest.raises(ValueError, match=r"allowed: 10, 40, 150"):
        matrix.parse_filter(["rtt_ms=20"])


# --- the arithmetic -----------------------------------------------------------------------

def test_relative_error_with_floor():
    assert metrics.rel_error(10.5, 10.0, 0.1) == pytest.approx(0.05)
    assert metrics.rel_error(9.0, 10.0, 0.1) == pytest.approx(-0.1)
    # Retransmissions at 0 % loss: 3 vs 0 is 3 / 20, not infinite.
    assert metrics.rel_error(3.0, 0.0, 20.0) == pytest.approx(0.15)
    assert metrics.rel_error(30.0, 10.0, 20.0) == pytest.approx(1.0)
    assert metrics.rel_error(None, 1.0, 1.0) is None


def test_verdict_and_score():
    e = {"goodput_mbps": 0.04, "queue_delay_mean_ms": -0.3, "queue_delay_p95_ms": 5.0,
         "retransmits": 0.2, "jain": 0.0, "drops": 3.0}
    assert metrics.outside(e) == ["queue_delay_mean_ms"]  # p95, Jain and drops are reported, not judged
    assert metrics.score(e) == pytest.approx(2.0)
    ok = dict(e, queue_delay_mean_ms=0.15)
    assert metrics.outside(ok) == []
    assert metrics.outside(dict(ok, retransmits=None)) == ["retransmits"]


def test_extract_sums_flows():
    s = {"flows": [{"goodput_mbps": 4.0, "retransmits": 3}, {"goodput_mbps": 5.0, "retransmits": 4}],
         "bottleneck": {"mean_sojourn_ms": 20.0, "p95_sojourn_ms": 30.0, "drops": 6},
         "fairness": {"jain_goodput": 0.99}}
    assert metrics.extract(s) == {"goodput_mbps": 9.0, "queue_delay_mean_ms": 20.0, "queue_delay_p95_ms": 30.0,
                                  "retransmits": 7.0, "jain": 0.99, "drops": 6}


# --- reports from a synthetic result set ----------------------------------------------------

def _synthetic() -> dict:
    head = run.header(quick=True, duration_s=20.0, seed=1, sim_only=False, filters={})
    result = dict(head, cells=[])
    base = {"goodput_mbps": 9.5, "queue_delay_mean_ms": 60.0, "queue_delay_p95_ms": 78.0, "retransmits": 10.0,
            "jain": 1.0, "drops": 10}
    for cell, factor in zip(matrix.quick_matrix()[:3], (1.01, 2.5, 1.2), strict=True):
        sim = dict(base, queue_delay_mean_ms=60.0 * factor)
        errs = metrics.errors(sim, base)
        out = metrics.outside(errs)
        result["cells"].append({"id": cell.id, "params": cell.params(), "buffer_bytes": cell.buffer_bytes,
                                "sim": sim, "linux": base, "errors": errs, "outside": out,
                                "verdict": "outside" if out else "within"})
    c = matrix.quick_matrix()[3]
    result["cells"].append({"id": c.id, "params": c.params(), "buffer_bytes": c.buffer_bytes, "sim": base,
                            "linux": None, "errors": None, "outside": [], "verdict": "failed",
                            "error": "EmulationError: the sender exited early"})
    return run.finish(result, complete=True)


def test_counts_and_summary_line():
    r = _synthetic()
    assert r["counts"] == {"cells": 3, "goodput_mbps": 3, "queue_delay_mean_ms": 1, "retransmits": 3, "all": 1}
    assert r["summary"].startswith("goodput within 5 % in 3 of 3 cells; queueing delay mean within 15 % in 1 of 3")
    assert r["failed"] == ["cubic-droptail-b2-rtt40-loss0-f4"]


def test_reports_worst_first(tmp_path):
    r = _synthetic()
    names = report.write(r, tmp_path)
    assert names == ["validate.json", "report.md", "heatmap.png", "report.html"]
    data = json.loads((tmp_path / "validate.json").read_text())
    assert [c["id"] for c in data["cells"]] == [c["id"] for c in r["cells"]]  # matrix order
    order = [c["id"] for c in report.worst_first(r["cells"])]
    # failed first, then 2.5× (error +150 %), then 1.2× (+20 %), then 1.01×.
    assert order == ["cubic-droptail-b2-rtt40-loss0-f4", "cubic-droptail-b2-rtt40-loss0-f1",
                     "bbr-droptail-b2-rtt40-loss0-f1", "reno-droptail-b2-rtt40-loss0-f1"]
    md = (tmp_path / "report.md").read_text()
    assert r["summary"] in md
    assert md.index(order[1]) < md.index(order[2]) < md.index(order[3])
    assert "+150.0 %" in md
    page = (tmp_path / "report.html").read_text()
    assert "data:image/png;base64," in page and r["summary"] in page
    assert (tmp_path / "heatmap.png").read_bytes()[:4] == b"\x89PNG"
    # Byte-identical when written again from the same result.
    again = tmp_path / "again"
    report.write(r, again)
    for n in ("validate.json", "report.md", "report.html"):
        assert (again / n).read_bytes() == (tmp_path / n).read_bytes()


# --- the command: bad input ----------------------------------------------------------------

@pytest.mark.parametrize(("args", "message"), [
    (["--filter", "cc=vegas"], "--filter: cc: \"vegas\" is not a value of the matrix (allowed: reno, cubic, bbr)"),
    (["--filter", "nope"], "--filter: \"nope\": expected KEY=VALUE"),
    (["--quick", "--filter", "rtt_ms=150"], "--filter: no cell of the quick matrix matches rtt_ms=150"),
    (["--duration", "1"], "--duration: \"1\" (allowed: seconds from 4 to 3600"),
    (["--duration", "ten"], "--duration: \"ten\""),
])
def test_bad_options_exit_2_and_create_nothing(tmp_path, args, message):
    out = tmp_path / "out"
    r = invoke(*args, "--out", str(out), "--sim-only")
    assert r.exit_code == 2
    assert message in r.output
    assert len(r.output.strip().splitlines()) == 1
    assert not out.exists()


def test_out_that_is_a_file_exits_2(tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    r = invoke("--sim-only", "--out", str(f))
    assert r.exit_code == 2 and "--out:" in r.output and "not a directory" in r.output


def test_without_root_exits_2_before_anything(tmp_path, monkeypatch):
    monkeypatch.setattr(vcli, "_is_root", lambda: False)
    out = tmp_path / "out"
    r = invoke("--quick", "--out", str(out))
    assert r.exit_code == 2
    assert r.output.strip() == ("error: bloatlab validate needs root for the emulation (network namespaces, TUN "
                                "devices): run it as root, or use --sim-only")
    assert not out.exists()


def test_sim_only_runs_without_root(tmp_path, monkeypatch):
    monkeypatch.setattr(vcli, "_is_root", lambda: False)
    out = tmp_path / "out"
    r = invoke("--quick", "--sim-only", "--duration", "5", "--filter", "gateway=codel,pie", "--out", str(out))
    assert r.exit_code == 0, r.output
    data = json.loads((out / "validate.json").read_text())
    assert data["complete"] and data["sim_only"] and data["duration_s"] == 5.0
    assert [c["id"] for c in data["cells"]] == ["cubic-codel-b2-rtt40-loss0-f1", "cubic-pie-b2-rtt40-loss0-f1"]
    assert all(c["verdict"] == "sim-only" and c["errors"] is None and c["sim"]["goodput_mbps"] > 5
               for c in data["cells"])
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "report.md", "validate.json"]
    # The simulator is deterministic: the same command writes the same JSON (no wall clock in sim-only cells).
    out2 = tmp_path / "out2"
    invoke("--quick", "--sim-only", "--duration", "5", "--filter", "gateway=codel,pie", "--out", str(out2))
    a, b = (json.loads((d / "validate.json").read_text()) for d in (out, out2))
    a.pop("wall_clock"), b.pop("wall_clock")
    assert a == b


# --- the Linux side of an earlier run (--linux-from) ----------------------------------------

CODEL_PIE = ("--quick", "--duration", "5", "--filter", "gateway=codel,pie")


def _stored_run(tmp_path, monkeypatch):
    """A validate.json whose Linux side is the simulator's own numbers, but with the CoDel cell's
    goodput 20 % higher: what an earlier emulated run would have left."""
    monkeypatch.setattr(vcli, "_is_root", lambda: False)
    src = tmp_path / "sim"
    assert invoke(*CODEL_PIE, "--sim-only", "--out", str(src)).exit_code == 0
    data = json.loads((src / "validate.json").read_text())
    for c in data["cells"]:
        c["linux"] = dict(c["sim"])
        c["verdict"] = "within"
    data["cells"][0]["linux"]["goodput_mbps"] *= 1.2
    data["sim_only"] = False
    f = tmp_path / "earlier.json"
    f.write_text(json.dumps(data))
    return f, data


def test_linux_from_reuses_stored_results_without_root(tmp_path, monkeypatch):
    f, data = _stored_run(tmp_path, monkeypatch)
    out = tmp_path / "out"
    r = invoke(*CODEL_PIE, "--linux-from", str(f), "--out", str(out))
    assert r.exit_code == 0, r.output
    got = json.loads((out / "validate.json").read_text())
    codel, pie = got["cells"]
    assert codel["linux_from"] == pie["linux_from"] == str(f)
    # sim / (1.2 sim) - 1: the stored Linux numbers are judged, not re-measured.
    assert codel["errors"]["goodput_mbps"] == pytest.approx(1 / 1.2 - 1)
    assert codel["verdict"] == "outside" and "goodput_mbps" in codel["outside"]
    assert pie["verdict"] == "within" and pie["errors"]["goodput_mbps"] == 0.0
    assert "The Linux side of 2 cells is from an earlier run" in (out / "report.md").read_text()


REPO_LINUX = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "fidelity-linux.json")


def test_the_shipped_linux_side_covers_the_whole_matrix():
    """docs/fidelity-linux.json (the latest full emulated run) still matches every cell of the
    full matrix, so `validate --linux-from docs/fidelity-linux.json` judges the simulator
    without root. If the matrix's scenarios change, re-run the full matrix and replace it."""
    data = json.loads(open(REPO_LINUX).read())
    head = run.header(quick=False, duration_s=data["duration_s"], seed=data["seed"], sim_only=False, filters={})
    cells = matrix.full_matrix()
    stored = run.stored_linux(REPO_LINUX, data, head, cells)
    assert sorted(stored) == sorted(c.id for c in cells)


@pytest.mark.parametrize(("name", "rate", "both_ways"), [
    ("fidelity-linux-100.json", 100, False),
    ("fidelity-linux-both.json", 10, True),
])
def test_the_shipped_100_mbps_and_both_ways_linux_sides_cover_their_matrices(name, rate, both_ways):
    """docs/fidelity-linux-100.json and docs/fidelity-linux-both.json (the latest emulated runs,
    with Linux's extra seeds for the cells outside) match every cell of their matrices, so
    `validate --rate 100 [--spread 3] --linux-from docs/fidelity-linux-100.json` and the
    both-ways slice judge the simulator without root."""
    path = os.path.join(os.path.dirname(REPO_LINUX), name)
    data = json.loads(open(path).read())
    head = run.header(quick=False, duration_s=data["duration_s"], seed=data["seed"], sim_only=False, filters={},
                      rate_mbps=rate, both_ways=both_ways)
    cells = matrix.cells_of(quick=False, both_ways=both_ways, rate_mbps=rate)
    assert sorted(run.stored_linux(path, data, head, cells)) == sorted(c.id for c in cells)
    assert all(c["linux_from"] == f"docs/{name}" for c in data["cells"] if "linux_from" in c)


def test_linux_from_the_shipped_file_judges_a_slice_without_root(tmp_path, monkeypatch):
    monkeypatch.setattr(vcli, "_is_root", lambda: False)
    out = tmp_path / "out"
    r = invoke("--duration", "30", "--filter", "cc=reno", "--filter", "rtt_ms=40", "--filter", "buffer_bdp=2",
               "--filter", "loss_pct=0", "--filter", "gateway=droptail", "--linux-from", REPO_LINUX, "--out", str(out))
    assert r.exit_code == 0, r.output
    got = json.loads((out / "validate.json").read_text())
    shipped = {c["id"]: c for c in json.loads(open(REPO_LINUX).read())["cells"]}
    assert [c["id"] for c in got["cells"]] == ["reno-droptail-b2-rtt40-loss0-f1", "reno-droptail-b2-rtt40-loss0-f4"]
    for c in got["cells"]:
        assert c["linux"] == shipped[c["id"]]["linux"]


def test_linux_from_emulates_the_cells_it_lacks(tmp_path, monkeypatch):
    f, data = _stored_run(tmp_path, monkeypatch)
    data["cells"] = data["cells"][:1]
    f.write_text(json.dumps(data))
    out = tmp_path / "out"
    r = invoke(*CODEL_PIE, "--linux-from", str(f), "--out", str(out))
    assert r.exit_code == 2 and "needs root" in r.output
    assert not out.exists()


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.update(duration_s=30.0), "has duration_s = 30.0, this run 5.0"),
    (lambda d: d.update(seed=2), "has seed = 2, this run 1"),
    (lambda d: d.pop("tool"), "is not a validate.json written by bloatlab validate"),
])
def test_linux_from_that_does_not_match_exits_2(tmp_path, monkeypatch, change, message):
    f, data = _stored_run(tmp_path, monkeypatch)
    change(data)
    f.write_text(json.dumps(data))
    out = tmp_path / "out"
    r = invoke(*CODEL_PIE, "--linux-from", str(f), "--out", str(out))
    assert r.exit_code == 2 and f"--linux-from: {f} {message}" in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1 and not out.exists()


def test_linux_from_bad_files_exit_2(tmp_path):
    out = tmp_path / "out"
    missing = tmp_path / "nope.json"
    r = invoke(*CODEL_PIE, "--linux-from", str(missing), "--out", str(out))
    assert r.exit_code == 2 and f"--linux-from: cannot read {missing}" in r.output
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    r = invoke(*CODEL_PIE, "--linux-from", str(junk), "--out", str(out))
    assert r.exit_code == 2 and f"--linux-from: {junk} is not JSON" in r.output
    r = invoke(*CODEL_PIE, "--sim-only", "--linux-from", str(junk), "--out", str(out))
    assert r.exit_code == 2 and "--linux-from: not with --sim-only" in r.output
    assert not out.exists()


# --- one real cell -------------------------------------------------------------------------

@pytest.mark.skipif(not ROOT_OK, reason="emulation needs root, /dev/net/tun and iproute2")
def test_one_real_cell_end_to_end(tmp_path):
    out = tmp_path / "v"
    r = subprocess.run([sys.executable, "-m", "bloatlab", "validate", "--quick", "--filter", "cc=cubic",
                        "--filter", "gateway=droptail", "--filter", "flows=1", "--filter", "loss_pct=0",
                        "--duration", "6", "--out", str(out)],
                       check=False, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    data = json.loads((out / "validate.json").read_text())
    assert data["complete"] and len(data["cells"]) == 1
    c = data["cells"][0]
    assert c["id"] == "cubic-droptail-b2-rtt40-loss0-f1"
    assert c["verdict"] in ("within", "outside"), c.get("error")
    keys = [m.key for m in metrics.METRICS]
    for part in ("sim", "linux", "errors"):
        assert list(c[part]) == keys
    assert c["linux"]["goodput_mbps"] > 8.0
    assert abs(c["errors"]["goodput_mbps"]) < 0.1
    assert set(c["wall_clock"]) >= {"emulation_s", "loadavg_1min"}
    assert c["emulation"]["kernel"]
    assert sorted(p.name for p in out.iterdir()) == ["heatmap.png", "report.html", "report.md", "validate.json"]
    assert data["summary"] in r.stdout


# --- a second rate, the both-ways slice, Linux's spread (issue 34) --------------------------

def test_rate_100_keeps_buffers_in_bdp_and_marks_ids():
    ten, hundred = matrix.full_matrix(), matrix.full_matrix(100)
    assert len(hundred) == 126 and all(c.id.endswith("-r100") for c in hundred)
    assert [c.id for c in ten] == [c.id.removesuffix("-r100") for c in hundred]
    for a, b in zip(ten, hundred, strict=True):
        assert b.buffer_bytes == 10 * a.buffer_bytes  # the same BDPs at ten times the rate
        assert matrix.scenario(b, 30.0, 1)["topology"]["bottleneck"]["rate"] == "100Mbps"
    assert set(matrix.quick_matrix(100)) <= set(hundred)
    assert matrix.parse_rate("100") == 100 and matrix.parse_rate("10Mbps") == 10
    for bad in ("50", "x", ""):
        with pytest.raises(ValueError, match=r"--rate: .* \(allowed: 10, 100 Mbit/s\)"):
            matrix.parse_rate(bad)


def test_both_ways_slice_and_its_scenario():
    from bloatlab.emulate.runner import plan

    cells = matrix.both_ways_matrix()
    assert len(cells) == 3 * 2 * 2 and all(c.both_ways and c.id.endswith("-both") for c in cells)
    assert matrix.quick_both_ways_matrix() == [c for c in cells if c.buffer_bdp == 8.0 and c.flows == 1]
    c = matrix.Cell("cubic", 8.0, 40, 0.0, 4, both_ways=True)
    doc = matrix.scenario(c, 30.0, 1)
    t = doc["topology"]
    assert t["bottleneck"] == {"rate": "10Mbps", "delay": "20000us", "reverse_rate": "2500kbps"}
    assert t["bottleneck_queue"] == {"kind": "droptail", "limit": "400000B"}  # 8 × 10 Mbit/s × 40 ms
    assert t["reverse_queue"] == {"kind": "droptail", "limit": "100000B"}  # 8 × 2.5 Mbit/s × 40 ms
    assert doc["flows"] == [{"cc": "cubic", "count": 4}, {"cc": "cubic", "count": 4, "direction": "reverse"}]
    assert run.reverse_ids(c) == frozenset({4, 5, 6, 7})
    for cell in cells + matrix.both_ways_matrix(100):
        plan(matrix.scenario(cell, 30.0, 1))  # the emulator takes every cell


def _flow(i, goodput, retx):
    return {"id": i, "goodput_mbps": goodput, "retransmits": retx}


def test_extract_splits_directions_in_either_engines_shape():
    rev = {"name": "bottleneck_rev", "mean_sojourn_ms": 150.0, "p95_sojourn_ms": 280.0, "drops": 9}
    fwd = {"mean_sojourn_ms": 90.0, "p95_sojourn_ms": 180.0, "drops": 4}
    flows = [_flow(0, 7.0, 4), _flow(1, 2.2, 9)]
    sim = {"flows": flows, "bottleneck": fwd, "links": [dict(fwd, name="bottleneck"), rev],
           "fairness": {"jain_goodput": 0.77}}
    linux = {"flows": flows, "bottleneck": fwd, "emulation": {"reverse": rev}, "fairness": {"jain_goodput": 0.77}}
    want = {"goodput_mbps": 7.0, "queue_delay_mean_ms": 90.0, "queue_delay_p95_ms": 180.0, "retransmits": 4.0,
            "jain": 0.77, "drops": 4, "up_goodput_mbps": 2.2, "up_queue_delay_mean_ms": 150.0,
            "up_queue_delay_p95_ms": 280.0, "up_retransmits": 9.0, "up_drops": 9}
    assert metrics.extract(sim, frozenset({1})) == want
    assert metrics.extract(linux, frozenset({1})) == want
    # A one-way cell has no up_* keys, so nothing about uploads is judged there.
    assert "up_goodput_mbps" not in metrics.extract(sim)


def test_both_ways_judges_drops_and_the_uploads():
    e = {"goodput_mbps": 0.0, "queue_delay_mean_ms": 0.0, "retransmits": 0.0, "drops": 0.3,
         "up_goodput_mbps": -0.06, "up_queue_delay_mean_ms": 0.0, "up_retransmits": 0.0, "up_drops": 0.2}
    assert metrics.outside(e, both_ways=True) == ["drops", "up_goodput_mbps"]
    assert metrics.outside(e) == ["up_goodput_mbps"]  # drops are reported only in the matrix
    assert metrics.score(e, both_ways=True) == pytest.approx(1.2)


def test_within_linuxs_spread():
    sims = [{"retransmits": 30.0}, {"retransmits": 34.0}, {"retransmits": 32.0}]
    linux = [{"retransmits": 18.0}, {"retransmits": 35.0}, {"retransmits": 36.0}]
    s = metrics.spread(sims, linux, ["retransmits"])
    assert s["sim_mean"] == {"retransmits": 32.0} and s["within"] == {"retransmits": True}
    # Linux 18-20, sim 40: 40 > 20 + 25 % of 20 (the widened range ends at 25): outside.
    far = metrics.spread([{"retransmits": 40.0}] * 2, [{"retransmits": 18.0}, {"retransmits": 20.0}], ["retransmits"])
    assert far["within"] == {"retransmits": False}
    # The widening uses the metric's floor: 0 retransmissions on Linux allows 5 (25 % of 20).
    zero = metrics.spread([{"retransmits": 5.0}], [{"retransmits": 0.0}], ["retransmits"])
    assert zero["within"] == {"retransmits": True}
    missing = metrics.spread([{"retransmits": None}], [{"retransmits": 1.0}], ["retransmits"])
    assert missing["within"] == {"retransmits": False}


def test_spread_reruns_outside_cells_and_can_turn_the_verdict(monkeypatch):
    cell = matrix.Cell("reno", 0.5, 40, 0.0, 1)
    runs = {1: (40.0, 18.0), 2: (38.0, 35.0), 3: (39.0, 36.0)}  # seed: (sim, linux) retransmissions

    def fake_run_cell(c, *, duration_s, seed, sim_only, stored=None, sim_set=()):
        base = {"goodput_mbps": 9.0, "queue_delay_mean_ms": 7.0, "jain": 1.0}
        s, lx = runs[seed]
        rec = {"id": c.id, "params": c.params(), "sim": dict(base, retransmits=s),
               "linux": dict(base, retransmits=lx)}
        run._judge(rec)
        return rec

    monkeypatch.setattr(run, "run_cell", fake_run_cell)
    head = run.header(quick=False, duration_s=30.0, seed=1, sim_only=False, filters={}, spread=3)
    result = run.validate([cell], head=head)
    c = result["cells"][0]
    assert c["outside"] == ["retransmits"] and c["verdict"] == "within-spread"
    assert c["spread"]["extra_seeds"] == [2, 3] and c["spread"]["linux"]["retransmits"] == [18.0, 35.0, 36.0]
    assert result["counts"]["within_spread"] == 1 and "1 of 1 within Linux's own spread" in result["summary"]
    runs[2], runs[3] = (40.0, 18.0), (40.0, 19.0)
    c = run.validate([cell], head=head)["cells"][0]
    assert c["verdict"] == "outside" and c["spread"]["within"] == {"retransmits": False}


def test_spread_reuses_linuxs_extra_runs_from_linux_from(monkeypatch):
    """A changed simulator re-judged with --linux-from: the extra seeds' Linux runs of the
    stored spread are taken, only the simulator runs again (no emulation: stored is given)."""
    cell = matrix.Cell("reno", 0.5, 40, 0.0, 1)
    sim_rtx = {1: 40.0, 2: 38.0, 3: 39.0}
    calls = []

    def fake_run_cell(c, *, duration_s, seed, sim_only, stored=None, sim_set=()):
        calls.append((seed, stored is not None))
        assert stored is not None, "an emulation was asked for"
        base = {"goodput_mbps": 9.0, "queue_delay_mean_ms": 7.0, "jain": 1.0}
        rec = {"id": c.id, "params": c.params(), "sim": dict(base, retransmits=sim_rtx[seed]),
               "linux": dict(stored["linux"])}
        run._judge(rec)
        return rec

    monkeypatch.setattr(run, "run_cell", fake_run_cell)
    head = run.header(quick=False, duration_s=30.0, seed=1, sim_only=False, filters={}, spread=3)
    full = {"goodput_mbps": 9.0, "queue_delay_mean_ms": 7.0, "jain": 1.0}
    first = {"linux": dict(full, retransmits=18.0), "linux_from": "f.json"}
    # A file written since the runs are kept whole.
    stored = dict(first, spread={"extra_seeds": [2, 3], "linux_runs": [dict(full, retransmits=35.0),
                                                                       dict(full, retransmits=36.0)]})
    c = run.validate([cell], head=head, stored={cell.id: stored})["cells"][0]
    assert c["verdict"] == "within-spread" and c["spread"]["linux"]["retransmits"] == [18.0, 35.0, 36.0]
    assert c["spread"]["linux_runs"][1]["retransmits"] == 36.0
    assert calls == [(1, True), (2, True), (3, True)]
    # An older file kept only the metrics judged then: enough when they cover those outside now.
    older = dict(first, spread={"extra_seeds": [2, 3], "linux": {"retransmits": [18.0, 35.0, 36.0]}})
    calls.clear()
    c = run.validate([cell], head=head, stored={cell.id: older})["cells"][0]
    assert c["verdict"] == "within-spread" and calls == [(1, True), (2, True), (3, True)]
    assert "linux_runs" not in c["spread"], "partial runs are not kept as every metric"
    # A spread over more seeds holds this one's: its first runs are reused.
    wider = dict(first, spread={"extra_seeds": [2, 3, 4, 5], "linux_runs": [
        dict(full, retransmits=x) for x in (35.0, 36.0, 90.0, 91.0)]})
    calls.clear()
    c = run.validate([cell], head=head, stored={cell.id: wider})["cells"][0]
    assert c["spread"]["linux"]["retransmits"] == [18.0, 35.0, 36.0] and c["spread"]["extra_seeds"] == [2, 3]
    assert calls == [(1, True), (2, True), (3, True)]
    # Other seeds than this run's: emulated again.
    other = dict(first, spread={"extra_seeds": [5, 6], "linux": {"retransmits": [18.0, 35.0, 36.0]}})
    with pytest.raises(AssertionError, match="an emulation was asked for"):
        run.validate([cell], head=head, stored={cell.id: other})


@pytest.mark.parametrize(("args", "message"), [
    (["--rate", "50"], "--rate: \"50\" (allowed: 10, 100 Mbit/s)"),
    (["--spread", "1"], "--spread: \"1\" (allowed: a number of seeds from 2 to 5)"),
    (["--spread", "many"], "--spread: \"many\" (allowed: a number of seeds from 2 to 5)"),
    (["--spread", "3"], "--spread: not with --sim-only"),
    (["--both-ways", "--quick", "--filter", "buffer_bdp=2"],
     "--filter: no cell of the quick both-ways matrix matches buffer_bdp=2"),
])
def test_bad_new_options_exit_2_and_create_nothing(tmp_path, args, message):
    out = tmp_path / "out"
    r = invoke(*args, "--out", str(out), "--sim-only")
    assert r.exit_code == 2 and message in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1 and not out.exists()


def test_both_ways_sim_only_at_100_mbps(tmp_path, monkeypatch):
    monkeypatch.setattr(vcli, "_is_root", lambda: False)
    out = tmp_path / "out"
    r = invoke("--both-ways", "--quick", "--rate", "100", "--filter", "cc=cubic", "--duration", "5",
               "--sim-only", "--out", str(out))
    assert r.exit_code == 0, r.output
    data = json.loads((out / "validate.json").read_text())
    assert (data["matrix"], data["rate_mbps"], data["reverse_rate_mbps"]) == ("quick both-ways", 100, 25.0)
    (c,) = data["cells"]
    assert c["id"] == "cubic-droptail-b8-rtt40-loss0-f1-both-r100"
    # Both directions carry their flow within their rates: the upload most of its 25 Mbit/s; the
    # download, whose ACKs wait behind the upload's 320 ms queue, still ramping after 5 s.
    assert 10 < c["sim"]["goodput_mbps"] <= 100 and 15 < c["sim"]["up_goodput_mbps"] <= 25
    assert "upload goodput" in (out / "report.md").read_text()


# --- a simulator setting judged against Linux (--sim-set) ----------------------------------

def test_sim_set_changes_the_simulator_only(tmp_path, monkeypatch):
    """The CoDel cell's Linux side comes from the stored run; the simulator runs with an
    override that changes its result (Reno instead of CUBIC): the sim column moves, the Linux
    column and the cell's digest (what the emulator would run) do not, and the header and
    report name the override."""
    f, data = _stored_run(tmp_path, monkeypatch)
    base, over = tmp_path / "base", tmp_path / "over"
    assert invoke(*CODEL_PIE, "--linux-from", str(f), "--out", str(base)).exit_code == 0
    r = invoke(*CODEL_PIE, "--linux-from", str(f), "--sim-set", "flows[0].cc=reno", "--out", str(over))
    assert r.exit_code == 0, r.output
    a, b = (json.loads((d / "validate.json").read_text()) for d in (base, over))
    assert b["sim_set"] == ["flows[0].cc=reno"] and "sim_set" not in a
    for ca, cb in zip(a["cells"], b["cells"]):
        assert ca["linux"] == cb["linux"] and ca["scenario_digest"] == cb["scenario_digest"]
        assert ca["sim"] != cb["sim"]
    assert "The simulator ran with `flows[0].cc=reno`" in (over / "report.md").read_text()


@pytest.mark.parametrize(("sets", "message"), [
    (["tcp.tso_defer"], "--sim-set: invalid override \"tcp.tso_defer\": expected KEY=VALUE"),
    (["tcp.tso_defr=true"], "--sim-set: tcp.tso_defr: unknown key"),
    (["tcp.tso_defer=1"], "--sim-set: tcp.tso_defer: expected true or false, got an integer"),
])
def test_bad_sim_set_exits_2_and_creates_nothing(tmp_path, sets, message):
    out = tmp_path / "out"
    r = invoke("--quick", "--sim-only", *[a for s in sets for a in ("--sim-set", s)], "--out", str(out))
    assert r.exit_code == 2 and message in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1 and not out.exists()


def test_emulation_health_flags_a_bottleneck_process_that_stalls_often():
    def health(over_1ms, late_us=40.0, duration=30.0):
        io = {"write_late_mean_us": late_us, "write_late_max_us": 4000.0}
        if over_1ms is not None:
            io["write_late_over_1ms"] = over_1ms
        return run._emulation_health({"duration_s": duration, "emulation": {"io": io}})

    quiet = health(20)  # 0.7 stalls over 1 ms a second: below the limit
    assert quiet["disturbed"] == [] and quiet["write_late_over_1ms"] == 20
    busy = health(269)  # as measured on a busy machine: 9 a second
    assert busy["disturbed"] == ["269 writes over 1 ms late (9.0 per second)"]
    assert health(None)["disturbed"] == []  # stored runs from before the count was kept
    assert health(31, duration=30.0)["disturbed"] != []  # just over one a second
    assert "writes late by 1500 µs" in health(0, late_us=1500.0)["disturbed"][0]
