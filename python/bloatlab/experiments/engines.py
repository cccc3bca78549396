"""`bloatlab reproduce --engine emulate|both`: the experiments on real Linux TCP.

An experiment that Linux can run (a part of it) has an *emulation plan*
(``Experiment.emulation``): a reproduce function built from the experiment's own scenario
builders, tables and claims, limited to the configurations the emulator runs and sized to
finish on the wall clock. It is engine-agnostic: :meth:`Context.run` runs its specs in the
simulator (``engine="sim"``) or, one after the other, through :mod:`bloatlab.emulate`
(``engine="emulate"``), so ``--engine both`` runs the *same* configurations in both engines
and compares claim by claim and table row by table row. Whatever the emulator refuses is
listed in the report with the emulator's own reason.

Emulated runs are cached like simulated ones (``CACHE-emu/emu-<content hash>`` beside the
simulations' cache, by default ``OUT/cache-emu``; the hash
of the scenario, the build and the kernel release), so an interrupted reproduction resumes.
"""

from __future__ import annotations

import json
import math
import os
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..atomic import write_bytes
from ..errors import ScenarioError
from ..outputs.numbers import sig
from .framework import Claim, RunResult, Stat, Table, _finite, cis_overlap

if TYPE_CHECKING:
    from .framework import Context, Experiment, Spec

ENGINES = ("sim", "emulate", "both")


# --------------------------------------------------------------------------- refusals


def preflight(experiments: Sequence[Experiment], engine: str, single: bool, emulable: Sequence[str]) -> None:
    """Refuses, before anything is created, what cannot run: an unknown engine, emulation
    without root (or TUN / iproute2), an experiment Linux cannot run at all (asked for alone),
    a congestion control the kernel lacks (``modprobe tcp_<cc>`` is tried, as the emulator does)."""
    if engine not in ENGINES:
        raise ScenarioError("--engine", f"unknown engine {engine!r} (allowed: {', '.join(ENGINES)})")
    if engine == "sim":
        return
    from ..emulate import netns
    from ..emulate.netns import EmulationError

    if os.geteuid() != 0:
        raise ScenarioError("--engine", f"{engine} runs real Linux TCP in network namespaces and needs root "
                            "(allowed without root: sim)")
    try:
        netns.check_environment()
    except EmulationError as e:
        raise ScenarioError("--engine", f"{e} (allowed here: sim)") from None
    runnable = [e for e in experiments if e.emulation is not None]
    if single and not runnable:
        e = experiments[0]
        raise ScenarioError("EXPERIMENT", f"{e.name} cannot run on Linux: {e.emulation_refused} (allowed with "
                            f"--engine {engine}: {', '.join(emulable)})")
    for cc in sorted({cc for e in runnable for cc in e.emulation_ccs}):
        if not netns.ensure_cc(cc):
            have = ", ".join(netns.available_ccs()) or "none"
            users = ", ".join(e.name for e in runnable if cc in e.emulation_ccs)
            raise ScenarioError("--engine", f"this kernel has no \"{cc}\" congestion control, which {users} needs "
                                f"on Linux (available: {have})")


def refusal(scenario: dict[str, Any]) -> str | None:
    """Why the emulator would refuse this scenario (its exit-2 message), or None: the same
    validation ``bloatlab emulate`` does, including a congestion control this kernel lacks
    (a plan's optional ones, e.g. vegas, which not every kernel has)."""
    from ..emulate.runner import check_kernel, plan

    try:
        check_kernel(plan(scenario))
    except ScenarioError as e:
        return str(e)
    return None


# --------------------------------------------------------------------------- running


