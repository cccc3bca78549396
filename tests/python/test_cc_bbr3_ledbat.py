"""BBRv3, LEDBAT and LEDBAT++ through the CLI (issue 33): bad parameters exit 2 with one line
naming the key path; `rrul --cc` and `fixes` accept them; the emulator, which has no such
kernel modules, refuses them before creating anything."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bloatlab import fixes
from helpers import SCENARIOS, assert_invalid, assert_run_refused, cli


@pytest.mark.parametrize(
    ("sets", "key", "needle"),
    [
        (["flows[0].cc=bbr3", "flows[0].cc_params.probe_gain=2"], "flows[0].cc_params.probe_gain", "headroom"),
        (["flows[0].cc=bbr3", "flows[0].cc_params.beta=1"], "flows[0].cc_params.beta", "(0, 1)"),
        (["flows[0].cc=bbr3", "flows[0].cc_params.ecn=true", "flows[0].tcp.ecn=classic"], "flows[0].tcp.ecn",
         "bbr3 needs Accurate ECN"),
        (["flows[0].cc=ledbat", "flows[0].cc_params.target=0s"], "flows[0].cc_params.target", "greater than 0"),
        (["flows[0].cc=ledbat", "flows[0].cc_params.target=-5ms"], "flows[0].cc_params.target", ""),
        (["flows[0].cc=ledbat", "flows[0].cc_params.gain=1.5"], "flows[0].cc_params.gain", "(0, 1]"),
        (["flows[0].cc=ledbat++", "flows[0].cc_params.target=0ms"], "flows[0].cc_params.target", "greater than 0"),
        (["flows[0].cc=ledbat++", "flows[0].cc_params.gain=0"], "flows[0].cc_params.gain", "(0, 1]"),
    ],
)
def test_bad_parameters_exit_2_naming_the_key(small_toml: Path, tmp_path: Path, sets: list[str], key: str,
                                              needle: str):
    assert_run_refused(small_toml, tmp_path / "out", sets, key, key, needle)


def test_the_three_run_and_report_their_names(small_toml: Path):
    proc = cli("run", str(small_toml), "--set", "flows[0].cc=bbr3", "--set", "flows[1].cc=ledbat++", "--set",
               "duration=2s", "--json")
    assert proc.returncode == 0, proc.stderr
    assert [f["cc"] for f in json.loads(proc.stdout)["flows"]] == ["bbr3", "ledbat++"]


def test_rrul_accepts_them():
    proc = cli("rrul", "--flows", "1", "--cc", "ledbat", "--set", "duration=6s", "--set", "warmup=1s", "--json")
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout)["loaded"]
    assert {f["cc"] for f in loaded["flows"] if f.get("group") in ("download", "upload")} == {"ledbat"}


def test_fixes_has_a_row_for_each():
    runs, _ = fixes.plan(duration="5s")
    by = {(b, f): lo for b, f, _, lo in runs}
    for label, cc in (("BBRv3", "bbr3"), ("LEDBAT", "ledbat"), ("LEDBAT++", "ledbat++")):
        lo = by[("talau-1", label)]
        assert {f["cc"] for f in lo["flows"] if f["group"] in ("download", "upload")} == {cc}


@pytest.mark.parametrize("cc", ["bbr3", "ledbat", "ledbat++"])
def test_emulation_refuses_them(tmp_path: Path, cc: str):
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "bloatlab.emulate", "emulate", str(SCENARIOS / "emulate-dumbbell.toml"),
                        "--out", str(out), "--set", f"flows[0].cc={cc}"],
                       check=False, capture_output=True, text=True, timeout=60)
    line = assert_invalid(r, "flows[0].cc", f'"{cc}" is not a Linux congestion control')
    assert "cubic" in line
    assert not out.exists()
