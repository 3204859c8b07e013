"""Study tables: the papers' tables with our models as rows, read from the study's boards,
the published rows beside them, and a paired test of every PE against each baseline.

A cell never shows a blank or a zero for something not measured: a task whose data is
missing reads "data missing" (its fix in a note), a stage that did not finish reads "not
run". The tests are the ``compare`` machinery's (``boards.compare``): the statistic the
board prints, tested on per-example outputs (McNemar, sign-flip permutation or a paired
bootstrap of the aggregate), Holm-adjusted over every test of one table. A table shows a
column scaled to the paper's unit (×100); scaling does not change a test.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from posharness.boards.compare import (
    RowFilter,
    adjust_comparisons,
    compare_metrics,
    pair_rows,
)
from posharness.boards.leaderboard import Leaderboard, Row, load
from posharness.run.flags import FLAG_MARK, FLAG_NOTE
from posharness.study.table_spec import StudyColumn, StudyTable
from posharness.study.table_types import (
    ALPHA,
    MISSING,
    NO_MODE,
    NOT_IN_STUDY,
    NOT_REPORTED,
    NOT_RUN,
    UNDEFINED,
    Cell,
    ComputedTable,
    ModelRow,
    TableRow,
    TestLine,
)

__all__ = [
    "ALPHA",
    "MISSING",
    "NOT_IN_STUDY",
    "NOT_REPORTED",
    "NOT_RUN",
    "NO_MODE",
    "UNDEFINED",
    "Cell",
    "ComputedTable",
    "ModelRow",
    "TableRow",
    "TestLine",
    "compute_table",
    "main_metric",
]


def compute_table(
    spec: StudyTable,
    models: list[ModelRow],
    missing: dict[str, list[str]],
    scale_note: str,
    tasks: frozenset[str] = frozenset(),
    modes: frozenset[str] = frozenset(),
    task_modes: frozenset[tuple[str, str]] = frozenset(),
) -> ComputedTable:
    """``tasks`` and ``modes``: the study's (empty: all count as in the study). A table's
    row modes the study did not run are left out; a column fixed to such a mode reads
    "not in study". ``task_modes``: the (task, mode) pairs its stages ran (empty: every
    pair of ``tasks`` and ``modes``), so a task the study read in mode ``both`` only reads
    "not in study", not "not run", in a row of a mode other tasks were read in."""
    boards = {m.label: _load(m.board) for m in models}
    header = ["model", "mode", *(c.label for c in spec.columns)]
    if spec.average:
        header.append(spec.average)
    rows: list[TableRow] = []
    row_modes = [m for m in spec.modes if not modes or m in modes] or list(spec.modes[:1])
    for model in models:
        for mode in row_modes:
            cells = [
                Cell(NO_MODE)
                if model.modes is not None and (col.mode or mode) not in model.modes
                else _cell(
                    boards[model.label],
                    col,
                    col.mode or mode,
                    missing,
                    spec,
                    tasks,
                    modes,
                    task_modes,
                )
                for col in spec.columns
            ]
            rows.append(TableRow(model.label, mode, cells + _average(spec, cells)))
    tests = _tests(spec, models, boards, rows)
    _mark(rows, tests, spec)
    rows, pe_tests, pe_notes = _pe_rows(spec, models, rows)
    for row in spec.published:
        cells = [_published(row.values.get(c.key), spec) for c in spec.columns]
        if spec.average:
            cells.append(_published(row.average, spec))
        rows.append(TableRow(row.model, row.mode, cells, published=True, note=row.note))
    notes = [f"{task}: {MISSING}: {problems[0]}" for task, problems in missing.items()
             if task in spec.tasks]  # fmt: skip
    tested = sum(line.comparison.test is not None for line in tests)
    if tested:
        notes.append(
            "▲/▼ on a model's row: within one model: above/below a baseline model in a "
            "paired test of the printed statistic over that model's examples (probe words, "
            f"test pairs), Holm-adjusted over this table's {tested} within-model tests, "
            f"p < {ALPHA}; it is a claim about these two trained models, not their PEs"
        )
    notes.extend(pe_notes)
    flagged = {
        f"{FLAG_MARK} {row.label} ({row.mode}), {column.task}: {cell.flags[0]}": None
        for row in rows
        for cell, column in zip(row.cells, spec.columns, strict=False)
        if cell.flags
    }
    if flagged:
        notes.append(f"{FLAG_NOTE}: {len(flagged)} cell(s)")
        notes.extend(list(flagged)[:8])
    notes.extend(_undefined_notes(spec, rows))
    if any(cell.text == NO_MODE for row in rows for cell in row.cells):
        notes.append(f"{NO_MODE}: the model has no such attention mode (nope: no positional term)")
    source = spec.source
    published = (
        f"Published rows: {source.paper}, {source.table}, {source.page} ({source.scale})."
        if spec.published
        else ""
    )
    caption = " ".join(part for part in (spec.caption, scale_note, published) if part)
    return ComputedTable(spec, header, rows, caption, notes, tests, pe_tests)


def _pe_rows(
    spec: StudyTable, models: list[ModelRow], rows: list[TableRow]
) -> tuple[list[TableRow], list[Any], list[str]]:
    """The rows with a "PE (mean of N seeds)" row after each PE's seed rows, the PE-level
    tests against each baseline PE over the seeds, and the table's notes on them."""
    from statistics import mean

    from posharness.study.seed_level import MIN_SEEDS, PELine, adjust_lines, pe_test

    seeds: dict[str, list[str]] = {}
    for model in models:
        if model.pe and model.seed is not None:
            seeds.setdefault(model.pe, []).append(model.label)
    if not seeds:
        return rows, [], []
    width = len(spec.columns)
    values: dict[tuple[str, str, int], dict[str, float]] = {}
    out: list[TableRow] = []
    for position, row in enumerate(rows):
        out.append(row)
        pe = next((p for p, labels in seeds.items() if row.label in labels), None)
        if pe is None:
            continue
        for index, cell in enumerate(row.cells[:width]):
            if cell.value is not None:
                values.setdefault((pe, row.mode, index), {})[row.label] = cell.value
        after = rows[position + 1] if position + 1 < len(rows) else None
        if len(seeds[pe]) < 2 or (after is not None and after.label in seeds[pe]):
            continue  # the PE's rows go on: its mean rows follow its last seed's rows
        for mode in dict.fromkeys(r.mode for r in rows if r.label in seeds[pe]):
            mine = [r for r in rows if r.label in seeds[pe] and r.mode == mode]
            cells = []
            for index in range(len(mine[0].cells)):
                known = [r.cells[index].value for r in mine if r.cells[index].value is not None]
                if not known:
                    cells.append(Cell(mine[0].cells[index].text))
                elif len(known) < len(mine):
                    cells.append(Cell(f"{mean(known):.{spec.digits}f} ({len(known)} seeds)"))
                else:
                    cells.append(Cell(f"{mean(known):.{spec.digits}f}", mean(known)))
            label = f"{pe} (mean of {len(mine)} seeds)"
            out.append(TableRow(label, mode, cells, seeds=len(mine)))
    baselines = {m.pe for m in models if m.baseline and m.pe}
    lines: list[PELine] = []
    seen: set[tuple[str, str, int, str]] = set()
    for baseline in sorted(baselines):
        for pe in (p for p in seeds if p != baseline):
            for (who, mode, index), b in values.items():
                column = spec.columns[index]
                key = (pe, baseline, index, column.mode or mode)
                a = values.get((baseline, mode, index))
                if who != pe or a is None or key in seen:
                    continue
                seen.add(key)
                delta = mean(b.values()) - mean(a.values())
                test, reason = pe_test(a, b, delta)
                lines.append(PELine(pe, mode, column.label, baseline, delta, test, reason))
    adjust_lines(lines)
    tested = [line for line in lines if line.test is not None]
    for line in tested:
        if line.test.p_adjusted is None or line.test.p_adjusted >= ALPHA:
            continue
        index = [c.label for c in spec.columns].index(line.column)
        for row in out:
            mine = row.seeds and row.label.startswith(f"{line.pe} (") and row.mode == line.mode
            if mine and row.cells[index].value is not None:
                row.cells[index].mark = "▲" if line.delta > 0 else "▼"
    counts = ", ".join(f"{pe} {len(labels)}" for pe, labels in seeds.items())
    notes = [
        f"a PE's '(mean of N seeds)' row: the mean over its pretraining seeds' rows above "
        f"it, each seed's value in its own row ({counts} seeds)"
    ]
    if tested:
        notes.append(
            f"▲/▼ on a PE's mean row: PE against baseline PE over pretraining seeds (each "
            f"seed one value), Holm-adjusted over this table's {len(tested)} PE-level tests, "
            f"p < {ALPHA}; fewer than {MIN_SEEDS} seeds a side: no test, reason listed"
        )
    elif lines:
        notes.append(
            f"no ▲/▼ between PEs: a PE-level test needs at least {MIN_SEEDS} pretraining "
            f"seeds a side ({counts}); the ▲/▼ shown are within one model"
        )
        lines = []
    return out, lines, notes


