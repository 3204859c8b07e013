"""A study's tables find the per-example outputs its boards name by a not-shipped key.

A study writes its boards to ``STUDY/boards`` and its cells to ``STUDY/results``; results/
is not beneath boards/, so each board names its cells ``results/results/<model>/<file>``
(a portable key, ``leaderboard.relative_to_board``), not by a path beside it. Before this
was resolved, every paired test of a study table read "no per-example outputs on both
sides" (issue 41's study showed it on all 432 tests of Table 3).
"""

from __future__ import annotations

from pathlib import Path

from posharness.boards import leaderboard as lb
from posharness.boards.cell_outputs import row_outputs_from_files
from posharness.contracts.results import Metric
from tests.result_factory import save_cell, synthetic_result, write_examples


def _study_board(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)  # a work tree: results outside boards/ get a key
    study = root / "leaderboards" / "my-study"
    cells = study / "results"
    values = [1, 0, 1, 1]
    stem = cells / "m1" / "probe__both__seed0"
    examples = write_examples(stem, ({"id": str(i), "acc": v} for i, v in enumerate(values)))
    result = synthetic_result(
        spec="m1",
        fingerprint="f1",
        task="probe",
        seed=0,
        metrics={"acc": Metric(value=sum(values) / len(values))},
        examples_file=examples,
    )
    path = save_cell(cells, result)
    board = study / "boards" / "m1.json"
    board.parent.mkdir(parents=True)
    built = lb.build(lb.collect_results(cells), name="m1", location=board.parent)
    # as the study's evaluation names it: the key of a file outside the board's folder
    built.rows[0].results = [lb.relative_to_board(path, board.parent)]
    lb.save(built, board)
    return board


def test_the_study_folder_resolves_the_key_its_boards_give_their_cells(tmp_path: Path) -> None:
    board = _study_board(tmp_path)
    (row,) = lb.load(board).rows
    assert row.results == ["results/results/m1/probe__both__seed0.json"]
    missing: list[str] = []
    found = row_outputs_from_files(row, board, [], [], kept_in=board.parent.parent)
    assert sorted(found["probe"].examples) == ["0", "1", "2", "3"]
    # a board in <study>/boards/ finds <study>/results/ by itself (issue 47, part 3)
    assert row_outputs_from_files(row, board, missing, []) == found and not missing
