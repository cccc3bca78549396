"""The cellular-bufferbloat experiment's emulation plan (``bloatlab reproduce
cellular-bufferbloat --engine emulate|both``).

What Linux runs of Alfredsson et al.: the 3.5G profile (the paper's Fig. 2-6) on the one-UE
cellular topology — run A (one long flow alone) and runs B, C, D (a 320 kB web response over a
new connection, alone, beside one or five long flows) — and runs B-D on 4G (Fig. 10), every
short × background combination of the congestion controls the kernel has (CUBIC; NewReno as
Linux's reno with SACK; Westwood+ as tcp_westwood). Each web run is shortened to the wall
clock: the request starts a few seconds after the background has filled the base-station
buffer, where the simulated reproduction spreads it over a minute. The claims are the
experiment's own 3.5G claims, over the CCs run.
"""

from __future__ import annotations

from typing import Any

from ..engines import refusal
from ..framework import Context, RunResult, Spec, Stat, TableRow, by_label
from .claims import (
    _bg_label,
    _claim_4g_background_cc,
    _claim_4g_minor,
    _claim_five_ordering,
    _claim_one_background,
    _claim_short_cc_limited,
    _spread,
)
from .scenarios import (
    CC_LABEL,
    CCS,
    TECH_SETUP,
    WebResults,
    long_spec,
    web_configs,
    web_spec,
)

TECH = "3.5g"

#: the web request starts in [settle, settle + START_SPREAD_S]; the run lasts long enough for the
#: slowest 3.5G response (beside five CUBIC flows: about 10 s in the simulation)
START_SPREAD_S = 2.0


def _kernel_ccs(ctx: Context) -> list[str]:
    """The CCs this kernel runs (a plan runs the same configurations in both engines, so the
    simulated side leaves out what the emulated side cannot run); the rest are listed as skipped."""
    ok = []
    for cc in CCS:
        why = refusal(long_spec(TECH, cc, 1, 30.0).scenario)
        if why is None:
            ok.append(cc)
        else:
            ctx.skip(f"every run with {CC_LABEL[cc]}", why)
    return ok


def _web(short: str, run: str, bg: str | None, seed: int, settle: float, run_s: float, tech: str = TECH) -> Spec:
    spec = web_spec(tech, run, short, bg, seed)
    doc: dict[str, Any] = spec.scenario
    doc["duration"] = f"{run_s:g}s"
    doc["metrics"]["interval"] = "0s"
    doc["flows"][0]["start"] = {"uniform": [f"{settle:g}s", f"{settle + START_SPREAD_S:g}s"]}
    return spec


