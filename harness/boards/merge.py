"""Merging a run's fresh rows into a board, and the options check that refuses a task
under two sets of options in one row (also run at admission, before any compute).

A result file belongs to one row. Its name (``CellKey.file_name`` in the model's results
folder) holds everything that keeps two cells apart — the model spec and its
``--model-arg`` values, task, mode, seed, limits, dtype, device, corpus — except the
model's code and weights, which only the fingerprint holds. So a rerun after an edit of a
plugin PE (or a retrained checkpoint under the same spec) writes its cells over the
earlier ones' files, under a new fingerprint and so a new row key. The earlier row would
then name files that hold another model: the report refuses such a board, and the row's
numbers could no longer be traced to anything on disk. The merge therefore treats an
earlier row that names a result file a fresh row names, under another row key, as
*superseded*: it is dropped from the board and the summary names it (with the tasks it
held that the rerun did not repeat), while every file stays on disk — those the rerun
did not write over still hold the earlier cells, and ``leaderboard build`` on the folder
shows them again.

Why the file and not the row's label: the label (model spec, mode, row settings) does not
say everything a fingerprint separates (a bfloat16 and a float32 run of one model share
a label and are both valid rows, in files of their own), so two rows with one label are
not in themselves wrong; two rows naming one file always are.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from posharness.base.errors import SettingsConflictError
from posharness.boards.schema import Column, Leaderboard, Row, Score, results_note_of, sorted_rows
from posharness.contracts.cell_key import RowKey, task_of_file
from posharness.contracts.results import portable_options


@dataclass(frozen=True)
class MergeSummary:
    """What a merge did to the rows a board held, so a run can say it truthfully."""

    added: int = 0  # rows the board did not hold (other model, mode or settings)
    joined: int = 0  # rows that gained a task they did not hold
    replaced: tuple[str, ...] = ()  # "row label: task" whose earlier scores were replaced
    unchanged: int = 0  # rows whose tasks were rerun to the same scores
    kept: int = 0  # rows this run did not touch
    # rows dropped because the run wrote over their result files under another row key
    # (an edited PE's code, a retrained checkpoint): what happened to each, in words
    superseded: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        """True: the fresh rows went into a board that already held rows."""
        return True

    def text(self) -> str:
        """``2 rows added, scores of locality_symmetry replaced in 1 row …``."""
        parts = []
        if self.added:
            parts.append(f"{_count(self.added, 'row')} added")
        if self.joined:
            parts.append(f"{_count(self.joined, 'row')} gained a task")
        if self.replaced:
            parts.append(f"earlier scores replaced for {'; '.join(self.replaced)}")
        if self.unchanged:
            parts.append(f"{_count(self.unchanged, 'row')} rerun to the same scores")
        if self.superseded:
            parts.append(
                f"{_count(len(self.superseded), 'earlier row')} dropped, superseded by this "
                f"run (their result files now hold its cells): {'; '.join(self.superseded)}"
            )
        if self.kept:
            parts.append(f"{_count(self.kept, 'other row')} kept")
        return ", ".join(parts) or "nothing changed"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def merge(
    earlier: Leaderboard,
    fresh: Leaderboard,
    where: Path | None = None,
    replace_settings: bool = False,
) -> Leaderboard:
    """``fresh`` written over ``earlier`` (see :func:`merge_with_summary`)."""
    return merge_with_summary(earlier, fresh, where, replace_settings)[0]


def merge_with_summary(
    earlier: Leaderboard,
    fresh: Leaderboard,
    where: Path | None = None,
    replace_settings: bool = False,
) -> tuple[Leaderboard, MergeSummary]:
    """``fresh`` written over ``earlier``: a run adds to a leaderboard instead of replacing it.

    A fresh row is added beside the earlier ones unless one has its key — the same model
    fingerprint, mode and every row setting (``row_settings.ROW_SETTINGS``: limits,
    attention path, device, split and reference corpus) — so a row of other settings is
    never replaced. Within a matching row, every task the fresh row holds replaces that
    task's earlier scores; tasks and result paths it did not compute are kept as they
    were, so running one task more never wipes the others (a committed leaderboard whose
    result files are not at hand included). A task rerun with other options than the row
    holds is refused, naming both, unless ``replace_settings`` (``--overwrite``) asks for
    the new options to replace them. An earlier row of another key that names a result
    file a fresh row names is superseded and dropped (the module docstring says why). The
    summary says which of these happened.
    """
    superseded = _superseded(earlier, fresh)
    rows = {row.key: row for row in earlier.rows if row.key not in superseded}
    added = joined = unchanged = 0
    replaced: list[str] = []
    for row in fresh.rows:
        old = rows.get(row.key)
        if old is None:
            rows[row.key] = row
            added += 1
            continue
        tasks = {key.split("/", 1)[0] for key in row.scores}
        if not replace_settings:
            _check_same_options(old, row, tasks, where)
        held = {key.split("/", 1)[0] for key in old.scores} & tasks
        changed = sorted(t for t in held if _task_scores(old, t) != _task_scores(row, t))
        replaced += [f"{row.model} ({row.mode}): {task}" for task in changed]
        joined += bool(tasks - held)
        unchanged += not changed and not (tasks - held)
        kept = {k: v for k, v in old.scores.items() if k.split("/", 1)[0] not in tasks}
        # the earlier result paths of the tasks rerun go; their files may not be at hand
        paths = [p for p in old.results if task_of_file(p) not in tasks]
        options = {
            task: values
            for task, values in old.settings.get("options", {}).items()
            if task not in tasks
        } | row.settings.get("options", {})
        settings = {k: v for k, v in row.settings.items() if k != "options"}
        flags = {t: f for t, f in old.flags.items() if t not in tasks} | row.flags
        versions = {t: v for t, v in old.task_versions.items() if t not in tasks}
        rows[row.key] = row.model_copy(
            update={
                "scores": kept | row.scores,
                "results": sorted(set(paths) | set(row.results)),
                "settings": settings | ({"options": options} if options else {}),
                "flags": flags,
                "task_versions": versions | row.task_versions,
            }
        )
    fresh_tasks = {c.task for c in fresh.columns}
    columns = fresh.columns + [c for c in earlier.columns if c.task not in fresh_tasks]
    merged = list(rows.values())
    board = fresh.model_copy(
        update={
            "name": earlier.name,  # the board's display name, not the run's (e.g. "smoke test")
            "columns": _stable_by_task(columns),
            "rows": sorted_rows(merged),
            "results_note": results_note_of(merged),
        }
    )
    touched = len({row.key for row in fresh.rows})
    summary = MergeSummary(
        added,
        joined,
        tuple(replaced),
        unchanged,
        kept=len(earlier.rows) - len(superseded) - (touched - added),
        superseded=tuple(superseded.values()),
    )
    return board, summary


def _superseded(earlier: Leaderboard, fresh: Leaderboard) -> dict[RowKey, str]:
    """The earlier rows a fresh row of another key took result files from, each with a
    line for the merge summary: which row, by which, and its tasks not rerun."""
    writer = {path: row for row in fresh.rows for path in row.results}
    fresh_keys = {row.key for row in fresh.rows}
    found: dict[RowKey, str] = {}
    for old in earlier.rows:
        if old.key in fresh_keys:
            continue  # the same row: merged below, its files are its own
        newer = next((writer[path] for path in old.results if path in writer), None)
        if newer is None:
            continue
        found[old.key] = _superseded_line(old, newer)
    return found


def _superseded_line(old: Row, newer: Row) -> str:
    """``fire (both) pe-7b67…: rerun as pe-ddae… (its code or weights changed), toeplitz
    not rerun (run it again)``: no square brackets, which a console reads as markup."""
    if old.fingerprint != newer.fingerprint:
        change = f"rerun as {newer.fingerprint} (its code or weights changed)"
    else:
        change = f"rerun as {newer.key.label(newer.exact, newer.definition)}"
    line = f"{old.model} ({old.key.label(old.exact, old.definition)}) {old.fingerprint}: {change}"
    left = sorted(_tasks(old) - _tasks(newer))
    if left:
        line += f", {', '.join(left)} not rerun (run {'them' if len(left) > 1 else 'it'} again)"
    return line


def _tasks(row: Row) -> set[str]:
    return {key.split("/", 1)[0] for key in row.scores}


def _task_scores(row: Row, task: str) -> dict[str, Score]:
    return {k: v for k, v in row.scores.items() if k.split("/", 1)[0] == task}


def _check_same_options(old: Row, fresh: Row, tasks: set[str], where: Path | None) -> None:
    for task in sorted(tasks):
        check_task_options(old, task, fresh.settings.get("options", {}).get(task, {}), where)


def check_task_options(
    row: Row, task: str, options: dict[str, Any], where: Path | None = None
) -> None:
    """Refuse to put ``task`` under ``options`` in a row that holds it under others.

    ``options`` may be as the user typed them (admission, before any compute): a data
    file is compared by the portable name and hash results record, not by its path."""
    options = portable_options(options)
    before = row.settings.get("options", {}).get(task, {})
    held = any(k.startswith(f"{task}/") for k in row.scores)
    if row.settings_known and held and _named(before) != _named(options):
        board = f"leaderboard {where}" if where else "the leaderboard"
        raise SettingsConflictError(
            f"{board} holds {task} for {row.model} ({row.mode}) with options "
            f"{_options_text(before)}; this run uses {_options_text(options)}: pass another "
            "--leaderboard, or rebuild the board from one setting's results"
        )


_CONTENT_HASH = re.compile(r" \(sha256 [0-9a-f]{12}\)$")


def _named(options: dict[str, Any]) -> dict[str, Any]:
    """Options with data files by name only: an edited file under the same name is new data
    for the same setting (its hash is in the cell identity, so the cell is recomputed and
    the merge replaces, and says it replaced, the earlier scores), not another setting."""
    return {k: _CONTENT_HASH.sub("", v) if isinstance(v, str) else v for k, v in options.items()}


def _options_text(options: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(options.items())) or "the defaults"


def _stable_by_task(columns: list[Column]) -> list[Column]:
    """Tasks in name order, as ``build`` sorts them; each task's metrics keep their order."""
    by_task: dict[str, list[Column]] = defaultdict(list)
    for column in columns:
        by_task[column.task].append(column)
    return [column for task in sorted(by_task) for column in by_task[task]]
