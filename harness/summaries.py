"""Views across cells: one (model, task, seed) in every mode, or a whole group of tasks.

A task opts in with a ``summarize(results, folder)`` method (one table with a column per
mode), or with a ``summary_group`` name and ``summarize_group(results, folder)`` for a
view across the tasks of that group (the word-swap probes' Table 3); see
``posharness.task.Task``. The runner's results are grouped here and handed over after a run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from posharness.runner import CellOutcome


def summarize(outcomes: list[CellOutcome]) -> list[Path]:
    """Cross-mode views of tasks that offer one, one folder per (model, task, seed).

    Written next to the cells (``<task>__seed<N>__summary/``) from their result files, so
    rerunning a finished grid rebuilds the same summaries without encoding anything.
    """
    groups: dict[tuple[str, str, int], list[CellOutcome]] = {}
    for outcome in outcomes:
        cell = outcome.cell
        groups.setdefault((str(cell.path.parent), cell.task.spec.name, cell.seed), []).append(
            outcome
        )
    written: list[Path] = []
    for (folder, name, seed), members in groups.items():
        hook = getattr(members[0].cell.task, "summarize", None)
        if hook is None:
            continue
        target = Path(folder) / f"{name}__seed{seed}__summary"
        written.extend(hook([m.result for m in members], target))
    return written + _summarize_groups(outcomes)


def _summarize_groups(outcomes: list[CellOutcome]) -> list[Path]:
    """One view per (model, task group, seed), over every mode of every member task."""
    groups: dict[tuple[str, str, int], list[CellOutcome]] = {}
    for outcome in outcomes:
        cell = outcome.cell
        group = getattr(cell.task, "summary_group", None)
        if group and hasattr(cell.task, "summarize_group"):
            groups.setdefault((str(cell.path.parent), group, cell.seed), []).append(outcome)
    written: list[Path] = []
    for (folder, group, seed), members in groups.items():
        target = Path(folder) / f"{group}__seed{seed}__summary"
        written.extend(members[0].cell.task.summarize_group([m.result for m in members], target))
    return written