def reproduce(ctx: Context) -> None:
    seeds = ctx.seeds()
    settle = ctx.pick(TECH_SETUP[TECH].settle_s, TECH_SETUP[TECH].settle_s, 4.0)
    run_s = ctx.pick(30.0, 25.0, 14.0)
    long_s = ctx.pick(60.0, 30.0, 8.0)
    ccs = _kernel_ccs(ctx)
    ctx.text(
        f"The 3.5G profile of the one-UE cellular topology (16 Mbit/s mean radio rate, 1000-packet base-station "
        f"buffer, 80 ms base RTT), the same configurations in the simulator and on real Linux TCP: run A, one "
        f"long flow alone for {long_s:g} s (the first {settle:g} s left out); runs B, C, D, a 320 kB response "
        f"(new connection, 300-byte request) requested in [{settle:g}, {settle + START_SPREAD_S:g}] s, alone or "
        f"beside 1 or 5 long flows, {run_s:g} s per run; congestion controls: "
        f"{', '.join(CC_LABEL[c] for c in ccs)}; {len(seeds)} seed(s).", heading="Setup")
    ctx.skip("3G (Fig. 8, 9)",
             "3G responses take 19 s alone and minutes loaded (simulated runs of 75 min): hours on the wall clock")
    ctx.skip("4G run A (long flows alone)", "no claim of the paper rests on it; 4G runs B-D are emulated")
    ctx.skip("the RTT trace of one CUBIC short flow (Fig. 7)", "a figure of the simulated reproduction only")
    if not ccs:
        return
    specs = [long_spec(TECH, cc, s, long_s) for cc in ccs for s in seeds]
    for sp in specs:  # the plan's own start-up cut (the experiment's is for its 3-minute runs)
        sp.scenario["warmup"] = f"{settle:g}s"
    longs = ctx.run(specs, "run A")
    shorts = ctx.pick(ccs, ccs, ccs[:1])  # the tests' smallest run: one short-flow CC
    configs = [(run, sh, bg) for run, sh, bg in web_configs(shorts) if bg is None or bg in ccs]
    runs = ctx.run([_web(sh, run, bg, s, settle, run_s) for run, sh, bg in configs for s in seeds], "runs B-D")
    w = WebResults(runs)
    _tables(ctx, w, longs, ccs, configs)
    _claims(ctx, w, ccs, shorts)
    # 4G: the same web runs; its responses take under 2 s even beside five flows (simulated
    # Fig. 10), so a shorter run holds the slowest.
    settle4, run4 = ctx.pick(8.0, 6.0, 3.0), ctx.pick(20.0, 14.0, 8.0)
    runs4 = ctx.run([_web(sh, run, bg, s, settle4, run4, tech="4g") for run, sh, bg in configs for s in seeds],
                    "runs B-D, 4G")
    w4 = WebResults(runs4)
    ctx.table("response-4g", "Runs B-D on 4G: response time", _response_rows(w4, configs),
              note=f"{w4.unfinished()} response(s) did not finish within the run (left out of the means).")
    _claim_4g_minor(ctx, w4, ccs)
    _claim_4g_background_cc(ctx, w4, shorts, ccs)


def _response_rows(w: WebResults, configs: list[tuple[str, str, str | None]]) -> list[TableRow]:
    return [TableRow({"background": _bg_label(run, bg), "short flow": CC_LABEL[sh]}, "response time",
                     w.response(run, sh, bg), None, "s") for run, sh, bg in configs]


def _tables(ctx: Context, w: WebResults, longs: list[RunResult], ccs: list[str],
            configs: list[tuple[str, str, str | None]]) -> None:
    rows = _response_rows(w, configs)
    rows += [TableRow({"background": _bg_label(run, bg), "short flow": CC_LABEL[sh]}, "short-flow mean RTT",
                      w.short_metric("rtt_mean_ms", run, sh, bg), None, "ms") for run, sh, bg in configs]
    ctx.table("response-3.5g", "Runs B-D on 3.5G: response time and the short flow's RTT", rows,
              note=f"{w.unfinished()} response(s) did not finish within the run (left out of the means).")

    def stat(cc: str, key: str) -> Stat:
        return Stat.of(r.flows[0][key] for r in by_label(longs, cc=cc))

    ctx.table("long-flows-3.5g", "Run A on 3.5G: one long flow alone", [
        TableRow({"cc": CC_LABEL[cc]}, m, stat(cc, k), None, u)
        for cc in ccs for m, k, u in (("goodput", "goodput_mbps", "Mbit/s"), ("mean RTT", "rtt_mean_ms", "ms"))])


def _claims(ctx: Context, w: WebResults, ccs: list[str], shorts: list[str]) -> None:
    _claim_one_background(ctx, w, ccs)
    alone = w.response("B").mean
    ctx.key("one-background-flow-several-fold-3.5g", "response time beside one CUBIC flow / alone",
            w.response("C", bg="cubic").mean / alone if alone else None)
    _claim_short_cc_limited(ctx, w, shorts, ccs)
    spreads = [_spread([w.response(run, sh, bg).mean for sh in shorts]) for run in ("C", "D") for bg in ccs]
    ctx.key("short-flow-cc-of-limited-importance-3.5g", "largest spread over short-flow CCs",
            max((s for s in spreads if s == s), default=None))
    if len(ccs) == len(CCS):
        _claim_five_ordering(ctx, w)
    else:
        ctx.skip("claim five-background-flows-cubic-newreno-westwood-3.5g",
                 f"it orders all three background CCs; this kernel runs "
                 f"{', '.join(CC_LABEL[c] for c in ccs)} ({len(ccs)} of 3)")
