"""The kernel TCP endpoints of an emulation: ``python -m bloatlab.emulate.endpoint
{sender,receiver} SPEC.json``, run inside the senders' / receivers' namespace (each end
host sends the flows whose data starts there: forward flows at the senders' end, reverse
flows at the receivers', and receives the others).

Both write their ready file, wait for the controller's go file (the shared time origin t0,
CLOCK_MONOTONIC ns — the same clock the bottleneck uses), run until t0 + duration and write
their measurements to the spec's ``out_file``. The sender opens one connection per flow from
port 10000 + id with the flow's kernel congestion control and samples TCP_INFO; the receiver
counts delivered bytes per flow and applies DRWA with TCP_WINDOW_CLAMP.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ..atomic import write_text
from . import tcpinfo, udp, web
from .flows import SenderFlow

SAMPLE_NS = 10_000_000  # TCP_INFO sampling for RTT statistics
CHUNK = 1 << 20


def now_ns() -> int:
    return time.monotonic_ns()


def sleep_until(t_ns: int) -> None:
    while True:
        d = t_ns - now_ns()
        if d <= 0:
            return
        time.sleep(min(d / 1e9, 0.05))


def wait_go(spec: dict[str, Any]) -> int:
    Path(spec["ready_file"]).write_text("ready\n")
    go = Path(spec["go_file"])
    deadline = time.monotonic() + 120
    while not go.exists():
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting for the go file")
        time.sleep(0.001)
    return int(go.read_text().strip())


def write_out(spec: dict[str, Any], data: dict[str, Any]) -> None:
    out = Path(spec["out_file"])
    write_text(out, json.dumps(data))


def device_drops(name: str) -> dict[str, int] | None:
    """Packets the kernel dropped at this namespace's TUN device (its transmit queue towards
    the bottleneck, and received packets it could not take): /proc/net/dev is per namespace."""
    try:
        for line in Path("/proc/net/dev").read_text().splitlines():
            dev, _, rest = line.partition(":")
            if dev.strip() == name:
                v = [int(x) for x in rest.split()]
                return {"rx_dropped": v[3], "tx_dropped": v[11], "tx_packets": v[9], "rx_packets": v[1]}
    except (OSError, ValueError, IndexError):
        pass
    return None


class DropWatch:
    """The device's drop counters, read now and then during the run (the device disappears
    with the bottleneck at the end, so the last reading before that is kept)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.name = spec.get("tun", "")
        self.last: dict[str, int] | None = None
        self.at = 0

    def poll(self, t: int) -> None:
        if t - self.at >= 100_000_000:
            self.at = t
            self.last = device_drops(self.name) or self.last


# ---------------------------------------------------------------- sender


def _send(fl: SenderFlow, spec: dict[str, Any], t0: int, end: int) -> None:
    f = fl.f
    if t0 + f["start_ns"] >= end:
        return  # starts after the run: never active, as in the simulator
    sleep_until(t0 + f["start_ns"])
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.IPPROTO_TCP, tcpinfo.TCP_CONGESTION, f["kernel_cc"].encode())
        tcpinfo.nodelay(s, f)
        s.bind((spec["snd_addr"], f["port"]))
        s.settimeout(max(1.0, (end - now_ns()) / 1e9))
        s.connect((spec["rcv_addr"], spec["rcv_port"]))
    except OSError as e:
        fl.error = f"connect: {e}"
        s.close()
        return
    fl.connected_ns = now_ns()
    with fl.lock:
        fl.sock = s
    s.settimeout(0.05)
    buf = memoryview(bytearray(CHUNK))
    size = f["size"]
    sent = 0
    try:
        while now_ns() < end and (size is None or sent < size):
            n = CHUNK if size is None else min(CHUNK, size - sent)
            try:
                sent += s.send(buf[:n])
            except (TimeoutError, BlockingIOError):
                continue
        if size is not None and sent >= size:
            s.shutdown(socket.SHUT_WR)
            # The receiver closes once it has read everything: then all is acknowledged.
            while now_ns() < end:
                try:
                    if s.recv(4096) == b"":
                        break
                except (TimeoutError, BlockingIOError):
                    continue
            with fl.lock:
                fl.final = tcpinfo.read(s)
                fl.done_ns = now_ns()
    except OSError as e:
        fl.error = f"send: {e}"


