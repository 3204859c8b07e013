"""Issue 38, part 5: a flagged cell's flags reach every comparison output.

A significant test on a cell flagged "fewer than 30 examples" or "degenerate classifier"
is not a finding on its own; compare (table, md, csv, json) and the report's comparison
page print the flag beside the row and mark its verdict.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from posharness.report import build_report
from tests.cli_helpers import cli
from tests.unit.core.test_stats_one_family import _board

FLAG = "fewer than 30 examples (n = 20)"


def _flagged_boards(tmp_path: Path) -> tuple[Path, Path]:
    a, b = _board(tmp_path, "a", False), _board(tmp_path, "b", True)
    data = json.loads(a.read_text())
    for row in data["rows"]:
        if row["model"] == "m-one":
            row["flags"] = {"probe": [FLAG]}
    a.write_text(json.dumps(data))
    return a, b


def _out(capsys, *args: str) -> str:
    capsys.readouterr()
    assert cli("compare", *args) == 0
    return capsys.readouterr().out


def test_a_flagged_cell_is_marked_in_every_compare_format(tmp_path, capsys):
    a, b = _flagged_boards(tmp_path)
    document = json.loads(_out(capsys, str(a), str(b), "--format", "json"))
    flagged = [r for r in document["comparisons"] if r["flags"]]
    assert flagged and all(r["a_model"] == "m-one" for r in flagged)
    assert all(f"A: {FLAG}" in r["flags"] for r in flagged)
    significant = [r for r in flagged if r["significant"]]
    assert significant and all("! flagged" in r["verdict"] for r in significant)
    rows = list(csv.DictReader(io.StringIO(_out(capsys, str(a), str(b), "--format", "csv"))))
    assert any(FLAG in r["flags"] for r in rows)
    assert f"A: {FLAG}" in _out(capsys, str(a), str(b), "--format", "md")
    table = " ".join(_out(capsys, str(a), str(b)).split())
    assert FLAG in table and "not a finding on its own" in table


def test_the_report_comparison_page_marks_the_flagged_test(tmp_path):
    a, b = _flagged_boards(tmp_path)
    build_report([a, b], tmp_path / "out", comparisons=[(a, b)])
    page = next((tmp_path / "out" / "compare").glob("*.html")).read_text()
    assert f"! flagged: A: {FLAG}" in page
