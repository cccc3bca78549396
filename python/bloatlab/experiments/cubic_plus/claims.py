"""The cubic-plus experiment's reproduction, ``reproduce(ctx)``: it runs the scenarios, makes the
tables, checks the paper's claims (each with the threshold it uses) and writes the report's text.
The report text includes the setup and every parameter the paper leaves unstated, with the
choice made."""

from __future__ import annotations

import math
from typing import Any

from ..framework import Context, RunResult, Stat, TableRow, by_label, fmt, jain
from . import plots
from .paper import (
    PAPER_FIG7,
    PAPER_FIG7_CUT_500KB,
    PAPER_FIG8,
    PAPER_FIG8_MAX_BESIDE_CUBIC,
    PAPER_T2,
    PAPER_T3,
    PAPER_T4,
    PAPER_T5,
)
from .plots import LABEL
from .scenarios import (
    FG_DELAY_S,
    SETTINGS,
    SINGLE,
    START_JITTER_S,
    THETA,
    all_buffers,
    fct,
    flow,
    make_spec,
    per_run,
    thr,
    thr_mean,
    unfinished,
)

# --------------------------------------------------------------------------- claim thresholds

DELAY_CUT_500KB = 0.90  # Cubic+'s queueing delay at most 10 % of Cubic's (paper: −98 %)

DELAY_SHARE_50KB = 1 / 3  # at most a third (paper: 30 ms vs 130 ms)

THROUGHPUT_TOL = 0.01  # "throughput within 1 % of Cubic"

LOSS_SHARE_300KB = 0.25  # Cubic+ loses at most a quarter of Cubic's packets (paper: 0.0537 vs 0.2187 %)

FAR_LESS = 0.75  # "far less": Vegas below 3/4 of Cubic+ (paper: 166.83 vs 285.68 Mbit/s, 0.58)

JAIN_MIN = 0.95  # Table 4: Cubic+'s index (paper: ≥ 0.9623)


# --------------------------------------------------------------------------- the experiment

def reproduce(ctx: Context) -> None:
    seeds = ctx.seeds()
    dur = {"I": ctx.pick("200s", "200s", "20s"), "II": ctx.pick("200s", "60s", "5s")}
    setup(ctx, dur, settings=SETTINGS, jitter_s=START_JITTER_S, theta=THETA)
    table2(ctx, seeds, dur)
    table3_4(ctx, seeds, dur)
    fig6(ctx, seeds, dur)
    fig7_8(ctx, seeds, dur)
    table5(ctx, seeds, dur)
    fig9(ctx, seeds, dur)
    unstated(ctx, fg_delay_s=FG_DELAY_S, jitter_s=START_JITTER_S)


# --------------------------------------------------------------------------- Table 2

def table2(ctx: Context, seeds: list[int], dur: dict[str, str]) -> None:
    specs = [make_spec("t2", sc, b, [flow(p, sc, p)], s, dur[sc], proto=p)
             for sc, b in all_buffers() for p in SINGLE for s in seeds]
    res = ctx.run(specs, "Table 2")
    stats: dict[tuple[str, str, str], dict[str, Stat]] = {}
    rows: list[TableRow] = []
    for sc, b in all_buffers():
        for p in SINGLE:
            rs = by_label(res, sc=sc, buf=b, proto=p)
            st = {
                "throughput": per_run(rs, lambda r: thr(r.flows[0])),
                "loss": per_run(rs, lambda r: r.flows[0]["loss_pct"]),
                "buffer usage": per_run(rs, lambda r: r.bottleneck["buffer_usage_pct"]),
                "queueing delay": per_run(rs, lambda r: r.bottleneck["mean_sojourn_ms"]),
            }
            stats[(sc, b, p)] = st
            paper = PAPER_T2[(sc, b)][p]
            for (metric, stat), pv, unit in zip(st.items(), paper, ("Mbit/s", "%", "%", "ms")):
                rows.append(TableRow({"scenario": sc, "buffer": b, "protocol": LABEL[p]}, metric, stat, pv, unit))
    ctx.table("table2-single-flow", "Table 2: a single flow", rows,
              note="Throughput: goodput at the wire (payload × 1500/1448). Queueing delay: mean sojourn time at "
                   "the bottleneck. The paper's scenario II buffer usage (0.11 % of 1500 KB, i.e. about one "
                   "packet, for all three protocols) cannot hold a CUBIC flow that ends its cycles by overflowing "
                   "the buffer; ours is time-averaged over the whole run, slow start included.")
    plots.queue_over_time(ctx, {p: by_label(res, sc="I", buf="500KB", proto=p, seed=seeds[0])[0].queues
                                for p in SINGLE})
    _claims_table2(ctx, stats)