def run_emulated(ctx: Context, specs: Sequence[Spec], what: str) -> list[RunResult]:
    """:meth:`Context.run` on the emulator: serially (see docs/emulation.md, parallel runs),
    cached by content; a spec the emulator refuses is listed in ``ctx.skipped`` and left out
    of the results (the others keep their order)."""
    from ..emulate.runner import emulate
    from ..scenario import to_json
    from ..sweeps.spec import build_id, run_id

    version = f"{build_id()}+emulate+{platform.release()}"
    cache = ctx.emu_cache
    results = []
    for spec in specs:
        spec.scenario = json.loads(to_json(spec.scenario))
        why = refusal(spec.scenario)
        if why is not None:
            ctx.skip(_where(what, spec.labels), why)
            continue
        rid = "emu-" + run_id(spec.scenario, version)
        d = cache / rid
        if not (d / "summary.json").exists():
            t = time.monotonic()
            if ctx.options.progress is not False:
                print(f"{ctx.experiment.name}: emulating {_where(what, spec.labels)} ...", file=sys.stderr, flush=True)
            emulate(spec.scenario).to_dir(d)
            ctx.simulations += 1
            ctx.wall_s += time.monotonic() - t
        r = RunResult(spec, rid, d)
        ctx.run_ids.add(rid)
        ctx.sim_seconds += float(r.summary.get("duration_s") or 0.0)
        results.append(r)
    return results


def _where(what: str, labels: dict[str, Any]) -> str:
    keys = ", ".join(f"{k}={v}" for k, v in labels.items())
    return f"{what} ({keys})" if what else keys


def skipped_markdown(ctx: Context) -> str:
    """The configurations and items this engine did not run, with the reason."""
    return "\n".join(f"- {what}: {why}" for what, why in ctx.skipped)


# --------------------------------------------------------------------------- both engines side by side


#: What engines.md says under a claim whose verdicts differ and that no one has looked into yet.
NOT_EXPLAINED = "not yet checked (no note in the experiment's emulation plan)."


def compare(exp: Experiment, full: Sequence[Claim], sim: Context, emu: Context) -> dict[str, Any]:
    """Claims and tables of the same plan in both engines; ``full`` are the claims of the
    simulated reproduction with the paper's configurations (their verdicts are shown beside)."""
    full_by = {c.id: c for c in full}
    sim_by = {c.id: c for c in sim.claims}
    claims = []
    for c in emu.claims:
        s = sim_by.get(c.id)
        ks, ke = sim.keys.get(c.id), emu.keys.get(c.id)
        q = None
        if ks and ke and ks[1] not in (None, 0) and ke[1] is not None and math.isfinite(ks[1]):
            q = ke[1] / ks[1]
        claims.append({
            "id": c.id, "text": c.text,
            "sim_paper_configs": None if c.id not in full_by else full_by[c.id].holds,
            "sim": None if s is None else s.holds, "emulate": c.holds,
            "same_verdict": s is not None and s.holds == c.holds,
            "key": None if ke is None else ke[0],
            "key_sim": None if ks is None else _finite(ks[1]), "key_emulate": None if ke is None else _finite(ke[1]),
            "ratio": None if q is None else round(q, 6),
            "sim_ours": None if s is None else s.ours, "emulate_ours": c.ours,
            "why_they_differ": (None if s is None or s.holds == c.holds
                                else exp.engine_notes.get(c.id, NOT_EXPLAINED)),
        })
    tables = []
    sim_tables = {t.name: t for t in sim.items if isinstance(t, Table)}
    for t in (t for t in emu.items if isinstance(t, Table)):
        st = sim_tables.get(t.name)
        if st is None:
            continue
        by = {(json.dumps(r.keys, default=str), r.metric): r for r in st.rows}
        rows = []
        for r in t.rows:
            s = by.get((json.dumps(r.keys, default=str), r.metric))
            if s is None:
                continue
            rows.append({"keys": r.keys, "metric": r.metric, "unit": r.unit, "sim": s.ours.to_json(),
                         "emulate": r.ours.to_json(), "ratio": _ratio(r.ours, s.ours),
                         "cis_overlap": cis_overlap([r.ours, s.ours])})
        tables.append({"name": t.name, "title": t.title, "rows": rows})
    full_only = [{"id": c.id, "sim_paper_configs": c.holds} for c in full if c.id not in {x["id"] for x in claims}]
    return {"experiment": exp.name, "claims": claims, "tables": tables, "not_emulated": full_only,
            "skipped": [{"what": w, "why": y} for w, y in emu.skipped]}


