"""`bloatlab packetdrill`: per-script verdicts and exit codes (0 all passed, 1 a failure or an
unsupported line, 2 a missing or malformed file)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import REPO, assert_invalid, cli

SCRIPTS = REPO / "tests" / "packetdrill"

SERVER = """\
`sysctl -q net.ipv4.tcp_timestamps=0`
0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0 bind(3, ..., ...) = 0
+0 listen(3, 1) = 0
+0 < S 0:0(0) win 65535 <mss 1000,sackOK,nop,nop,nop,wscale 7>
+0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 7>
+.1 < . 1:1(0) ack 1 win 1000
+0 accept(3, ..., ...) = 4
+0 setsockopt(4, SOL_TCP, TCP_NODELAY, [1], 4) = 0
+0 write(4, ..., 1000) = 1000
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_the_suite_passes():
    files = sorted(str(p) for p in SCRIPTS.glob("*.pkt"))
    assert len(files) >= 16
    proc = cli("packetdrill", *files)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == len(files)
    assert all(line.startswith("PASSED") for line in lines), proc.stdout


def test_a_mismatch_fails_with_line_and_expected_vs_actual(tmp_path: Path):
    ok = write(tmp_path, "ok.pkt", SERVER + "+0 > . 1:1001(1000) ack 1\n")
    bad = write(tmp_path, "bad.pkt", SERVER + "+0 > . 1:1001(1000) ack 5\n")
    proc = cli("packetdrill", str(ok), str(bad))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    assert f"PASSED       {ok}" in out
    assert f"FAILED       {bad}:11:4: ack: expected 5, actual 1" in out
    assert "expected: > . 1:1001(1000) ack 5" in out and "actual:   > P. 1:1001(1000) ack 1" in out


def test_an_assert_failure_names_the_values(tmp_path: Path):
    bad = write(tmp_path, "a.pkt", SERVER + "+0 %{ assert tcpi_snd_cwnd == 3 }%\n")
    proc = cli("packetdrill", str(bad))
    assert proc.returncode == 1
    assert "tcpi_snd_cwnd = 10" in proc.stdout


def test_unsupported_is_not_a_pass(tmp_path: Path):
    f = write(tmp_path, "u.pkt", SERVER + "+0 < U. 1:1(0) ack 1001 win 1000\n")
    proc = cli("packetdrill", str(f))
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"UNSUPPORTED  {f}:11:")
    assert "URG" in proc.stdout


def test_tolerance_option(tmp_path: Path):
    f = write(tmp_path, "t.pkt", SERVER + "+.003 > . 1:1001(1000) ack 1\n")
    assert cli("packetdrill", str(f)).returncode == 0
    proc = cli("packetdrill", "--tolerance-usecs", "1000", str(f))
    assert proc.returncode == 1
    assert "earlier than expected" in proc.stdout
    assert_invalid(cli("packetdrill", "--tolerance-usecs", "-5", str(f)), "--tolerance-usecs")


def test_json_output(tmp_path: Path):
    bad = write(tmp_path, "bad.pkt", SERVER + "+0 > . 1:1001(1000) ack 5\n")
    proc = cli("packetdrill", "--json", str(SCRIPTS / "rto-backoff.pkt"), str(bad))
    assert proc.returncode == 1
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert rows[0] == {"file": str(SCRIPTS / "rto-backoff.pkt"), "status": "passed"}
    assert rows[1]["status"] == "failed" and rows[1]["line"] == 11 and rows[1]["column"] == 4


def test_malformed_scripts_exit_2_with_file_line_column(tmp_path: Path):
    unknown = write(tmp_path, "u.pkt", "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 frobnicate(3) = 0\n")
    assert_invalid(cli("packetdrill", str(unknown)), f"{unknown}:2:4:", "unknown system call `frobnicate`")
    opt = write(tmp_path, "o.pkt", "0 < S 0:0(0) win 100 <mss 1000,bogus 3>\n")
    assert_invalid(cli("packetdrill", str(opt)), f"{opt}:1:32:", "unknown TCP option `bogus`")
    back = write(tmp_path, "b.pkt", "0.2 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n0.1 bind(3, ..., ...) = 0\n")
    assert_invalid(cli("packetdrill", str(back)), f"{back}:2:1:", "time going backwards")


def test_missing_file_exits_2(tmp_path: Path):
    assert_invalid(cli("packetdrill", str(tmp_path / "nope.pkt")), "nope.pkt", "no such file")


def test_no_files_is_a_usage_error():
    assert_invalid(cli("packetdrill"), "PATH")


def test_a_directory_runs_every_script_below_it_with_a_summary(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    write(tmp_path / "a", "ok.pkt", SERVER + "+0 > . 1:1001(1000) ack 1\n")
    write(tmp_path / "a", "bad.pkt", SERVER + "+0 > . 1:1001(1000) ack 5\n")
    write(tmp_path / "b", "u.pkt", SERVER + "+0 < U. 1:1(0) ack 1001 win 1000\n")
    proc = cli("packetdrill", str(tmp_path))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    # Per-script lines in sorted order, then the table.
    assert lines[0].startswith("FAILED") and "a/bad.pkt" in lines[0]
    assert any(line.startswith("PASSED") and line.endswith("a/ok.pkt") for line in lines)
    head = next(i for i, line in enumerate(lines) if line.startswith("directory"))
    assert lines[head].split() == ["directory", "passed", "failed", "unsupported", "malformed"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[head + 1:] if line and line[0] != " "}
    assert rows[str(tmp_path / "a")] == ["1", "1", "0", "0"]
    assert rows[str(tmp_path / "b")] == ["0", "0", "1", "0"]
    assert rows["total"] == ["1", "1", "1", "0"]
    assert "urgent data (URG)" in proc.stdout
    proc = cli("packetdrill", "--json", str(tmp_path))
    last = json.loads(proc.stdout.splitlines()[-1])
    assert last["summary"]["total"] == {
        "passed": 1, "failed": 1, "unsupported": 1, "malformed": 0,
        "unsupported_classes": {"urgent data (URG)": 1},
    }


def test_a_directory_without_scripts_exits_2(tmp_path: Path):
    assert_invalid(cli("packetdrill", str(tmp_path)), str(tmp_path), "no *.pkt scripts")


def test_verbose_lists_ignored_sysctls(tmp_path: Path):
    f = write(tmp_path, "s.pkt", "`sysctl -q net.ipv4.tcp_tso_win_divisor=100`\n" + SERVER)
    proc = cli("packetdrill", "-v", str(f))
    assert "ignored sysctls (not modeled): net.ipv4.tcp_tso_win_divisor=100" in proc.stdout


def test_verbose_does_not_list_the_modeled_tc_and_ethtool_commands(tmp_path: Path):
    # fq (pacing) and the offloads are modeled: not in the ignored list, unlike a sysctl that is not.
    shell = "`tc qdisc replace dev tun0 root fq\nethtool -K tun0 tso off gso off\nsysctl -q net.ipv4.tcp_fack=0`\n"
    f = write(tmp_path, "s.pkt", shell + SERVER)
    proc = cli("packetdrill", "-v", str(f))
    assert "ignored sysctls (not modeled): net.ipv4.tcp_fack=0" in proc.stdout
    assert "qdisc" not in proc.stdout and "offload" not in proc.stdout
