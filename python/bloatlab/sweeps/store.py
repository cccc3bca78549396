"""The results store of a sweep: a directory that survives crashes and resumes.

Layout::

    OUT/
      sweep.json             the sweep (base scenario, axes, seeds) and its plan: every run's
                             run_id, point, seed and parameters; rewritten (atomically) at each start
      runs/<run_id>/         one directory per finished run, ok or failed; it appears whole,
                             by one rename, or not at all
        run.json             run_id, status ("ok" | "error"), error, seed, point, params, versions,
                             worker, elapsed time, and the other files with their size and CRC-32
        scenario.json        the resolved scenario that ran (``bloatlab run runs/<id>/scenario.json``)
        summary.json         (ok) the summary JSON, byte for byte as the simulator wrote it
        timeseries.parquet   (ok) per-flow samples          } the same files as `bloatlab run --out`
        queues.parquet       (ok) per-link samples          }
        {link}.pcap          (ok) packet captures, when the scenario has a `capture` table
      tables/                compacted tables, a cache rebuilt from runs/ when it is stale
        runs.parquet  flows.parquet  bottleneck.parquet  timeseries.parquet  queues.parquet
      .tmp/                  staging directories of runs being written (removed at the next start)
      .lock                  held (flock) by the sweep that is writing

A run is *done* when ``runs/<run_id>/run.json`` says ``"status": "ok"`` and every
file it lists is there with its recorded size. Every file of a run is written in
``.tmp/``, flushed to disk (one syncfs), and the directory is then renamed into
``runs/``: a crash (Ctrl-C, SIGKILL, power loss) leaves either the whole run or
nothing of it, so the store never holds half a run. Reads compact the per-run files
into ``tables/`` (each table one Parquet file whose metadata lists the runs it
holds, with a stamp of their files; replaced atomically), so later reads only add
the runs that are new.
"""

from __future__ import annotations

import datetime
import errno
import json
import os
import secrets
import shutil
import socket
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..atomic import replace_dir, staged_file, sync_dir, write_bytes, write_file
from ..errors import ScenarioError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from .spec import RunSpec, Sweep

SWEEP_FILE = "sweep.json"
RUNS = "runs"
TABLES = "tables"
TMP = ".tmp"
LOCK = ".lock"
RUN_FILE = "run.json"

#: Tables of the store: name -> what one row is.
TABLE_NAMES = {
    "runs": "one row per run (status, error, seed, engine counters)",
    "flows": "one row per flow per run (the summary's flows[])",
    "bottleneck": "one row per queue per run (the summary's bottleneck block)",
    "timeseries": "per-flow samples of every run (timeseries.parquet)",
    "queues": "per-link samples of every run (queues.parquet)",
}
_SERIES_FILES = {"timeseries": "timeseries.parquet", "queues": "queues.parquet"}
_META_KEY = b"bloatlab.store"
FORMAT = 1


class StoreBusy(ScenarioError):
    """Another process is writing to the store."""


