"""How long a run will take, said before its first cell (issue 45, part 3).

``posharness run --model tupe-r --tasks glue,shuffle_sr`` plans ten cells whose cost
ranges from seconds (a word-swap probe scored with a trained classifier) to hours (MNLI's
393k training pairs), and said nothing about it before it started. The estimate is a
deliberately simple model, documented here and in docs/running.md:

* a fine-tune cell costs ``TRAIN_SECONDS_PER_EXAMPLE`` per training example and epoch
  over every run of its protocol, plus ``EVAL_SECONDS_PER_EXAMPLE`` per example scored;
  the task counts them from the splits planning already read (``planned_examples``);
* a task that borrows a fine-tune task's options (the word-swap probes train the
  ``snli`` classifier) adds that training once per (model, mode, seed), unless the run
  holds the fine-tune cell itself, and scores its pairs (both sentences of each) at the
  evaluation rate;
* every other kind costs ``CELL_SECONDS[kind]`` a cell, in proportion to ``--limit``
  where the kind's usual example count is known (``CELL_EXAMPLES``);
* a kind with no stored rate is named as not estimated, never guessed.

The rates were measured with MiniLM on 2 CPU cores at the load ``CELL_LOAD`` states
(``posharness.base.timings``, the one table of quoted times); a smaller model runs
faster, a bigger one or idle cores change it in proportion. Pretraining is not part of a
run and not counted. Finished cells are left out before this is called.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from posharness.base.progress_lines import duration
from posharness.base.timings import (
    CELL_EXAMPLES,
    CELL_LOAD,
    CELL_SECONDS,
    EVAL_SECONDS_PER_EXAMPLE,
    TRAIN_SECONDS_PER_EXAMPLE,
)

# The hook a task offers to be estimated by its data: (options, data_dir, seed, limit,
# train_limit) -> (training examples x epochs over its runs, examples scored).
HOOK = "planned_examples"


@dataclass
class RunEstimate:
    """Seconds for the cells that could be estimated, and the kinds that could not."""

    seconds: float = 0.0
    cells: Counter[str] = field(default_factory=Counter)  # estimated cells per task kind
    unestimated: Counter[str] = field(default_factory=Counter)  # cells per kind, no rate

    def text(self) -> str:
        """``estimate: about 3 min for 6 cells (6 attention-geometry), from rates measured
        with MiniLM on 2 CPU cores at load 4–12 (…); pretraining aside``."""
        counted = sum(self.cells.values())
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(self.cells.items()))
        head = (
            f"estimate: about {duration(self.seconds)} for {counted} cell(s) ({kinds}), "
            f"from rates measured with MiniLM on 2 CPU cores {CELL_LOAD}; pretraining aside"
            if counted
            else "estimate: none"
        )
        if self.unestimated:
            missing = ", ".join(f"{n} {kind}" for kind, n in sorted(self.unestimated.items()))
            head += f"; not estimated (no measured rate): {missing}"
        return head


def estimate(
    cells: Sequence[Any],
    data_dir: Path | None,
    task_options: Callable[[str], tuple[Any, dict[str, Any]] | None] | None = None,
) -> RunEstimate:
    """The estimate of ``cells`` (``plan.Cell``s still to run). ``task_options(name)``
    gives a borrowed fine-tune task and its resolved options (the word-swap probes'
    ``snli`` classifier); without it borrowed training is not counted."""
    found = RunEstimate()
    own = {(c.task.spec.name, str(c.spec.text), str(c.mode), c.seed) for c in cells}
    trained: set[tuple[str, str, str, int]] = set()
    for cell in cells:
        seconds = _cell_seconds(cell, data_dir)
        for source in cell.task.spec.borrows:
            key = (source, str(cell.spec.text), str(cell.mode), cell.seed)
            if key in own or key in trained or task_options is None:
                continue
            borrowed = task_options(source)
            if borrowed is None or not hasattr(borrowed[0], HOOK):
                continue
            trained.add(key)
            train, _ = getattr(borrowed[0], HOOK)(
                borrowed[1], data_dir, cell.seed, None, cell.train_limit
            )
            seconds = (seconds or 0.0) + train * TRAIN_SECONDS_PER_EXAMPLE
        if seconds is None:
            found.unestimated[cell.task.spec.kind] += 1
            continue
        found.seconds += seconds
        found.cells[cell.task.spec.kind] += 1
    return found


def borrowed_tasks(task_args: dict[str, dict[str, str]]) -> Callable[[str], Any]:
    """``task_options`` for :func:`estimate`: a task by name with the options this run's
    ``--task-arg``s give it (the word-swap probes' ``snli.*`` reach their classifier)."""
    from posharness.contracts.task import resolve_options
    from posharness.plugins import tasks as task_registry
    from posharness.run.task_checks import task_args_for

    def find(name: str) -> tuple[Any, dict[str, Any]] | None:
        try:
            task = task_registry.get(name)()
            return task, resolve_options(task.spec, task_args_for(task, task_args))
        except Exception:  # noqa: BLE001 - an estimate never stops a run that planned
            return None

    return find


def _cell_seconds(cell: Any, data_dir: Path | None) -> float | None:
    """One cell's own work (without a borrowed classifier), or None without a rate."""
    hook = getattr(cell.task, HOOK, None)
    if hook is not None:
        train, scored = hook(cell.options, data_dir, cell.seed, cell.limit, cell.train_limit)
        return train * TRAIN_SECONDS_PER_EXAMPLE + scored * EVAL_SECONDS_PER_EXAMPLE
    kind = cell.task.spec.kind
    seconds = CELL_SECONDS.get(kind)
    if seconds is None:
        return None
    usual = CELL_EXAMPLES.get(kind)
    if usual and cell.limit:
        seconds *= min(1.0, cell.limit / usual)
    return seconds