def _undefined_notes(spec: StudyTable, rows: list[TableRow]) -> list[str]:
    """One line per column with an n/a cell: which task ran without recording which metric,
    and, where the column says so, how a run records it (an option, a newer task version)."""
    notes = []
    for index, column in enumerate(spec.columns):
        if not any(
            index < len(row.cells) and row.cells[index].text == UNDEFINED
            for row in rows
            if not row.published
        ):
            continue
        metric = column.metric or main_metric(column.task)
        line = f"{UNDEFINED} in {column.label}: {column.task} ran but recorded no {metric}"
        notes.append(f"{line}: {column.needs}" if column.needs else line)
    return notes


@functools.cache
def main_metric(task: str) -> str:
    from posharness.api import get_task

    return get_task(task).spec.main_metric


def _load(path: Path) -> Leaderboard | None:
    return load(path) if path.is_file() else None


def _row(board: Leaderboard | None, mode: str, key: str) -> Row | None:
    """The board's row in ``mode`` that holds ``key`` (several [[run]] sections with other
    limits make several rows per mode), else any row in that mode, else None."""
    rows = [r for r in board.rows if r.mode == mode] if board is not None else []
    return next((r for r in rows if key in r.scores), rows[0] if rows else None)


def _key(column: StudyColumn) -> str:
    return f"{column.task}/{column.metric or main_metric(column.task)}"


