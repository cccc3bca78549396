"""What the latency-under-load outputs say: the grade with probe loss, the rrul options and
report, the run table by flow group, short sweep labels and rounded confidence intervals,
and the figures' content (no cwnd for UDP, the backlog axis, the warm-up)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from rich.console import Console

from bloatlab import fixes, rrul
from bloatlab.outputs.numbers import mean_ci, seconds, short_value
from bloatlab.outputs.tables import jain, render_summary

SHORT = ["--set", "duration=6s", "--set", "warmup=1s"]


def bloatlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bloatlab", *args], check=False, capture_output=True, text=True,
                          timeout=300)


# --------------------------------------------------------------------------- the grade


@pytest.mark.parametrize(("added", "loss", "letter"), [
    (23.5, 25.1, "C"),   # DualPI2 + Prague on Wang I: A by latency, a quarter of the probes lost
    (40.4, 16.7, "C"),   # PIE on Wang I: B by latency
    (2.0, 2.99, "A+"),   # under the G.1010 bound: latency alone
    (2.0, 3.0, "C"),     # at the bound: capped
    (300.0, 50.0, "D"),  # the cap never raises a grade
    (500.0, 10.0, "F"),
])
def test_probe_loss_caps_the_grade(added, loss, letter):
    assert rrul.grade(added, loss) == letter
    assert rrul.grade(added) == rrul.grade(added, 0.0)


def _voice() -> rrul.Voice:
    return rrul.Voice(10.0, 1.0, 0.0)


def _outcome(**kw) -> rrul.Outcome:
    base = {"download_mbps": 1.0, "upload_mbps": 1.0, "idle_rtt_ms": 20.0, "loaded_rtt_ms": 43.5,
            "loaded_rtt_p95_ms": 60.0, "added_latency_ms": 23.5, "grade": "C", "probe_loss_pct": 25.1,
            "voip_down": _voice(), "voip_up": _voice(), "latency_grade": "A"}
    return rrul.Outcome(**{**base, **kw})


def test_loss_is_printed_beside_the_grade_and_the_cap_explained():
    rows = dict(rrul.describe(_outcome()))
    assert rows["grade, probe loss"].startswith("C (latency alone: A; capped at C")
    assert rows["grade, probe loss"].endswith("25.10 % lost")
    assert fixes.grade_text(_outcome()) == "C (latency: A; loss ≥ 3 %)"
    assert fixes.grade_text(_outcome(grade="A", probe_loss_pct=0.0)) == "A"
    md = fixes.report_markdown([fixes.Row("wang2016-I", "PIE", "gateway", _outcome())], {})
    assert "| 25.10 | C (latency: A; loss ≥ 3 %) |" in md and "ITU-T G.1010" in md


def _summary(cc: str, down_mbps: float, uploads: bool = True) -> dict:
    flows = [{"group": "download", "cc": cc, "transport": "tcp", "goodput_mbps": down_mbps / 2}] * 2
    if uploads:
        flows.append({"group": "upload", "cc": cc, "transport": "tcp", "goodput_mbps": 4.6})
    return {"flows": flows, "bottleneck": {"rate_mbps": 20.0}}


def test_the_bbr_note_comes_with_bbr_downloads_beside_uploads_only():
    assert "BBR v1" in rrul.bbr_note(_summary("bbr", 5.27))
    assert rrul.bbr_note(_summary("bbr", 5.27, uploads=False)) is None
    assert rrul.bbr_note(_summary("cubic", 5.27)) is None
    assert rrul.bbr_note(_summary("bbr", 18.0)) is None  # not held back: nothing to explain
    rows = rrul.describe(_outcome(note="why"))
    assert [k for k, _ in rows][:2] == ["download", "  why so low"]


# --------------------------------------------------------------------------- rrul options


def test_down_up_and_keep_flows_build_the_scenarios():
    base = rrul.home()
    base["flows"] = [{"cc": "reno", "group": "mine"}]
    idle, loaded = rrul.scenarios(base, flows=4, down=2, up=0, keep_flows=True)
    assert [f["group"] for f in idle["flows"]] == ["probe", "voip-down", "voip-up"]
    assert [(f["group"], f.get("count")) for f in loaded["flows"]][:2] == [("mine", None), ("download", 2)]
    assert "upload" not in {f["group"] for f in loaded["flows"]}
    _, replaced = rrul.scenarios(base, flows=3)
    assert "mine" not in {f["group"] for f in replaced["flows"]}
    assert {f["group"]: f["count"] for f in replaced["flows"] if "count" in f} == {"download": 3, "upload": 3}
    base["flows"] = [{"cc": "reno", "group": "probe"}]
    with pytest.raises(rrul.ScenarioError, match="--keep-flows"):
        rrul.scenarios(base, keep_flows=True)


@pytest.mark.parametrize(("args", "option"), [
    (["--down", "0", "--up", "0"], "--down/--up"),
    (["--down", "-1"], "--down"),
    (["--up", "-2"], "--up"),
    (["--flows", "-1"], "--flows"),
    (["--down", "1001"], "--down"),
])
def test_bad_counts_exit_2_naming_the_option(tmp_path, args, option):
    r = bloatlab("rrul", *SHORT, *args, "--out", str(tmp_path / "o"))
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {option}: "), r.stderr
    assert not (tmp_path / "o").exists()


def test_rrul_prints_what_it_tested_and_runs_one_direction():
    r = bloatlab("rrul", *SHORT, "--down", "0", "--up", "1")
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stdout.split())
    assert "20Mbps down / 5Mbps up" in out and "down droptail 500p, up droptail 200p" in out
    assert "grade, probe loss" in out and "% lost" in out
    doc = json.loads(bloatlab("rrul", *SHORT, "--down", "0", "--up", "1", "--json").stdout)
    assert doc["outcome"]["download_mbps"] == 0.0 and doc["outcome"]["upload_mbps"] > 1.0
    assert doc["tested"]["queues"] == "down droptail 500p, up droptail 200p"
    assert [f["group"] for f in doc["loaded"]["flows"]] == ["upload", "probe", "voip-down", "voip-up"]


# --------------------------------------------------------------------------- run table


def _flow(i, group, transport="tcp", goodput=1.0, **kw):
    return {"id": i, "group": group, "transport": transport, "cc": "none" if transport == "udp" else "cubic",
            "throughput_mbps": goodput, "goodput_mbps": goodput, "loss_pct": 0.0, "rtt_mean_ms": None,
            "rtt_p95_ms": None, "owd_mean_ms": None, "owd_p95_ms": None, "fct_s": None, **kw}


def test_jain_index():
    assert jain([1.0, 1.0]) == 1.0
    assert jain([3.0, 1.0]) == pytest.approx(16 / 20)
    assert jain([]) is None and jain([0.0, 0.0]) == 1.0


def test_run_table_groups_flows_with_their_own_jain_udp_delays_and_every_queue():
    queue = {"aqm": "fq_codel", "capacity_bytes": 15_360_000, "mean_bytes": 5920.0, "buffer_usage_pct": 0.04,
             "mean_sojourn_ms": 4.0, "p95_sojourn_ms": 18.4, "drops": 37, "drop_pct": 0.37,
             "utilization_pct": 100.0}
    summary = {"name": "home", "seed": 1, "duration_s": 10.0,
               "flows": [_flow(0, "download", goodput=9.5), _flow(1, "download", goodput=9.5),
                         _flow(2, "upload", goodput=3.0), _flow(3, "upload", goodput=1.0),
                         _flow(4, "voice", "udp", 0.069, owd_mean_ms=15.47, owd_p95_ms=15.9, jitter_ms=0.1)],
               "bottleneck": {**queue, "mean_sojourn_ms": 4.1},
               "links": [{"name": "bottleneck_rev", **queue}],
               "fairness": {"jain_goodput": 0.585}, "engine": {}}
    console = Console(width=100, record=True)
    render_summary(summary, console)
    out = console.export_text()
    assert "download: 2 flows, goodput 19.000 Mbit/s, Jain 1.000" in out
    assert "upload: 2 flows, goodput 4.000 Mbit/s, Jain 0.800" in out
    assert "voice: 1 flow" in out and "15.5" in out and "jitter" in out and "one-way" in out
    assert "queue bottleneck_rev" in out and "p95 18.4 ms" in out
    assert "0.5850 (goodput, all 5 flows together; per group in the table)" in out


# --------------------------------------------------------------------------- labels, numbers


def test_short_labels_and_rounded_intervals():
    assert short_value('{"kind":"droptail","limit":"1000p"}') == "droptail 1000p"
    assert short_value({"kind": "codel", "target": "5ms"}) == "codel target=5ms"
    assert short_value("reno") == "reno" and short_value(["a", "b"]) == "a, b"
    assert mean_ci(0.0256, 1.1e-17) == ("0.0256", "0")
    assert mean_ci(19.14, 0.2345) == ("19.14", "0.23")
    assert mean_ci(19.14, float("nan")) == ("19.14", "")
    assert mean_ci(19.1, 0.04, spec=".3g") == ("19.1", "0")
    assert mean_ci(19.1, 0.06, spec=".3g") == ("19.1", "0.1")
    assert mean_ci(1.2, 0.03, spec="#.3g") == ("1.20", "0.03")  # the digits the mean is known to
    assert mean_ci(494.0, 0.0, spec="#.3g") == ("494", "0")
    assert seconds("500ms") == 0.5 and seconds("5s") == 5.0 and seconds(2) == 2.0 and seconds("x") == 0.0


# --------------------------------------------------------------------------- figures


def test_timeseries_draws_no_cwnd_for_udp_and_scales_the_backlog_to_the_data(tmp_path):
    import bloatlab
    from bloatlab.outputs.plot import timeseries_figure

    toml = tmp_path / "s.toml"
    toml.write_text('duration = "4s"\nwarmup = "1s"\n[topology]\nkind = "dumbbell"\n'
                    'bottleneck = { rate = "10Mbps", delay = "10ms" }\n'
                    'bottleneck_queue = { kind = "fq_codel" }\n'
                    '[[flows]]\ncc = "cubic"\n[[flows]]\ntransport = "udp"\napp = "voip"\n')
    run = bloatlab.run(toml).to_dir(tmp_path / "run")
    fig = timeseries_figure(run)
    cwnd, _, backlog = fig.axes[:3]
    assert [line.get_label() for line in cwnd.get_lines()] == ["flow 0 (cubic)"]
    top = backlog.get_ylim()[1]
    assert top < 1000  # KB: the data's scale, not FQ-CoDel's 15 MB limit
    assert any("off scale" in t.get_text() for t in backlog.texts)
    assert any("warm-up" in t.get_text() for t in cwnd.texts)


def test_an_error_in_a_kept_flow_names_the_flow_not_an_option():
    r = bloatlab("rrul", *SHORT, "--keep-flows", "--set", "flows[0].cc=cubik")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("error: flows[0].cc: "), r.stderr
    r = bloatlab("rrul", *SHORT, "--keep-flows", "--cc", "cubik")
    assert r.returncode == 2 and r.stderr.startswith("error: --cc: "), r.stderr


def test_run_table_shows_page_loads_and_no_group_sections_for_single_flows():
    summary = {"name": "p", "seed": 1, "duration_s": 30.0,
               "flows": [_flow(0, "page", pages=3, plt_mean_s=5.653, plt_p95_s=5.894),
                         _flow(1, "upload", goodput=4.7)],
               "bottleneck": {}, "fairness": {"jain_goodput": 0.95}, "engine": {}}
    console = Console(width=120, record=True)
    render_summary(summary, console)
    out = console.export_text()
    assert "5.653" in out and "5.894" in out and "pages" in out
    assert "page: 1 flow" not in out and "(goodput, all 2 flows together)" in out