def _sample(flows: list[SenderFlow], spec: dict[str, Any], t0: int, end: int, rows: list[dict[str, Any]],
            drops: DropWatch) -> None:
    warm = t0 + spec["warmup_ns"]
    interval = spec["interval_ns"]
    step = min(SAMPLE_NS, interval) if interval > 0 else SAMPLE_NS
    next_row = t0 + interval if interval > 0 else None
    # Without a warm-up the counters count from zero (no baseline snapshot).
    warmed = spec["warmup_ns"] == 0
    k = 1
    while True:
        t = t0 + k * step
        k += 1
        t = min(t, end)
        sleep_until(t)
        drops.poll(t)
        at_warm = not warmed and t >= warm
        row_due = next_row is not None and t >= next_row
        for fl in flows:
            with fl.lock:
                s = fl.sock
                if s is None or fl.final is not None:
                    continue
                try:
                    info = tcpinfo.read(s)
                except OSError:
                    continue
            if at_warm:
                fl.base = info
            if t >= warm and info.rtt_us > 0:
                fl.rtt_us.append(info.rtt_us)
            if row_due:
                rows.append(_row(fl, info, (t - t0) / 1e9, interval))
        if at_warm:
            warmed = True
        if row_due:
            next_row += interval
        if all_done(flows, spec, t):
            end = t  # every transfer is complete: the run ends here, as a simulated one does
            Path(spec["stop_file"]).write_text("done\n")
        if t >= end:
            for fl in flows:
                with fl.lock:
                    if fl.sock is not None and fl.final is None:
                        try:
                            fl.final = tcpinfo.read(fl.sock)
                        except OSError:
                            pass
            return


def all_done(flows: list[SenderFlow], spec: dict[str, Any], t: int) -> bool:
    """Whether every flow is a sized transfer that has completed (or failed): the run can end.
    Only with a stop file to tell the others, and never for a run with a bulk flow."""
    if not spec.get("stop_file"):
        return False

    def done(fl: SenderFlow) -> bool:
        if fl.f["size"] is None:
            return False
        if fl.error is not None:
            return True
        return udp.done(fl, t) if fl.f.get("transport") == "udp" else fl.done_ns is not None

    return all(done(fl) for fl in flows)


