"""The study tables the installed families declare (entry point group
``posharness.study_tables``), by id; an unknown id is one line with close matches."""

from __future__ import annotations

import difflib
import functools
from importlib.metadata import entry_points

from posharness.base.errors import UnknownNameError
from posharness.study.table_spec import StudyTable

TABLES_GROUP = "posharness.study_tables"


@functools.cache
def study_tables() -> dict[str, StudyTable]:
    from posharness.plugins.registry import import_target

    found: dict[str, StudyTable] = {}
    for ep in sorted(entry_points(group=TABLES_GROUP), key=lambda e: e.name):
        for table in import_target(ep.value, "study tables", ep.name)():
            found[table.id] = table
    return found


def study_table(table_id: str) -> StudyTable:
    tables = study_tables()
    if table_id in tables:
        return tables[table_id]
    close = difflib.get_close_matches(table_id, list(tables), n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise UnknownNameError(
        f"study table {table_id!r} does not exist: {hint}known tables: {', '.join(tables)}"
    )
