"""A worker process of the local sweep back end (started by :class:`bloatlab.sweeps.backends.LocalBackend`).

Reads tasks from stdin and writes outcomes to stdout, each as an 8-byte big-endian
length and a pickle (the driver is the parent process: trusted). One task at a time,
so the driver always knows which run a worker was running when it died. The worker
ignores Ctrl-C (the driver stops it) and exits when the driver is gone.

A separate program rather than ``multiprocessing``: the driver's ``__main__`` is
never re-imported, so a user's script needs no ``if __name__ == "__main__"`` guard.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

from .wire import read_msg, write_msg


def _watch_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        try:  # the kernel kills this worker when the driver dies, even by SIGKILL
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        except Exception:  # noqa: BLE001
            pass
    if os.getppid() != parent:
        os._exit(1)

    def watch() -> None:  # portable fallback
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True, name="bloatlab-watchdog").start()


def main(argv: list[str]) -> int:
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (ValueError, OSError):
        pass
    if argv:
        _watch_parent(int(argv[0]))
    # The protocol owns the real stdout; anything else printed to fd 1 goes to stderr.
    proto_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    proto_in = sys.stdin.buffer

    import pandas  # noqa: F401 - imported once here, not in the first run's time (pyarrow uses it)
    import pyarrow  # noqa: F401
    import pyarrow.parquet  # noqa: F401

    from .backends import execute

    write_msg(proto_out, {"ready": os.getpid()})
    while True:
        task = read_msg(proto_in)
        if task is None:
            return 0
        write_msg(proto_out, execute(task))  # type: ignore[arg-type]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