def _cell(
    board: Leaderboard | None,
    column: StudyColumn,
    mode: str,
    missing: dict[str, list[str]],
    spec: StudyTable,
    tasks: frozenset[str],
    modes: frozenset[str],
    task_modes: frozenset[tuple[str, str]] = frozenset(),
) -> Cell:
    if column.task in missing:
        return Cell(MISSING)
    if tasks and column.task not in tasks or column.mode and modes and column.mode not in modes:
        return Cell(NOT_IN_STUDY)
    if task_modes and (column.task, mode) not in task_modes:
        return Cell(NOT_IN_STUDY)
    row = _row(board, mode, _key(column))
    score = row.scores.get(_key(column)) if row is not None else None
    if score is None:
        ran = row is not None and any(k.startswith(f"{column.task}/") for k in row.scores)
        return Cell(UNDEFINED if ran else NOT_RUN)
    value = score.mean * column.scale
    flags = tuple(row.flags.get(column.task, ())) if row is not None else ()
    return Cell(f"{value:.{spec.digits}f}", value, flags=flags)


def _average(spec: StudyTable, cells: list[Cell]) -> list[Cell]:
    if not spec.average:
        return []
    kept = [c for c, col in zip(cells, spec.columns, strict=True) if col.in_average]
    if any(c.value is None for c in kept):
        return [Cell("incomplete")]
    value = sum(c.value for c in kept if c.value is not None) / len(kept)
    return [Cell(f"{value:.{spec.digits}f}", value)]


