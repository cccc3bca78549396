"""The senders' end's state of one flow, shared by the TCP sender (:mod:`.endpoint`) and the
web server (:mod:`.web`): its own module, so that neither of those imports the other."""

from __future__ import annotations

import socket
import threading
from typing import Any

from . import tcpinfo


class SenderFlow:
    def __init__(self, f: dict[str, Any]) -> None:
        self.f = f
        self.sock: socket.socket | None = None
        self.lock = threading.Lock()
        self.connected_ns: int | None = None
        self.done_ns: int | None = None
        self.error: str | None = None
        self.base: tcpinfo.TcpInfo | None = None  # counters at the end of the warm-up
        self.final: tcpinfo.TcpInfo | None = None
        self.rtt_us: list[int] = []
        self.prev: tcpinfo.TcpInfo | None = None  # at the previous series row
        self.udp: dict[str, int] | None = None  # a UDP flow's counters (emulate/udp.py)
