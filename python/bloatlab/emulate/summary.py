"""The emulation's summary JSON: the simulator's fields (docs/scenario.md) computed from the
bottleneck's measurements (queue, drops, per-flow losses), the senders' TCP_INFO and the
receivers' byte counts, plus an ``emulation`` block of what only a real run has.

Definitions that differ from the simulator's, because a real stack exposes less:
``rtt_mean_ms`` / ``rtt_p95_ms`` come from the kernel's smoothed RTT sampled every 10 ms
(not from every ACK); ``recoveries`` is null (Linux has no counter of fast-recovery
episodes); ``timeouts`` is ``tcpi_total_rto`` (Linux 6.7+).
"""

from __future__ import annotations

import json
import math
import platform
from collections.abc import Mapping
from typing import Any

from .. import _core


def _pct(values: list[int], q: float) -> float:
    s = sorted(values)
    return float(s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))])


def _udp_flow(f: Mapping[str, Any], s: Mapping[str, Any], r: Mapping[str, Any] | None, c: Mapping[str, Any],
              dur: float, warm: float) -> dict[str, Any]:
    """A UDP CBR flow's measurements (emulate/udp.py): what the sender sent and the receiver
    got in the window, its one-way delays and jitter; losses are the bottleneck's."""
    start = f["start_ns"] / 1e9
    done = r["complete_s"] if r else None
    sized = f["size"] is not None
    end = done if (sized and done is not None) else dur
    owd = r["owd_ns"] if r else []
    sent = (s.get("udp") or {}).get("bytes_window", 0)
    return {
        "id": f["id"], "group": f["group"], "transport": "udp", "cc": f["cc"],
        "start_s": start, "end_s": done if sized else None,
        "fct_s": (done - start) if (sized and done is not None) else None,
        "active_s": max(end - max(start, warm), 0.0),
        "bytes_sent": sent, "bytes_retrans": 0, "bytes_delivered": r["bytes_window"] if r else 0,
        "data_pkts": c["data_pkts"], "data_drops": c["data_drops"],
        "rtt": {"n": 0, "sum_ns": 0.0, "p95_ns": 0},
        "owd": {"n": len(owd), "sum_ns": float(sum(owd)), "p95_ns": int(_pct(owd, 0.95)) if owd else 0},
        "base_rtt_ms": f["base_rtt_ns"] / 1e6,
        "retransmits": 0, "timeouts": 0, "recoveries": 0,
        "responses": None, "datagrams_delivered": r["datagrams_window"] if r else 0,
        "jitter_ms": (r["jitter_ns"] / 1e6) if (r and owd) else None,
    }


def build(doc: Mapping[str, Any], plan: Mapping[str, Any], bn: Mapping[str, Any], snd: Mapping[str, Any],
          rcv: Mapping[str, Any], wall_s: float) -> tuple[dict[str, Any], dict[str, dict[str, list[Any]]]]:
    """The summary and the time-series tables of an emulation run. The summary's shape is
    built by the simulator's builder (``_core.summary_json``, crates/sim/src/metrics/measure.rs)
    from the measurements gathered here; only the ``emulation`` block is added in Python."""
    # A run whose transfers all completed stops early on the wall clock (io.stopped_s), but
    # its measurement window stays [warm-up, duration], as in the simulator.
    dur = plan["duration_ns"] / 1e9
    warm = plan["warmup_ns"] / 1e9
    flows = []
    for f, s, r, c in zip(plan["flows"], snd["flows"], rcv["flows"], bn["flows"], strict=True):
        if f.get("transport") == "udp":
            flows.append(_udp_flow(f, s, r, c, dur, warm))
            continue
        start = f["start_ns"] / 1e9
        sized = f["size"] is not None and f.get("app") != "web"  # a web flow's responses are timed instead
        done = r["complete_s"] if r else None
        end = done if (sized and done is not None) else dur
        base, final = s["base"], s["final"]
        sent = retx = retrans = rtos = 0
        if final:
            b = base or {}
            sent = final["bytes_sent"] - b.get("bytes_sent", 0)
            retx = final["bytes_retrans"] - b.get("bytes_retrans", 0)
            retrans = final["total_retrans"] - b.get("total_retrans", 0)
            rtos = final["total_rto"] - b.get("total_rto", 0)
        rtts = s["rtt_us"]  # the kernel's smoothed RTT, sampled every 10 ms
        flows.append({
            "id": f["id"], "group": f["group"], "transport": "tcp", "cc": f["cc"],
            "start_s": start, "end_s": done if sized else None,
            "fct_s": (done - start) if (sized and done is not None) else None,
            "active_s": max(end - max(start, warm), 1e-9),
            "bytes_sent": sent, "bytes_retrans": retx, "bytes_delivered": r["bytes_window"] if r else 0,
            "data_pkts": c["data_pkts"], "data_drops": c["data_drops"],
            "rtt": {"n": len(rtts), "sum_ns": sum(rtts) * 1e3, "p95_ns": int(_pct(rtts, 0.95) * 1000) if rtts else 0},
            "owd": {"n": 0, "sum_ns": 0.0, "p95_ns": 0},
            "base_rtt_ms": f["base_rtt_ns"] / 1e6,
            "retransmits": retrans, "timeouts": rtos, "recoveries": None,
            "responses": r.get("responses") if r and f.get("app") == "web" else None,
            "datagrams_delivered": None, "jitter_ms": None,
        })
    raw = bn["bottleneck"]  # the forward queue's measurements (crates/emu/src/stats.rs)
    io = bn["io"]
    measure = {
        "name": plan["name"], "seed": plan["seed"], "duration_s": dur, "flows": flows, "bottleneck": raw,
        "engine": {"wall_s": wall_s, "events": io["rounds"], "bottleneck_packets": io["bottleneck_packets"]},
    }
    summary: dict[str, Any] = json.loads(_core.summary_json(json.dumps(measure)))
    extra = {k: raw[k] for k in ("arrivals", "tx_packets", "tx_bytes")}
    errors = [f"flow {s['id']}: {s['error']}" for s in snd["flows"] if s.get("error")]
    summary["emulation"] = {
        "kernel": platform.release(),
        "bottleneck_window": extra,
        "reverse": bn["bottleneck_rev"],
        "gateway": bn.get("gateway"),
        "io": io,
        # Kernel drops at the TUN devices, outside the emulated queue (should be 0: the
        # bottleneck reads faster than the senders write).
        "device_drops": {"sender_side": snd.get("device"), "receiver_side": rcv.get("device")},
        "errors": errors,
        # Datagrams a UDP sender could not hand to its device (ENOBUFS): never sent.
        "udp_send_errors": {str(s["id"]): s["udp"]["send_errors"] for s in snd["flows"] if s.get("udp")},
        "drwa_clamps": {str(r["id"]): r["drwa_clamps"] for r in rcv["flows"] if r and "drwa_clamps" in r},
    }
    rows = snd["rows"]
    cols = ["t_s", "flow", "cwnd_bytes", "ssthresh_bytes", "inflight_bytes", "rwnd_bytes", "srtt_ms", "rtt_ms",
            "throughput_mbps", "goodput_mbps", "pacing_mbps", "ca_state", "cc_state", "delivery_rate_mbps"]
    flows_table = {c: [row[c] for row in rows] for c in cols}
    q = bn["queues"]
    queues_table = {k: [(math.nan if x is None else x) for x in v] if k in ("sojourn_ms", "tx_mbps",
                                                                            "aqm_state") else list(v)
                    for k, v in q.items()}
    return summary, {"flows": flows_table, "queues": queues_table}
