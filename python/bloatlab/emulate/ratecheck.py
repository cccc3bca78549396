"""How fast can the emulator go on this machine? ``python -m bloatlab.emulate.ratecheck``.

For each configured rate (increasing), four CUBIC flows saturate a drop-tail bottleneck
(10 ms base RTT, 2 BDP buffer) for a few seconds; the rate *held* is what the receiving
applications got, converted to wire bytes (× 1500/1448: 52 B of headers per 1448 B segment),
measured after a 2 s warm-up on the real clock. A rate is held when that is within 5 % of the
configured rate and the senders' TUN device dropped at most 0.1 % of its packets before the
bottleneck read them. Reports every rate tried and the highest one held. Needs root.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

WIRE_PER_PAYLOAD = 1500 / 1448


def scenario(rate_mbps: float, duration_s: float, flows: int) -> dict[str, Any]:
    bdp = rate_mbps * 1e6 / 8 * 0.010
    return {
        "name": f"ratecheck-{rate_mbps:g}Mbps",
        "duration": f"{duration_s:g}s",
        "warmup": "2s",
        "metrics": {"interval": "100ms"},
        "topology": {
            "bottleneck": {"rate": f"{rate_mbps:g}Mbps", "delay": "5ms"},
            "bottleneck_queue": {"kind": "droptail", "limit": f"{int(2 * bdp)}B"},
        },
        "flows": [{"cc": "cubic", "count": flows}],
    }


def measure(rate_mbps: float, duration_s: float = 6.0, flows: int = 4) -> dict[str, Any]:
    from .runner import emulate

    s = emulate(scenario(rate_mbps, duration_s, flows)).summary
    goodput = sum(f["goodput_mbps"] for f in s["flows"])
    wire = goodput * WIRE_PER_PAYLOAD
    io = s["emulation"]["io"]
    dev = s["emulation"]["device_drops"]["sender_side"] or {}
    # Packets the senders' TUN device dropped before the bottleneck read them: the emulator
    # not keeping up on input. More than 0.1 % of them and the rate does not count as held.
    tun_drops = dev.get("tx_dropped", 0)
    tun_ok = tun_drops <= 0.001 * max(dev.get("tx_packets", 0), 1)
    return {
        "rate_mbps": rate_mbps, "goodput_mbps": goodput, "wire_mbps": wire, "ratio": wire / rate_mbps,
        "held": wire >= 0.95 * rate_mbps and tun_ok, "tun_tx_dropped": tun_drops,
        "utilization_pct": s["bottleneck"]["utilization_pct"],
        "write_late_mean_us": io["write_late_mean_us"], "write_late_max_us": io["write_late_max_us"],
        "slab_full_drops": io["slab_full_drops"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bloatlab.emulate.ratecheck", description=__doc__.split("\n\n")[1])
    ap.add_argument("--rates", default="50,100,200,300,400,600,800,1000",
                    help="configured rates to try, Mbit/s, comma-separated (default: %(default)s)")
    ap.add_argument("--duration", type=float, default=6.0, help="seconds per rate (default: %(default)s)")
    ap.add_argument("--flows", type=int, default=4, help="CUBIC flows (default: %(default)s)")
    ap.add_argument("--keep-going", action="store_true", help="try every rate, not stopping at the first one missed")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    a = ap.parse_args(argv)
    from .netns import EmulationError, check_environment

    try:
        check_environment()
    except EmulationError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    results = []
    for r in (float(x) for x in a.rates.split(",")):
        m = measure(r, a.duration, a.flows)
        results.append(m)
        if not a.json:
            print(f"{r:7.0f} Mbit/s: received {m['wire_mbps']:8.2f} Mbit/s on the wire ({100 * m['ratio']:5.1f} %), "
                  f"utilization {m['utilization_pct']:5.1f} %, writes late {m['write_late_mean_us']:.0f} µs "
                  f"(max {m['write_late_max_us'] / 1e3:.1f} ms), TUN drops {m['tun_tx_dropped']} "
                  f"{'held' if m['held'] else 'NOT held'}", flush=True)
        if not m["held"] and not a.keep_going:
            break
    held = [m["rate_mbps"] for m in results if m["held"]]
    best = max(held) if held else None
    if a.json:
        print(json.dumps({"results": results, "highest_held_mbps": best}, indent=2))
    else:
        print(f"highest rate held within 5 %: {best:g} Mbit/s" if best else "no rate held within 5 %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
