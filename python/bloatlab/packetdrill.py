"""``bloatlab packetdrill FILE...``: runs packetdrill scripts against the simulator's TCP.

Each script drives one simulated TCP endpoint (crates/sim/src/packetdrill). Per script the
command prints PASSED, FAILED (line, column, expected vs actual), UNSUPPORTED (line and
what) or, for a script that does not parse, an ``error: FILE:LINE:COL: message`` line.
Exit status: 0 when every script passed, 2 when a file is missing or malformed, else 1
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


def _describe(o: dict[str, Any]) -> str:
    f, status = o["file"], o["status"]
    if status == "passed":
        return f"PASSED       {f}"
    where = f"{f}:{o['line']}:{o['column']}"
    if status == "failed":
        return f"FAILED       {where}: {o['message']}"
    return f"UNSUPPORTED  {where}: {o['message']}"


@click.command("packetdrill")
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
@click.option(
    "--tolerance-usecs",
    type=click.IntRange(min=0, max=10_000_000),
    default=4000,
    show_default=True,
    metavar="N",
    help="How far (microseconds) an outbound segment may be from its script time.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per script instead of text.")
def packetdrill(files: tuple[str, ...], tolerance_usecs: int, as_json: bool) -> None:
    """Run packetdrill scripts against the simulated TCP endpoint.

    Supported syntax and what is not modeled: docs/packetdrill.md. Exit status 0 when all
    scripts passed, 1 on a failure or an unsupported line, 2 on a missing or malformed file.
    """
    outcomes: list[dict[str, Any]] = []
    for name in files:
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
        if as_json:
            click.echo(json.dumps(o, sort_keys=True))
        elif o["status"] == "malformed":
            where = o["file"] if not o["line"] else f"{o['file']}:{o['line']}:{o['column']}"
            click.echo(f"error: {where}: {o['message']}", err=True)
        else:
            click.echo(_describe(o))
    sys.exit(exit_code(outcomes))
