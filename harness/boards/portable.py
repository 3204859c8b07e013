"""Committed boards that travel: no machine path, no path out of the repository.

A board and its per-example bundle are read on other machines, so every string in them
must mean the same there (issue 27, part 6). :func:`rewrite` brings a board written before
results and boards recorded portable provenance (or regenerated elsewhere) to that form
without touching a number: result names become what :func:`leaderboard.relative_to_board`
gives today, model specs and data-file options their portable names, and the bundle is
keyed by the new result names with every field of each entry kept.
``posharness leaderboard portable BOARD…`` runs it; :func:`unportable` is what the tests
hold every file in ``leaderboards/`` to.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from posharness.base.errors import DataError
from posharness.boards.example_bundle import bundle_path, read_bundle, write_entries
from posharness.boards.leaderboard import (
    NOT_SHIPPED,
    Leaderboard,
    load,
    relative_to_board,
    results_note_of,
    save,
)
from posharness.contracts.results import is_machine_path, portable_options, portable_spec

# An absolute path anywhere in a string: ``/tmp/…`` after a space, ``=`` or ``@`` (a model
# spec), ``~/…``, ``C:\\…``; not ``…/a/b`` (already portable) nor ``task/metric`` keys.
MACHINE_PATH = re.compile(r"(?<![\w.:/…-])(?:/[\w.-]+/[\w.-]|~/|[A-Za-z]:\\)")


@dataclass(frozen=True)
class Rewritten:
    renamed: int  # result names that changed
    bundle_entries: int  # entries of the per-example bundle rekeyed (0: no bundle)
    left: list[str]  # strings still unportable after the rewrite (should be none)


def rewrite(path: Path, name: str | None = None) -> Rewritten:
    """Rewrite the board at ``path`` and its bundle in place (``name``: a new display
    name); the scores are carried over as they are."""
    board, renamed = portable(load(path), path)
    if name is not None:
        board = board.model_copy(update={"name": name})
    entries = _rekey_bundle(path, renamed)
    save(board, path)
    left = unportable(json.loads(path.read_text(encoding="utf-8")), path.parent)
    left += unportable(read_bundle(path), path.parent)
    return Rewritten(sum(old != new for old, new in renamed.items()), entries, left)


def portable(board: Leaderboard, location: Path) -> tuple[Leaderboard, dict[str, str]]:
    """``board`` (saved at ``location``) with no machine path and no path out of its
    repository, its numbers untouched: result paths renamed as :func:`relative_to_board`
    names them, model specs by :func:`~posharness.contracts.results.portable_spec`, task options
    that name data files by a portable name and sha256. Also returns each old result name
    with its new one, so the per-example bundle can be keyed alike. Rerunnable: a
    portable board comes back unchanged."""
    renamed: dict[str, str] = {}
    rows = []
    for row in board.rows:
        for old in row.results:
            keyed = old.startswith(NOT_SHIPPED) and not (location.parent / old).exists()
            renamed[old] = (
                old if keyed else relative_to_board(location.parent / old, location.parent)
            )
        options = {
            task: portable_options(values)
            for task, values in row.settings.get("options", {}).items()
        }
        settings = row.settings | ({"options": options} if options else {})
        rows.append(
            row.model_copy(
                update={
                    "model": portable_spec(row.model),
                    "results": sorted({renamed[old] for old in row.results}),
                    "settings": settings,
                }
            )
        )
    return board.model_copy(update={"rows": rows, "results_note": results_note_of(rows)}), renamed


def unportable(document: Any, base: Path, where: str = "") -> list[str]:
    """Every string in a JSON document (keys included) that is a machine's absolute path,
    or a ``../`` path that, read from folder ``base``, leaves that folder (its target is
    not committed with the board): what a committed board must not hold."""
    if isinstance(document, dict):
        return [
            found
            for key, value in document.items()
            for found in unportable(key, base, f"{where}/{key}")
            + unportable(value, base, f"{where}/{key}")
        ]
    if isinstance(document, list):
        return [
            found
            for i, item in enumerate(document)
            for found in unportable(item, base, f"{where}[{i}]")
        ]
    if isinstance(document, str) and (
        is_machine_path(document) or MACHINE_PATH.search(document) or _leaves(document, base)
    ):
        return [f"{where or '/'}: {document}"]
    return []


def _leaves(text: str, base: Path) -> bool:
    if "../" not in text and not text.startswith(".."):
        return False
    return not (base / text).resolve().is_relative_to(base.resolve())


def _rekey_bundle(board: Path, renamed: dict[str, str]) -> int:
    """The bundle keyed by the new result names, each entry whole (fields another
    version added included), in the bundle's one on-disk form."""
    target = bundle_path(board)
    if not target.exists():
        return 0
    entries: dict[str, Any] = {}
    for old, entry in read_bundle(board).items():
        new = renamed.get(old, old)
        if new in entries and entries[new] != entry:
            raise DataError(
                f"{target}: {old} and another entry both become {new}: rebuild the board "
                "with `posharness leaderboard build … --keep-examples`"
            )
        entries[new] = entry
    write_entries(target, entries)
    return len(entries)
