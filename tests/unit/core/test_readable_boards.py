"""A printed board stays readable at 100 columns (issue 40, part 7): row settings that
would make the table wider go under it as a numbered legend, named once; a board whose
headers fit keeps them in place."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.cells import cell_len
from rich.console import Console

from posharness.boards.leaderboard import Leaderboard
from posharness.boards.views import to_rich_table
from posharness.cli.console import print_table

BOARDS = Path(__file__).resolve().parents[3] / "leaderboards"


def _board(name: str) -> Leaderboard:
    return Leaderboard.model_validate(json.loads((BOARDS / name).read_text()))


def _printed(board: Leaderboard, width: int = 100) -> list[str]:
    out = Console(file=io.StringIO(), width=width, color_system=None)
    out.print(to_rich_table(board), crop=False)
    return out.file.getvalue().splitlines()  # type: ignore[attr-defined]


def test_long_row_settings_go_under_the_table_and_every_line_fits_100_columns() -> None:
    board = _board("minilm.json")  # rows carry a treebank file and a reference corpus
    lines = _printed(board)
    assert max(cell_len(line) for line in lines) <= 100
    header = lines[: next(i for i, line in enumerate(lines) if line.startswith("┡"))]
    assert len(header) <= 10  # folded over 20-25 lines before
    legend = [line for line in lines if line.startswith("[")]
    assert legend[0].startswith("[1] dep_heads.select_treebank=")
    assert any("[1]" in line for line in header) and any("[2]" in line for line in header)
    # each setting is written once, under the table, not in a header
    text = "\n".join(lines)
    assert text.count("select_treebank") == len(legend)


def test_a_board_whose_headers_fit_keeps_its_settings_in_them() -> None:
    board = _board("minilm.json")
    short = board.model_copy(
        update={"rows": [board.rows[0].model_copy(update={"settings": {"limit": 3}})]}
    )
    lines = _printed(short)
    assert any("both · limit 3" in line for line in lines)
    assert not any(line.startswith("[1]") for line in lines)


def test_run_prints_its_board_through_the_same_view(monkeypatch) -> None:
    import posharness.cli.console as console_module

    out = Console(file=io.StringIO(), width=100, color_system=None)
    monkeypatch.setattr(console_module, "console", lambda: out)
    print_table(to_rich_table(_board("minilm.json")))
    printed = out.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert max(cell_len(line) for line in printed) <= 100
