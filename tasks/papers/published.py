"""The papers' published numbers, kept as data in ``published/*.toml`` (one file per paper),
read into the study tables' :class:`PublishedRow` and :class:`PublishedSource`.

Numbers are data, not code, so that each one sits beside the paper, table and page it was
copied from, and a test can check it against the paper's text. A file holds::

    paper = "..."            # the citation the source shows
    text = "chen2023-....txt"  # the text dump in ../shared/science/papers it was copied from
    [tables.NAME]            # table, page, anchor (a line beside the table), note, scale
    [[tables.NAME.rows]]     # model (as printed), mode, pe, note, values, spread, average,
                             # recomputed (a row the paper does not print, see below)

``values`` are in the paper's unit under the study table's column keys; ``spread`` (the ±
the paper prints) and ``average`` (its printed average column) are kept for provenance:
the contract's :class:`PublishedRow` has no field for them, so the row's note repeats them.
A ``recomputed`` row holds numbers derived from the paper's printed rows rather than printed
(Table A3's averages without its Root row); the text says how, the provenance test redoes
the computation from the paper's lines, and the row's note says so.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from typing import Any

from posharness.study.table_spec import PUBLISHED_MARK, PublishedRow, PublishedSource

ROW_KEYS = frozenset({"model", "mode", "pe", "note", "values", "spread", "average", "recomputed"})
TABLE_KEYS = frozenset({"table", "page", "anchor", "note", "scale", "rows"})


@cache
def document(paper: str) -> Mapping[str, Any]:
    """The parsed ``published/PAPER.toml``; a key the reader does not know is an error, so
    a typo never drops a number silently."""
    path = resources.files(__package__).joinpath("published", f"{paper}.toml")
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    for name, table in data["tables"].items():
        _known(table, TABLE_KEYS, f"{paper}.toml [tables.{name}]")
        for row in table.get("rows", ()):
            _known(row, ROW_KEYS, f"{paper}.toml [tables.{name}] row {row.get('model')!r}")
    return data


def source(paper: str, table: str) -> PublishedSource:
    data = document(paper)
    entry = data["tables"][table]
    return PublishedSource(
        paper=data["paper"],
        table=entry["table"],
        page=entry["page"],
        scale=entry.get("scale", PUBLISHED_MARK),
    )


def rows(paper: str, table: str, keys: Iterable[str] | None = None) -> tuple[PublishedRow, ...]:
    """The table's published rows; with ``keys``, only those values (a figure that plots
    two of a table's columns), and rows left with none are dropped."""
    wanted = None if keys is None else frozenset(keys)
    published = []
    for row in document(paper)["tables"][table].get("rows", ()):
        values = {
            key: float(value)
            for key, value in row["values"].items()
            if wanted is None or key in wanted
        }
        if values:
            note = row.get("note", "")
            if "recomputed" in row:
                recomputed = f"recomputed, not printed: {row['recomputed']}"
                note = f"{note}; {recomputed}" if note else recomputed
            average = row.get("average") if wanted is None else None
            published.append(
                PublishedRow(
                    model=row["model"],
                    values=values,
                    mode=row.get("mode", "both"),
                    pe=row.get("pe"),
                    note=note,
                    average=None if average is None else float(average),
                    spread={k: float(v) for k, v in row.get("spread", {}).items()},
                )
            )
    return tuple(published)


def _known(entry: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}")
