"""The five papers' experiments (``bloatlab reproduce``), one module each.

>>> from bloatlab.experiments import reproduce
>>> claims = reproduce("dccp-bbr", out="out/dccp-bbr", quick=True)

Each module defines ``EXPERIMENT`` (an :class:`~bloatlab.experiments.framework.Experiment`):
its scenarios, seeds, the paper's numbers, and how tables, figures and claims are made.
:mod:`bloatlab.experiments.calibration` has the RFC 7928 congestion-level calibration and
the flows-served search as functions for any scenario.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from .framework import Claim, Context, Experiment, Options

#: experiment name -> module (imported on demand)
MODULES = {
    "cubic-plus": "cubic_plus",
    "cellular-bufferbloat": "cellular_bufferbloat",
    "ewt": "ewt",
    "abrwda": "abrwda",
    "dccp-bbr": "dccp_bbr",
}
NAMES = (*MODULES, "all")


def get(name: str) -> Experiment:
    if name not in MODULES:
        raise ScenarioError("EXPERIMENT", f"unknown experiment {name!r} (known: {', '.join(NAMES)})")
    return importlib.import_module(f".{MODULES[name]}", __name__).EXPERIMENT


def reproduce(name: str, out: str | os.PathLike[str], *, quick: bool = False, seeds: int | None = None,
              jobs: int | None = None, backend: str = "local", progress: bool | None = None,
              smoke: bool = False, cache: str | os.PathLike[str] | None = None) -> list[Claim]:
    """Runs one experiment (or ``"all"``) and writes its outputs into ``out``; returns the claims.

    Runs are cached by content in ``cache`` (default ``OUT/cache``, shared by every
    experiment of ``all``), so an interrupted reproduction resumes where it stopped.
    """
    from ..backends import make_backend
    from ..store import StoreWriter
    from .framework import write_bytes_atomic
    from .render import index_markdown, markdown_to_html, write_claims, write_outputs

    names = list(MODULES) if name == "all" else [name]
    experiments = [get(n) for n in names]
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
    try:
        # The cache is a results store (bloatlab.store), written like a sweep's: locked, each
        # run committed whole by one rename with its files' sizes and CRC-32. No fsync: a run
        # torn by a crash fails the size check and is simply run again.
        with StoreWriter(cache_dir, fsync=False) as store:
            for exp in experiments:
                exp_out = out / exp.name if name == "all" else out
                exp_out.mkdir(parents=True, exist_ok=True)
                ctx = Context(exp, exp_out, options, be, store)
                exp.reproduce(ctx)
                write_outputs(ctx, _meta(ctx))
                entries.append((exp.name, exp.title, ctx.claims))
                all_claims += ctx.claims
    finally:
        be.close()
    if name == "all":
        write_claims(out / "claims.json", all_claims)
        md = index_markdown(entries)
        write_bytes_atomic(out / "report.md", md.encode())
        write_bytes_atomic(out / "report.html",
                           markdown_to_html(md, "bloatlab: the five papers reproduced").encode())
    return all_claims


def _check_cache(cache: Path) -> None:
    """The cache must be a results store, or new. Earlier builds kept it as a plain directory
    of run directories, which this build would not reuse anyway (run ids include a digest of
    the compiled simulator)."""
    from ..store import is_store

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
