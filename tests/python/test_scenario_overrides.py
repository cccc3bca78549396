"""Key paths, --set overrides and scenario loading (pure Python: no simulation)."""

from __future__ import annotations

import copy
import datetime
import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bloatlab import ScenarioError, _core
from bloatlab.scenario import (
    apply_overrides,
    demo,
    format_path,
    get_path,
    load,
    parse_override,
    parse_path,
    parse_value,
    resolve,
    set_path,
    to_json,
)
from helpers import SMALL

settings.register_profile("bloatlab", deadline=None, max_examples=200,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("bloatlab")

keys = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", min_size=1, max_size=12)
indexes = st.integers(min_value=0, max_value=10_000)
paths = st.tuples(keys, st.lists(st.one_of(keys, indexes), max_size=8)).map(lambda t: [t[0], *t[1]])


# --------------------------------------------------------------------------- parse/format


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("duration", ["duration"]),
        ("topology.bottleneck.rate", ["topology", "bottleneck", "rate"]),
        ("flows[0].cc", ["flows", 0, "cc"]),
        ("flows[12].start.uniform[1]", ["flows", 12, "start", "uniform", 1]),
        ("a[1][2].b-c_d", ["a", 1, 2, "b-c_d"]),
    ],
)
def test_parse_path_examples(text, tokens):
    assert parse_path(text) == tokens
    assert format_path(tokens) == text


@pytest.mark.parametrize(
    "text",
    ["", ".", "a.", ".a", "a..b", "[0]", "a[]", "a[-1]", "a[01]", "a[x]", "a[0", "a]0[", "a b", "a.[0]",
     "flows[0]cc", "é", "a=b", "a.b.", "a[0]."],
)
def test_parse_path_rejects(text):
    with pytest.raises(ScenarioError) as info:
        parse_path(text)
    assert info.value.path == "--set"
    assert "flows[0].cc" in info.value.message  # shows the expected form


@given(paths)
def test_format_then_parse_round_trips(tokens):
    assert parse_path(format_path(tokens)) == tokens


@given(paths)
def test_parse_then_format_round_trips(tokens):
    text = format_path(tokens)
    assert format_path(parse_path(text)) == text


@given(st.text(max_size=30))
def test_parse_path_never_crashes(text):
    try:
        tokens = parse_path(text)
    except ScenarioError as e:
        assert e.path == "--set"
    else:
        assert format_path(tokens) == text


# --------------------------------------------------------------------------- set/get


def test_set_creates_missing_tables():
    doc = {"duration": "1s"}
    set_path(doc, parse_path("topology.bottleneck.rate"), "10Mbps")
    assert doc == {"duration": "1s", "topology": {"bottleneck": {"rate": "10Mbps"}}}


def test_set_into_array_item():
    doc = copy.deepcopy(SMALL)
    set_path(doc, parse_path("flows[1].cc"), "newreno")
    set_path(doc, parse_path("flows[0].tcp.mss"), "1000B")
    assert doc["flows"][1]["cc"] == "newreno"
    assert doc["flows"][0]["tcp"] == {"mss": "1000B"}
    set_path(doc, parse_path("flows[0]"), {"cc": "reno"})
    assert doc["flows"][0] == {"cc": "reno"}


def test_index_past_the_end_names_the_path():
    doc = copy.deepcopy(SMALL)
    with pytest.raises(ScenarioError) as info:
        set_path(doc, parse_path("flows[2].cc"), "reno")
    assert info.value.path == "flows[2]"
    assert "past the end" in info.value.message and "2 items" in info.value.message
    assert doc == SMALL


def test_index_into_missing_array_is_an_error():
    with pytest.raises(ScenarioError) as info:
        set_path({}, parse_path("flows[0].cc"), "reno")
    assert info.value.path == "flows[0]"


def test_walking_into_a_scalar_is_an_error():
    with pytest.raises(ScenarioError) as info:
        set_path({"duration": "5s"}, parse_path("duration.x"), 1)
    assert info.value.path == "duration"
    assert "string" in info.value.message
    with pytest.raises(ScenarioError) as info:
        set_path({"topology": {}}, parse_path("topology[0]"), 1)
    assert info.value.path == "topology"
    assert "not an array" in info.value.message


