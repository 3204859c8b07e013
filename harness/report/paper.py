"""A study's paper tables placed in the report: anchors, and their files copied beside.

The study layer (above the report) hands over ``PaperTable`` objects with text cells; the
report copies the files each names (LaTeX, Markdown, the Fig. 2 PNG) as ``FileCopy``
entries, like a cell's artifacts, under ``tables/<slug>/``, and checks that every one is
there before anything is written, so a missing file fails in one line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from posharness.base.errors import DataError
from posharness.report.artifacts import is_image
from posharness.report.model import FigureRef, FileCopy, PaperTable, PaperTableView

FOLDER = "tables"
PAGE = "tables"  # tables.html / tables.md at the report's root


def slug_of(table_id: str) -> str:
    """``chen2023.table1`` → ``chen2023-table1``: an element id and a folder name."""
    return re.sub(r"[^a-z0-9_-]+", "-", table_id.lower()).strip("-") or "table"


def paper_views(
    tables: Sequence[PaperTable],
) -> tuple[list[PaperTableView], list[FileCopy]]:
    """The tables in the order given, each with a distinct slug, and the copies they need."""
    views, copies, taken = [], [], set()
    for table in tables:
        slug = _fresh(slug_of(table.id), taken)
        names: set[str] = set()
        files = []
        for label, source in table.files:
            target = _place(table, slug, Path(source), names)
            copies.append(FileCopy(target, Path(source)))
            files.append(FigureRef(target, label, "study"))
        figure = None
        if table.figure is not None:
            source = Path(table.figure)
            target = _place(table, slug, source, names)
            if not is_image(target):
                raise DataError(
                    f"paper table {table.id}: figure {source.name} is not an image "
                    "(.png, .svg, …): pass the drawn figure, or list the file under files"
                )
            copies.append(FileCopy(target, source))
            figure = FigureRef(target, table.title, "study")
        views.append(PaperTableView(table, slug, tuple(files), figure))
    return views, copies


def sources(tables: Sequence[PaperTable]) -> list[Path]:
    """Every file the tables name: inputs the report's folder must not swallow."""
    out = [Path(source) for table in tables for _, source in table.files]
    return out + [Path(t.figure) for t in tables if t.figure is not None]


def _place(table: PaperTable, slug: str, source: Path, names: set[str]) -> str:
    if not source.is_file():
        raise DataError(
            f"paper table {table.id}: {source} is not a file: write the study's tables "
            "first (posharness study report FILE)"
        )
    return f"{FOLDER}/{slug}/{_fresh(source.name, names)}"


def _fresh(name: str, taken: set[str]) -> str:
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        stem, dot, suffix = name.rpartition(".")
        candidate = f"{stem}-{n}.{suffix}" if dot and stem else f"{name}-{n}"
    taken.add(candidate)
    return candidate
