"""The result of one run: summary, time series, and writing them to a directory."""

from __future__ import annotations

import json
import os
import shutil
import weakref
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .atomic import staged_dir

if TYPE_CHECKING:  # pandas/pyarrow are imported lazily: the CLI's summary path does not need them
    import pandas as pd
    import pyarrow as pa

#: Files written by :meth:`Result.to_dir`.
OUTPUT_FILES = ("summary.json", "scenario.json", "timeseries.parquet", "queues.parquet")

# Output file -> table name in the core's tables.
_PARQUET = {"timeseries.parquet": "flows", "queues.parquet": "queues"}


class Result:
    """What :func:`bloatlab.run` returns.

    Attributes:
        summary: the summary dict (the JSON contract in docs/scenario.md).
        summary_json: the summary exactly as the simulator wrote it.
        scenario: the resolved scenario that was run (overrides and seed applied).
        tables: raw time-series columns, ``{"flows": {col: list}, "queues": {col: list}}``.
    """

    def __init__(
        self,
        summary_json: str,
        tables: Mapping[str, Mapping[str, list[Any]]] | None,
        scenario: Mapping[str, Any],
    ) -> None:
        self.summary_json = summary_json
        self.tables: dict[str, dict[str, list[Any]]] = {
            name: dict(cols) for name, cols in (tables or {}).items()
        }
        self.scenario = dict(scenario)
        self._capture_dir: Path | None = None

    def _adopt_capture_dir(self, path: Path) -> None:
        """Takes ownership of a directory of ``{link}.pcap`` files (deleted with this Result)."""
        self._capture_dir = path
        weakref.finalize(self, shutil.rmtree, str(path), True)

    @property
    def pcaps(self) -> dict[str, Path]:
        """Packet captures of this run, ``{link: path}`` (a ``capture`` table in the scenario).

        The files live in a temporary directory owned by this Result until
        :meth:`to_dir` copies them next to the other outputs.
        """
        if self._capture_dir is None or not self._capture_dir.is_dir():
            return {}
        return {p.stem: p for p in sorted(self._capture_dir.glob("*.pcap"))}

    def __repr__(self) -> str:
        s = self.summary
        n = len(s.get("flows", []))
        return f"<bloatlab.Result {s.get('name')!r} seed={s.get('seed')} flows={n} duration_s={s.get('duration_s')}>"

    @cached_property
    def summary(self) -> dict[str, Any]:
        return json.loads(self.summary_json)

    @cached_property
    def flows(self) -> pd.DataFrame:
        """One row per flow from the summary (``id``, ``group``, ``cc``, ``goodput_mbps``, ...)."""
        import pandas as pd

        return pd.DataFrame.from_records(self.summary.get("flows", []))

    @cached_property
    def timeseries(self) -> pd.DataFrame:
        """Per-flow samples, long format: ``t_s``, ``flow``, ``cwnd_bytes``, ``srtt_ms``, ..."""
        return self.arrow("flows").to_pandas()

    @cached_property
    def queues(self) -> pd.DataFrame:
        """Per-link samples, long format: ``t_s``, ``link``, ``backlog_bytes``, ``sojourn_ms``, ..."""
        return self.arrow("queues").to_pandas()

    def arrow(self, table: str) -> pa.Table:
        """A time-series table (``"flows"`` or ``"queues"``) as a pyarrow Table."""
        import pyarrow as pa

        cols = self.tables.get(table, {})
        return pa.table({name: pa.array(values) for name, values in cols.items()})

    def output_files(self) -> list[str]:
        """The file names :meth:`to_dir` writes: :data:`OUTPUT_FILES` and ``{link}.pcap`` captures."""
        return [*OUTPUT_FILES, *(p.name for p in self.pcaps.values())]

    def write_parquet(self, table: str, where: Any) -> None:
        """Writes a time-series table as zstd Parquet to a path or a pyarrow output stream."""
        import pyarrow.parquet as pq

        pq.write_table(self.arrow(table), where, compression="zstd")

    def to_dir(self, path: str | os.PathLike[str]) -> Path:
        """Writes summary.json, scenario.json, timeseries.parquet and queues.parquet into ``path``,
        and the packet captures (``{link}.pcap``) when the scenario asked for them.

        Files are first written into a temporary directory next to ``path`` and
        then moved into place, so a failure leaves nothing half-written. If
        ``path`` does not exist it appears whole (one rename); if it is an
        existing directory, these four files in it are replaced, each atomically,
        and other files are left alone.
        """
        target = Path(path)
        if target.exists() and not target.is_dir():
            raise NotADirectoryError(f"{target}: exists and is not a directory")
        with staged_dir(target) as tmp:
            summary = self.summary_json if self.summary_json.endswith("\n") else self.summary_json + "\n"
            (tmp / "summary.json").write_text(summary, encoding="utf-8")
            (tmp / "scenario.json").write_text(
                json.dumps(self.scenario, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
            )
            for filename, table in _PARQUET.items():
                self.write_parquet(table, tmp / filename)
            for pcap in self.pcaps.values():
                try:
                    os.link(pcap, tmp / pcap.name)  # same file system: no copy
                except OSError:
                    shutil.copyfile(pcap, tmp / pcap.name)
        return target
