"""Leaderboards: one row per (model, mode, settings), one column per task metric, mean ± sd
over seeds.

A row's ``settings`` say what sets it apart from a plain run: ``limit`` and
``train_limit`` (cells computed or trained on at most that many examples), ``attention``
(a forced attention path), ``device`` (a GPU or other accelerator rather than the CPU)
and ``options`` (task options that differ from the task's defaults). Rows with other
limits, path or device are kept apart; a merge that would put one task's scores under two
sets of options in one row is refused in one line.

A leaderboard is built from result files and saved as JSON (with ``schema_version``);
each row keeps the paths of the results it came from, relative to the leaderboard, so
``posharness compare`` can reach the per-example outputs for a paired test. Any number of
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
from typing import Any, Literal

from pydantic import BaseModel

from posharness.errors import DataError, PosharnessError, SchemaError, SettingsConflictError
from posharness.io import atomic_write_text, exclusive, sweep_stale_temporaries
from posharness.results import (
    CellResult,
    read_json_file,
    read_result,
    read_versioned,
)
from posharness.row_settings import of_result, row_key, settings_of

SCHEMA_VERSION = 1
# How long a run waits for another run's merge of the same board. A merge takes well under
# a second, so only a queue of many runs, or a holder that hangs, comes near it.
LOCK_TIMEOUT_S = 300.0


class Score(BaseModel):
    mean: float
    sd: float | None = None  # across seeds; None with one seed
    n_seeds: int
    ci_low: float | None = None  # the task's own interval, with one seed
    ci_high: float | None = None


class Column(BaseModel):
    task: str
    metric: str
    headline: bool  # shown by default

    @property
    def key(self) -> str:
        return f"{self.task}/{self.metric}"


class Row(BaseModel):
    model: str
    fingerprint: str
    mode: str
    exact: bool
    definition: str | None = None
    pe_family: str
    scores: dict[str, Score]  # column key → score
    results: list[str]  # result files, relative to the leaderboard file
    # ROW_SETTINGS values where set, and "options": {task: {key: value}} (row_settings.py)
    settings: dict[str, Any] = {}
    # False on rows written before settings were recorded: their options are unknown, so
    # no merge can be refused for differing from them.
    settings_known: bool = False
    flags: dict[str, list[str]] = {}  # task → degenerate outcomes its cells were flagged with

    @property
    def key(self) -> tuple[Any, ...]:
        """(fingerprint, mode, *ROW_SETTINGS values): see ``row_settings.row_key``."""
        return row_key(self.fingerprint, self.mode, self.settings)


class Leaderboard(BaseModel):
    schema_version: Literal[1] = SCHEMA_VERSION
    name: str
    created_at: str
    columns: list[Column]
    rows: list[Row]


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
    groups: dict[tuple[Any, ...], list[tuple[Path, CellResult]]] = defaultdict(list)
    for path, result in results:
        key = row_key(result.model.fingerprint, result.mode.name, of_result(result))
        groups[key].append((path, result))
        headline = result.task.headline_metrics or [result.task.main_metric]
        for metric in result.metrics:
            column = Column(task=result.task.name, metric=metric, headline=metric in headline)
            columns.setdefault(column.key, column)
            rank[column.key] = headline.index(metric) if metric in headline else len(headline)
    rows = []
    for (_, mode, *_), members in groups.items():
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
                mode=mode,
                exact=first.mode.exact,
                definition=first.mode.definition,
                pe_family=str(first.model.pe_card.get("family", "unknown")),
                scores=scores,
                results=sorted(relative_to_board(p, location.parent) for p, _ in members),
                settings=settings_of([result for _, result in members]),
                settings_known=True,
                flags=_flags([result for _, result in members]),
            )
        )
    ordered = sorted(columns.values(), key=lambda c: (c.task, rank[c.key], c.metric))
    return Leaderboard(
        name=name,
        created_at=datetime.now(UTC).isoformat(),
        columns=ordered,
        rows=_sorted_rows(rows),
    )


def merge(
    earlier: Leaderboard,
    fresh: Leaderboard,
    where: Path | None = None,
    replace_settings: bool = False,
) -> Leaderboard:
    """``fresh`` written over ``earlier``: a run adds to a leaderboard instead of replacing it.

    Every (model, mode, task) the fresh board holds replaces the earlier scores of that
    task; rows, tasks and result paths it did not compute are kept as they were, so
    running one task more never wipes the others (a committed leaderboard whose result
    files are not at hand included). Rows are matched by model fingerprint, mode and
    limit; a task rerun with other options than the row holds is refused, naming both,
    unless ``replace_settings`` (``--overwrite``) asks for the new options to replace them.
    """
    rows = {row.key: row for row in earlier.rows}
    for row in fresh.rows:
        old = rows.get(row.key)
        if old is None:
            rows[row.key] = row
            continue
        tasks = {key.split("/", 1)[0] for key in row.scores}
        if not replace_settings:
            _check_same_options(old, row, tasks, where)
        kept = {k: v for k, v in old.scores.items() if k.split("/", 1)[0] not in tasks}
        paths = [p for p in old.results if Path(p).name.split("__", 1)[0] not in tasks]
        options = {
            task: values
            for task, values in old.settings.get("options", {}).items()
            if task not in tasks
        } | row.settings.get("options", {})
        settings = {k: v for k, v in row.settings.items() if k != "options"}
        flags = {t: f for t, f in old.flags.items() if t not in tasks} | row.flags
        rows[row.key] = row.model_copy(
            update={
                "scores": kept | row.scores,
                "results": sorted(set(paths) | set(row.results)),
                "settings": settings | ({"options": options} if options else {}),
                "flags": flags,
            }
        )
    fresh_tasks = {c.task for c in fresh.columns}
    columns = fresh.columns + [c for c in earlier.columns if c.task not in fresh_tasks]
    return fresh.model_copy(
        update={"columns": _stable_by_task(columns), "rows": _sorted_rows(list(rows.values()))}
    )


def _check_same_options(old: Row, fresh: Row, tasks: set[str], where: Path | None) -> None:
    for task in sorted(tasks):
        check_task_options(old, task, fresh.settings.get("options", {}).get(task, {}), where)


def check_task_options(
    row: Row, task: str, options: dict[str, Any], where: Path | None = None
) -> None:
    """Refuse to put ``task`` under ``options`` in a row that holds it under others."""
    before = row.settings.get("options", {}).get(task, {})
    held = any(k.startswith(f"{task}/") for k in row.scores)
    if row.settings_known and held and before != options:
        board = f"leaderboard {where}" if where else "the leaderboard"
        raise SettingsConflictError(
            f"{board} holds {task} for {row.model} ({row.mode}) with options "
            f"{_options_text(before)}; this run uses {_options_text(options)}: pass another "
            "--leaderboard, or rebuild the board from one setting's results"
        )


def _options_text(options: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(options.items())) or "the defaults"


def _flags(results: list[CellResult]) -> dict[str, list[str]]:
    flags: dict[str, list[str]] = defaultdict(list)
    for result in results:
        for flag in result.flags:
            if flag not in flags[result.task.name]:
                flags[result.task.name].append(flag)
    return dict(flags)


def _stable_by_task(columns: list[Column]) -> list[Column]:
    """Tasks in name order, as ``build`` sorts them; each task's metrics keep their order."""
    by_task: dict[str, list[Column]] = defaultdict(list)
    for column in columns:
        by_task[column.task].append(column)
    return [column for task in sorted(by_task) for column in by_task[task]]


