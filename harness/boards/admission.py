"""Admission: refuse, before any compute, cells the target leaderboard could not take.

A board holds one set of options per task and row; a cell that would add another set to
a row already there is refused while planning (commit a60fb99: checked after compute, the
refusal wasted the run). Lives with the boards because it reads them; the runner calls it
through the ``admit`` callback that ``posharness.evaluate()`` passes.
"""

from __future__ import annotations

from pathlib import Path

from posharness.base.errors import PosharnessError
from posharness.boards import leaderboard as lb
from posharness.boards.row_settings import non_default_options
from posharness.run.plan import Cell
from posharness.storage.hashing import hash_obj

LONGEST_BOARD_NAME = 150  # file systems refuse names over 255 bytes


def default_board(cells: list[Cell], output_dir: Path) -> Path:
    """A run's own board, beside its results: named by the results folders of its models
    (the spec, plus its --model-arg values when it has some). Many models (a checkpoint
    series) are named by the first, their count and a digest of all of them."""
    slugs = list(dict.fromkeys(str(cell.key.folder) for cell in cells))
    name = "__".join(slugs)
    if len(name) > LONGEST_BOARD_NAME:
        name = f"{slugs[0][:100]}__and-{len(slugs) - 1}-more-{hash_obj(slugs)[:10]}"
    return output_dir / f"{name}.json"


def admit_cells(cells: list[Cell], leaderboard: Path | None, output_dir: Path) -> None:
    """Refuse cells whose task the board already holds in the cell's row (its key's
    ``row``: model, mode and every row setting) under other options (one line, naming
    the option and the board)."""
    path = leaderboard or default_board(cells, output_dir)
    if not cells or not path.exists():
        return
    try:
        board = lb.load(path)
    except PosharnessError:
        return  # unreadable: it will be replaced, and the user told so
    rows = {row.key: row for row in board.rows}
    for cell in cells:
        row = rows.get(cell.key.row)  # the row the cell's result will join
        if row is not None:
            options = non_default_options(cell.task.spec.name, cell.options)
            lb.check_task_options(row, cell.task.spec.name, options, path)
