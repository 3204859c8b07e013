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
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from posharness.base.errors import DataError, PosharnessError, SchemaError, SettingsConflictError
from posharness.boards.row_settings import of_result, row_key, settings_of
from posharness.contracts.results import (
    CellResult,
    portable_options,
    read_json_file,
    read_result,
    read_versioned,
)
from posharness.storage.io import atomic_write_text, exclusive, sweep_stale_temporaries

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


NOT_SHIPPED = "results/"  # the prefix of keys that name result files kept elsewhere
NOT_SHIPPED_NOTE = (
    "result files named results/<output folder>/… are not shipped with this board: they "
    "lay outside its folder when it was built (report: --results DIR with the run's "
    "--output-dir; compare reads the per-example bundle NAME.examples.json.gz)"
)


class Row(BaseModel):
    model: str
    fingerprint: str
    mode: str
    exact: bool
    definition: str | None = None
    pe_family: str
    scores: dict[str, Score]  # column key → score
    results: list[str]  # result files, relative to the leaderboard file (relative_to_board)
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
    results_note: str | None = None  # NOT_SHIPPED_NOTE when rows name unshipped results


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
        results_note=results_note_of(rows),
    )


def results_note_of(rows: list[Row]) -> str | None:
    unshipped = any(path.startswith(NOT_SHIPPED) for row in rows for path in row.results)
    return NOT_SHIPPED_NOTE if unshipped else None


@dataclass(frozen=True)
class MergeSummary:
    """What a merge did to the rows a board held, so a run can say it truthfully."""

    added: int = 0  # rows the board did not hold (other model, mode or settings)
    joined: int = 0  # rows that gained a task they did not hold
    replaced: tuple[str, ...] = ()  # "row label: task" whose earlier scores were replaced
    unchanged: int = 0  # rows whose tasks were rerun to the same scores
    kept: int = 0  # rows this run did not touch

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
    the new options to replace them. The summary says which of these happened.
    """
    rows = {row.key: row for row in earlier.rows}
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
    merged = list(rows.values())
    board = fresh.model_copy(
        update={
            "name": earlier.name,  # the board's display name, not the run's (e.g. "smoke test")
            "columns": _stable_by_task(columns),
            "rows": _sorted_rows(merged),
            "results_note": results_note_of(merged),
        }
    )
    touched = len({row.key for row in fresh.rows})
    summary = MergeSummary(
        added, joined, tuple(replaced), unchanged, kept=len(earlier.rows) - (touched - added)
    )
    return board, summary


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


# -- rendering ---------------------------------------------------------------------------