def _claims_table2(ctx: Context, st: dict[tuple[str, str, str], dict[str, Stat]]) -> None:
    def get(sc: str, b: str, p: str, m: str) -> float:
        return st[(sc, b, p)][m].mean

    for b, cut_ok, rule, paper in (
        ("500KB", lambda c, p: p <= (1 - DELAY_CUT_500KB) * c, f"at most {1 - DELAY_CUT_500KB:.0%}",
         "1.61 s → 0.03 s (−98 %), no loss, 1.9988 vs 1.9992 Mbit/s"),
        ("50KB", lambda c, p: p <= DELAY_SHARE_50KB * c, "at most a third",
         "0.13 s → 0.03 s, no loss, 1.9988 vs 1.9992 Mbit/s"),
    ):
        dc, dp = get("I", b, "cubic", "queueing delay"), get("I", b, "cubic+", "queueing delay")
        tc, tp = get("I", b, "cubic", "throughput"), get("I", b, "cubic+", "throughput")
        loss = get("I", b, "cubic+", "loss")
        holds = cut_ok(dc, dp) and loss == 0 and tp >= (1 - THROUGHPUT_TOL) * tc
        ctx.claim(
            f"scenario-i-{b.lower()}-delay",
            f"Scenario I, {b} buffer: Cubic+'s queueing delay is {rule} of Cubic's, with no loss and "
            f"throughput within {THROUGHPUT_TOL:.0%} of Cubic's.",
            paper=paper,
            ours=f"{fmt(dc)} ms → {fmt(dp)} ms ({_pct_change(dc, dp)}), Cubic+ loss {fmt(loss)} %, "
                 f"{fmt(tp, 4)} vs {fmt(tc, 4)} Mbit/s",
            holds=holds,
            why=f"Thresholds: delay {rule} of Cubic's, loss exactly 0, "
                f"throughput ≥ {1 - THROUGHPUT_TOL:.2f} × Cubic's. "
                + ("Cubic fills the drop-tail buffer until it overflows; Cubic+ sees every RTT sample above "
                   "RTT_min (U = 1) once a queue forms and trims the window by 10 %, so the queue stays at a "
                   "few packets." if holds else _why_not(
                       [(not cut_ok(dc, dp), f"delay {fmt(dp)} vs {fmt(dc)} ms"),
                        (loss != 0, f"Cubic+ lost {fmt(loss)} %"),
                        (tp < (1 - THROUGHPUT_TOL) * tc, f"throughput {fmt(tp, 4)} vs {fmt(tc, 4)} Mbit/s")])
                + (_MOVED_QUICKACK if not holds and tp < (1 - THROUGHPUT_TOL) * tc else "")),
        )

    lc, lp = get("II", "300KB", "cubic", "loss"), get("II", "300KB", "cubic+", "loss")
    tc, tp = get("II", "300KB", "cubic", "throughput"), get("II", "300KB", "cubic+", "throughput")
    ok_loss, ok_thr = lp <= LOSS_SHARE_300KB * lc, tp > tc
    ctx.claim(
        "scenario-ii-300kb-loss",
        "Scenario II, 300 KB buffer: Cubic+ loses at most a quarter of Cubic's packets and gets "
        "more throughput.",
        paper="loss 0.0537 % vs 0.2187 %; 285.68 vs 203.93 Mbit/s",
        ours=f"loss {fmt(lp)} % vs {fmt(lc)} %; {fmt(tp)} vs {fmt(tc)} Mbit/s",
        holds=ok_loss and ok_thr,
        why=f"Threshold: loss ratio ≤ {LOSS_SHARE_300KB}, throughput strictly higher. "
            + ("As the paper." if ok_loss and ok_thr else
               "Here the 300 KB buffer is 200 packets against a 4000-packet BDP: after each θ decrease "
               "the wrapper leaves CUBIC's epoch and W_max untouched, so CUBIC regrows by up to 50 % per "
               "RTT and overflows the buffer within one 200 ms period, before the next classification "
               "can react; Cubic+ halves the queue but not the losses (docs/congestion-control.md). "
               "The paper's OPNET CUBIC reached only 204 Mbit/s here (ours: "
               f"{fmt(tc)}), so its Cubic had far more room to lose against."),
    )

    tv = get("II", "300KB", "vegas", "throughput")
    ctx.claim(
        "vegas-starves-scenario-ii",
        "In scenario II (300 KB) Vegas gets far less throughput than Cubic+.",
        paper="166.83 vs 285.68 Mbit/s (42 % vs 71 % of the link)",
        ours=f"{fmt(tv)} vs {fmt(tp)} Mbit/s",
        holds=tv < FAR_LESS * tp,
        why=f"'Far less' is read as below {FAR_LESS:.0%} of Cubic+'s throughput. "
            + ("Our Vegas (Linux's) leaves slow start as soon as it sees γ = 1 packet of queue and then "
               "grows by one packet per RTT: the 4000-packet BDP takes minutes to fill at one packet per "
               "120 ms. The paper blames delay-estimation errors instead." if tv < FAR_LESS * tp else
               "Our Vegas (Linux's) measures RTTs exactly, with no noise in a simulator, so it keeps "
               "α..β packets queued and the 400 Mbit/s link busy; the paper attributes its Vegas's "
               "low throughput to delay estimation errors, which our model does not have."),
    )