@st.composite
def doc_and_path(draw):
    """A random nested document plus a path that exists in it."""
    tokens = draw(paths)
    doc: dict = {}
    node = doc
    for i, tok in enumerate(tokens[:-1]):
        nxt = tokens[i + 1]
        child: object = [None] * (nxt + 1 + draw(st.integers(0, 2))) if isinstance(nxt, int) else {}
        node[tok] = child  # a list is long enough for tok: see the previous step
        node = child
    node[tokens[-1]] = "old"
    return doc, tokens


@given(doc_and_path(), st.one_of(st.integers(), st.text(max_size=5), st.booleans()))
def test_set_then_get(data, value):
    doc, tokens = data
    set_path(doc, tokens, value)
    assert get_path(doc, tokens) == value


@given(doc_and_path(), st.integers(min_value=0, max_value=5))
def test_past_the_end_is_always_an_error_naming_the_path(data, extra):
    doc, tokens = data
    int_positions = [i for i, t in enumerate(tokens) if isinstance(t, int)]
    assume(int_positions)
    pos = int_positions[-1]
    arr = get_path(doc, tokens[:pos])
    bad = [*tokens[:pos], len(arr) + extra, *tokens[pos + 1:]]
    before = json.dumps(doc)
    with pytest.raises(ScenarioError) as info:
        set_path(doc, bad, 1)
    assert info.value.path == format_path(bad[: pos + 1])
    assert json.dumps(doc) == before


# --------------------------------------------------------------------------- values


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("5", 5),
        ("0.25", 0.25),
        ("true", True),
        ("false", False),
        ('"quoted"', "quoted"),
        ("'single'", "single"),
        ("10Mbps", "10Mbps"),
        ("30s", "30s"),
        ("newreno", "newreno"),
        ("westwood+", "westwood+"),
        ("", ""),
        ("  5  ", 5),
        ("[1, 2]", [1, 2]),
        ('{ uniform = ["1s", "8s"] }', {"uniform": ["1s", "8s"]}),
        ("{ rate = '2Mbps', delay = '5ms' }", {"rate": "2Mbps", "delay": "5ms"}),
        ("1979-05-27", "1979-05-27"),  # a TOML date: kept as text
        ("inf", "inf"),
        ("nan", "nan"),
        ("1\nx = 2", "1\nx = 2"),  # no key injection
        ("a=b", "a=b"),
    ],
)
def test_parse_value(raw, value):
    assert parse_value(raw) == value


@given(st.text(max_size=20))
def test_parse_value_is_total_and_json_safe(raw):
    value = parse_value(raw)
    json.dumps(value, allow_nan=False)


@given(st.one_of(st.integers(-(2**63), 2**63 - 1), st.booleans(),
                 st.floats(allow_nan=False, allow_infinity=False),
                 st.lists(st.integers(), max_size=4)))
def test_parse_value_reads_toml_literals(value):
    raw = json.dumps(value)  # JSON ints, floats, bools and arrays are TOML literals too
    if isinstance(value, float) and "e" in raw and "." not in raw:
        raw = raw.replace("e", ".0e")
    assert parse_value(raw) == value


def test_parse_override():
    assert parse_override("flows[0].cc=reno") == (["flows", 0, "cc"], "reno")
    assert parse_override(" duration = 10s ") == (["duration"], "10s")
    assert parse_override("name=a=b") == (["name"], "a=b")
    for bad in ["duration", "=5", " =5", "flows[x].cc=reno", "a..b=1"]:
        with pytest.raises(ScenarioError) as info:
            parse_override(bad)
        assert info.value.path == "--set"