def _ratio(emu: Stat, sim: Stat) -> float | None:
    if math.isnan(emu.mean) or math.isnan(sim.mean) or sim.mean == 0:
        return None
    return round(emu.mean / sim.mean, 6)


def _verdict(v: bool | None) -> str:
    return "—" if v is None else ("holds" if v else "does not hold")


def compare_markdown(cmp: dict[str, Any], title: str) -> str:
    lines = [f"## {title}", "",
             "Claims of the emulation plan (the experiment's configurations that Linux runs, in both engines), "
             "with the verdict of the simulated reproduction at the paper's configurations beside them. "
             "*ratio* = emulation / simulation of the claim's key number.", "",
             "| claim | simulation, paper's configurations | simulation | emulation | same verdict | key number: "
             "simulation / emulation (ratio) |", "|---|---|---|---|---|---|"]
    for c in cmp["claims"]:
        key = "—" if c["key"] is None else (f"{c['key']}: {sig(c['key_sim'])} / {sig(c['key_emulate'])}"
                                             + ("" if c["ratio"] is None else f" ({c['ratio']:.2f})"))
        lines.append(f"| {c['id']} | {_verdict(c['sim_paper_configs'])} | {_verdict(c['sim'])} | "
                     f"{_verdict(c['emulate'])} | {'yes' if c['same_verdict'] else '**no**'} | {key} |")
    lines.append("")
    for c in cmp["claims"]:
        lines += [f"- **{c['id']}** — simulation: {c['sim_ours']}  \n  emulation: {c['emulate_ours']}"]
        if c.get("why_they_differ"):
            lines += [f"  \n  *Why the engines differ:* {c['why_they_differ']}"]
    lines.append("")
    for t in cmp["tables"]:
        lines += [f"### {t['title']}", "", "| " + " | ".join(["configuration", "metric", "simulation", "emulation",
                                                            "ratio", "95 % CIs overlap"]) + " |",
                                                            "|---|---|---|---|---|---|"]
        for r in t["rows"]:
            conf = ", ".join(f"{k}={v}" for k, v in r["keys"].items())
            s, e = _stat(r["sim"]), _stat(r["emulate"])
            unit = f" ({r['unit']})" if r["unit"] else ""
            q = "—" if r["ratio"] is None else f"{r['ratio']:.2f}"
            overlap = "n/a (1 seed)" if min(s.n, e.n) < 2 else "yes" if r["cis_overlap"] else "**no**"
            lines.append(f"| {conf} | {r['metric']}{unit} | {s.fmt()} | {e.fmt()} | {q} | {overlap} |")
        lines.append("")
    if cmp["not_emulated"]:
        lines += ["Claims of the simulated reproduction without an emulated counterpart: "
                  + ", ".join(f"{c['id']} ({_verdict(c['sim_paper_configs'])})" for c in cmp["not_emulated"]) + ".", ""]
    if cmp["skipped"]:
        lines += ["Not emulated:", ""] + [f"- {s['what']}: {s['why']}" for s in cmp["skipped"]] + [""]
    return "\n".join(lines)


def _stat(j: dict[str, Any]) -> Stat:
    return Stat(math.nan if j["mean"] is None else j["mean"], math.nan if j["ci95_half"] is None else j["ci95_half"],
                j["n"])


def write_compare(out: Path, cmps: Sequence[dict[str, Any]], titles: Sequence[str]) -> None:
    """engines.md and engines.json: every experiment's side-by-side comparison."""
    md = "# bloatlab: simulation and emulation side by side\n\n" + "\n".join(
        compare_markdown(c, t) for c, t in zip(cmps, titles))
    out.mkdir(parents=True, exist_ok=True)
    write_bytes(out / "engines.md", md.encode())
    write_bytes(out / "engines.json",
                       (json.dumps(list(cmps), indent=2, ensure_ascii=False) + "\n").encode())
