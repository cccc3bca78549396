"""The ``bloatlab`` command line.

Exit codes: 0 success; 2 invalid input (one ``error: <path>: <message>`` line on
stderr, no traceback, nothing written); 1 anything else (a failed internal check
of the simulator, an I/O error, a bug). Set ``BLOATLAB_DEBUG=1`` to see the
traceback of an unexpected error.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from . import packetdrill
from .clikit import EXIT_FAILURE, EXIT_INVALID, EXIT_OK, fail
from .commands import bench, fixes, plot, report, reproduce, rrul, run, sweep
from .emulate import cli as emulate_cli
from .simcore import __version__
from .validate import cli as validate_cli

__all__ = ["main", "EXIT_OK", "EXIT_FAILURE", "EXIT_INVALID"]


class _Group(click.Group):
    """Click's usage errors (a malformed option value, a missing argument) as one
    ``error: <option>: <message>`` line with exit status 2, like every other bad input."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.UsageError as e:
            if type(e).__name__ == "NoArgsIsHelpError":  # `bloatlab` alone: the help, as click prints it
                click.echo(e.format_message(), err=True)
                sys.exit(EXIT_INVALID)
            param = getattr(e, "param", None)
            where = ""
            if isinstance(param, click.Argument):
                where = param.human_readable_name
            elif param is not None:
                where = (param.opts[0] if getattr(param, "opts", None) else param.name or "").strip()
            where = f"{where}: " if where else ""
            message = e.format_message()
            if e.ctx is not None and "No such command" in message:
                message += f" (commands: {', '.join(sorted(self.commands))})"
            fail(EXIT_INVALID, f"{where}{message}")
        except click.exceptions.Abort:
            sys.stderr.write("interrupted\n")
            sys.exit(130)
        except click.exceptions.Exit as e:
            sys.exit(e.exit_code)
        except click.ClickException as e:
            fail(EXIT_INVALID, e.format_message())


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="bloatlab")
def main() -> None:
    """bloatlab: a deterministic packet-level network simulator for bufferbloat research.

    Start with `bloatlab run` (a built-in demo) or `bloatlab run scenarios/demo.toml`.
    """


#: every ``bloatlab`` command, each defined in its own module (commands/ for the simulator's,
#: the emulator's, validation's and packetdrill's beside their subsystems); ``main`` adds them
COMMANDS: list[click.Command] = [
    run.run, bench.bench, sweep.sweep, plot.plot, report.report, reproduce.reproduce, rrul.rrul,
    fixes.fixes, emulate_cli.emulate, emulate_cli.compare, packetdrill.packetdrill,
    validate_cli.validate,
]
for _command in COMMANDS:
    main.add_command(_command)


if __name__ == "__main__":  # pragma: no cover
    main(prog_name="bloatlab")