def _published(value: float | None, spec: StudyTable) -> Cell:
    if value is None:
        return Cell(NOT_REPORTED)
    return Cell(f"{value:.{spec.digits}f}", value)


def _holds_value(rows: list[TableRow], label: str, index: int, mode: str, fixed: bool) -> bool:
    """Whether the table shows a value for ``label``'s cell in column ``index`` and
    ``mode``: a cell reading "data missing", "not run", "not in study" or "n/a" holds
    none, and no test is computed from the board rows behind it (issue 40, part 2)."""
    return any(
        row.label == label
        and not row.published
        and (fixed or row.mode == mode)
        and index < len(row.cells)
        and row.cells[index].value is not None
        for row in rows
    )


def _tests(
    spec: StudyTable, models: list[ModelRow], boards: dict, rows: list[TableRow]
) -> list[TestLine]:
    """Every PE against each baseline, per mode and column, Holm-adjusted together; only
    between cells the table shows a value for."""
    lines: list[TestLine] = []
    for baseline in (m for m in models if m.baseline):
        for model in (m for m in models if m.label != baseline.label):
            left, right = boards[model.label], boards[baseline.label]
            if left is None or right is None:
                continue
            outputs = _PairedOutputs(model, baseline)
            for index, column in enumerate(spec.columns):
                for mode in (column.mode,) if column.mode else spec.modes:
                    fixed = bool(column.mode)
                    if not (
                        _holds_value(rows, model.label, index, mode, fixed)
                        and _holds_value(rows, baseline.label, index, mode, fixed)
                    ):
                        continue
                    key = _key(column)
                    pairs = [
                        (a, b)
                        for a, b in pair_rows(left, right, RowFilter(modes=(mode,)))
                        if key in a.scores and key in b.scores
                    ]
                    if not pairs:
                        continue
                    a, b = pairs[0]
                    (comparison,) = compare_metrics([key], a, b, *outputs.of(a, b))
                    lines.append(
                        TestLine(model.label, mode, column.label, baseline.label, comparison)
                    )
    adjust_comparisons([line.comparison for line in lines])
    return lines


class _PairedOutputs:
    """Per-example outputs of a pair of board rows, read from their files once for every
    column the rows share (a table tests many columns of the same two rows)."""

    def __init__(self, model: ModelRow, baseline: ModelRow) -> None:
        self.model, self.baseline = model, baseline
        self.read: dict[tuple[int, int], tuple[Any, Any]] = {}

    def of(self, a: Row, b: Row) -> tuple[Any, Any]:
        from posharness.boards.cell_outputs import row_outputs_from_files

        key = (id(a), id(b))
        if key not in self.read:
            lost: list[str] = []
            self.read[key] = (
                row_outputs_from_files(a, self.model.board, lost, [], self._study(self.model)),
                row_outputs_from_files(
                    b, self.baseline.board, lost, [], self._study(self.baseline)
                ),
            )
        return self.read[key]

    @staticmethod
    def _study(row: ModelRow) -> Path:
        """The study folder: its boards/ names the cells of results/ by their not-shipped
        key (``results/results/<model folder>/…``), since results/ is not beneath boards/."""
        return row.board.parent.parent


def _mark(rows: list[TableRow], tests: list[TestLine], spec: StudyTable) -> None:
    labels = [c.label for c in spec.columns]
    for line in tests:
        test = line.comparison.test
        if test is None or test.p_adjusted is None or test.p_adjusted >= ALPHA:
            continue
        index = labels.index(line.column)
        fixed = spec.columns[index].mode
        delta = (line.comparison.a or 0.0) - (line.comparison.b or 0.0)
        for row in rows:
            shown = row.cells[index].value is not None  # a cell without a value: no mark
            mine = row.label == line.model and (fixed or row.mode) == line.mode
            if shown and mine and not row.published:
                row.cells[index].mark = "▲" if delta > 0 else "▼"