#: why the scenario I delay claims stopped holding with the simulator's Linux recovery (docs/tcp.md)
_MOVED_QUICKACK = (
    " This verdict moved from 'holds' with the simulator's Linux recovery (docs/tcp.md): quick-ACK acknowledges "
    "the first segments at once, so the wrapper's RTT_min is the path's true 20 ms base RTT rather than one "
    "inflated by a delayed ACK, and the wrapper then trims the window whenever segments wait for a delayed ACK, "
    "idling the link about 2 % of the time; plain CUBIC, with fewer losses and retransmissions, gained.")


def _why_not(reasons: list[tuple[bool, str]]) -> str:
    return "Does not hold: " + "; ".join(text for bad, text in reasons if bad) + "."


def _pct_change(a: float, b: float) -> str:
    return "n/a" if not a else f"{100 * (b - a) / a:+.0f} %"


# --------------------------------------------------------------------------- Table 3 and 4

def table3_4(ctx: Context, seeds: list[int], dur: dict[str, str]) -> None:
    specs = [make_spec("t3", sc, b, [flow(p, sc, p), flow(p, sc, p)], s, dur[sc], proto=p)
             for sc, b in all_buffers() for p in SINGLE for s in seeds]
    res = ctx.run(specs, "Table 3")
    rows: list[TableRow] = []
    fi: dict[tuple[str, str, str], Stat] = {}
    loss_sum: dict[tuple[str, str, str], float] = {}
    for sc, b in all_buffers():
        for p in SINGLE:
            rs = by_label(res, sc=sc, buf=b, proto=p)
            ordered = [sorted(r.flows, key=thr, reverse=True) for r in rs]
            pt = PAPER_T3[(sc, b)][p]
            pflows = sorted([(pt[0], pt[2]), (pt[1], pt[3])], reverse=True)
            keys = {"scenario": sc, "buffer": b, "protocol": LABEL[p]}
            for i in range(2):
                rows.append(TableRow({**keys, "flow": i + 1}, "throughput",
                                     Stat.of(thr(fs[i]) for fs in ordered), pflows[i][0], "Mbit/s"))
                rows.append(TableRow({**keys, "flow": i + 1}, "loss",
                                     Stat.of(fs[i]["loss_pct"] for fs in ordered), pflows[i][1], "%"))
            rows.append(TableRow({**keys, "flow": "both"}, "queueing delay",
                                 per_run(rs, lambda r: r.bottleneck["mean_sojourn_ms"]), pt[4], "ms"))
            fi[(sc, b, p)] = per_run(rs, lambda r: jain([thr(f) for f in r.flows]))
            loss_sum[(sc, b, p)] = max(f["loss_pct"] for r in rs for f in r.flows)
    ctx.table("table3-two-flows", "Table 3: two flows of the same protocol", rows,
              note="Flow 1 is the flow with the larger throughput (the paper's pairs sorted the same way).")
    ctx.table("table4-fairness", "Table 4: Jain's fairness index, homogeneous RTT (from Table 3's runs)", [
        TableRow({"scenario": sc, "buffer": b, "protocol": LABEL[p]}, "Jain index", fi[(sc, b, p)],
                 PAPER_T4[(sc, b)][p]) for sc, b in all_buffers() for p in ("cubic", "cubic+")])

    worst = loss_sum[("I", "500KB", "cubic+")]
    ctx.claim(
        "two-cubic-plus-lossless-500kb",
        "Two Cubic+ flows sharing scenario I's 500 KB buffer lose no packet.",
        paper="loss 0 % and 0 % (Cubic: 3.97 % and 4.15 %)",
        ours=f"largest loss of a Cubic+ flow over the seeds {fmt(worst)} % (Cubic: "
             f"{fmt(loss_sum[('I', '500KB', 'cubic')])} %)",
        holds=worst == 0,
        why="Holds only if no Cubic+ flow of any seed lost a packet. "
            + ("Both flows see the shared queue in their RTTs and trim or hold their windows long before "
               "the 500 KB buffer fills." if worst == 0 else
               "Some run overflowed the buffer: see Table 3."),
    )
    plus = {k: fi[(k[0], k[1], "cubic+")].mean for k in PAPER_T4}
    low = min(plus, key=lambda k: plus[k])
    late = latecomer_wins([r for b in SETTINGS["I"].buffers for r in by_label(res, sc="I", buf=b, proto="cubic+")])
    ctx.claim(
        "cubic-plus-jain-homogeneous",
        f"Cubic+ keeps Jain's index of two same-RTT flows at {JAIN_MIN} or more in every Table 4 setting.",
        paper="0.9623 to 0.9998 (Cubic 0.9953 to 0.9999)",
        ours=", ".join(f"{sc} {b}: {fmt(v, 4)}" for (sc, b), v in plus.items()),
        holds=plus[low] >= JAIN_MIN,
        why=f"Threshold {JAIN_MIN} on the mean over seeds of each setting; lowest: scenario {low[0]} "
            f"{low[1]} at {fmt(plus[low], 4)}. In scenario I the flow that started later got the larger "
            f"share in {late[0]} of {late[1]} Cubic+ runs"
            + (": the late starter's first RTT samples already include the other flow's queue, so its "
               "RTT_min is too high and it counts queued packets as 'noncongested' (U < 1) while the "
               "early flow sees U = 1 and cuts by θ. The queue never drains (no loss), so RTT_min is "
               "never corrected: the latecomer advantage of delay-based control (Vegas shows it too, "
               "Table 3). The paper does not report it." if plus[low] < JAIN_MIN else "."),
    )


