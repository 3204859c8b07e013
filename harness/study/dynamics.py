"""A dynamics table: each PE's metric against the tokens its runs had seen, over every
saved checkpoint of every pretraining seed (issue 46, part 2; DESIGN.md §12).

Whether a learned table "does not learn order" or "not yet" is a question about a budget:
Chen et al. (2023, §3) read locality and symmetry of the finished BERT-base models only,
so the curve is ours. The points are the study's ``[dynamics]`` evaluation stages (one
board per run and checkpoint) and its final evaluation (the last step); the MLM loss is
the training loss the run logged at that step (its ``loss_log.json``, kept in a study
folder without the weights). Seeds are aligned by tokens seen, not by step: runs that
saved at different steps (or with other batches) meet where their token counts agree,
and each row names the seeds it averages, each seed's value beside the mean.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Any

from posharness.boards.leaderboard import load
from posharness.study.dag import EVALUATE, Stage
from posharness.study.folder import StudyFolder
from posharness.study.stages import TrainingStage
from posharness.study.table_spec import StudyColumn, StudyTable
from posharness.study.tables import NO_MODE, NOT_RUN, Cell, ComputedTable, TableRow

SEEDS_NOTE = (
    "each cell: the mean over the pretraining seeds with a checkpoint at that token count, "
    "each seed's value in parentheses (seed order); the figure's band spans the seeds"
)


@dataclass(frozen=True)
class Checkpoint:
    """One point of a series: a run of a PE at one step."""

    label: str  # the PE's label (the model's, without its seed)
    seed: int
    step: int
    tokens: int
    boards: tuple[Path, ...]  # where its evaluation wrote (the final's boards: its own)
    loss: float | None  # training MLM loss logged at that step


@dataclass
class Series:
    """A column's curve per PE: (tokens, mean, lowest seed, highest seed)."""

    points: dict[str, list[tuple[int, float, float, float]]]
    flat: float | None = None  # the flat map's value on this column, where it has one


def checkpoints(
    stages: list[Stage], training: TrainingStage | None, folder: StudyFolder
) -> list[Checkpoint]:
    """Every (run, step) the study evaluated: its [dynamics] stages and its final stages
    (the run's last step)."""
    if training is None:
        return []
    boards: dict[tuple[str, int, int], set[Path]] = defaultdict(set)
    for stage in stages:
        if stage.kind != EVALUATE or stage.model is None or stage.seed is None:
            continue
        if not stage.model.pretrained_here:
            continue
        key = (stage.model.label, stage.seed)
        saved = training.checkpoint_steps(stage.model.pretrain)
        step = stage.step if stage.step is not None else (saved[-1] if saved else None)
        if step is not None:
            boards[(*key, step)].add(stage.evaluate["leaderboard"])
    found = []
    trajectories: dict[tuple[str, int], Any] = {}
    for (label, seed, step), where in boards.items():  # the study's order of models
        if (label, seed) not in trajectories:
            trajectories[(label, seed)] = training.trajectory(folder.pretrain_run(label, seed))
        tokens, loss = trajectories[(label, seed)].get(step, (None, None))
        if tokens is None:
            continue  # no loss log: its token count is unknown (said under the table)
        found.append(Checkpoint(label, seed, step, tokens, tuple(sorted(where)), loss))
    return found


