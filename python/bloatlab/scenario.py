"""Scenarios: loading, key paths and ``--set`` overrides.

A scenario is a plain dict with the structure of the TOML file (see
docs/scenario.md). Python does not validate its contents; the Rust core does,
and reports problems as :class:`~bloatlab.ScenarioError` with the key path.

Key paths are written the same way everywhere: ``topology.bottleneck.rate``,
``flows[0].cc``. A path is a list of tokens: ``str`` for a table key, ``int``
for an array index.
"""

from __future__ import annotations

import copy
import datetime
import json
import math
import numbers
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Union

from .errors import ScenarioError

Token = str | int
ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]

SEED_MAX = 2**64 - 1

_KEY = r"[A-Za-z0-9_-]+"
_INDEX = r"\[(?:0|[1-9][0-9]*)\]"
_SEGMENT_RE = re.compile(rf"({_KEY})((?:{_INDEX})*)")
_PATH_RE = re.compile(rf"{_KEY}(?:{_INDEX})*(?:\.{_KEY}(?:{_INDEX})*)*")
_INDEX_RE = re.compile(r"\[([0-9]+)\]")

PATH_HELP = "keys separated by dots, each with optional [N] indexes, e.g. flows[0].cc"


# --------------------------------------------------------------------------- key paths


def parse_path(text: str) -> list[Token]:
    """``"flows[0].cc"`` -> ``["flows", 0, "cc"]``. Raises ScenarioError("--set", ...)."""
    if not isinstance(text, str) or not _PATH_RE.fullmatch(text):
        raise ScenarioError("--set", f'invalid key path "{text}": expected {PATH_HELP}')
    tokens: list[Token] = []
    for segment in text.split("."):
        m = _SEGMENT_RE.fullmatch(segment)
        assert m is not None  # guaranteed by _PATH_RE
        tokens.append(m.group(1))
        tokens.extend(int(i) for i in _INDEX_RE.findall(m.group(2)))
    return tokens


def format_path(tokens: Iterable[Token]) -> str:
    """``["flows", 0, "cc"]`` -> ``"flows[0].cc"`` (the inverse of :func:`parse_path`)."""
    out = ""
    for tok in tokens:
        if isinstance(tok, bool) or not isinstance(tok, (str, int)):
            raise TypeError(f"path token must be str or int, got {tok!r}")
        if isinstance(tok, int):
            out += f"[{tok}]"
        else:
            out += f".{tok}" if out else tok
    return out


def _kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    return f"a {type(value).__name__}"


def get_path(doc: Any, tokens: list[Token]) -> Any:
    """The value at ``tokens``; ScenarioError naming the path if it is absent."""
    node = doc
    for i, tok in enumerate(tokens):
        here = format_path(tokens[: i + 1])
        if isinstance(tok, int):
            if not isinstance(node, list) or tok >= len(node):
                raise ScenarioError(here, "no such item")
        elif not isinstance(node, Mapping) or tok not in node:
            raise ScenarioError(here, "no such key")
        node = node[tok]
    return node


def set_path(doc: dict[str, Any], tokens: list[Token], value: Any) -> None:
    """Sets ``doc[tokens...] = value`` in place.

    Missing table keys are created (as empty tables on the way); an index past
    the end of an array, or walking into a value that is not a table/array, is
    a ScenarioError naming the path.
    """
    if not tokens or not isinstance(tokens[0], str):
        raise ScenarioError("--set", "a key path must start with a key")
    node: Any = doc
    for i, tok in enumerate(tokens):
        last = i == len(tokens) - 1
        parent_path = format_path(tokens[:i])
        here = format_path(tokens[: i + 1])
        if isinstance(tok, int):
            if not isinstance(node, list):
                raise ScenarioError(parent_path, f"cannot index [{tok}]: it is {_kind(node)}, not an array")
            if tok >= len(node):
                n = len(node)
                raise ScenarioError(
                    here,
                    f"index {tok} is past the end of the array ({parent_path} has {n} item{'s' if n != 1 else ''})",
                )
            if last:
                node[tok] = value
            else:
                node = node[tok]
        else:
            if not isinstance(node, dict):
                raise ScenarioError(parent_path, f'cannot set key "{tok}": it is {_kind(node)}, not a table')
            if last:
                node[tok] = value
            elif tok not in node:
                if isinstance(tokens[i + 1], int):
                    nxt = format_path(tokens[: i + 2])
                    raise ScenarioError(nxt, f"index {tokens[i + 1]} is past the end (there is no array {here})")
                node[tok] = {}
                node = node[tok]
            else:
                node = node[tok]


# --------------------------------------------------------------------------- overrides


def _has_non_json(value: Any) -> bool:
    if isinstance(value, (datetime.date, datetime.time)):
        return True
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_non_json(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_non_json(v) for v in value)
    return False


def parse_value(text: str) -> Any:
    """A ``--set`` value: the TOML literal if ``text`` is one, else the plain string.

    ``5`` -> 5, ``true`` -> True, ``"x"`` -> "x", ``{uniform = ["1s", "2s"]}`` -> dict,
    ``10Mbps`` -> "10Mbps". TOML dates/times and inf/nan stay plain strings.
    """
    text = text.strip()
    try:
        doc = tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        return text
    if set(doc) != {"v"} or _has_non_json(doc["v"]):
        return text
    return doc["v"]


