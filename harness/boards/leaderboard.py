"""Leaderboards: one row per (model, mode, settings), one column per task metric, mean ± sd
over seeds.

A cell joins the row of its key's row key (``contracts.cell_key.RowKey``): the model
fingerprint, the mode and the row settings ``limit`` and ``train_limit`` (cells computed
or trained on at most that many examples), ``attention`` (a forced attention path),
``device`` (a GPU or other accelerator rather than the CPU), ``split`` and ``reference``
(the split definition and reference corpus); a row stores them by name in ``settings``,
beside ``options`` (task options that differ from the task's defaults). A merge that
would put one task's scores under two sets of options in one row is refused in one line
(``merge``). The file's types are in ``schema``; this module builds, saves and loads.

A leaderboard is built from result files and saved as JSON (with ``schema_version``);
each row keeps the paths of the results it came from, relative to the leaderboard, so
``posharness compare`` can reach the per-example outputs for a paired test. A board in a
git work tree names a result outside its own folder by a portable key,
``results/<output folder>/<model folder>/<file>`` (:func:`relative_to_board`): the board
never holds a machine's absolute path nor a path out of its repository, and says so in
``results_note`` when its results are not shipped beside it. Any number of
runs may add to one leaderboard at once: :func:`merge_and_save` reads, merges and writes
it under the board's lock (``.<board>.lock`` beside it), so no run loses another's rows.
"""

from __future__ import annotations

import os
import statistics
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from posharness.base.errors import DataError, PosharnessError, SchemaError
from posharness.boards.merge import (
    MergeSummary,
    check_task_options,
    merge,
    merge_with_summary,
)
from posharness.boards.row_settings import settings_of
from posharness.boards.schema import (
    NOT_SHIPPED,
    NOT_SHIPPED_NOTE,
    SCHEMA_VERSION,
    Column,
    Leaderboard,
    Row,
    Score,
    results_note_of,
    sorted_rows,
)
from posharness.contracts.cell_key import RowKey
from posharness.contracts.results import (
    CellResult,
    key_of_result,
    read_json_file,
    read_result,
    read_versioned,
)
from posharness.storage.io import atomic_write_text, exclusive, sweep_stale_temporaries

__all__ = [  # the board's schema and merge, re-exported: callers use ``leaderboard.X``
    "NOT_SHIPPED",
    "NOT_SHIPPED_NOTE",
    "SCHEMA_VERSION",
    "Column",
    "Leaderboard",
    "MergeSummary",
    "Row",
    "Score",
    "build",
    "check_task_options",
    "collect_results",
    "load",
    "merge",
    "merge_and_save",
    "merge_with_summary",
    "relative_to_board",
    "results_note_of",
    "save",
    "save_if_changed",
]

# How long a run waits for another run's merge of the same board. A merge takes well under
# a second, so only a queue of many runs, or a holder that hangs, comes near it.
LOCK_TIMEOUT_S = 300.0


def collect_results(folder: Path) -> list[tuple[Path, CellResult]]:
    if not folder.is_dir():
        raise DataError(f"results folder {folder} does not exist: pass the --output-dir of a run")
    found = []
    for path in sorted(folder.rglob("*.json")):
        data = read_json_file(path, "result")
        if "cell_id" not in data:
            continue  # not a result file (e.g. a leaderboard saved inside the folder)
        found.append((path, read_result(path)))
    if not found:
        raise DataError(f"no result files under {folder}: run `posharness run` first")
    return found


def build(results: list[tuple[Path, CellResult]], name: str, location: Path) -> Leaderboard:
    """Aggregate results into rows; ``location`` is where the leaderboard will be saved."""
    columns: dict[str, Column] = {}
    rank: dict[str, int] = {}  # headline metrics keep the order the task declares
    groups: dict[RowKey, list[tuple[Path, CellResult]]] = defaultdict(list)
    for path, result in results:
        groups[key_of_result(result).row].append((path, result))
        headline = result.task.headline_metrics or [result.task.main_metric]
        for metric in result.metrics:
            column = Column(task=result.task.name, metric=metric, headline=metric in headline)
            columns.setdefault(column.key, column)
            rank[column.key] = headline.index(metric) if metric in headline else len(headline)
    rows = []
    for key, members in groups.items():
        first = members[0][1]
        by_column: dict[str, list[tuple[int, Any]]] = defaultdict(list)
        for _, result in members:
            for metric, value in result.metrics.items():
                by_column[f"{result.task.name}/{metric}"].append((result.seed, value))
        scores = {key: _score(values) for key, values in by_column.items()}
        rows.append(
            Row(
                model=first.model.spec,
                fingerprint=first.model.fingerprint,
                mode=key.mode,
                exact=first.mode.exact,
                definition=first.mode.definition,
                pe_family=str(first.model.pe_card.get("family", "unknown")),
                scores=scores,
                results=sorted(relative_to_board(p, location.parent) for p, _ in members),
                settings=settings_of([result for _, result in members]),
                settings_known=True,
                flags=_flags([result for _, result in members]),
                task_versions={r.task.name: r.task.version for _, r in members},
            )
        )
    ordered = sorted(columns.values(), key=lambda c: (c.task, rank[c.key], c.metric))
    return Leaderboard(
        name=name,
        created_at=datetime.now(UTC).isoformat(),
        columns=ordered,
        rows=sorted_rows(rows),
        results_note=results_note_of(rows),
    )


