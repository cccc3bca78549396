"""``bloatlab packetdrill PATH...``: runs packetdrill scripts against the simulator's TCP.

Each script drives one simulated TCP endpoint (crates/sim/src/packetdrill). Per script the
command prints PASSED, FAILED (line, column, expected vs actual), UNSUPPORTED (line and
what) or, for a script that does not parse, an ``error: FILE:LINE:COL: message`` line.
A directory stands for every ``*.pkt`` below it (sorted); when one is given, a summary
table per directory follows the per-script lines. Exit status: 0 when every script
passed, 2 when a file is missing or malformed (or a directory holds no script), else 1
(a failure or an unsupported line). See docs/packetdrill.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_INVALID = 2


def run_file(path: Path, tolerance_usecs: int = 4000) -> dict[str, Any]:
    """Runs one script file; returns its outcome with ``file`` added."""
    from .simcore import packetdrill_json

    text = path.read_text(encoding="utf-8")
    out = json.loads(packetdrill_json(text, tolerance_usecs))
    out["file"] = str(path)
    return out


def exit_code(outcomes: list[dict[str, Any]]) -> int:
    """2 if any script is malformed, else 1 if any did not pass, else 0."""
    if any(o["status"] == "malformed" for o in outcomes):
        return EXIT_INVALID
    if any(o["status"] != "passed" for o in outcomes):
        return EXIT_FAILURE
    return EXIT_OK


STATUSES = ("passed", "failed", "unsupported", "malformed")


def expand(paths: tuple[str, ...]) -> list[tuple[str, str]]:
    """(file, group) per script: a file stands for itself (its group is its parent directory),
    a directory for every ``*.pkt`` below it, sorted, grouped by the directory holding each
    relative to the one named. Raises ``click.UsageError`` for a directory without scripts."""
    out: list[tuple[str, str]] = []
    for name in paths:
        p = Path(name)
        if p.is_dir():
            found = sorted(p.rglob("*.pkt"))
            if not found:
                raise click.UsageError(f"{name}: no *.pkt scripts in this directory")
            for f in found:
                rel = f.parent.relative_to(p)
                group = str(p / rel) if str(rel) != "." else str(p)
                out.append((str(f), group))
        else:
            out.append((name, str(p.parent)))
    return out


def summarize(outcomes: list[dict[str, Any]], groups: list[str]) -> dict[str, Any]:
    """Counts per group (and in total): one entry per status, and for unsupported scripts
    the count per reason class."""
    table: dict[str, Any] = {}
    total: dict[str, Any] = {s: 0 for s in STATUSES} | {"unsupported_classes": {}}
    for o, g in zip(outcomes, groups):
        row = table.setdefault(g, {s: 0 for s in STATUSES} | {"unsupported_classes": {}})
        for r in (row, total):
            r[o["status"]] += 1
            if o["status"] == "unsupported":
                c = o.get("class", "other")
                r["unsupported_classes"][c] = r["unsupported_classes"].get(c, 0) + 1
    return {"directories": table, "total": total}


def _table(summary: dict[str, Any]) -> list[str]:
    rows = list(summary["directories"].items()) + [("total", summary["total"])]
    width = max(len(g) for g, _ in rows)
    lines = ["", f"{'directory':<{width}}  passed  failed  unsupported  malformed"]
    for g, r in rows:
        lines.append(
            f"{g:<{width}}  {r['passed']:>6}  {r['failed']:>6}  {r['unsupported']:>11}  {r['malformed']:>9}"
        )
    classes = summary["total"]["unsupported_classes"]
    if classes:
        lines.append("")
        lines.append("unsupported, by reason:")
        for c, n in sorted(classes.items(), key=lambda x: (-x[1], x[0])):
            lines.append(f"  {n:>4}  {c}")
    return lines


def _describe(o: dict[str, Any]) -> str:
    f, status = o["file"], o["status"]
    if status == "passed":
        return f"PASSED       {f}"
    where = f"{f}:{o['line']}:{o['column']}"
    if status == "failed":
        return f"FAILED       {where}: {o['message']}"
    return f"UNSUPPORTED  {where}: {o['message']}"


@click.command("packetdrill")
@click.argument("files", nargs=-1, required=True, metavar="PATH...")
@click.option(
    "--tolerance-usecs",
    type=click.IntRange(min=0, max=10_000_000),
    default=4000,
    show_default=True,
    metavar="N",
    help="How far (microseconds) an outbound segment may be from its script time.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per script instead of text.")
@click.option("--verbose", "-v", is_flag=True, help="Also list the sysctls each script sets that are not modeled.")
def packetdrill(files: tuple[str, ...], tolerance_usecs: int, as_json: bool, verbose: bool) -> None:
    """Run packetdrill scripts (files, or directories of *.pkt) against the simulated TCP.

    Supported syntax and what is not modeled: docs/packetdrill.md. Exit status 0 when all
    scripts passed, 1 on a failure or an unsupported line, 2 on a missing or malformed file
    or a directory without scripts. With a directory, a summary per directory follows.
    """
    try:
        expanded = expand(files)
    except click.UsageError as e:
        click.echo(f"error: {e.message}", err=True)
        sys.exit(EXIT_INVALID)
    with_summary = any(Path(f).is_dir() for f in files)
    outcomes: list[dict[str, Any]] = []
    for name, _group in expanded:
        path = Path(name)
        try:
            outcomes.append(run_file(path, tolerance_usecs))
        except FileNotFoundError:
            outcomes.append({"file": name, "status": "malformed", "line": 0, "column": 0,
                             "message": "no such file"})
        except (IsADirectoryError, PermissionError, UnicodeDecodeError) as e:
            outcomes.append({"file": name, "status": "malformed", "line": 0, "column": 0,
                             "message": f"cannot read: {e}"})
    for o in outcomes:
        ignored = o.pop("ignored", [])
        if as_json:
            if verbose:
                o["ignored"] = ignored
            click.echo(json.dumps(o, sort_keys=True))
            continue
        if o["status"] == "malformed":
            where = o["file"] if not o["line"] else f"{o['file']}:{o['line']}:{o['column']}"
            click.echo(f"error: {where}: {o['message']}", err=True)
        else:
            click.echo(_describe(o))
        if verbose and ignored:
            click.echo(f"             ignored sysctls (not modeled): {' '.join(ignored)}")
    if with_summary:
        summary = summarize(outcomes, [g for _, g in expanded])
        if as_json:
            click.echo(json.dumps({"summary": summary}, sort_keys=True))
        else:
            for line in _table(summary):
                click.echo(line)
    sys.exit(exit_code(outcomes))
