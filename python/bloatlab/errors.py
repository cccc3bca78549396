"""Exceptions raised by bloatlab.

Both are subclasses of the classes the Rust core raises, so ``except
bloatlab.ScenarioError`` catches invalid input found in Python (missing file,
malformed TOML, a bad ``--set``) and in Rust (unknown key, bad unit, ...).
"""

from __future__ import annotations

from . import _core

SimulationError = _core.SimulationError
"""A run failed an internal check (e.g. packet conservation). Not the user's fault."""


class ScenarioError(_core.ScenarioError):
    """Invalid input. ``args == (path, message)``; ``str(e) == "path: message"``.

    ``path`` is a key path such as ``flows[0].cc`` (or a file name, or ``--set``);
    it is empty when the error is not about one place.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(path, message)

    @property
    def path(self) -> str:
        return self.args[0]

    @property
    def message(self) -> str:
        return self.args[1]

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

    @classmethod
    def from_core(cls, err: BaseException) -> ScenarioError:
        """Wraps a ``_core.ScenarioError`` (args ``(path, message)``)."""
        args = tuple(err.args)
        if len(args) == 2:
            return cls(str(args[0]), str(args[1]))
        return cls("", " ".join(str(a) for a in args))