def _flags(results: list[CellResult]) -> dict[str, list[str]]:
    flags: dict[str, list[str]] = defaultdict(list)
    for result in results:
        for flag in result.flags:
            if flag not in flags[result.task.name]:
                flags[result.task.name].append(flag)
    return dict(flags)


def _score(values: list[tuple[int, Any]]) -> Score:
    ordered = sorted(values, key=lambda x: x[0])
    numbers = [v.value for _, v in ordered]
    if len(numbers) == 1:
        only = values[0][1]
        return Score(mean=numbers[0], n_seeds=1, ci_low=only.ci_low, ci_high=only.ci_high)
    return Score(
        mean=statistics.fmean(numbers),
        sd=statistics.stdev(numbers),
        n_seeds=len(numbers),
        per_seed={str(seed): v.value for seed, v in ordered},
    )


def relative_to_board(path: Path, base: Path) -> str:
    """How a board in folder ``base`` names the result file ``path``.

    A board inside a git work tree may be committed, so it names a result by a relative
    path only when the file lies beneath the board's folder (shipped with it, or not at
    all): any other result gets the portable key ``results/<output folder>/<model
    folder>/<file>`` — never a machine's absolute path, never ``../`` out of the folder,
    whose target a clone would not have. A board outside any work tree is local: a plain
    relative path. The report finds keyed files under ``--results`` by their tail, and
    the per-example bundle is keyed by the same names."""
    path, base = path.resolve(), base.resolve()
    if repository_root(base) is None or path.is_relative_to(base):
        return Path(os.path.relpath(path, base)).as_posix()
    return NOT_SHIPPED + "/".join(path.parts[-3:])


def repository_root(folder: Path) -> Path | None:
    """The git work tree ``folder`` lies in, or None outside any."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def save(board: Leaderboard, path: Path) -> None:
    atomic_write_text(path, board.model_dump_json(indent=2) + "\n")


@dataclass(frozen=True)
class Saved:
    """What :func:`merge_and_save` left on disk."""

    board: Leaderboard  # the board as saved: the fresh rows over everything it held
    # Falsy when the file held no readable board; else what the merge did (MergeSummary,
    # always truthy), so a run says whether rows were added or replaced.
    merged: MergeSummary | None
    replaced_unreadable: str | None  # why an unreadable board was replaced, if one was
    changed: bool  # False when the file already held this board


def merge_and_save(
    fresh: Leaderboard,
    path: Path,
    replace_settings: bool = False,
    timeout: float = LOCK_TIMEOUT_S,
) -> Saved:
    """Add ``fresh`` to the board at ``path`` (or start it), holding the board's lock.

    The board is read under the lock, not before it: a run that read it earlier, then
    waited while another run saved its rows, would otherwise write the older board back
    and lose them. The write is atomic, so readers that take no lock (``leaderboard
    show``, the report) see the old board or the new one, never half of one. An
    unreadable board is replaced (its results are still on disk) and the reason returned.
    """
    with exclusive(path, timeout=timeout, what=f"leaderboard {path}"):
        earlier, replaced = None, None
        if path.exists():
            try:
                earlier = load(path)
            except PosharnessError as exc:
                replaced = str(exc)
        board, summary = fresh, None
        if earlier is not None:
            board, summary = merge_with_summary(earlier, fresh, path, replace_settings)
        sweep_stale_temporaries(path.parent, of=path.name)  # a save a kill cut short
        changed = save_if_changed(board, path)
    return Saved(board, summary, replaced, changed)


def save_if_changed(board: Leaderboard, path: Path) -> bool:
    """Save unless the file already holds the same board (only ``created_at`` differing).

    Rerunning finished cells then leaves a committed leaderboard untouched.
    """
    if path.exists():
        try:
            old = load(path)
        except SchemaError:
            old = None
        if old is not None and old.model_copy(update={"created_at": ""}) == board.model_copy(
            update={"created_at": ""}
        ):
            return False
    save(board, path)
    return True


def load(path: Path) -> Leaderboard:
    return read_versioned(path, Leaderboard, "leaderboard", SCHEMA_VERSION)
