"""The validation matrix as data: one :class:`Cell` per scenario, and the scenario it runs.

Every cell is a dumbbell at one of :data:`RATES_MBPS` (10 Mbit/s, a rate the emulator holds with
a wide margin on a busy 2-core machine, and 100 Mbit/s, see docs/emulation.md) with no access
delay: the base RTT is twice the bottleneck's one-way delay, and the buffer is a multiple of the
bandwidth-delay product ``rate × base RTT``.

The both-ways slice (:func:`both_ways_matrix`) is a home link's shape: the reverse direction at
a quarter of the forward rate, a drop-tail buffer of the same number of BDPs each way (each of
its own direction's rate), and as many bulk flows up as down, so the downloads' ACKs queue
behind the uploads' data.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

RATE_MBPS = 10
#: The rates a matrix runs at (``--rate``); cells at the default keep their historical ids.
RATES_MBPS = (10, 100)
#: Forward / reverse rate of the both-ways slice (a home link's 4:1).
BOTH_WAYS_RATIO = 4
CCS = ("reno", "cubic", "bbr")
BUFFERS_BDP = (0.5, 2.0, 8.0)
RTTS_MS = (10, 40, 150)
LOSSES_PCT = (0.0, 1.0)
FLOWS = (1, 4)
#: ``droptail`` is the plain buffer; ``ewt`` is the ACK rewriter on top of a drop-tail buffer;
#: ``codel`` and ``pie`` are the queue disciplines, with the buffer as their limit.
GATEWAYS = ("droptail", "ewt", "codel", "pie")

#: Run length of the full matrix and of ``--quick``, seconds; the first WARMUP_S are left out
#: of every metric (slow start and, for deep buffers, the first fill).
DEFAULT_DURATION_S = 30.0
QUICK_DURATION_S = 20.0
WARMUP_S = 5.0

#: The allowed values of each cell field, for ``--filter`` and its error messages.
FIELDS: dict[str, tuple[Any, ...]] = {
    "cc": CCS,
    "buffer_bdp": BUFFERS_BDP,
    "rtt_ms": RTTS_MS,
    "loss_pct": LOSSES_PCT,
    "flows": FLOWS,
    "gateway": GATEWAYS,
}


@dataclass(frozen=True)
class Cell:
    cc: str
    buffer_bdp: float
    rtt_ms: int
    loss_pct: float
    flows: int
    gateway: str = "droptail"
    rate_mbps: int = RATE_MBPS
    #: ``flows`` bulk flows each way over an asymmetric link (:func:`both_ways_matrix`).
    both_ways: bool = False

    @property
    def id(self) -> str:
        return (f"{self.cc}-{self.gateway}-b{self.buffer_bdp:g}-rtt{self.rtt_ms}"
                f"-loss{self.loss_pct:g}-f{self.flows}"
                + ("-both" if self.both_ways else "")
                + (f"-r{self.rate_mbps}" if self.rate_mbps != RATE_MBPS else ""))

    def params(self) -> dict[str, Any]:
        return asdict(self)

    def _bdp_bytes(self, rate_mbps: float) -> int:
        return round(self.buffer_bdp * rate_mbps * 1e6 * self.rtt_ms / 1e3 / 8)

    @property
    def buffer_bytes(self) -> int:
        return self._bdp_bytes(self.rate_mbps)

    @property
    def reverse_rate_mbps(self) -> float:
        """The reverse bottleneck's rate of a both-ways cell."""
        return self.rate_mbps / BOTH_WAYS_RATIO

    @property
    def reverse_buffer_bytes(self) -> int:
        return self._bdp_bytes(self.reverse_rate_mbps)


def full_matrix(rate_mbps: int = RATE_MBPS) -> list[Cell]:
    """reno, cubic, bbr × buffer 0.5/2/8 BDP × base RTT 10/40/150 ms × loss 0/1 % × 1 and 4
    flows on drop-tail (108 cells), then each of EWT, CoDel and PIE × the three controllers ×
    1 and 4 flows at 2 BDP, 40 ms, no random loss (18 cells): 126."""
    cells = [Cell(cc, b, r, loss, n, rate_mbps=rate_mbps)
             for cc in CCS for b in BUFFERS_BDP for r in RTTS_MS for loss in LOSSES_PCT for n in FLOWS]
    cells += [Cell(cc, 2.0, 40, 0.0, n, gw, rate_mbps=rate_mbps)
              for gw in GATEWAYS[1:] for cc in CCS for n in FLOWS]
    return cells


def quick_matrix(rate_mbps: int = RATE_MBPS) -> list[Cell]:
    """Eight cells, about 3.5 minutes at the quick duration: the three controllers at 2 BDP,
    40 ms, no loss, one flow; CUBIC with 4 flows and with 1 % loss; CUBIC behind EWT, CoDel and PIE."""
    cells = [
        Cell("reno", 2.0, 40, 0.0, 1),
        Cell("cubic", 2.0, 40, 0.0, 1),
        Cell("bbr", 2.0, 40, 0.0, 1),
        Cell("cubic", 2.0, 40, 0.0, 4),
        Cell("cubic", 2.0, 40, 1.0, 1),
        Cell("cubic", 2.0, 40, 0.0, 1, "ewt"),
        Cell("cubic", 2.0, 40, 0.0, 1, "codel"),
        Cell("cubic", 2.0, 40, 0.0, 1, "pie"),
    ]
    return [replace(c, rate_mbps=rate_mbps) for c in cells]


