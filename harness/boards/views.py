"""Leaderboards as people read them: a rich table (metrics down the side), Markdown and
CSV (one row per model and mode), JSON; every view marks a row's settings and flags."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from typing import Any

from posharness.boards.leaderboard import Column, Leaderboard, Row, Score
from posharness.boards.shown_values import (
    NOT_MEASURABLE,
    no_structure,
    no_structure_notes,
    widest_piece,
    wrap_header,
)


def visible_columns(board: Leaderboard, all_metrics: bool) -> list[Column]:
    return [c for c in board.columns if all_metrics or c.headline]


def format_score(score: Score | None, digits: int = 4) -> str:
    if score is None:
        return "–"
    if score.sd is not None:
        return f"{score.mean:.{digits}f} ± {score.sd:.{digits}f}"
    return f"{score.mean:.{digits}f}"


def _model_labels(board: Leaderboard) -> list[str]:
    """Row names; a spec that stands for two models (two seeds of a random initialisation,
    a retrained checkpoint) gets its fingerprint so the rows are told apart."""
    fingerprints: dict[str, set[str]] = defaultdict(set)
    for row in board.rows:
        fingerprints[row.model].add(row.fingerprint)
    return [
        f"{row.model} [{row.fingerprint[:8]}]" if len(fingerprints[row.model]) > 1 else row.model
        for row in board.rows
    ]


def table_cells(board: Leaderboard, all_metrics: bool) -> tuple[list[str], list[list[str]]]:
    columns = visible_columns(board, all_metrics)
    header = ["PE family", "model", "mode"] + [c.key for c in columns]
    body = [
        [row.pe_family, label, row.label] + [_marked(row, c) for c in columns]
        for row, label in zip(board.rows, _model_labels(board), strict=True)
    ]
    return header, body


def _marked(row: Row, column: Column) -> str:
    """A score, with ``!`` when its task's cells were flagged as degenerate; ``n/a`` where
    it equals its shuffled control (``shown_values``: no positional structure)."""
    measurable = not no_structure(row, column.key)
    text = format_score(row.scores.get(column.key)) if measurable else NOT_MEASURABLE
    return f"{text} !" if column.task in row.flags and column.key in row.scores else text


def flag_lines(board: Leaderboard) -> list[str]:
    """``!`` explained: one line per flagged (model, mode, task)."""
    return [
        f"! {row.model} ({row.label}) {task}: {flag}"
        for row in board.rows
        for task, flags in sorted(row.flags.items())
        for flag in flags
    ]


def to_markdown(board: Leaderboard, all_metrics: bool = False) -> str:
    header, body = table_cells(board, all_metrics)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    flagged = flag_lines(board) + _notes(board, all_metrics)
    if flagged:
        lines += ["", *flagged]
    return "\n".join(lines) + "\n"


def _notes(board: Leaderboard, all_metrics: bool) -> list[str]:
    """Why a shown score reads ``n/a`` (``shown_values.no_structure_notes``)."""
    return no_structure_notes(board.rows, [c.key for c in visible_columns(board, all_metrics)])


def to_csv(board: Leaderboard, all_metrics: bool = False) -> str:
    columns = visible_columns(board, all_metrics)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        ["pe_family", "model", "mode", "exact"]
        + [name for c in columns for name in (c.key, f"{c.key}:sd")]
    )
    for row, label in zip(board.rows, _model_labels(board), strict=True):
        values: list[Any] = [row.pe_family, label, row.mode, row.exact]
        for c in columns:
            score = row.scores.get(c.key)
            values += [
                score.mean if score else "",
                score.sd if score and score.sd is not None else "",
            ]
        writer.writerow(values)
    return out.getvalue()


def to_json(board: Leaderboard) -> str:
    return json.dumps(board.model_dump(), indent=2) + "\n"


READABLE_WIDTH = 100  # columns a printed board fits before row settings go under it


def to_rich_table(board: Leaderboard, all_metrics: bool = False, width: int = READABLE_WIDTH):
    """Metrics down the side, one column per (model, mode): readable at any terminal width.

    A row's settings (a corpus, a task option's file) made its column header fold over
    20-25 lines (issue 40). When the table with them in its headers would be wider than
    ``width`` columns, each header keeps its mode and a number, and the settings are
    listed under the table once, ``[1] dep_heads.select_treebank=…``.
    """
    from rich.table import Table

    columns = visible_columns(board, all_metrics)
    labels = _model_labels(board)
    table = Table(title=f"leaderboard: {board.name}", caption_justify="left")
    # Task and metric names are what a user types back (--task, --all-metrics): whole,
    # never cut to "locality_sym…" in a narrow terminal; model headers fold instead.
    fixed = []
    for header, values in (
        ("task", [c.task for c in columns]),
        ("metric", [c.metric for c in columns]),
    ):
        fixed.append(max((len(v) for v in [header, *values]), default=0))
        table.add_column(header, no_wrap=True, min_width=fixed[-1])
    scores = [[_marked(row, column) for column in columns] for row in board.rows]
    heads = [
        [label, row.label, row.pe_family] for row, label in zip(board.rows, labels, strict=True)
    ]
    legend = []
    if _width(fixed, heads, scores) > width:
        heads, legend = _settings_legend(board, labels)
    for head, values in zip(heads, scores, strict=True):
        # as wide as the widest word or score: headers break between words, never inside
        width = max(widest_piece(head), *(len(v) for v in values))
        label, mode, family = (wrap_header(text, width) for text in head)
        table.add_column(
            f"{label}\n{mode}\n[dim]{family}[/]",
            justify="right",
            overflow="fold",
            min_width=width,
        )
    previous = None
    for column in columns:
        task = column.task if column.task != previous else ""
        previous = column.task
        table.add_row(task, column.metric, *(_marked(r, column) for r in board.rows))
    notes = legend + (flag_lines(board) if any(r.flags for r in board.rows) else [])
    notes += _notes(board, all_metrics)
    if notes:
        table.caption = "\n".join(notes)
    return table


def _width(fixed: list[int], heads: list[list[str]], scores: list[list[str]]) -> int:
    """The table's width with no cell folded: each column plus its padding and rule."""
    model_columns = [
        max(len(text) for text in [*head, *values])
        for head, values in zip(heads, scores, strict=True)
    ]
    return sum(w + 3 for w in fixed + model_columns) + 1


def _settings_legend(board: Leaderboard, labels: list[str]) -> tuple[list[list[str]], list[str]]:
    """Headers with the mode and ``[n]`` where the row has settings, and the legend lines
    that name them once (rows with the same settings share a number)."""
    numbers: dict[str, int] = {}
    heads = []
    for row, label in zip(board.rows, labels, strict=True):
        mode, full = row.mode_label, row.label
        if full == mode:
            heads.append([label, mode, row.pe_family])
            continue
        settings = full.removeprefix(f"{mode} · ")
        number = numbers.setdefault(settings, len(numbers) + 1)
        heads.append([label, f"{mode} [{number}]", row.pe_family])
    legend = [f"[{n}] {text}" for text, n in numbers.items()]
    return heads, legend
