"""L4S settings through the CLI (issue 13): bad ECN modes and controller/ECN conflicts exit 2
with one line naming the key path; valid DCTCP/Prague runs report their controller."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import assert_run_refused, cli


@pytest.mark.parametrize(
    ("sets", "key", "needle"),
    [
        (["flows[0].tcp.ecn=l4s"], "flows[0].tcp.ecn", 'unknown ECN mode "l4s" (known: off, classic, accecn)'),
        (["flows[0].tcp.ecn=2"], "flows[0].tcp.ecn", "accecn"),
        (["flows[0].cc=prague", "flows[0].tcp.ecn=classic"], "flows[0].tcp.ecn", "prague needs Accurate ECN"),
        (["flows[0].cc=prague", "flows[0].tcp.ecn=false"], "flows[0].tcp.ecn", "prague needs Accurate ECN"),
        (["flows[0].cc=dctcp", "flows[0].tcp.ecn=off"], "flows[0].tcp.ecn", "dctcp reacts to ECN marks"),
        (["flows[0].cc=cubic", "flows[0].cc_params.ect=ect1"], "flows[0].cc_params.ect", "ECT(1)"),
        (["flows[0].cc=dctcp", "flows[0].cc_params.ect=ect2"], "flows[0].cc_params.ect", "ect0, ect1"),
        (["flows[0].cc=dctcp", "flows[0].cc_params.g=0"], "flows[0].cc_params.g", "(0, 1]"),
        (["flows[0].cc=prague", "flows[0].cc_params.rtt_independence=scalable"], "flows[0].cc_params.rtt_independence",
         "off, rate"),
        (["flows[0].cc=prague", "flows[0].cc_params.target_rtt=0s"], "flows[0].cc_params.target_rtt", "greater than 0"),
        (["flows[0].cc=prague", "flows[0].cc_params.classic_fallback=1"], "flows[0].cc_params.classic_fallback",
         "true or false"),
    ],
)
def test_bad_l4s_settings_exit_2_naming_the_key(small_toml: Path, tmp_path: Path, sets: list[str], key: str,
                                                needle: str):
    assert_run_refused(small_toml, tmp_path / "out", sets, key, key, needle)


def test_dctcp_and_prague_run(small_toml: Path):
    proc = cli("run", str(small_toml), "--set", "flows[0].cc=dctcp", "--set", "flows[1].cc=prague", "--set",
               "duration=2s", "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert [f["cc"] for f in summary["flows"]] == ["dctcp", "prague"]