#: Buffers of the both-ways slice, BDPs each way: a moderate and a deep (home-router) buffer.
BOTH_WAYS_BUFFERS_BDP = (2.0, 8.0)


def both_ways_matrix(rate_mbps: int = RATE_MBPS) -> list[Cell]:
    """reno, cubic, bbr × drop-tail buffers of 2 and 8 BDP each way × 1 and 4 flows each way,
    40 ms, no random loss: 12 cells over a 4:1 asymmetric link."""
    return [Cell(cc, b, 40, 0.0, n, "droptail", rate_mbps, both_ways=True)
            for cc in CCS for b in BOTH_WAYS_BUFFERS_BDP for n in FLOWS]


def quick_both_ways_matrix(rate_mbps: int = RATE_MBPS) -> list[Cell]:
    """The three controllers at 8 BDP with one flow each way (about 1.5 minutes)."""
    return [c for c in both_ways_matrix(rate_mbps) if c.buffer_bdp == 8.0 and c.flows == 1]


def cells_of(*, quick: bool, both_ways: bool, rate_mbps: int) -> list[Cell]:
    """The matrix a command line asks for (before ``--filter``)."""
    if both_ways:
        return quick_both_ways_matrix(rate_mbps) if quick else both_ways_matrix(rate_mbps)
    return quick_matrix(rate_mbps) if quick else full_matrix(rate_mbps)


def parse_rate(text: str) -> int:
    """``--rate``: one of :data:`RATES_MBPS` (Mbit/s). Raises ValueError naming them."""
    allowed = ", ".join(str(r) for r in RATES_MBPS)
    try:
        v = float(text.strip().removesuffix("Mbps").removesuffix("Mbit/s"))
    except ValueError:
        v = None
    if v is None or v not in RATES_MBPS:
        raise ValueError(f"--rate: \"{text}\" (allowed: {allowed} Mbit/s)")
    return int(v)


def parse_filter(items: list[str] | tuple[str, ...]) -> dict[str, set[Any]]:
    """``["cc=cubic,bbr", "flows=1"]`` → ``{"cc": {"cubic", "bbr"}, "flows": {1}}``. Raises
    ValueError with a message naming the allowed keys or values."""
    out: dict[str, set[Any]] = {}
    for item in items:
        key, sep, values = item.partition("=")
        key = key.strip()
        if not sep or key not in FIELDS:
            raise ValueError(f"--filter: \"{item}\": expected KEY=VALUE[,VALUE...] with KEY one of "
                             f"{', '.join(FIELDS)}")
        allowed = FIELDS[key]
        chosen = out.setdefault(key, set())
        for v in values.split(","):
            v = v.strip()
            match = [a for a in allowed if _same(a, v)]
            if not match:
                raise ValueError(f"--filter: {key}: \"{v}\" is not a value of the matrix "
                                 "(allowed: "
                                 f"{', '.join(f'{a:g}' if isinstance(a, float) else str(a) for a in allowed)})")
            chosen.add(match[0])
    return out


def _same(allowed: Any, text: str) -> bool:
    if isinstance(allowed, str):
        return allowed == text
    try:
        return float(text) == float(allowed)
    except ValueError:
        return False


def select(cells: list[Cell], chosen: dict[str, set[Any]]) -> list[Cell]:
    return [c for c in cells if all(getattr(c, k) in v for k, v in chosen.items())]


def warmup_s(duration_s: float) -> float:
    return min(WARMUP_S, duration_s / 4)


def scenario(cell: Cell, duration_s: float, seed: int) -> dict[str, Any]:
    """The resolved scenario of ``cell`` (the same dict goes to both engines). Times are written
    in integer microseconds so the document is exact."""
    kind = cell.gateway if cell.gateway in ("codel", "pie") else "droptail"
    bottleneck: dict[str, Any] = {"rate": f"{cell.rate_mbps}Mbps", "delay": f"{cell.rtt_ms * 500}us"}
    if cell.loss_pct:
        bottleneck["loss"] = cell.loss_pct / 100
    topology: dict[str, Any] = {
        "bottleneck": bottleneck,
        "bottleneck_queue": {"kind": kind, "limit": f"{cell.buffer_bytes}B"},
    }
    if cell.gateway == "ewt":
        topology["gateway"] = {"kind": "ewt"}
    doc: dict[str, Any] = {
        "name": f"validate-{cell.id}",
        "duration": f"{round(duration_s * 1e6)}us",
        "warmup": f"{round(warmup_s(duration_s) * 1e6)}us",
        "seed": seed,
        "topology": topology,
        "flows": [{"cc": cell.cc, "count": cell.flows}],
    }
    if cell.both_ways:
        bottleneck["reverse_rate"] = f"{round(cell.reverse_rate_mbps * 1000)}kbps"
        topology["reverse_queue"] = {"kind": "droptail", "limit": f"{cell.reverse_buffer_bytes}B"}
        doc["flows"].append({"cc": cell.cc, "count": cell.flows, "direction": "reverse"})
        # Both engines report the reverse queue: the simulator under `links` when asked for.
        doc["metrics"] = {"links": ["bottleneck", "bottleneck_rev"]}
    return doc
