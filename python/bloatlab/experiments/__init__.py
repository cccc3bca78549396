"""The six papers' experiments (``bloatlab reproduce``), one module each.

>>> from bloatlab.experiments import reproduce
>>> claims = reproduce("dccp-bbr", out="out/dccp-bbr", quick=True)

Each module defines ``EXPERIMENT`` (an :class:`~bloatlab.experiments.framework.Experiment`):
its scenarios, seeds, the paper's numbers, and how tables, figures and claims are made.
:mod:`bloatlab.experiments.calibration` has the RFC 7928 congestion-level calibration and
the flows-served search as functions for any scenario.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from .framework import Claim, Context, Experiment, Options

#: experiment name -> its package (imported on demand). Every package has the same parts:
#: ``scenarios`` (the paper's setup as scenario dicts, and what is read from a run),
#: ``paper`` (the published numbers), ``plots`` (its figures), ``claims`` (``reproduce(ctx)``:
#: runs, tables, claims and the report's text), ``emu`` (the emulation plan: ``reproduce(ctx)``
#: and ``ENGINE_NOTES``, or ``REFUSED``, why Linux cannot run it); ``__init__`` has the
#: :class:`Experiment` (``EXPERIMENT``).
MODULES = {
    "cubic-plus": "cubic_plus",
    "cellular-bufferbloat": "cellular_bufferbloat",
    "ewt": "ewt",
    "abrwda": "abrwda",
    "dccp-bbr": "dccp_bbr",
    "ending-the-anomaly": "ending_the_anomaly",
}
NAMES = (*MODULES, "all")


def _plan(name: str) -> Any:
    """The experiment's ``emu`` module (its emulation plan, or the reason there is none)."""
    return importlib.import_module(f".{MODULES[name]}.emu", __name__)


def get(name: str) -> Experiment:
    if name not in MODULES:
        raise ScenarioError("EXPERIMENT", f"unknown experiment {name!r} (known: {', '.join(NAMES)})")
    exp: Experiment = importlib.import_module(f".{MODULES[name]}", __name__).EXPERIMENT
    plan = _plan(name)
    if getattr(plan, "reproduce", None) is not None:
        exp = dataclasses.replace(exp, emulation=plan.reproduce, engine_notes=getattr(plan, "ENGINE_NOTES", {}))
    else:
        exp = dataclasses.replace(exp, emulation_refused=plan.REFUSED)
    return exp


def emulable_names() -> list[str]:
    """The experiments with an emulation plan."""
    return [n for n in MODULES if getattr(_plan(n), "reproduce", None) is not None]


def reproduce(name: str, out: str | os.PathLike[str], *, quick: bool = False, seeds: int | None = None,
              jobs: int | None = None, backend: str = "local", progress: bool | None = None,
              smoke: bool = False, cache: str | os.PathLike[str] | None = None, engine: str = "sim") -> list[Claim]:
    """Runs one experiment (or ``"all"``) and writes its outputs into ``out``; returns the claims.

    Runs are cached by content in ``cache`` (default ``OUT/cache``, shared by every
    experiment of ``all``), so an interrupted reproduction resumes where it stopped.

    ``engine``: ``"sim"`` (the simulator), ``"emulate"`` (each experiment's emulation plan on
    real Linux TCP, root; :mod:`.engines`) or ``"both"`` (the simulated reproduction, then the
    plan in both engines and ``engines.md`` / ``engines.json`` side by side). With ``emulate``
    the claims returned are the emulation's.
    """
    from ..atomic import write_bytes
    from ..outputs.markdown import markdown_to_html
    from ..sweeps.backends import make_backend
    from ..sweeps.store import StoreWriter
    from .engines import preflight
    from .render import index_markdown, write_claims, write_outputs

    names = list(MODULES) if name == "all" else [name]
    experiments = [get(n) for n in names]
    preflight(experiments, engine, single=name != "all",
              emulable=emulable_names() if engine != "sim" else ())
    if seeds is not None and seeds < 1:
        raise ScenarioError("--seeds", f"must be at least 1 (got {seeds})")
    if jobs is not None and jobs < 1:
        raise ScenarioError("--jobs", f"must be at least 1 (got {jobs})")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ScenarioError("--out", f"{out} exists and is not a directory")
    cache_dir = Path(cache) if cache is not None else out / "cache"
    _check_cache(cache_dir)
    options = Options(quick=quick, seeds=seeds, progress=progress, smoke=smoke)
    be = make_backend(backend, jobs=jobs)
    be.start()
    entries = []
    all_claims: list[Claim] = []
    emulated = _Emulated(engine, out, cache_dir.with_name(cache_dir.name + "-emu"))
    try:
        # The cache is a results store (bloatlab.sweeps.store), written like a sweep's: locked, each
        # run committed whole by one rename with its files' sizes and CRC-32. No fsync: a run
        # torn by a crash fails the size check and is simply run again.
        with StoreWriter(cache_dir, fsync=False) as store:
            for exp in experiments:
                exp_out = out / exp.name if name == "all" else out
                claims: list[Claim] = []
                if engine != "emulate":
                    exp_out.mkdir(parents=True, exist_ok=True)
                    ctx = Context(exp, exp_out, options, be, store)
                    exp.reproduce(ctx)
                    write_outputs(ctx, _meta(ctx))
                    entries.append((exp.name, exp.title, ctx.claims))
                    claims = ctx.claims
                if engine != "sim":
                    emu_claims = emulated.run(exp, exp_out, claims, options, be, store)
                    if engine == "emulate" and emu_claims is not None:
                        entries.append((exp.name, exp.title, emu_claims))
                        claims = emu_claims
                all_claims += claims
    finally:
        be.close()
    emulated.finish(name == "all")
    if name == "all":
        write_claims(out / "claims.json", all_claims)
        md = index_markdown(entries)
        write_bytes(out / "report.md", md.encode())
        write_bytes(out / "report.html",
                           markdown_to_html(md, "bloatlab: the six papers reproduced").encode())
    return all_claims


