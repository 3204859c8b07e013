"""Leaderboards as people read them: a rich table (metrics down the side), Markdown and
CSV (one row per model and mode), JSON; every view marks a row's settings and flags."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from typing import Any

from posharness.boards.leaderboard import Column, Leaderboard, Row, Score


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
    """A score, with ``!`` when its task's cells were flagged as degenerate."""
    text = format_score(row.scores.get(column.key))
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
    flagged = flag_lines(board)
    if flagged:
        lines += ["", *flagged]
    return "\n".join(lines) + "\n"


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


def to_rich_table(board: Leaderboard, all_metrics: bool = False):
    """Metrics down the side, one column per (model, mode): readable at any terminal width."""
    from rich.table import Table

    columns = visible_columns(board, all_metrics)
    table = Table(title=f"leaderboard: {board.name}")
    # Task and metric names are what a user types back (--task, --all-metrics): whole,
    # never cut to "locality_sym…" in a narrow terminal; model headers fold instead.
    for header, values in (
        ("task", [c.task for c in columns]),
        ("metric", [c.metric for c in columns]),
    ):
        width = max((len(v) for v in [header, *values]), default=0)
        table.add_column(header, no_wrap=True, min_width=width)
    for row, label in zip(board.rows, _model_labels(board), strict=True):
        values = [_marked(row, column) for column in columns]
        table.add_column(
            f"{label}\n{row.label}\n[dim]{row.pe_family}[/]",
            justify="right",
            overflow="fold",
            min_width=max((len(v) for v in values), default=1),  # scores stay whole too
        )
    previous = None
    for column in columns:
        task = column.task if column.task != previous else ""
        previous = column.task
        table.add_row(task, column.metric, *(_marked(r, column) for r in board.rows))
    if board.rows and any(r.flags for r in board.rows):
        table.caption = "\n".join(flag_lines(board))
    return table