def _json_bytes(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def is_store(path: Path) -> bool:
    return (path / SWEEP_FILE).is_file() or (path / RUNS).is_dir()


# --------------------------------------------------------------------------- writing


class StoreWriter:
    """Exclusive writer of a store (holds ``.lock`` with flock while open)."""

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = True) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self._lock_fd: int | None = None

    # -- opening

    def open(self) -> StoreWriter:
        p = self.path
        if p.exists() and not p.is_dir():
            raise ScenarioError("--out", f"{p} exists and is not a directory")
        if p.is_dir() and not is_store(p) and any(p.iterdir()):
            raise ScenarioError("--out", f"{p} is a non-empty directory that is not a bloatlab results "
                                "store; give a new or empty directory")
        p.mkdir(parents=True, exist_ok=True)
        (p / RUNS).mkdir(exist_ok=True)
        (p / TMP).mkdir(exist_ok=True)
        self._lock()
        for leftover in (p / TMP).iterdir():  # staging dirs of a writer that died
            shutil.rmtree(leftover, ignore_errors=True)
        return self

    def _lock(self) -> None:
        import fcntl

        fd = os.open(self.path / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                owner = ""
                try:
                    owner = (self.path / LOCK).read_text().strip()
                except OSError:
                    pass
                raise StoreBusy("--out", f"another sweep is writing to {self.path}"
                                + (f" ({owner})" if owner else "")) from None
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode())
        self._lock_fd = fd

    def close(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None

    def __enter__(self) -> StoreWriter:
        return self.open() if self._lock_fd is None else self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- content

    def write_plan(self, sweep: Sweep, runs: list[RunSpec]) -> None:
        from ..simcore import __version__

        doc = {
            "format": FORMAT,
            "bloatlab": __version__,
            "written_at": _now(),
            "sweep": sweep.to_dict(),
            "params": sweep.param_names,
            "runs": [{"run_id": r.run_id, "point": r.point, "seed": r.seed, "params": r.params} for r in runs],
        }
        write_bytes(self.path / SWEEP_FILE, _json_bytes(doc), fsync=self.fsync)

    def records(self, run_ids: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
        return read_records(self.path, run_ids)

    def commit(self, record: Mapping[str, Any], files: Mapping[str, bytes]) -> Path:
        """Writes one finished run: ``run.json`` from ``record`` plus ``files``; all or nothing.

        The files are written into ``.tmp/``, made durable (one ``syncfs`` on Linux, else an
        fsync per file), and the directory is renamed into ``runs/``. ``run.json`` lists every
        file with its size and CRC-32, so a run is only taken as done when all its files are
        whole. A run that is already there (a failed one being retried) is replaced.
        """
        import zlib

        rid = record["run_id"]
        stage = self.path / TMP / f"{rid}-{os.getpid()}-{secrets.token_hex(4)}"
        stage.mkdir(parents=True)
        try:
            listing: dict[str, dict[str, int]] = {}
            for name, data in files.items():
                if "/" in name or name in (RUN_FILE, "") or name.startswith("."):
                    raise ValueError(f"bad run file name {name!r}")
                write_file(stage / name, data, fsync=False)
                listing[name] = {"bytes": len(data), "crc32": zlib.crc32(data)}
            write_file(stage / RUN_FILE, _json_bytes({**record, "files": listing}), fsync=False)
            if self.fsync:
                _make_durable(stage)
            final = self.path / RUNS / rid
            replace_dir(stage, final, trash_dir=self.path / TMP)
            # No fsync of runs/ here: if a crash loses the rename, the run is simply run again.
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
        return final


_SYNCFS: Any = None


def _make_durable(stage: Path) -> None:
    """Flushes the staged files to disk: one syncfs(2) on Linux (much cheaper than an fsync
    per file), else fsync of every file and of the directory."""
    global _SYNCFS
    if _SYNCFS is None:
        _SYNCFS = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                _SYNCFS = ctypes.CDLL(None, use_errno=True).syncfs
            except (OSError, AttributeError):
                _SYNCFS = False
    if _SYNCFS:
        fd = os.open(stage, os.O_RDONLY)
        try:
            if _SYNCFS(fd) == 0:
                return
        finally:
            os.close(fd)
    for p in stage.iterdir():
        with open(p, "rb") as f:
            os.fsync(f.fileno())
    sync_dir(stage)


def is_whole(run_dir: Path, rec: Mapping[str, Any]) -> bool:
    """True when every file ``run.json`` lists is there with its size (cheap: stat only)."""
    for name, meta in (rec.get("files") or {}).items():
        try:
            if (run_dir / name).stat().st_size != meta.get("bytes"):
                return False
        except OSError:
            return False
    return True


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def read_record(path: Path, run_id: str) -> dict[str, Any] | None:
    """``run.json`` of one run of the store; None when it is not there, unreadable or not whole."""
    d = path / RUNS / run_id
    try:
        rec = json.loads((d / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(rec, dict) and rec.get("run_id") == run_id and is_whole(d, rec):
        return rec
    return None


def read_records(path: Path, run_ids: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """``run.json`` of every run in the store (or of ``run_ids``), by run_id; runs that are
    missing, unreadable or not whole are left out."""
    runs = path / RUNS
    if run_ids is None:
        run_ids = [d.name for d in runs.iterdir()] if runs.is_dir() else []
    out: dict[str, dict[str, Any]] = {}
    for rid in run_ids:
        rec = read_record(path, rid)
        if rec is not None:
            out[rid] = rec
    return out


# --------------------------------------------------------------------------- reading


def _flatten(obj: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in obj.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, key + "."))
        elif isinstance(v, list):
            out[key] = json.dumps(v)
        else:
            out[key] = v
    return out


def _rows_for_run(run_dir: Path, rec: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Rows of the summary tables (runs, flows, bottleneck) for one run directory."""
    rid = rec["run_id"]
    err = rec.get("error") or {}
    run_row: dict[str, Any] = {
        "run_id": rid, "seed": rec.get("seed"), "status": rec.get("status"),
        "error_type": err.get("type"), "error_path": err.get("path"), "error": err.get("message"),
        "name": rec.get("name"), "bloatlab": rec.get("bloatlab"),
        "elapsed_s": rec.get("elapsed_s"), "finished_at": rec.get("finished_at"),
    }
    out: dict[str, list[dict[str, Any]]] = {"runs": [run_row], "flows": [], "bottleneck": []}
    if rec.get("status") != "ok":
        return out
    try:
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        run_row["status"] = "error"
        run_row["error_type"] = "StoreError"
        run_row["error"] = "summary.json is missing or unreadable"
        return out
    run_row["duration_s"] = summary.get("duration_s")
    for k, v in _flatten(summary.get("fairness") or {}).items():
        run_row[k] = v
    for k, v in _flatten(summary.get("engine") or {}, "engine.").items():
        run_row[k] = v
    for f in summary.get("flows") or []:
        out["flows"].append({"run_id": rid, "seed": rec.get("seed"), **_flatten(f)})
    queues: list[tuple[str, Mapping[str, Any]]] = []
    if isinstance(summary.get("bottleneck"), Mapping):
        queues.append(("bottleneck", summary["bottleneck"]))
    for i, q in enumerate(summary.get("queues") or []):  # more queues, if the summary grows them
        if isinstance(q, Mapping):
            queues.append((str(q.get("link", q.get("name", f"queue{i}"))), q))
    for link, q in queues:
        out["bottleneck"].append({"run_id": rid, "seed": rec.get("seed"), "queue": link,
                                  **{k: v for k, v in _flatten(q).items() if k not in ("link", "name")}})
    return out


def _stamp(run_dir: Path) -> str:
    """Changes when any file of the run changes (size, mtime or inode): stat only."""
    import hashlib

    parts = []
    for entry in sorted(os.scandir(run_dir), key=lambda e: e.name):
        st = entry.stat()
        parts.append(f"{entry.name}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}")
    if not any(p.startswith(RUN_FILE + ":") for p in parts):
        raise FileNotFoundError(run_dir / RUN_FILE)
    return hashlib.blake2b(";".join(parts).encode(), digest_size=8).hexdigest()


def _records_to_arrow(rows: list[dict[str, Any]]) -> pa.Table:
    import pandas as pd
    import pyarrow as pa

    if not rows:
        return pa.table({"run_id": pa.array([], pa.string())})
    df = pd.DataFrame.from_records(rows)
    for col in df.columns:  # columns whose values mix types (e.g. 1 and "x") are kept as text
        if df[col].dtype == object:
            kinds = {type(v) for v in df[col] if v is not None and not (isinstance(v, float) and v != v)}
            if len(kinds) > 1 and not kinds <= {int, float}:
                df[col] = df[col].map(lambda v: None if v is None else str(v))
    return pa.Table.from_pandas(df, preserve_index=False)


class Store:
    """Reads a results store (see the module docstring for the layout).

    Tables (pandas DataFrames) cover the runs of the current plan (``sweep.json``) in
    plan order, with the parameter columns (named by key path, e.g. ``flows[0].cc``),
    ``point`` and ``seed``; ``all_runs=True`` gives every run in the store.

        >>> s = bloatlab.Store("out/cc-vs-buffer")
        >>> s.flows.groupby(["flows[0].cc", "group"]).goodput_mbps.mean()
        >>> s.runs[s.runs.status == "error"][["run_id", "error"]]
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise ScenarioError(os.fspath(path), "no such directory")
        if not is_store(self.path):
            raise ScenarioError(os.fspath(path), "not a bloatlab results store (no sweep.json or runs/)")

    def __repr__(self) -> str:
        return f"<bloatlab.Store {os.fspath(self.path)!r}>"

    # -- plan and records

    @property
    def info(self) -> dict[str, Any]:
        """The content of ``sweep.json`` (empty if there is none)."""
        try:
            return json.loads((self.path / SWEEP_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    @property
    def params(self) -> list[str]:
        """The parameter (axis) names: key paths."""
        return list(self.info.get("params") or [])

    @property
    def name(self) -> str:
        return str((self.info.get("sweep") or {}).get("name") or self.path.name)

    def plan(self) -> list[dict[str, Any]]:
        """The runs of the sweep: ``[{"run_id", "point", "seed", "params"}]``; without a
        ``sweep.json``, every run in the store (parameters from its run.json)."""
        runs = self.info.get("runs")
        if runs is not None:
            return runs
        recs = read_records(self.path)
        return [{"run_id": r, "point": rec.get("point", 0), "seed": rec.get("seed"),
                 "params": rec.get("params") or {}} for r, rec in sorted(recs.items())]

    def records(self, run_ids: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
        return read_records(self.path, run_ids)

    def run_dir(self, run_id: str) -> Path:
        """The directory of one run (``bloatlab plot`` and ``bloatlab run`` read it)."""
        d = self.path / RUNS / run_id
        if not d.is_dir():
            raise KeyError(run_id)
        return d

    def status(self) -> dict[str, int]:
        """Counts over the plan: ``{"total", "ok", "error", "missing"}``."""
        recs = self.records()
        ids = {r["run_id"] for r in self.plan()}
        ok = sum(1 for i in ids if recs.get(i, {}).get("status") == "ok")
        err = sum(1 for i in ids if i in recs and recs[i].get("status") != "ok")
        return {"total": len(ids), "ok": ok, "error": err, "missing": len(ids) - ok - err}

    # -- tables

    def table(self, name: str, *, all_runs: bool = False) -> pd.DataFrame:
        """One of :data:`TABLE_NAMES` as a DataFrame (compacting ``runs/`` into ``tables/`` first)."""
        if name not in TABLE_NAMES:
            raise KeyError(f"unknown table {name!r} (known: {', '.join(TABLE_NAMES)})")
        table = self.arrow(name)
        df = table.to_pandas()
        return self._with_plan(df, all_runs=all_runs, name=name)

    @property
    def runs(self) -> pd.DataFrame:
        return self.table("runs")

    @property
    def flows(self) -> pd.DataFrame:
        return self.table("flows")

    @property
    def bottleneck(self) -> pd.DataFrame:
        return self.table("bottleneck")

    @property
    def timeseries(self) -> pd.DataFrame:
        return self.table("timeseries")

    @property
    def queues(self) -> pd.DataFrame:
        return self.table("queues")

    def _with_plan(self, df: pd.DataFrame, *, all_runs: bool, name: str) -> pd.DataFrame:
        import pandas as pd

        from .spec import value_label

        plan = self.plan()
        params = self.params
        rows = []
        for r in plan:
            row = {"run_id": r["run_id"], "point": r.get("point")}
            for p in params:
                row[p] = value_label((r.get("params") or {}).get(p))
            rows.append(row)
        plan_df = pd.DataFrame.from_records(rows, columns=["run_id", "point", *params])
        plan_df = plan_df.drop_duplicates("run_id")
        plan_df["_order"] = range(len(plan_df))
        clash = [c for c in params if c in df.columns]
        if clash:
            df = df.drop(columns=clash)
        if "point" in df.columns:
            df = df.drop(columns=["point"])
        how = "left" if all_runs else "inner"
        if name == "runs" and not all_runs:
            # Every planned run has a row, also those not run yet (status "missing").
            merged = plan_df.merge(df, on="run_id", how="left")
            if "status" not in merged.columns:
                merged["status"] = None
            merged["status"] = merged["status"].fillna("missing")
            seeds = {r["run_id"]: r.get("seed") for r in plan}
            merged["seed"] = merged["run_id"].map(seeds)
        else:
            merged = df.merge(plan_df, on="run_id", how=how)
        merged = merged.sort_values(["_order"], kind="stable", na_position="last")
        lead = [c for c in ["run_id", "point", *params, "seed"] if c in merged.columns]
        rest = [c for c in merged.columns if c not in lead and c != "_order"]
        out = merged[lead + rest].reset_index(drop=True)
        out.attrs["params"] = params
        out.attrs["store"] = os.fspath(self.path)
        return out

    def arrow(self, name: str) -> pa.Table:
        """The compacted table over every run in the store (no plan join), as pyarrow."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        runs_dir = self.path / RUNS
        current: dict[str, str] = {}
        if runs_dir.is_dir():
            for d in runs_dir.iterdir():
                try:
                    current[d.name] = _stamp(d)
                except OSError:
                    continue
        cache = self.path / TABLES / f"{name}.parquet"
        have: dict[str, str] = {}
        old: pa.Table | None = None
        if cache.is_file():
            try:
                old = pq.read_table(cache)
                meta = json.loads((old.schema.metadata or {}).get(_META_KEY, b"{}"))
                have = meta.get("runs", {}) if meta.get("format") == FORMAT else {}
                if not have and meta.get("format") != FORMAT:
                    old = None
            except Exception:  # noqa: BLE001 - a damaged cache is rebuilt
                old, have = None, {}
        keep = {r for r, s in have.items() if current.get(r) == s}
        add = sorted(r for r in current if r not in keep)
        if old is not None and keep == set(have) and not add:
            return old.replace_schema_metadata(None)
        parts: list[pa.Table] = []
        if old is not None and keep and "run_id" in old.column_names:
            import pyarrow.compute as pc

            parts.append(old.filter(pc.is_in(old["run_id"], pa.array(sorted(keep), pa.string()))))
        stamps = {r: have[r] for r in keep}
        rows: list[dict[str, Any]] = []
        for rid in add:
            d = runs_dir / rid
            try:
                rec = json.loads((d / RUN_FILE).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # not a finished run
            if not isinstance(rec, dict) or rec.get("run_id") != rid or not is_whole(d, rec):
                continue  # not a whole run (a crash before its files reached the disk): run again
            stamps[rid] = current[rid]
            if name in _SERIES_FILES:
                if rec.get("status") != "ok":
                    continue
                f = d / _SERIES_FILES[name]
                if not f.is_file():
                    continue
                t = pq.read_table(f)
                n = t.num_rows
                t = t.add_column(0, "run_id", pa.array([rid] * n, pa.string()))
                t = t.add_column(1, "seed", pa.array([rec.get("seed")] * n, pa.uint64()))
                parts.append(t.replace_schema_metadata(None))
            else:
                rows.extend(_rows_for_run(d, rec)[name])
        if rows:
            parts.append(_records_to_arrow(rows))
        parts = [p for p in parts if p.num_columns]
        if parts:
            table = pa.concat_tables(parts, promote_options="permissive")
        else:
            table = pa.table({"run_id": pa.array([], pa.string())})
        meta = {_META_KEY: json.dumps({"format": FORMAT, "runs": stamps}).encode()}
        try:
            (self.path / TABLES).mkdir(exist_ok=True)
            with staged_file(cache) as tmp:
                pq.write_table(table.replace_schema_metadata(meta), tmp, compression="zstd")
        except OSError:
            pass  # a read-only store still reads
        return table