def parse_override(item: str) -> tuple[list[Token], Any]:
    """``"flows[0].cc=reno"`` -> ``(["flows", 0, "cc"], "reno")``."""
    if not isinstance(item, str) or "=" not in item:
        raise ScenarioError(
            "--set", f'invalid override "{item}": expected KEY=VALUE, e.g. topology.bottleneck.rate=10Mbps'
        )
    key, _, raw = item.partition("=")
    key = key.strip()
    if not key:
        raise ScenarioError("--set", f'invalid override "{item}": the key before "=" is empty')
    return parse_path(key), parse_value(raw)


def apply_overrides(doc: dict[str, Any], overrides: Iterable[str] | Mapping[str, Any] | None) -> dict[str, Any]:
    """Applies overrides in order, in place, and returns ``doc``.

    ``overrides`` is either a list of ``"key.path=value"`` strings (values parsed
    as TOML literals, as on the command line) or a mapping ``{"key.path": value}``
    (values used as they are).
    """
    if overrides is None:
        return doc
    if isinstance(overrides, Mapping):
        for key, value in overrides.items():
            set_path(doc, parse_path(key), copy.deepcopy(value))
    elif isinstance(overrides, str):
        raise TypeError("overrides must be a list of 'key=value' strings or a mapping, not a single string")
    else:
        for item in overrides:
            tokens, value = parse_override(item)
            set_path(doc, tokens, value)
    return doc


# --------------------------------------------------------------------------- loading


def loads(text: str, *, source: str = "<string>") -> dict[str, Any]:
    """Parses scenario TOML text."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(source, f"malformed TOML: {e}") from None


def load(scenario: ScenarioLike) -> dict[str, Any]:
    """A scenario as a fresh dict: from a ``.toml`` (or ``.json``) file path, or a copy of a mapping."""
    if isinstance(scenario, Mapping):
        return _plain(scenario, [])
    if not isinstance(scenario, (str, os.PathLike)):
        raise TypeError(f"scenario must be a path or a mapping, not {type(scenario).__name__}")
    path = Path(scenario)
    name = os.fspath(scenario)
    if not path.exists():
        raise ScenarioError(name, "no such file")
    if path.is_dir():
        raise ScenarioError(name, "is a directory, expected a scenario file (.toml)")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ScenarioError(name, f"cannot read: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ScenarioError(name, f"not UTF-8 text (byte {e.start})") from None
    if path.suffix.lower() == ".json":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise ScenarioError(name, f"malformed JSON: {e.msg} (at line {e.lineno}, column {e.colno})") from None
        if not isinstance(doc, dict):
            raise ScenarioError(name, "a JSON scenario must be an object")
        return _resolve_files(doc, path.parent)
    return _resolve_files(loads(text, source=name), path.parent)


def _resolve_files(doc: Any, base: Path) -> Any:
    """Makes relative trace-file paths (``{ model = "trace", file = ... }`` and a link's
    ``schedule = "file"``) relative to the scenario file's folder, so a scenario works from
    any working directory."""
    if isinstance(doc, dict):
        for key, applies in (("file", doc.get("model") == "trace"), ("schedule", True)):
            if applies and isinstance(doc.get(key), str):
                f = Path(doc[key]).expanduser()
                if not f.is_absolute():
                    doc[key] = os.fspath(base / f)
        for v in doc.values():
            _resolve_files(v, base)
    elif isinstance(doc, list):
        for v in doc:
            _resolve_files(v, base)
    return doc


def demo_text() -> str:
    """The TOML text of the built-in demo scenario (``bloatlab run`` with no file)."""
    return resources.files("bloatlab").joinpath("scenarios", "demo.toml").read_text(encoding="utf-8")


def demo() -> dict[str, Any]:
    """The built-in demo scenario as a dict."""
    return loads(demo_text(), source="<built-in demo>")


# --------------------------------------------------------------------------- to JSON


def _plain(value: Any, path: list[Token]) -> Any:
    """A deep copy of ``value`` made of JSON types only; ScenarioError naming the path otherwise."""
    here = format_path(path) if path else "<scenario>"
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ScenarioError(here, f"table keys must be strings, got {k!r}")
            out[k] = _plain(v, [*path, k])
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, [*path, i]) for i, v in enumerate(value)]
    if isinstance(value, (str, bool)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        f = float(value)
        if not math.isfinite(f):
            raise ScenarioError(here, f"must be a finite number (got {f})")
        return f
    if value is None:
        raise ScenarioError(here, "null is not a value; leave the key out to use its default")
    if isinstance(value, (datetime.date, datetime.time)):
        raise ScenarioError(
            here, 'dates and times are not values here; write times as strings with a unit, e.g. "10s"'
        )
    raise ScenarioError(here, f"unsupported value of type {type(value).__name__}")


def check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= int(seed) <= SEED_MAX:
        raise ScenarioError("seed", f"must be an integer in [0, 2^64) (got {seed!r})")
    return int(seed)


def resolve(
    scenario: ScenarioLike,
    *,
    seed: int | None = None,
    set: Iterable[str] | Mapping[str, Any] | None = None,  # noqa: A002 - mirrors --set
) -> dict[str, Any]:
    """Loads ``scenario``, applies ``set`` overrides then ``seed``; returns a JSON-ready dict.

    The result is what is handed to the simulator and written as ``scenario.json``.
    """
    doc = load(scenario)
    apply_overrides(doc, set)
    if seed is not None:
        doc["seed"] = check_seed(seed)
    return _plain(doc, [])


def to_json(doc: Mapping[str, Any]) -> str:
    """Compact JSON text of a resolved scenario (what ``_core.run_json`` takes)."""
    return json.dumps(_plain(doc, []), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
