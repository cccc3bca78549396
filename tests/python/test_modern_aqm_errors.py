"""`bloatlab run` with bad parameters of the flow-queueing and L4S disciplines (fq_codel,
cake, dualpi2, step) and of the per-flow `host` / `dscp` keys: exit 2, one line naming the
key path and what is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import assert_invalid, cli

BASE = """
duration = "1s"
[topology]
bottleneck = {{ rate = "10Mbps", delay = "5ms" }}
bottleneck_queue = {queue}
[[flows]]
cc = "cubic"
{flow}
"""

QUEUE_CASES = [
    ('{ kind = "fq_codel", quantum = 1000 }', "topology.bottleneck_queue.quantum", "at least one MTU"),
    ('{ kind = "fq_codel", flows = 0 }', "topology.bottleneck_queue.flows", "[1, 65536]"),
    ('{ kind = "fq_codel", memory_limit = "1KB" }', "topology.bottleneck_queue.memory_limit", "at least one MTU"),
    ('{ kind = "fq_codel", ce_threshold = "0ms" }', "topology.bottleneck_queue.ce_threshold", "greater than 0"),
    ('{ kind = "fq_codel", drop_batch = 0 }', "topology.bottleneck_queue.drop_batch", "[1, 65536]"),
    ('{ kind = "fq_codel", target = "0ms" }', "topology.bottleneck_queue.target", "greater than 0"),
    ('{ kind = "cake", isolation = "triple" }', "topology.bottleneck_queue.isolation", "triple-isolate"),
    ('{ kind = "cake", diffserv = "diffserv8" }', "topology.bottleneck_queue.diffserv", "diffserv4"),
    ('{ kind = "cake", overhead = 300 }', "topology.bottleneck_queue.overhead", "[-64, 256]"),
    ('{ kind = "cake", mpu = -1 }', "topology.bottleneck_queue.mpu", "[0, 256]"),
    ('{ kind = "cake", bandwidth = "fast" }', "topology.bottleneck_queue.bandwidth", "Mbps"),
    ('{ kind = "cake", target = "200ms" }', "topology.bottleneck_queue.target", "below rtt"),
    ('{ kind = "dualpi2", coupling_factor = 0.5 }', "topology.bottleneck_queue.coupling_factor", "[1, 64]"),
    ('{ kind = "dualpi2", step_thresh = "soon" }', "topology.bottleneck_queue.step_thresh", "1ms"),
    ('{ kind = "dualpi2", alpha = 0, beta = 0 }', "topology.bottleneck_queue.alpha", "both be 0"),
    ('{ kind = "dualpi2", tupdate = "0s" }', "topology.bottleneck_queue.tupdate", "greater than 0"),
    ('{ kind = "step", threshold = "0p" }', "topology.bottleneck_queue.threshold", "greater than 0"),
    ('{ kind = "step", threshold = "5000p" }', "topology.bottleneck_queue.threshold", "below the queue limit"),
    ('{ kind = "fq-codel" }', "topology.bottleneck_queue.kind", "fq_codel, dualpi2, cake"),
]


@pytest.mark.parametrize("queue,path,needle", QUEUE_CASES)
def test_bad_queue_parameters(tmp_path: Path, queue: str, path: str, needle: str):
    f = tmp_path / "s.toml"
    f.write_text(BASE.format(queue=queue, flow=""))
    assert_invalid(cli("run", str(f), "--out", str(tmp_path / "out")), path, needle)


@pytest.mark.parametrize(
    "flow,path,needle",
    [
        ('dscp = "AF99"', "flows[0].dscp", "AF11"),
        ("dscp = 64", "flows[0].dscp", "[0, 63]"),
        ('host = ""', "flows[0].host", "empty"),
    ],
)
def test_bad_flow_keys(tmp_path: Path, flow: str, path: str, needle: str):
    f = tmp_path / "s.toml"
    f.write_text(BASE.format(queue='{ kind = "cake" }', flow=flow))
    assert_invalid(cli("run", str(f), "--out", str(tmp_path / "out")), path, needle)


def test_good_parameters_run(tmp_path: Path):
    f = tmp_path / "s.toml"
    f.write_text(BASE.format(queue='{ kind = "cake", diffserv = "diffserv4", bandwidth = "8Mbps", overhead = 18 }',
                             flow='dscp = "EF"\nhost = "A"'))
    proc = cli("run", str(f), "--json")
    assert proc.returncode == 0, proc.stderr
    assert '"aqm": "cake"' in proc.stdout