def latecomer_wins(results: list[RunResult]) -> tuple[int, int]:
    """(runs in which the later-starting of two flows got the larger throughput, runs)."""
    wins = 0
    for r in results:
        first, second = sorted(r.flows, key=lambda f: f["start_s"])
        wins += thr(second) > thr(first)
    return wins, len(results)


# --------------------------------------------------------------------------- Fig. 6

def fig6(ctx: Context, seeds: list[int], dur: dict[str, str]) -> None:
    partners = ("vegas", "cubic+", "cubic")
    specs = [make_spec("f6", sc, b, [flow(p, sc, "x"), flow("reno", sc, "reno")], s, dur[sc], proto=p)
             for sc, b in all_buffers() for p in partners for s in seeds]
    res = ctx.run(specs, "Fig. 6")
    data: dict[tuple[str, str, str], tuple[Stat, Stat]] = {}
    rows: list[TableRow] = []
    for sc, b in all_buffers():
        for p in partners:
            rs = by_label(res, sc=sc, buf=b, proto=p)
            x, reno = (per_run(rs, lambda r, g=g: thr(r.group(g)[0])) for g in ("x", "reno"))
            data[(sc, b, p)] = (x, reno)
            keys = {"scenario": sc, "buffer": b, "pair": f"{LABEL[p]} + Reno"}
            rows += [TableRow({**keys, "flow": LABEL[p]}, "throughput", x, None, "Mbit/s"),
                     TableRow({**keys, "flow": "Reno"}, "throughput", reno, None, "Mbit/s"),
                     TableRow({**keys, "flow": "both"}, "Jain index",
                              per_run(rs, lambda r: jain([thr(f) for f in r.flows])), None)]
    ctx.table("fig6-with-reno", "Fig. 6: one Reno flow beside Vegas, Cubic+ or Cubic", rows,
              note="The paper plots these without values; it states that in scenario II Vegas gets under "
                   "1 Mbit/s and Vegas + Reno under 1/6 of the link.")
    plots.fig6(ctx, data, partners)
    fair = {(sc, b): {p: jain([data[(sc, b, p)][0].mean, data[(sc, b, p)][1].mean]) for p in partners}
            for sc, b in all_buffers()}
    fairest = [k for k, v in fair.items() if v["cubic+"] >= max(v.values())]
    share = {k: _share(*data[k]) for k in data if k[2] == "cubic+"}
    fairer_than_cubic = sum(v["cubic+"] > v["cubic"] for v in fair.values())
    vegas_ii = data[("II", "300KB", "vegas")]
    ctx.claim(
        "fig6-cubic-plus-fairest-with-reno",
        "Beside one Reno flow, Cubic+ shares the link more fairly than Vegas or Cubic do.",
        paper="Cubic+ shares with Reno more fairly than the other two, in both scenarios",
        ours="; ".join(f"{sc} {b}: " + ", ".join(f"{LABEL[p]} {fmt(v[p], 3)}" for p in partners)
                       for (sc, b), v in fair.items()),
        holds=len(fairest) == len(fair),
        why="Jain's index of the two mean throughputs; holds if Cubic+'s is the highest in every "
            f"(scenario, buffer): here in {len(fairest)} of {len(fair)}."
            + ("" if len(fairest) == len(fair) else
               " Cubic+'s share of the pair: "
               + ", ".join(f"{sc} {b} {100 * v:.0f} %" for (sc, b, _), v in share.items())
               + f"; Cubic+ is fairer than Cubic in {fairer_than_cubic} of {len(fair)}. In scenario I a "
               "loss-based flow keeps the drop-tail queue from draining, so every Cubic+ RTT sample is "
               "above RTT_min (U = 1): the wrapper cuts the window by θ every period and Cubic+ yields "
               "the link to Reno (the paper reports fair sharing without saying how its Cubic+ avoids "
               "this). In scenario II (300 KB) the Vegas + Reno pair splits about evenly (Vegas "
               f"{fmt(vegas_ii[0].mean)}, Reno {fmt(vegas_ii[1].mean)} Mbit/s), where the paper's Vegas got "
               "under 1 Mbit/s: at this BDP both grow slowly (Vegas by one packet per RTT, Reno without "
               "SACK waits out timeouts after multiple losses in a window), so neither starves the other."),
    )