def test_apply_overrides_in_order_and_mapping_form():
    doc = copy.deepcopy(SMALL)
    apply_overrides(doc, ["duration=9s", "duration=7s", "seed=3", "metrics.interval=0s"])
    assert (doc["duration"], doc["seed"], doc["metrics"]["interval"]) == ("7s", 3, "0s")
    apply_overrides(doc, {"flows[0].cc": "reno", "name": "5"})
    assert doc["flows"][0]["cc"] == "reno"
    assert doc["name"] == "5"  # mapping values are taken as they are, not parsed
    with pytest.raises(TypeError):
        apply_overrides(doc, "duration=1s")


# --------------------------------------------------------------------------- resolve / load


def test_resolve_copies_and_applies_seed_last():
    original = copy.deepcopy(SMALL)
    doc = resolve(SMALL, seed=42, set=["seed=7", "flows[0].count=3"])
    assert SMALL == original
    assert doc["seed"] == 42
    assert doc["flows"][0]["count"] == 3
    assert json.loads(to_json(doc)) == doc


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, "3", True])
def test_resolve_rejects_bad_seeds(seed):
    with pytest.raises(ScenarioError) as info:
        resolve(SMALL, seed=seed)
    assert info.value.path == "seed"


@pytest.mark.parametrize(
    ("path", "value", "needle"),
    [
        ("name", None, "null"),
        ("duration", datetime.date(2020, 1, 1), "dates"),
        ("flows[0].count", math.nan, "finite"),
        ("topology.bottleneck.loss", math.inf, "finite"),
        ("flows[1].cc", object(), "unsupported"),
    ],
)
def test_non_json_values_are_scenario_errors(path, value, needle):
    with pytest.raises(ScenarioError) as info:
        resolve(SMALL, set={path: value})
    assert info.value.path == path
    assert needle in info.value.message


def test_tuples_and_numpy_numbers_become_json():
    import numpy as np

    doc = resolve(SMALL, set={"flows[0].count": np.int64(3), "topology.bottleneck.loss": np.float32(0.5),
                              "flows[0].start": {"uniform": ("1s", "2s")}})
    assert doc["flows"][0]["count"] == 3 and type(doc["flows"][0]["count"]) is int
    assert doc["topology"]["bottleneck"]["loss"] == 0.5
    assert doc["flows"][0]["start"] == {"uniform": ["1s", "2s"]}


def test_load_errors(tmp_path: Path):
    with pytest.raises(ScenarioError) as info:
        load(tmp_path / "nope.toml")
    assert info.value.path.endswith("nope.toml") and "no such file" in info.value.message
    with pytest.raises(ScenarioError) as info:
        load(tmp_path)
    assert "directory" in info.value.message
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nduration = \n')
    with pytest.raises(ScenarioError) as info:
        load(bad)
    assert "malformed TOML" in info.value.message and "line 2" in info.value.message
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"name = \xff\xfe")
    with pytest.raises(ScenarioError) as info:
        load(binary)
    assert "UTF-8" in info.value.message


def test_load_json_scenarios(tmp_path: Path):
    good = tmp_path / "s.json"
    good.write_text(json.dumps(SMALL))
    assert load(good) == SMALL
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x",\n "duration": }')
    with pytest.raises(ScenarioError) as info:
        load(bad)
    assert "malformed JSON" in info.value.message and "line 2" in info.value.message
    arr = tmp_path / "arr.json"
    arr.write_text("[1]")
    with pytest.raises(ScenarioError):
        load(arr)


def test_load_rejects_other_types():
    with pytest.raises(TypeError):
        load(42)  # type: ignore[arg-type]


def test_demo_is_packaged():
    doc = demo()
    assert doc["name"] == "demo"
    assert doc["flows"]


def test_scenario_error_class():
    e = ScenarioError("flows[0].cc", 'unknown congestion control "x"')
    assert isinstance(e, ValueError) and isinstance(e, _core.ScenarioError)
    assert e.args == ("flows[0].cc", 'unknown congestion control "x"')
    assert str(e) == 'flows[0].cc: unknown congestion control "x"'
    assert str(ScenarioError("", "bad")) == "bad"
    wrapped = ScenarioError.from_core(_core.ScenarioError("duration", "must be greater than 0"))
    assert (wrapped.path, wrapped.message) == ("duration", "must be greater than 0")
