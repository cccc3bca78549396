"""The number tables in the docs are what the installed build prints (scripts/doctables.py).

Each quick table is regenerated from the build and compared byte for byte with the one between
its `<!-- doctable: NAME -->` markers; a failure names the table and shows the diff. Fix it with
`python3 scripts/doctables.py --write NAME` (and read the diff: a changed number may make the
prose around the table wrong).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("doctables", ROOT / "scripts" / "doctables.py")
assert _spec is not None and _spec.loader is not None
doctables = importlib.util.module_from_spec(_spec)
sys.modules["doctables"] = doctables
_spec.loader.exec_module(doctables)

QUICK = [name for name, t in doctables.TABLES.items() if t.kind == "quick"]


def test_every_table_has_its_markers_once():
    found = doctables.blocks()
    assert sorted(found) == sorted(doctables.TABLES)


@pytest.mark.parametrize("name", QUICK)
def test_doc_table_matches_the_build(name):
    stale = doctables.check(name)
    if stale is not None:
        pytest.fail(f"docs table {name!r} differs from what the build prints "
                    f"(python3 scripts/doctables.py --write {name}):\n{stale}")


def test_check_names_a_stale_table(tmp_path, monkeypatch, capsys):
    doc = tmp_path / "docs" / "x.md"
    doc.parent.mkdir()
    doc.write_text("text\n<!-- doctable: t -->\n| a |\n<!-- /doctable -->\nmore\n")
    (tmp_path / "README.md").write_text("")
    monkeypatch.setattr(doctables, "ROOT", tmp_path)
    monkeypatch.setattr(doctables, "TABLES",
                        {"t": doctables.Table("quick", lambda: "| b |\n", "echo")})
    assert doctables.main(["--check"]) == 1
    out = capsys.readouterr()
    assert "t: differs" in out.out and "-| a |" in out.out and "+| b |" in out.out
    assert doctables.main(["--write"]) == 0
    assert doc.read_text() == "text\n<!-- doctable: t -->\n| b |\n<!-- /doctable -->\nmore\n"
    assert doctables.main(["--check"]) == 0
