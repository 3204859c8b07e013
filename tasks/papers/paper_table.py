"""One builder for a paper's study table: its columns beside the rows the paper printed.

Every paper module (chen2023, tupe2021, tisa2021) declares tables the same way: an id, a
title, the columns, the published table whose rows stand beside ours (``published/``), a
caption, and the layout fields where a table differs from the default. The builder reads
the published source and rows from the same (paper, table) pair, so the two never name
different tables, and folds the caption, written as a paragraph of prose, into one line.
"""

from __future__ import annotations

from collections.abc import Mapping

from posharness.study.table_spec import StudyColumn, StudyTable
from posharness.tasks.papers import published


def paragraph(*parts: str) -> str:
    """Prose parts (triple-quoted paragraphs, shared sentences) as one caption line: line
    breaks and runs of spaces become single spaces, as the renderers wrap captions
    themselves."""
    return " ".join(" ".join(parts).split())


def task_column(task: str, label: str, metric: str = "accuracy", *, needs: str = "") -> StudyColumn:
    """A column that is one task's metric, keyed by the task's name (the papers' tables of
    downstream and probing tasks have one column per task)."""
    return StudyColumn(task, label, task, metric, needs=needs)


def paper_table(
    table_id: str,
    title: str,
    columns: tuple[StudyColumn, ...],
    printed: tuple[str, str],
    caption: str,
    *,
    modes: tuple[str, ...] = ("both",),
    average: str | None = None,
    digits: int = 1,
    substitutes: Mapping[str, str] | None = None,
) -> StudyTable:
    """A table whose published rows are those of ``printed`` = (paper, table) in
    ``published/PAPER.toml``; ``caption`` is folded by :func:`paragraph`."""
    paper, table = printed
    return StudyTable(
        id=table_id,
        title=title,
        columns=columns,
        source=published.source(paper, table),
        published=published.rows(paper, table),
        modes=modes,
        average=average,
        digits=digits,
        caption=paragraph(caption),
        substitutes=dict(substitutes or {}),
    )