def _share(x: Stat, other: Stat) -> float:
    total = x.mean + other.mean
    return x.mean / total if total > 0 else math.nan


# --------------------------------------------------------------------------- Fig. 7 and 8

def fig7_8(ctx: Context, seeds: list[int], dur: dict[str, str]) -> None:
    bgs, fgs = ("cubic", "cubic+"), ("reno", "sack")
    # the 300 MB transfer of scenario II takes up to ~140 s beside Cubic: a shorter run would only
    # give lower bounds, so quick mode keeps the paper's 200 s here (the smallest mode: just past
    # the foreground start)
    dur7 = {**dur, "II": ctx.pick("200s", "200s", "16s")}
    specs = [make_spec("f7", sc, b, [flow(bg, sc, "bg"),
                                     flow(fg, sc, "fg", offset_s=FG_DELAY_S, size=SETTINGS[sc].fg_size[b])],
                       s, dur7[sc], bg=bg, fg=fg)
             for sc, b in all_buffers() for bg in bgs for fg in fgs for s in seeds]
    res = ctx.run(specs, "Fig. 7 and 8")
    times: dict[tuple[str, str, str, str], Stat] = {}
    losses: dict[tuple[str, str, str], Stat] = {}
    rows: list[TableRow] = []
    open_runs = 0
    for sc, b in all_buffers():
        for bg in bgs:
            for fg in fgs:
                rs = by_label(res, sc=sc, buf=b, bg=bg, fg=fg)
                open_runs += unfinished(rs, "fg")
                t = per_run(rs, lambda r: fct(r, "fg"))
                times[(sc, b, bg, fg)] = t
                keys = {"scenario": sc, "buffer": b, "background": LABEL[bg], "foreground": LABEL[fg]}
                rows.append(TableRow(keys, "completion time", t, PAPER_FIG7.get((sc, b, bg, fg)), "s"))
                if sc == "I":
                    losses[(b, bg, fg)] = per_run(rs, lambda r: r.group("fg")[0]["loss_pct"])
                    rows.append(TableRow(keys, "foreground loss", losses[(b, bg, fg)],
                                         PAPER_FIG8.get((b, bg, fg)), "%"))
    cut_rows = [TableRow({"scenario": "I", "buffer": "500KB", "background": "Cubic+ vs Cubic",
                          "foreground": LABEL[fg]}, "completion time cut",
                         Stat.one(-100 * _rel(times[("I", "500KB", "cubic", fg)].mean,
                                              times[("I", "500KB", "cubic+", fg)].mean)),
                         PAPER_FIG7_CUT_500KB[fg], "%") for fg in fgs]
    ctx.table("fig7-8-foreground", "Fig. 7 and 8: a foreground transfer 15 s after a background flow",
              rows + cut_rows,
              note="Transfers: scenario I 5 MB (50 KB buffer) or 500 KB (500 KB buffer), scenario II 300 MB. "
                   f"{open_runs} foreground transfer(s) did not finish within the run; their time counts as "
                   "the time they had (a lower bound). The paper states only the values shown.")
    plots.fig7(ctx, times, bgs, fgs)
    plots.fig8(ctx, losses, bgs, fgs)

    faster = {k[:2] + (k[3],): times[k[:2] + ("cubic+", k[3])].mean < times[k[:2] + ("cubic", k[3])].mean
              for k in times if k[2] == "cubic"}
    slow = [f"{sc} {b} {LABEL[fg]}" for (sc, b, fg), ok in faster.items() if not ok]
    ctx.claim(
        "fig7-foreground-faster-beside-cubic-plus",
        "A Reno or SACK transfer finishes sooner beside a Cubic+ background flow than beside a Cubic one.",
        paper="every case: e.g. I 50 KB 117 s → 38 s (Reno) and 32 s (SACK); II 300 KB 123 → 69 s, 44 → 38 s",
        ours="; ".join(f"{sc} {b} {LABEL[fg]}: {fmt(times[(sc, b, 'cubic', fg)].mean)} → "
                       f"{fmt(times[(sc, b, 'cubic+', fg)].mean)} s" for sc, b, fg in faster),
        holds=not slow,
        why=f"Holds if the mean completion time beside Cubic+ is lower in every (scenario, buffer, "
            f"foreground) case: {len(faster) - len(slow)} of {len(faster)}."
            + (f" Not in: {', '.join(slow)}. This verdict moved from 'holds' with the simulator's Linux "
               "recovery (docs/tcp.md): the background CUBIC flow now recovers from its losses without "
               "timeouts and keeps its share of a deep buffer, so beside it the foreground transfers' times "
               "changed (scenario II sooner, scenario I later) and at 1500 KB the Reno foreground takes about "
               "as long beside either background." if slow else
               " Beside Cubic the transfer waits behind a full buffer and meets its overflow losses "
               "(Fig. 8); beside Cubic+ the queue is short and, in scenario I, Cubic+ yields the link "
               "(see fig6-cubic-plus-fairest-with-reno).")
            + (f" {open_runs} transfer(s) did not finish (times are lower bounds)." if open_runs else ""),
    )
    l500 = {fg: losses[("500KB", "cubic+", fg)].mean for fg in fgs}
    lower = all(losses[(b, "cubic+", fg)].mean < losses[(b, "cubic", fg)].mean or
                losses[(b, "cubic", fg)].mean == 0 == losses[(b, "cubic+", fg)].mean
                for b in SETTINGS["I"].buffers for fg in fgs)
    ctx.claim(
        "fig8-foreground-loss",
        "In scenario I the foreground transfer loses fewer packets beside Cubic+ than beside Cubic, "
        "and none at all with the 500 KB buffer.",
        paper=f"no loss beside Cubic+ at 500 KB; up to {PAPER_FIG8_MAX_BESIDE_CUBIC} % beside Cubic",
        ours="; ".join(f"{b} {LABEL[fg]}: {fmt(losses[(b, 'cubic', fg)].mean)} % → "
                       f"{fmt(losses[(b, 'cubic+', fg)].mean)} %" for b in SETTINGS["I"].buffers for fg in fgs),
        holds=lower and all(v == 0 for v in l500.values()),
        why="Holds if the mean loss beside Cubic+ is lower in each case (or both zero) and exactly zero "
            "at 500 KB. The 500 KB transfer is short (~350 packets) and the Cubic+ queue is small, so "
            "no overflow; beside Cubic it meets a full buffer."
            + ("" if lower and all(v == 0 for v in l500.values()) else
               " This verdict moved from 'holds' with the simulator's Linux recovery (docs/tcp.md): beside "
               "Cubic the foreground's loss fell from 15-18 % to a few per cent, as it no longer retransmits "
               "go-back-N into the full queue, leaving a small margin (or none) to its loss beside Cubic+."),
    )