class _Emulated:
    """The emulation side of ``reproduce --engine emulate|both``: runs each experiment's plan,
    writes its report (``emulate``: into the experiment's directory; ``both``: into
    ``emulate/`` and, the same plan simulated, ``emulate-sim/``) and the comparison."""

    def __init__(self, engine: str, out: Path, cache: Path) -> None:
        self.engine = engine
        self.out = out
        self.cache = cache  # emulated runs: beside the simulations' cache (default OUT/cache-emu)
        self.compared: list[dict[str, Any]] = []
        self.titles: list[str] = []
        self.not_run: list[tuple[str, str]] = []  # (experiment, why)

    def run(self, exp: Experiment, exp_out: Path, full: list[Claim], options: Options, be: Any,
            store: Any) -> list[Claim] | None:
        from .engines import compare, write_compare

        if exp.emulation is None:
            self.not_run.append((exp.name, exp.emulation_refused))
            return None
        emu_cache = self.cache
        both = self.engine == "both"
        emu = self._plan(exp, exp_out / "emulate" if both else exp_out, options, be, store, "emulate", emu_cache)
        if not both:
            return emu.claims
        sim = self._plan(exp, exp_out / "emulate-sim", options, be, store, "sim", emu_cache)
        cmp = compare(exp, full, sim, emu)
        write_compare(exp_out, [cmp], [exp.title])
        self.compared.append(cmp)
        self.titles.append(exp.title)
        return emu.claims

    @staticmethod
    def _plan(exp: Experiment, out: Path, options: Options, be: Any, store: Any, engine: str,
              emu_cache: Path) -> Context:
        from .engines import run_emulated, skipped_markdown
        from .render import write_outputs

        out.mkdir(parents=True, exist_ok=True)
        if options.seeds is None and not (options.quick or options.smoke):
            options = dataclasses.replace(options, seeds=exp.emulation_seeds_full)
        ctx = Context(exp, out, options, be, store, engine=engine, emu_cache=emu_cache,
                      runner=run_emulated if engine == "emulate" else None)
        assert exp.emulation is not None
        exp.emulation(ctx)
        if ctx.skipped:
            ctx.text(skipped_markdown(ctx), heading="Not emulated, and why")
        meta = _meta(ctx)
        meta["engine"] = engine
        write_outputs(ctx, meta)
        return ctx

    def finish(self, many: bool) -> None:
        from .engines import write_compare

        if self.engine == "both" and many:
            write_compare(self.out, self.compared, self.titles)
        if self.engine != "sim" and many and self.not_run:
            from ..atomic import write_bytes

            self.out.mkdir(parents=True, exist_ok=True)
            text = "".join(f"- {n}: {why}\n" for n, why in self.not_run)
            write_bytes(self.out / "not-emulated.md",
                               ("# Experiments Linux cannot run\n\n" + text).encode())


def _check_cache(cache: Path) -> None:
    """The cache must be a results store, or new. Earlier builds kept it as a plain directory
    of run directories, which this build would not reuse anyway (run ids include a digest of
    the compiled simulator)."""
    from ..sweeps.store import is_store

    if cache.exists() and not cache.is_dir():
        raise ScenarioError("--out", f"{cache} exists and is not a directory")
    if cache.is_dir() and not is_store(cache) and any(cache.iterdir()):
        raise ScenarioError("--out", f"{cache} holds runs cached in an older layout, which this build "
                            "would not reuse; delete it and run again")


def _meta(ctx: Context) -> dict[str, Any]:
    """What the report says of the reproduction: the same on a first run and on a rerun
    from the cache (no wall-clock values, no count of what this invocation simulated)."""
    from ..simcore import __version__

    mode = "smallest (test)" if ctx.smoke else "quick" if ctx.quick else "full"
    return {"bloatlab": __version__, "mode": mode, "seeds": ctx.n_seeds, "simulations": len(ctx.run_ids),
            "simulated_s": ctx.sim_seconds}