def _row(fl: SenderFlow, i: tcpinfo.TcpInfo, t_s: float, interval: int) -> dict[str, Any]:
    p = fl.prev
    secs = interval / 1e9
    thr = (i.bytes_sent - (p.bytes_sent if p else 0)) * 8 / secs / 1e6
    good = (i.bytes_acked - (p.bytes_acked if p else 0)) * 8 / secs / 1e6
    fl.prev = i
    mss = i.snd_mss or 1448
    return {
        "t_s": round(t_s, 9), "flow": fl.f["id"], "cwnd_bytes": i.snd_cwnd * mss,
        "ssthresh_bytes": min(i.snd_ssthresh, 2**31 // mss) * mss, "inflight_bytes": i.unacked * mss,
        "rwnd_bytes": i.snd_wnd, "srtt_ms": i.rtt_us / 1e3, "rtt_ms": i.rtt_us / 1e3,
        "throughput_mbps": thr, "goodput_mbps": good, "pacing_mbps": i.pacing_rate * 8 / 1e6,
        "ca_state": tcpinfo.CA_STATES[i.ca_state] if i.ca_state < len(tcpinfo.CA_STATES) else str(i.ca_state),
        "cc_state": "", "delivery_rate_mbps": i.delivery_rate * 8 / 1e6,
    }


def run_sender(spec: dict[str, Any], t0: int, web_ls: dict[int, socket.socket]) -> dict[str, Any]:
    """Sends the flows of ``spec`` (this side's senders) from ``t0``; returns the measurements.
    ``web_ls``: the web servers' listening sockets, by flow id."""
    end = t0 + spec["duration_ns"]
    flows = [SenderFlow(f) for f in spec["flows"]]
    rows: list[dict[str, Any]] = []
    drops = DropWatch(spec)

    def thread(fl: SenderFlow) -> threading.Thread:
        if web.is_web(fl.f):
            return threading.Thread(target=web.serve, args=(fl, web_ls[fl.f["id"]], t0, end), daemon=True)
        return threading.Thread(target=udp.send if fl.f.get("transport") == "udp" else _send,
                                args=(fl, spec, t0, end), daemon=True)

    threads = [thread(fl) for fl in flows]
    sampler = threading.Thread(target=_sample, args=(flows, spec, t0, end, rows, drops), daemon=True)
    for th in [*threads, sampler]:
        th.start()
    sampler.join()
    for th in threads:
        th.join(timeout=1.0)
    out = []
    for fl in flows:
        out.append({
            "id": fl.f["id"], "error": fl.error,
            "connected_s": None if fl.connected_ns is None else (fl.connected_ns - t0) / 1e9,
            "done_s": None if fl.done_ns is None else (fl.done_ns - t0) / 1e9,
            "base": fl.base._asdict() if fl.base else None,
            "final": fl.final._asdict() if fl.final else None,
            "rtt_us": fl.rtt_us, "udp": fl.udp,
        })
    return {"flows": out, "rows": rows, "device": drops.last}


# ---------------------------------------------------------------- receiver


class Drwa:
    """DRWA (Jiang et al. 2012) at a real receiver, as crates/sim/src/tcp/rwnd.rs: once per
    RTT, rwnd = λ · (RTT_min / RTT_est) · cwnd_est, with cwnd_est an EWMA (7/8) of the bytes
    received in the last RTT; RTT_est is the kernel's receiver RTT estimate (tcpi_rcv_rtt).
    Applied with TCP_WINDOW_CLAMP by the receive loop, after every read (never below 4
    segments, so the connection cannot stall)."""

    def __init__(self, lam: float, cap: int | None = None) -> None:
        self.lam = lam
        self.cap = cap  # the scenario's rcvbuf, when it sets one
        self.window: int | None = None  # the clamp to hold, once computed
        self.period_start = 0
        self.bytes = 0
        self.rtt_min = float("inf")
        self.cwnd_est: float | None = None
        self.clamps = 0

    def on_data(self, s: socket.socket, t: int, n: int) -> None:
        self.bytes += n
        if self.period_start == 0:
            self.period_start = t
            return
        try:
            info = tcpinfo.read(s)
        except OSError:
            return
        if info.rcv_rtt_us <= 0:
            return
        est = info.rcv_rtt_us * 1000
        self.rtt_min = min(self.rtt_min, est)
        if t - self.period_start < est:
            return
        got = float(self.bytes)
        self.cwnd_est = got if self.cwnd_est is None else 0.875 * self.cwnd_est + 0.125 * got
        rwnd = int(self.lam * self.rtt_min / est * self.cwnd_est)
        if self.cap is not None:
            rwnd = min(rwnd, self.cap)
        mss = info.rcv_mss or 1448
        self.window = max(rwnd, 4 * mss)
        self.clamps += 1
        self.period_start = t
        self.bytes = 0


def clamp_window(s: socket.socket, window: int) -> None:
    """Bounds the advertised window. Linux's receive-buffer autotuning raises the window clamp
    as it grows the buffer (6.x), so a receiver that wants a bound re-asserts it after every
    read (a no-op in the kernel while it holds)."""
    try:
        s.setsockopt(socket.IPPROTO_TCP, tcpinfo.TCP_WINDOW_CLAMP, window)
    except OSError:
        pass


def _receive(conn: socket.socket, rec: dict[str, Any], f: dict[str, Any] | None, t0: int, end: int, warm: int) -> None:
    buf = bytearray(1 << 18)
    # The scenario's receive buffer bounds the advertised window (the simulator's rcvbuf);
    # without it Linux autotunes up to tcp_rmem's maximum.
    cap = f.get("rcvbuf") if f else None
    drwa = Drwa(f["rwnd"]["lambda"], cap) if f and f["rwnd"]["kind"] == "drwa" else None
    conn.settimeout(0.05)
    size = f["size"] if f else None
    try:
        while True:
            try:
                n = conn.recv_into(buf)
            except (TimeoutError, BlockingIOError):
                if now_ns() >= end:
                    break
                continue
            t = now_ns()
            if n == 0:
                break
            if t > end:
                break
            rec["bytes_total"] += n
            if t >= warm:
                rec["bytes_window"] += n
            if size is not None and rec["bytes_total"] >= size and rec["complete_s"] is None:
                rec["complete_s"] = (t - t0) / 1e9
            if drwa is not None:
                drwa.on_data(conn, t, n)
            want = drwa.window if drwa is not None and drwa.window is not None else cap
            if want is not None:
                clamp_window(conn, want)
    except OSError as e:
        rec["error"] = str(e)
    finally:
        if drwa is not None:
            rec["drwa_clamps"] = drwa.clamps
        conn.close()


def listen(spec: dict[str, Any]) -> socket.socket:
    """The receivers' listening socket, ready before the go (connections may come at once)."""
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    caps = {f.get("rcvbuf") for f in spec["flows"]}
    if len(caps) == 1 and (cap := caps.pop()) is not None:
        # Inherited by every accepted connection, so the SYN-ACK already honours it.
        clamp_window(ls, cap)
    ls.bind((spec["rcv_addr"], spec["rcv_port"]))
    ls.listen(1024)
    return ls


def run_receiver(spec: dict[str, Any], ls: socket.socket, t0: int) -> dict[str, Any]:
    """Receives the flows of ``spec`` (this side's receivers) on ``ls``; returns the measurements."""
    by_port = {f["port"]: f for f in spec["flows"]}
    end = t0 + spec["duration_ns"]
    warm = t0 + spec["warmup_ns"]
    recs: dict[int, dict[str, Any]] = {}
    threads = []
    drops = DropWatch(spec)
    ls.settimeout(0.05)
    stop = Path(spec["stop_file"]) if spec.get("stop_file") else None
    if any(f.get("transport") == "udp" for f in spec["flows"]):
        th = threading.Thread(target=udp.receive, args=(spec, t0, end, warm, recs, stop), daemon=True)
        th.start()
        threads.append(th)
    for f in filter(web.is_web, spec["flows"]):  # web clients connect out, to the server's port
        recs[f["id"]] = {"id": f["id"], "port": f["port"], "bytes_total": 0, "bytes_window": 0, "complete_s": None,
                         "error": None, "accepted_s": None}
        th = threading.Thread(target=web.fetch, args=(f, spec, recs[f["id"]], t0, end, warm, clamp_window), daemon=True)
        th.start()
        threads.append(th)
    while (t := now_ns()) < end:
        drops.poll(t)
        if stop is not None and stop.exists():
            break  # every transfer is done (the sender said so)
        try:
            conn, (_, port) = ls.accept()
        except (TimeoutError, BlockingIOError):
            continue
        f = by_port.get(port)
        rec = {"id": f["id"] if f else None, "port": port, "bytes_total": 0, "bytes_window": 0,
               "complete_s": None, "error": None, "accepted_s": (now_ns() - t0) / 1e9}
        if f is not None:
            recs[f["id"]] = rec
        th = threading.Thread(target=_receive, args=(conn, rec, f, t0, end, warm), daemon=True)
        th.start()
        threads.append(th)
    for th in threads:
        th.join(timeout=1.0)
    ls.close()
    return {"flows": [recs.get(f["id"]) for f in spec["flows"]], "device": drops.last}


def main(argv: list[str]) -> None:
    """One end host: ``send`` (its data senders: the forward flows at the senders' end, the
    reverse flows at the receivers' end) and ``recv`` (its data receivers), each optional,
    from one time origin; writes ``{"send": ..., "recv": ...}``."""
    spec = json.loads(Path(argv[2]).read_text())
    send, recv = spec.get("send"), spec.get("recv")
    ls = listen(recv) if recv else None
    web_ls = {f["id"]: web.listener(f, send["snd_addr"]) for f in send["flows"] if web.is_web(f)} if send else {}
    t0 = wait_go(spec)
    out: dict[str, Any] = {"send": None, "recv": None}

    def part(name: str, fn: Any, *args: Any) -> threading.Thread:
        th = threading.Thread(target=lambda: out.__setitem__(name, fn(*args)), daemon=True)
        th.start()
        return th

    threads = []
    if recv and ls is not None:
        threads.append(part("recv", run_receiver, recv, ls, t0))
    if send:
        threads.append(part("send", run_sender, send, t0, web_ls))
    for th in threads:
        th.join()
    write_out(spec, out)


if __name__ == "__main__":
    main(sys.argv)
