"""The message framing between the local back end and its worker processes: each message is
an 8-byte big-endian length and a pickle (the driver is the parent process: trusted).

Its own module so that :mod:`bloatlab.sweeps.backends` (the driver side) and :mod:`bloatlab.sweeps.worker`
(the worker side, which runs :func:`bloatlab.sweeps.backends.execute`) do not import each other.
"""

from __future__ import annotations

import pickle
import struct
from typing import BinaryIO

_LEN = struct.Struct(">Q")


def read_msg(f: BinaryIO) -> object | None:
    head = f.read(_LEN.size)
    if len(head) < _LEN.size:
        return None
    (n,) = _LEN.unpack(head)
    data = f.read(n)
    if len(data) < n:
        return None
    return pickle.loads(data)


def write_msg(f: BinaryIO, obj: object) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    f.write(_LEN.pack(len(data)))
    f.write(data)
    f.flush()
