"""The report text of the cubic-plus experiment (:mod:`.cubic_plus`): its setup and every
parameter the paper leaves unstated, with the choice made."""

from __future__ import annotations

from typing import Any

from .framework import Context

# The experiment's constants come in as arguments: cubic_plus imports this module, so this
# module does not import cubic_plus (no import loop, see tests/python/test_import_cycles.py).


def setup(ctx: Context, dur: dict[str, str], *, settings: dict[str, Any], jitter_s: float,
          theta: float) -> None:
    rows = "\n".join(
        f"| {sc} | {s.rate} | {2 * (2 * _ms(s.access_delay) + _ms(s.delay)):.0f} ms | {s.access} | "
        f"{' / '.join(s.buffers)} | {s.period} | {s.threshold} | {dur[sc]} |" for sc, s in settings.items())
    ctx.text(
        "Dumbbell of the paper's Fig. 5: each sender has its own access link to the left router, "
        "the drop-tail (FIFO) bottleneck joins the routers, each receiver has its own access link.\n\n"
        "| scenario | bottleneck | base RTT | access | buffer | period | threshold | simulated |\n"
        "|---|---|---|---|---|---|---|---|\n" + rows + "\n\n"
        f"θ = {theta}, 1448-byte segments (1500-byte packets with IP/TCP headers and timestamps), "
        "delayed ACKs (every second segment, 40 ms), initial window 10, receive buffer larger than "
        "BDP + buffer. Cubic+ is `cubic+` (docs/congestion-control.md) with the scenario's period, "
        f"threshold and θ. Every flow starts at a uniform random time within {jitter_s * 1000:.0f} ms "
        "of its nominal start (see below). Rates are compared with the paper's at the wire "
        "(our goodput × 1500/1448). Mean ± 95 % CI over "
        f"{ctx.n_seeds} seed(s); the paper reports one run per configuration.\n\n"
        + ("**Quick mode** shortens scenario II runs to "
           f"{dur['II']} (the paper: 200 s) except Fig. 7/8, whose 300 MB transfer needs the paper's "
           "200 s (a transfer that does not finish counts with the time it had), scenario I runs to "
           f"{dur['I']} (cheap: the paper's 200 s in quick mode), and runs {ctx.n_seeds} seed(s).\n"
           if ctx.quick else ""),
        heading="Setup",
    )


def _ms(text: str) -> float:
    return float(text.removesuffix("ms"))


def unstated(ctx: Context, *, fg_delay_s: float, jitter_s: float) -> None:
    ctx.text(
        "- **Simulator**: the paper used OPNET Modeler; its CUBIC, Vegas and Reno models are "
        "not described. Ours follow Linux (docs/congestion-control.md).\n"
        "- **Loss recovery**: the paper names TCP Reno and TCP SACK as separate protocols, so "
        "\"Reno\" is Reno without SACK (`recovery = \"reno\"`: one fast retransmit, then timeouts "
        "on multiple losses) and \"SACK\" is Reno with SACK recovery (RFC 6675). CUBIC, Cubic+ "
        "and Vegas use SACK recovery, as in Linux. Not stated in the paper.\n"
        "- **Cubic+ readings** (docs/congestion-control.md): serious congestion is U = 1 (eq. 3), "
        "RTT samples equal RTT_min within 1 ms (the timestamp clock), the wrapper never touches "
        "CUBIC's epoch after a θ decrease.\n"
        f"- **Start times**: the paper starts flows together (Table 4: at 10 s; we start at 0 and "
        f"run {'200 s' if not ctx.quick else 'the same duration'}). Each flow starts uniformly within "
        f"{jitter_s * 1000:.0f} ms of its nominal start so that seeds differ; a single CUBIC or "
        "Vegas flow alone is then the same run shifted in time, hence its near-zero CI.\n"
        "- **Throughput**: the paper's \"average throughput\" sums to the link rate (1.9992 of "
        "2 Mbit/s), so it is what crossed the link, at the wire; ours is the flow's goodput (unique "
        "payload delivered over its active time) scaled by 1500/1448. Loss rate = the flow's packets dropped / "
        "sent; buffer usage = time-average occupancy / buffer size; queueing delay = mean sojourn "
        "time at the bottleneck. All measured over the whole run (no warm-up), as the paper.\n"
        "- **Table 3 flow order**: the paper's flows 1 and 2 are unordered; we list the flow with "
        "the larger throughput first, ours and the paper's.\n"
        "- **Table 4** is computed, like the paper's, from Table 3's throughputs (Jain's index of "
        "the two flows' throughput). **Table 5**: T1 is the long-RTT flow (40 or 60 ms; the other "
        "has 20 ms), the smaller in every row of the paper; EI = T1 + T2.\n"
        "- **Fig. 6** does not say which buffer: we run both. **Fig. 7/8**: the foreground "
        f"transfer starts {fg_delay_s:.0f} s after the background flow (both within the start jitter).\n"
        "- **Seeds**: OPNET's runs are deterministic and the paper shows one per configuration; "
        "5 seeds (the start jitter and Cubic+'s random suspend timer) show how much the outcome "
        "depends on chance, at a cost the 20-minute budget allows for scenario II.",
        heading="Unstated parameters and our choices",
    )
