"""Views across cells: one (model, task, seed) in every mode, or a whole group of tasks.

A task opts in by implementing :class:`posharness.contracts.task.SummarizesModes` (one table with
a column per mode) or :class:`posharness.contracts.task.SummarizesGroup` (a view across the tasks
of a group, the word-swap probes' Table 3). The runner's results are grouped here and
handed over after a run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from posharness.contracts.task import SummarizesGroup, SummarizesModes

if TYPE_CHECKING:
    from posharness.run.cell import CellOutcome


def summarize(
    outcomes: list[CellOutcome],
    progress: Callable[[str, int], Callable[[int], None]] | None = None,
) -> list[Path]:
    """Cross-mode views of tasks that offer one, one folder per (model, task, seed), then
    the group views; ``progress(label, total)`` shows the figures being drawn.

    Written next to the cells (``<task>__seed<N>__summary/``) from their result files, so
    rerunning a finished grid rebuilds the same summaries without encoding anything.
    """
    jobs = _mode_views(outcomes) + _group_views(outcomes)
    advance = progress("writing summaries and figures", len(jobs)) if progress and jobs else None
    written: list[Path] = []
    for job in jobs:
        written.extend(job())
        if advance:
            advance(1)
    return written


def _mode_views(outcomes: list[CellOutcome]) -> list[Callable[[], list[Path]]]:
    groups: dict[tuple[str, str, int], list[CellOutcome]] = {}
    for outcome in outcomes:
        cell = outcome.cell
        groups.setdefault((str(cell.path.parent), cell.task.spec.name, cell.seed), []).append(
            outcome
        )
    jobs: list[Callable[[], list[Path]]] = []
    for (folder, name, seed), members in groups.items():
        task = members[0].cell.task
        if isinstance(task, SummarizesModes):
            target = Path(folder) / f"{name}__seed{seed}__summary"
            results = [m.result for m in members]
            jobs.append(functools.partial(task.summarize, results, target))
    return jobs


def _group_views(outcomes: list[CellOutcome]) -> list[Callable[[], list[Path]]]:
    """One view per (model, task group, seed), over every mode of every member task."""
    groups: dict[tuple[str, str, int], list[CellOutcome]] = {}
    for outcome in outcomes:
        cell = outcome.cell
        if isinstance(cell.task, SummarizesGroup):
            key = (str(cell.path.parent), cell.task.summary_group, cell.seed)
            groups.setdefault(key, []).append(outcome)
    jobs: list[Callable[[], list[Path]]] = []
    for (folder, group, seed), members in groups.items():
        task = members[0].cell.task
        assert isinstance(task, SummarizesGroup)
        target = Path(folder) / f"{group}__seed{seed}__summary"
        jobs.append(functools.partial(task.summarize_group, [m.result for m in members], target))
    return jobs
