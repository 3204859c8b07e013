"""Issue 40, part 2 (with issue 38's one family): a study-table cell that holds no value —
"data missing", "not run", "not in study", "n/a" — never gets ▲/▼, and no paired test
is computed from the board rows behind it (a study edited to drop a task read
`data missing▼ | data missing▲`, tested on the old board's rows)."""

from __future__ import annotations

from pathlib import Path

from posharness.boards.compare import MetricComparison
from posharness.stats.paired_tests import PairedTest
from posharness.study import tables
from posharness.study.tables import MISSING, UNDEFINED, ModelRow, TestLine, compute_table
from posharness.tasks.papers.tables import all_tables
from tests.unit.tasks.papers.test_study_tables_bad_input import board

TABLE = {table.id: table for table in all_tables()}["chen2023.tablea3"]
SCORES = {f"dep_heads/{m}": 0.5 for m in ("macro_with_root", "macro_short", "macro_long")}


def _models(tmp_path: Path) -> list[ModelRow]:
    (tmp_path / "pe").mkdir()
    (tmp_path / "base").mkdir()
    return [
        ModelRow("PE", board(tmp_path / "pe", SCORES)),
        ModelRow("BERT", board(tmp_path / "base", SCORES), baseline=True),
    ]


def test_data_missing_cells_get_no_test_and_no_mark(tmp_path: Path) -> None:
    table = compute_table(TABLE, _models(tmp_path), {"dep_heads": ["no UD data"]}, "")
    ours = [row for row in table.rows if not row.published]
    assert all(cell.text == MISSING and cell.mark == "" for row in ours for cell in row.cells[:-1])
    assert table.tests == []  # the boards hold scores, yet nothing is tested from them


def test_na_cells_get_no_test(tmp_path: Path) -> None:
    models = _models(tmp_path)
    for model in models:  # boards that ran dep_heads without Root scoring: n/a
        board(model.board.parent, {"dep_heads/macro": 0.5})
    table = compute_table(TABLE, models, {}, "")
    assert all(
        cell.text == UNDEFINED for row in table.rows if not row.published for cell in row.cells[:9]
    )
    assert table.tests == []


def test_a_significant_test_never_marks_a_cell_without_a_value(tmp_path: Path) -> None:
    table = compute_table(TABLE, _models(tmp_path), {"dep_heads": ["no UD data"]}, "")
    column = TABLE.columns[0]
    test = PairedTest("paired-permutation", 100, 0.2, 1e-6, p_adjusted=1e-5)
    comparison = MetricComparison("dep_heads/macro_with_root", 0.7, 0.5, test, "")
    mode = column.mode or "both"
    tables._mark(table.rows, [TestLine("PE", mode, column.label, "BERT", comparison)], TABLE)
    assert all(row.cells[0].mark == "" for row in table.rows)


def test_a_test_line_carries_its_cells_flags_and_a_floor_p() -> None:
    """Issue 38, part 5: a flagged cell's flags reach the study's list of tests."""
    test = PairedTest("paired-permutation", 20, -0.1, 1 / 2001, resamples=2000)
    flagged = MetricComparison(
        "t/acc", 0.6, 0.5, test, "", flags=("A: fewer than 30 examples (20)",)
    )
    cells = TestLine("PE", "both", "Acc", "BERT", flagged).cells()
    assert cells[3:5] == ("+0.1000", "< 1/2001")
    assert cells[5].endswith("! flagged: A: fewer than 30 examples (20)")
    untested = MetricComparison("t/acc", 0.6, 0.5, None, "no outputs", flags=("B: x",))
    assert TestLine("PE", "both", "Acc", "BERT", untested).cells()[5] == (
        "no outputs; ! flagged: B: x"
    )
