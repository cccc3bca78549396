"""`bloatlab run` on invalid input: exit 2, one clear line on stderr, no traceback, nothing written.

Run as a real subprocess (`python -m bloatlab`), as a user would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import assert_invalid, assert_run_refused, cli


def assert_nothing_written(out: Path) -> None:
    assert not out.exists(), f"{out} was created"
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}")], "temp dir left behind"


# --------------------------------------------------------------------------- found by Python


def test_missing_file(tmp_path: Path):
    out = tmp_path / "out"
    proc = cli("run", str(tmp_path / "nope.toml"), "--out", str(out))
    line = assert_invalid(proc, "nope.toml", "no such file")
    assert line.startswith(f"error: {tmp_path / 'nope.toml'}: ")
    assert_nothing_written(out)


def test_directory_instead_of_file(tmp_path: Path):
    assert_invalid(cli("run", str(tmp_path)), "directory")


def test_malformed_toml_reports_the_line(tmp_path: Path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nduration = "5s"\n[topology\nkind = "dumbbell"\n')
    out = tmp_path / "out"
    assert_invalid(cli("run", str(bad), "--out", str(out)), "bad.toml", "malformed TOML", "line 3")
    assert_nothing_written(out)


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ("duration", "KEY=VALUE"),
        ("=5s", "key"),
        ("flows[x].cc=reno", "flows[x].cc"),
        ("topology..bottleneck=1", "topology..bottleneck"),
        ("flows[-1].cc=reno", "flows[-1].cc"),
    ],
)
def test_bad_set_syntax(small_toml: Path, tmp_path: Path, override: str, needle: str):
    out = tmp_path / "out"
    line = assert_invalid(cli("run", str(small_toml), "--set", override, "--out", str(out)), "--set", needle)
    assert line.startswith("error: --set: ")
    assert_nothing_written(out)


def test_set_index_past_the_end(small_toml: Path, tmp_path: Path):
    out = tmp_path / "out"
    line = assert_invalid(cli("run", str(small_toml), "--set", "flows[5].cc=reno", "--out", str(out)), "past the end")
    assert line.startswith("error: flows[5]: ")
    assert_nothing_written(out)


@pytest.mark.parametrize("seed", ["-1", str(2**64)])
def test_bad_seed(small_toml: Path, seed: str):
    assert_invalid(cli("run", str(small_toml), "--seed", seed), "seed")


def test_out_is_a_file(small_toml: Path, tmp_path: Path):
    f = tmp_path / "file"
    f.write_text("x")
    assert_invalid(cli("run", str(small_toml), "--out", str(f)), "--out", "not a directory")
    assert f.read_text() == "x"


# --------------------------------------------------------------------------- found by the simulator


@pytest.mark.parametrize(
    ("overrides", "path", "needles"),
    [
        # unknown key: names the key and lists the allowed ones
        (['topology.bottlenek={ rate = "2Mbps" }'], "topology.bottlenek", ["unknown key", "bottleneck"]),
        (["flows[0].colour=red"], "flows[0].colour", ["unknown key", "cc"]),
        # bad unit: lists the units
        (["topology.bottleneck.rate=2Mbit"], "topology.bottleneck.rate", ["2Mbit", "Mbps", "Gbps"]),
        (["duration=30"], "duration", ["ms"]),
        (["topology.bottleneck_queue.limit=500Kb"], "topology.bottleneck_queue.limit", ["KB"]),
        # unknown name: lists the known ones
        (["flows[0].cc=cubik"], "flows[0].cc", ["cubik", "newreno", "reno"]),
        # impossible values
        (["duration=0s"], "duration", []),
        (["duration=-5s"], "duration", []),
        (["topology.bottleneck.rate=0Mbps"], "topology.bottleneck.rate", []),
        (["topology.bottleneck.loss=1.0"], "topology.bottleneck.loss", []),
        (["warmup=10s"], "warmup", []),
        # a tick rate Linux cannot be built with
        (["tcp.hz=200"], "tcp.hz", ["allowed: 100, 250, 300, 1000", "200"]),
        # the send buffer, the application's writes, the receive truesize
        (['tcp.sndbuf="1KB"'], "tcp.sndbuf", ["4608B", "unlimited"]),
        (['tcp.sndbuf="plenty"'], "tcp.sndbuf", ["plenty", "unlimited"]),
        (['tcp.write_size="0B"'], "tcp.write_size", ["1B"]),
        (['flows[0].tcp={ rcv_truesize = "100B" }'], "flows[0].tcp.rcv_truesize", ["MSS"]),
        # Linux's receiver quick ACK while the window opens, CUBIC's HyStart round rule
        (["tcp.grow_quickack=1"], "tcp.grow_quickack", ["true or false"]),
        # Linux's pacing credit
        (['tcp.pacing_credit="linux"'], "tcp.pacing_credit", ["true or false"]),
        (["flows[0].tcp.pacing_credit=2"], "flows[0].tcp.pacing_credit", ["true or false"]),
        (['tcp.paced_fast_retransmit="linux"'], "tcp.paced_fast_retransmit", ["true or false"]),
        (
            ["flows[0].tcp.paced_fast_retransmit=1"],
            "flows[0].tcp.paced_fast_retransmit",
            ["true or false"],
        ),
        # Linux's unpaced first segments; slow start after idle (a sysctl)
        (['tcp.unpaced_start="linux"'], "tcp.unpaced_start", ["true or false"]),
        (["flows[0].tcp.unpaced_start=10"], "flows[0].tcp.unpaced_start", ["true or false"]),
        (["tcp.slow_start_after_idle=0"], "tcp.slow_start_after_idle", ["true or false"]),
        (["tcp.syn_linear_timeouts=128"], "tcp.syn_linear_timeouts", ["127"]),
        (["flows[0].tcp.syn_linear_timeouts=-1"], "flows[0].tcp.syn_linear_timeouts", ["0"]),
        (['tcp.syn_linear_timeouts="four"'], "tcp.syn_linear_timeouts", []),
        (['flows[0].tcp.slow_start_after_idle="off"'], "flows[0].tcp.slow_start_after_idle", ["true or false"]),
        # Nagle's algorithm (a socket without TCP_NODELAY)
        (["tcp.nagle=1"], "tcp.nagle", ["true or false"]),
        (['flows[0].tcp.nagle="minshall"'], "flows[0].tcp.nagle", ["true or false"]),
        # the rule set: Linux's or the simulator's defaults
        (['tcp.rules="freebsd"'], "tcp.rules", ["freebsd", "default, linux"]),
        (["flows[0].tcp.rules=true"], "flows[0].tcp.rules", []),
        (["flows[0].cc=cubic", 'flows[0].cc_params.hystart_rounds="first_ack"'], "flows[0].cc_params.hystart_rounds",
         ["first_ack", "low_window, linux"]),
    ],
)
def test_invalid_scenarios(small_toml: Path, tmp_path: Path, overrides, path, needles):
    out = tmp_path / "out"
    assert_run_refused(small_toml, out, overrides, path, *needles)
    assert_nothing_written(out)


def test_missing_required_key(tmp_path: Path):
    f = tmp_path / "s.toml"
    f.write_text('duration = "5s"\n[topology]\nbottleneck = { delay = "5ms" }\n[[flows]]\ncc = "reno"\n')
    line = assert_invalid(cli("run", str(f)), "missing")
    assert line.startswith("error: topology.bottleneck.rate: ")


@pytest.mark.parametrize(("args", "needles"), [
    (["run", "--bogus"], ["--bogus"]),
    (["run", "--seed"], ["--seed", "requires an argument"]),
    (["run", "--seed", "x"], ["--seed", "not a valid integer"]),
    (["frobnicate"], ["frobnicate", "commands:", "reproduce"]),
])
def test_usage_errors_are_one_line(args: list[str], needles: list[str]):
    """Click's own usage errors follow the same rule as every bad input: one line, exit 2."""
    assert_invalid(cli(*args), *needles)