def _rel(a: float, b: float) -> float:
    """(b − a) / a."""
    return (b - a) / a if a else math.nan


# --------------------------------------------------------------------------- Table 5

def table5(ctx: Context, seeds: list[int], dur: dict[str, str]) -> None:
    protos, ratios = ("reno", "cubic", "cubic+"), (2, 3)
    specs = [make_spec("t5", "I", b, [flow(p, "I", "long", rtt=f"{20 * k}ms"), flow(p, "I", "short", rtt="20ms")],
                       s, dur["I"], proto=p, ratio=k)
             for b in SETTINGS["I"].buffers[::-1] for k in ratios for p in protos for s in seeds]
    res = ctx.run(specs, "Table 5")
    fi: dict[tuple[str, int, str], Stat] = {}
    rows: list[TableRow] = []
    for b in SETTINGS["I"].buffers[::-1]:
        for k in ratios:
            for p in protos:
                rs = by_label(res, buf=b, ratio=k, proto=p)
                t1, t2 = (per_run(rs, lambda r, g=g: thr(r.group(g)[0])) for g in ("long", "short"))
                ei = per_run(rs, lambda r: sum(thr(f) for f in r.flows))
                fi[(b, k, p)] = per_run(rs, lambda r: jain([thr(f) for f in r.flows]))
                keys = {"buffer": b, "RTT ratio": k, "protocol": LABEL[p]}
                rows += [TableRow(keys, m, st, pv, u) for m, st, pv, u in zip(
                    ("T1", "T2", "EI", "FI"), (t1, t2, ei, fi[(b, k, p)]), PAPER_T5[(b, k)][p],
                    ("Mbit/s", "Mbit/s", "Mbit/s", ""))]
    ctx.table("table5-heterogeneous-rtt", "Table 5: two flows with RTT 20 ms and 40 / 60 ms, scenario I", rows,
              note="T1: the long-RTT flow; T2: the 20 ms flow; EI = T1 + T2; FI: Jain's index. In our Reno and "
                   "Cubic runs the long-RTT flow often gets more than the 20 ms one, unlike the paper's; we did "
                   "not investigate this further (drop-tail phase effects in a simulator without random "
                   "processing delays are a known cause of such biases).")
    c, p = fi[("500KB", 3, "cubic")].mean, fi[("500KB", 3, "cubic+")].mean
    t1p, t2p = (thr_mean(by_label(res, buf="500KB", ratio=3, proto="cubic+"), g) for g in ("long", "short"))
    ctx.claim(
        "cubic-plus-fairer-rtt-ratio-3",
        "With RTT ratio 3 and a 500 KB buffer, Cubic+ is fairer than Cubic (Jain's index).",
        paper="0.9830 vs 0.9325",
        ours=f"{fmt(p, 4)} vs {fmt(c, 4)}",
        holds=p > c,
        why="Compares the mean Jain index over seeds. "
            + ("As the paper." if p > c else
               f"Cubic+'s 60 ms flow gets {fmt(t1p)} Mbit/s, the 20 ms flow {fmt(t2p)}. Two Cubic flows "
               "share a full 500 KB buffer whose ~1.6 s of queueing dwarfs the 20/60 ms base RTTs, so "
               "their RTTs are nearly equal and so are their shares; Cubic+ keeps the queue at tens of "
               "ms, so the base RTTs matter again: both flows are cut by θ at the same fixed period "
               "while they regrow per RTT (likely CUBIC's Reno-friendly region, which "
               "dominates at windows of a few packets), three times faster for the 20 ms flow."),
    )


