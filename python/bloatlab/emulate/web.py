"""The web application on real Linux TCP (the simulator's ``app = "web"``, Alfredsson et
al.'s short flows): the receivers' end (the client) opens a new connection for every request
and sends ``request`` bytes; the senders' end (the server, listening on the flow's port
10000 + id with the flow's congestion control) answers with the response (the flow's size)
and closes; ``think`` after a response, the next request starts. The response time runs from
the client's connect (its SYN) to the response's last byte, connection set-up included, as
in the simulator; requests started before the warm-up's end are not counted.

The server's TCP counters add up over the flow's connections (the warm-up is not subtracted).
"""

from __future__ import annotations

import socket
import time
from typing import Any

from . import tcpinfo
from .flows import SenderFlow

POLL_S = 0.05
#: TCP_INFO counters that add up over connections; the other fields are the last connection's
COUNTERS = ("bytes_sent", "bytes_retrans", "bytes_acked", "total_retrans", "total_rto")


def is_web(f: dict[str, Any]) -> bool:
    return f.get("app") == "web"


def listener(f: dict[str, Any], addr: str) -> socket.socket:
    """The server's listening socket, made before the go (a request may come at once); accepted
    connections inherit its congestion control."""
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.IPPROTO_TCP, tcpinfo.TCP_CONGESTION, f["kernel_cc"].encode())
    tcpinfo.nodelay(ls, f)  # accepted connections inherit it too
    ls.bind((addr, f["port"]))
    ls.listen(16)
    ls.settimeout(POLL_S)
    return ls


def _now() -> int:
    return time.monotonic_ns()


def _add(total: tcpinfo.TcpInfo | None, info: tcpinfo.TcpInfo) -> tcpinfo.TcpInfo:
    if total is None:
        return info
    return info._replace(**{k: getattr(total, k) + getattr(info, k) for k in COUNTERS})


def serve(fl: SenderFlow, ls: socket.socket, t0: int, end: int) -> None:
    """The server of one web flow: answers every request until the run ends (or the flow's
    last request); ``fl.final`` gets the counters of all its connections."""
    f, web = fl.f, fl.f["web"]
    done: tcpinfo.TcpInfo | None = None
    served = 0
    buf = memoryview(bytearray(1 << 16))
    try:
        while _now() < end and (web["requests"] is None or served < web["requests"]):
            try:
                conn, _ = ls.accept()
            except (TimeoutError, BlockingIOError):
                continue
            conn.settimeout(POLL_S)
            if fl.connected_ns is None:
                fl.connected_ns = _now()
            with fl.lock:
                fl.sock = conn
            ok = _answer(conn, web["request"], f["size"], buf, end)
            info = tcpinfo.read(conn)
            with fl.lock:
                fl.sock = None
                done = _add(done, info)
            conn.close()
            served += ok
    except OSError as e:
        fl.error = f"web server: {e}"
    finally:
        ls.close()
    with fl.lock:
        fl.base = None  # the counters are the connections' totals (see the module docstring)
        fl.final = done
        if web["requests"] is not None and served >= web["requests"]:
            fl.done_ns = _now()


def _answer(conn: socket.socket, request: int, size: int, buf: memoryview, end: int) -> bool:
    """Reads the request, sends the response, waits for the client to close; True if complete."""
    got = 0
    while got < request and _now() < end:
        try:
            n = conn.recv_into(buf)
        except (TimeoutError, BlockingIOError):
            continue
        if n == 0:
            return False
        got += n
    sent = 0
    while sent < size and _now() < end:
        try:
            sent += conn.send(buf[:min(len(buf), size - sent)])
        except (TimeoutError, BlockingIOError):
            continue
    if sent < size:
        return False
    conn.shutdown(socket.SHUT_WR)
    while _now() < end:  # the client closes once it has the whole response: all is acknowledged
        try:
            if conn.recv(4096) == b"":
                break
        except (TimeoutError, BlockingIOError):
            continue
    return True


def fetch(f: dict[str, Any], spec: dict[str, Any], rec: dict[str, Any], t0: int, end: int, warm: int,
          clamp: Any) -> None:
    """The client of one web flow: its requests one after the other, each on a new connection;
    ``rec`` gets the bytes received, the response times and, after the last request, ``complete_s``."""
    web = f["web"]
    times: list[float] = rec.setdefault("responses", [])
    buf = bytearray(1 << 18)
    start = t0 + f["start_ns"]
    n = 0
    try:
        while start < end and (web["requests"] is None or n < web["requests"]):
            while _now() < start:
                time.sleep(min(POLL_S, (start - _now()) / 1e9))
            t_syn = _now()
            got = _one(f, spec, rec, buf, end, warm, clamp)
            if got < f["size"]:
                break  # the run ended first (or the connection failed)
            t = _now()
            if t_syn >= warm:
                times.append((t - t_syn) / 1e9)
            n += 1
            start = t + web["think_ns"]
        if web["requests"] is not None and n >= web["requests"]:
            rec["complete_s"] = (_now() - t0) / 1e9
    except OSError as e:
        rec["error"] = f"web client: {e}"


def _one(f: dict[str, Any], spec: dict[str, Any], rec: dict[str, Any], buf: bytearray, end: int, warm: int,
         clamp: Any) -> int:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        cap = f.get("rcvbuf")
        if cap is not None:
            clamp(s, cap)  # before the SYN, so the first window already honours it
        tcpinfo.nodelay(s, f)
        s.settimeout(max(POLL_S, (end - _now()) / 1e9))
        s.bind((spec["rcv_addr"], 0))
        s.connect((spec["snd_addr"], f["port"]))
        s.sendall(bytes(f["web"]["request"]))
        s.settimeout(POLL_S)
        got = 0
        while got < f["size"] and _now() < end:
            try:
                n = s.recv_into(buf)
            except (TimeoutError, BlockingIOError):
                continue
            if n == 0:
                break
            got += n
            rec["bytes_total"] += n
            if _now() >= warm:
                rec["bytes_window"] += n
            if cap is not None:
                clamp(s, cap)
        return got
    finally:
        s.close()
