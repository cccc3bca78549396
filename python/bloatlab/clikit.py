"""What every ``bloatlab`` command shares: exit codes, the one-line error, the handler that
turns exceptions into them, and running the simulator so that Ctrl-C ends it at once.

Its own module so that :mod:`bloatlab.cli` and the commands it adds (:mod:`bloatlab.commands`,
:mod:`bloatlab.emulate.cli`, :mod:`bloatlab.validate.cli`, :mod:`bloatlab.packetdrill`) share
it without importing each other.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn, TypeVar

import click

from . import _core
from .errors import ScenarioError, SimulationError

T = TypeVar("T")

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_INVALID = 2


def stderr_console() -> Any:
    """A rich console on stderr (progress spinners, tables beside a stdout meant for pipes)."""
    from rich.console import Console

    return Console(stderr=True)


def err(message: str) -> None:
    click.echo(f"error: {message}", err=True)


def fail(code: int, message: str) -> NoReturn:
    err(message)
    sys.exit(code)


def unexpected(e: BaseException) -> NoReturn:
    if os.environ.get("BLOATLAB_DEBUG"):
        traceback.print_exception(e)
    msg = str(e).strip() or type(e).__name__
    hint = "" if os.environ.get("BLOATLAB_DEBUG") else " (set BLOATLAB_DEBUG=1 for a traceback)"
    fail(EXIT_FAILURE, f"{type(e).__name__}: {msg}{hint}")


@contextmanager
def cli_errors(*, simulation: bool = False) -> Iterator[None]:
    """Invalid input (a :class:`ScenarioError`, from Python or from the core) exits 2 with one
    ``error: path: message`` line; with ``simulation``, a :class:`SimulationError` exits 1 as
    ``simulation failed: ...``; anything else exits 1 naming the exception. KeyboardInterrupt
    and SystemExit pass through (a command handles Ctrl-C itself)."""
    try:
        yield
    except _core.ScenarioError as e:
        fail(EXIT_INVALID, str(e if isinstance(e, ScenarioError) else ScenarioError.from_core(e)))
    except SimulationError as e:
        if not simulation:
            unexpected(e)
        fail(EXIT_FAILURE, f"simulation failed: {e}")
    except Exception as e:  # noqa: BLE001 - the CLI turns everything into an exit code
        unexpected(e)


def call_interruptibly(fn: Callable[[], T]) -> T:
    """Runs ``fn`` in a worker thread so that Ctrl-C ends the program at once.

    The simulator releases the GIL but does not poll for signals, so without
    this a KeyboardInterrupt would wait until the run finished.
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # re-raised in the calling thread
            box["error"] = e

    worker = threading.Thread(target=target, name="bloatlab-run", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.1)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.stderr.flush()
        os._exit(130)
    if "error" in box:
        raise box["error"]
    return box["value"]