# --------------------------------------------------------------------------- Fig. 9

def fig9(ctx: Context, seeds: list[int], dur: dict[str, str]) -> None:
    variants, sc = ("cubic", "cubic+"), "II"
    specs = [make_spec("f9", sc, b, [flow(v, sc, "x"), flow(v, sc, "x"), flow("reno", sc, "reno"),
                                     flow("reno", sc, "reno")], s, dur[sc], proto=v)
             for b in SETTINGS[sc].buffers[::-1] for v in variants for s in seeds]
    res = ctx.run(specs, "Fig. 9")
    per_flow: dict[tuple[str, str], list[Stat]] = {}
    reno_total: dict[tuple[str, str], Stat] = {}
    rows: list[TableRow] = []
    for b in SETTINGS[sc].buffers[::-1]:
        for v in variants:
            rs = by_label(res, buf=b, proto=v)
            # flows 1, 2: the Cubic/Cubic+ pair; 3, 4: Reno (each pair ordered by flow id)
            per_flow[(b, v)] = [per_run(rs, lambda r, i=i: thr(r.flows[i])) for i in range(4)]
            reno_total[(b, v)] = per_run(rs, lambda r: sum(thr(f) for f in r.group("reno")))
            for i, st in enumerate(per_flow[(b, v)]):
                name = LABEL[v] if i < 2 else "Reno"
                rows.append(TableRow({"buffer": b, "variant": LABEL[v], "flow": f"{i + 1} ({name})"},
                                     "throughput", st, None, "Mbit/s"))
            rows.append(TableRow({"buffer": b, "variant": LABEL[v], "flow": "Reno 3 + 4"}, "throughput",
                                 reno_total[(b, v)], None, "Mbit/s"))
    ctx.table("fig9-friendliness", "Fig. 9: two Cubic / Cubic+ flows and two Reno flows, scenario II", rows,
              note="The paper plots these without values.")
    plots.fig9(ctx, per_flow, variants, SETTINGS[sc].buffers[::-1])
    more = {b: reno_total[(b, "cubic+")].mean > reno_total[(b, "cubic")].mean for b in SETTINGS[sc].buffers}
    ctx.claim(
        "fig9-reno-gets-more-beside-cubic-plus",
        "In scenario II, two Reno flows get more throughput beside two Cubic+ flows than beside two Cubic flows.",
        paper="Cubic grabs Reno's bandwidth; Cubic+ leaves Reno more, at both buffer sizes",
        ours="; ".join(f"{b}: Reno total {fmt(reno_total[(b, 'cubic')].mean)} → "
                       f"{fmt(reno_total[(b, 'cubic+')].mean)} Mbit/s" for b in SETTINGS[sc].buffers[::-1]),
        holds=all(more.values()),
        why="Holds if the Reno pair's mean total throughput is higher beside Cubic+ at both buffer sizes "
            f"({sum(more.values())} of {len(more)})."
            + ("" if all(more.values()) else
               f" These runs last {dur[sc]}" + (
                   " (quick mode): mostly the slow-start overshoot and the first loss cycles, in which "
                   "the Cubic+ flows have not yet settled; the full mode's 200 s runs are the comparison "
                   "with the paper." if ctx.quick else
                   ". Our Reno has no SACK and recovers from multiple losses in one window by timeouts, "
                   "which dominate its throughput whichever flows it shares the link with.")),
    )


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