def _sorted_rows(rows: list[Row]) -> list[Row]:
    mode_order = {"both": 0, "contextual": 1, "positional": 2}
    # Within one model and mode: the full run first, then limited rows, largest first.
    return sorted(
        rows,
        key=lambda r: (
            r.pe_family,
            r.model,
            mode_order.get(r.mode, 9),
            r.fingerprint,
            -(r.settings.get("limit") or float("inf")),
            -(r.settings.get("train_limit") or float("inf")),
        ),
    )


def _score(values: list[tuple[int, Any]]) -> Score:
    numbers = [v.value for _, v in sorted(values, key=lambda x: x[0])]
    if len(numbers) == 1:
        only = values[0][1]
        return Score(mean=numbers[0], n_seeds=1, ci_low=only.ci_low, ci_high=only.ci_high)
    return Score(mean=statistics.fmean(numbers), sd=statistics.stdev(numbers), n_seeds=len(numbers))


def relative_to_board(path: Path, base: Path) -> str:
    return os.path.relpath(path.resolve(), base.resolve())


def save(board: Leaderboard, path: Path) -> None:
    atomic_write_text(path, board.model_dump_json(indent=2) + "\n")


@dataclass(frozen=True)
class Saved:
    """What :func:`merge_and_save` left on disk."""

    board: Leaderboard  # the board as saved: the fresh rows over everything it held
    merged: bool  # the file held a readable board that the fresh rows were added to
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
        board = fresh if earlier is None else merge(earlier, fresh, path, replace_settings)
        sweep_stale_temporaries(path.parent, of=path.name)  # a save a kill cut short
        changed = save_if_changed(board, path)
    return Saved(board, earlier is not None, replaced, changed)


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


# -- rendering ---------------------------------------------------------------------------
