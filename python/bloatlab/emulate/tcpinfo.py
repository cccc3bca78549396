"""``struct tcp_info`` (linux/tcp.h) from ``getsockopt(IPPROTO_TCP, TCP_INFO)``.

Fields newer than the running kernel read as 0 (the kernel copies only what it has).
"""

from __future__ import annotations

import socket
import struct
from typing import Any, NamedTuple

TCP_INFO = getattr(socket, "TCP_INFO", 11)
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_WINDOW_CLAMP = getattr(socket, "TCP_WINDOW_CLAMP", 10)

_FORMAT = "=8B24I4Q6IQ3Q2I2Q2I4I2HI"
SIZE = struct.calcsize(_FORMAT)

CA_STATES = ("open", "disorder", "cwr", "recovery", "loss")


class TcpInfo(NamedTuple):
    state: int
    ca_state: int
    snd_mss: int
    rcv_mss: int
    unacked: int
    rtt_us: int
    rttvar_us: int
    snd_ssthresh: int
    snd_cwnd: int
    rcv_rtt_us: int
    total_retrans: int
    pacing_rate: int  # bytes/s
    bytes_acked: int
    bytes_received: int
    min_rtt_us: int
    delivery_rate: int  # bytes/s
    bytes_sent: int
    bytes_retrans: int
    snd_wnd: int
    total_rto: int


def parse(raw: bytes) -> TcpInfo:
    v = struct.unpack(_FORMAT, raw[:SIZE].ljust(SIZE, b"\0"))
    u = v[8:32]  # the 24 u32 from tcpi_rto to tcpi_total_retrans
    q = v[32:36]  # pacing_rate, max_pacing_rate, bytes_acked, bytes_received
    return TcpInfo(
        state=v[0], ca_state=v[1], snd_mss=u[2], rcv_mss=u[3], unacked=u[4],
        rtt_us=u[15], rttvar_us=u[16], snd_ssthresh=u[17], snd_cwnd=u[18], rcv_rtt_us=u[21],
        total_retrans=u[23], pacing_rate=q[0], bytes_acked=q[2], bytes_received=q[3],
        min_rtt_us=v[36 + 3], delivery_rate=v[42], bytes_sent=v[48], bytes_retrans=v[49],
        snd_wnd=v[53], total_rto=v[56],
    )


def read(sock: socket.socket) -> TcpInfo:
    return parse(sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 512))


def nodelay(s: socket.socket, f: dict[str, Any]) -> None:
    """TCP_NODELAY where the scenario turns Nagle's algorithm off (`tcp.nagle = false`, the
    plan's ``nodelay``); otherwise the socket keeps Linux's default, Nagle on."""
    if f.get("nodelay"):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
