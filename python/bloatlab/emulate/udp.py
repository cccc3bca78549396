"""UDP constant-bit-rate flows of an emulation, in the end hosts (``transport = "udp"``,
``app = "cbr"``): the sender sends one datagram of ``payload`` bytes every ``gap`` (the
simulator's gap: the wire size at the configured rate) from port 10000 + id; the receiver
(port 5001) measures what arrived, the one-way delay (sender and receiver share
CLOCK_MONOTONIC: the send time travels in the datagram) and the RFC 3550 jitter.

Datagram payload: sequence number and send time (CLOCK_MONOTONIC ns), 8 bytes each, then
zeros. A late wake-up sends the datagrams that became due at once (the average rate holds;
the sender's own jitter shows in the one-way delays).
"""

from __future__ import annotations

import socket
import struct
import time
from pathlib import Path
from typing import Any

HEADER = struct.Struct("!QQ")  # seq, send time (ns)
#: after its last datagram, a sized flow counts as done once this much more than its base RTT
#: has passed (what is still queued has arrived or been dropped by then)
DRAIN_NS = 1_000_000_000


def send(fl: Any, spec: dict[str, Any], t0: int, end: int) -> None:
    """Sends flow ``fl.f`` (a plan flow) until its budget or the run ends; fills ``fl.udp``."""
    f = fl.f
    gap, payload = f["gap_ns"], f["payload"]
    budget = f["size"]
    start = t0 + f["start_ns"]
    if start >= end:
        return
    warm = t0 + spec["warmup_ns"]
    st = {"pkts_sent": 0, "bytes_sent": 0, "pkts_window": 0, "bytes_window": 0, "send_errors": 0}
    fl.udp = st
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind((spec["snd_addr"], f["port"]))
        s.connect((spec["rcv_addr"], spec["rcv_port"]))
    except OSError as e:
        fl.error = f"udp: {e}"
        s.close()
        return
    buf = bytearray(max(payload, HEADER.size))
    seq = 0
    try:
        while budget is None or st["bytes_sent"] < budget:
            due = start + seq * gap
            if due >= end:
                break
            while (now := time.monotonic_ns()) < due:
                time.sleep(min((due - now) / 1e9, 0.05))
            n = payload if budget is None else min(payload, budget - st["bytes_sent"])
            HEADER.pack_into(buf, 0, seq, time.monotonic_ns())
            try:
                s.send(memoryview(buf)[:max(n, HEADER.size)])
            except OSError:  # ENOBUFS: the device's queue is full; counted, not sent
                st["send_errors"] += 1
                seq += 1
                continue
            seq += 1
            st["pkts_sent"] += 1
            st["bytes_sent"] += n
            if due >= warm:
                st["pkts_window"] += 1
                st["bytes_window"] += n
        fl.done_ns = time.monotonic_ns()
    finally:
        s.close()


def done(fl: Any, t: int) -> bool:
    """Whether a sized UDP flow has sent everything and what it sent has had time to arrive."""
    return fl.done_ns is not None and t >= fl.done_ns + fl.f["base_rtt_ns"] + DRAIN_NS


def receive(spec: dict[str, Any], t0: int, end: int, warm: int, recs: dict[int, dict[str, Any]],
            stop: Path | None) -> None:
    """Receives every UDP flow's datagrams on port 5001 until the end (or the stop file)."""
    by_port = {f["port"]: f for f in spec["flows"] if f.get("transport") == "udp"}
    for f in by_port.values():
        recs[f["id"]] = {"id": f["id"], "bytes_total": 0, "bytes_window": 0, "datagrams_window": 0,
                         "complete_s": None, "error": None, "owd_ns": [], "jitter_ns": 0.0}
    last_transit: dict[int, int] = {}
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    s.bind((spec["rcv_addr"], spec["rcv_port"]))
    s.settimeout(0.05)
    buf = bytearray(65536)
    checked = 0
    try:
        while (t := time.monotonic_ns()) < end:
            if stop is not None and t - checked > 50_000_000:
                checked = t
                if stop.exists():
                    break
            try:
                n, (_, port) = s.recvfrom_into(buf)
            except (TimeoutError, BlockingIOError):
                continue
            t = time.monotonic_ns()
            f = by_port.get(port)
            if f is None or n < HEADER.size or t > end:
                continue
            rec = recs[f["id"]]
            _, sent = HEADER.unpack_from(buf, 0)
            rec["bytes_total"] += n
            if f["size"] is not None and rec["complete_s"] is None and rec["bytes_total"] >= f["size"]:
                rec["complete_s"] = (t - t0) / 1e9
            if t < warm:
                continue
            rec["bytes_window"] += n
            rec["datagrams_window"] += 1
            owd = t - sent
            rec["owd_ns"].append(owd)
            prev = last_transit.get(f["id"])
            if prev is not None:  # RFC 3550 §6.4.1, as the simulator's sink
                rec["jitter_ns"] += (abs(owd - prev) - rec["jitter_ns"]) / 16.0
            last_transit[f["id"]] = owd
    finally:
        s.close()
