"""What a printed board shows (issue 47, part 10): a column header is never broken inside
a word, and a score that equals its shuffled-positions control reads n/a with the reason
(a contextual-mode Toeplitz R² of the probe's uniform attention), while the board file
keeps the number."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from posharness.boards.leaderboard import Leaderboard
from posharness.boards.shown_values import pieces, wrap_header
from posharness.boards.views import to_csv, to_json, to_markdown, to_rich_table
from posharness.cli import console as console_module
from posharness.cli.console import print_table

LEADERBOARDS = Path(__file__).resolve().parents[3] / "leaderboards"
CONTEXTUAL_R2 = "toeplitz/attention_no_special_r2"  # -1.36 beside a control of -1.36


def _board(name: str) -> Leaderboard:
    return Leaderboard.model_validate(json.loads((LEADERBOARDS / name).read_text()))


def _shown(board: Leaderboard, monkeypatch: pytest.MonkeyPatch, width: int = 80) -> str:
    """``leaderboard show`` at a terminal ``width`` columns wide."""
    out = Console(file=io.StringIO(), width=width, color_system=None)
    monkeypatch.setattr(console_module, "console", lambda: out)
    print_table(to_rich_table(board))
    return out.file.getvalue()  # type: ignore[attr-defined]


def test_headers_break_between_words_and_name_parts_never_inside_one() -> None:
    text = "bert-a-star-ws@…/bert-a-star-mini/final"
    wrapped = wrap_header(text, 10)
    assert wrapped.replace("\n", "") == text  # nothing lost, nothing added
    assert all(len(line) <= 10 for line in wrapped.splitlines())
    assert wrap_header("learned absolute + T5 buckets", 9) == "learned absolute + T5 buckets"
    assert pieces("tupe-r@runs/final") == ["tupe-", "r@", "runs/", "final"]


@pytest.mark.parametrize("name", ["pe-zoo-mini.json", "cpu-hour-study/boards/BERT-s1.json"])
def test_leaderboard_show_keeps_every_header_word_whole_in_a_narrow_terminal(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = _board(name)
    shown = _shown(board, monkeypatch)
    words = {
        piece
        for row in board.rows
        for text in (row.pe_family, row.mode_label, row.model)
        for piece in pieces(text)
    }
    lines = shown.splitlines()
    header = lines[: next(i for i, line in enumerate(lines) if line.startswith("┡"))]
    for word in words:
        assert any(word in line for line in header), f"{word!r} was broken in a header"


def test_an_r2_equal_to_its_shuffled_control_is_shown_as_na_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    board = _board("cpu-hour-study/boards/BERT-s1.json")
    (row,) = [r for r in board.rows if r.mode == "contextual"]
    value = row.scores[CONTEXTUAL_R2].mean
    assert value == row.scores[CONTEXTUAL_R2 + "_shuffled"].mean < 0  # as committed

    markdown = to_markdown(board, all_metrics=True)
    table_row = next(line for line in markdown.splitlines() if "| contextual" in line)
    assert "n/a" in table_row and f"{value:.4f}" not in table_row
    assert f"{CONTEXTUAL_R2} = {value:.4g} equals its shuffled control" in markdown
    assert "no positional structure to measure" in " ".join(_shown(board, monkeypatch).split())
    # the numbers themselves stay as computed in the board's own formats
    assert str(value) in to_csv(board, all_metrics=True) and str(value) in to_json(board)
    # a row whose R² differs from its control keeps its number
    both = next(r for r in board.rows if r.mode == "both" and CONTEXTUAL_R2 in r.scores)
    assert f"{both.scores[CONTEXTUAL_R2].mean:.4f}" in markdown