def compute_dynamics(
    spec: StudyTable,
    stages: list[Stage],
    training: TrainingStage | None,
    folder: StudyFolder,
    caption_note: str,
    flat: float | None = None,
    modes: Mapping[str, frozenset[str] | None] | None = None,
) -> ComputedTable:
    """Rows per PE and token count, columns the spec's (a board metric in a mode, or the
    run's logged MLM loss), each cell the mean over seeds with each seed beside it."""
    points = checkpoints(stages, training, folder)
    header = ["PE", "tokens seen (step)", *(c.label for c in spec.columns)]
    values = _values(spec, points)
    rows: list[TableRow] = []
    series = {c.label: Series({}, flat if c.flat else None) for c in spec.columns}
    notes = [SEEDS_NOTE]
    labels = list(dict.fromkeys(p.label for p in points))
    for label in labels:
        mine = [p for p in points if p.label == label]
        grids = {
            seed: {p.tokens for p in mine if p.seed == seed} for seed in {p.seed for p in mine}
        }
        final_only = sorted(seed for seed, grid in grids.items() if len(grid) == 1)
        series_grids = {frozenset(g) for g in grids.values() if len(g) > 1}
        if final_only and len(final_only) < len(grids):
            read = ", ".join(f"s{seed}" for seed in final_only)
            notes.append(f"{label}: {read} read at the final model only (no checkpoints)")
        if len(series_grids) > 1:
            notes.append(
                f"{label}: its seeds saved checkpoints at different token counts; rows are "
                "aligned by tokens seen, each averaging the seeds that have that count"
            )
        for tokens in sorted({p.tokens for p in mine}):
            here = sorted((p for p in mine if p.tokens == tokens), key=lambda p: p.seed)
            steps = sorted({p.step for p in here})
            where = f"{tokens / 1e6:.2f}M ({'/'.join(map(str, steps))})"
            cells = []
            for column in spec.columns:
                seeds = [(p.seed, values.get((column.key, p))) for p in here]
                known = [v for _, v in seeds if v is not None]
                offered = (modes or {}).get(label)
                if not known and column.mode and offered is not None:
                    cells.append(Cell(NOT_RUN if column.mode in offered else NO_MODE))
                    continue
                if not known:
                    cells.append(Cell(NOT_RUN))
                    continue
                value = mean(known)
                each = ", ".join(
                    f"s{s} {v:.{spec.digits}f}" if v is not None else f"s{s} –" for s, v in seeds
                )
                text = f"{value:.{spec.digits}f}"
                if len(seeds) > 1 or len(grids) > 1:  # a PE of several seeds: name them
                    text += f" ({each})"
                cells.append(Cell(text, value))
                series[column.label].points.setdefault(label, []).append(
                    (tokens, value, min(known), max(known))
                )
            rows.append(TableRow(label, where, cells))
    if flat is not None:
        flagged = ", ".join(c.label for c in spec.columns if c.flat)
        notes.append(
            f"flat map (uniform attention over the probe): {flat:.{spec.digits}f} in {flagged}"
        )
    missing_tokens = {
        s.model.label for s in stages if s.kind == EVALUATE and s.model is not None
        and s.model.pretrained_here and s.model.label not in labels
    }  # fmt: skip
    if missing_tokens:
        notes.append(
            f"no series for {', '.join(sorted(missing_tokens))}: no evaluated checkpoint with "
            "a loss log (its token count) in the folder"
        )
    caption = " ".join(part for part in (spec.caption, caption_note) if part)
    table = ComputedTable(spec, header, rows, caption, notes)
    table.series = series
    return table


def _values(spec: StudyTable, points: list[Checkpoint]) -> dict[tuple[str, Checkpoint], float]:
    """Each (column, checkpoint)'s value in the column's unit."""
    boards: dict[Path, Any] = {}
    found: dict[tuple[str, Checkpoint], float] = {}
    for point in points:
        for column in spec.columns:
            value = _value(column, point, boards)
            if value is not None:
                found[(column.key, point)] = value
    return found


def _value(column: StudyColumn, point: Checkpoint, boards: dict[Path, Any]) -> float | None:
    if column.source == "loss_log":
        return point.loss * column.scale if point.loss is not None else None
    key = f"{column.task}/{column.metric}"
    for path in point.boards:
        if path not in boards:
            boards[path] = load(path) if path.is_file() else None
        board = boards[path]
        if board is None:
            continue
        for row in board.rows:
            if row.mode == (column.mode or "both") and key in row.scores:
                return row.scores[key].mean * column.scale
    return None
