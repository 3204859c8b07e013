"""The default executor: a run's pending cells one after another in this process (and,
under a data-parallel launch, in every process of it together).

Several runs may share one results folder: a cell is computed while its run holds the
cell's lock, and the finished check is repeated under the lock, so of two runs given the
same cell one computes it and the other reads its result. A run first takes the cells
nobody holds and only then waits for the ones another run was computing.
"""

from __future__ import annotations

from dataclasses import dataclass

from posharness.run.cell import CellOutcome, Reporter, compute
from posharness.run.config import RunConfig
from posharness.run.launch import agreed_finished, agreed_lock
from posharness.run.plan import Cell
from posharness.storage.cache import FeatureCache


@dataclass
class _Counter:
    """Numbers the cells this run starts, for the reporter's ``index / total``."""

    total: int
    count: int = 0

    def next(self) -> int:
        self.count += 1
        return self.count


def run_cells(
    todo: list[Cell], config: RunConfig, device: str, cache: FeatureCache, reporter: Reporter
) -> list[CellOutcome]:
    """The outcomes of ``todo``, in the order they finished."""
    started = _Counter(len(todo))
    outcomes = []
    busy = []  # cells another process was computing when this one came to them
    for cell in todo:
        with agreed_lock(cell, wait=False) as held:
            if held:
                outcomes.append(_run_held(cell, config, device, cache, reporter, started))
            else:
                busy.append(cell)
    for cell in busy:
        with agreed_lock(cell, wait=True):
            outcomes.append(_run_held(cell, config, device, cache, reporter, started))
    return outcomes


def _run_held(
    cell: Cell,
    config: RunConfig,
    device: str,
    cache: FeatureCache,
    reporter: Reporter,
    started: _Counter,
) -> CellOutcome:
    """A cell whose lock this run holds: skipped if another run finished it meanwhile,
    computed and written otherwise."""
    done = None if config.overwrite else agreed_finished(cell)
    if done is not None:
        reporter.cell_skipped(cell)
        return CellOutcome(cell, done, skipped=True)
    reporter.cell_started(cell, started.next(), started.total)
    result = compute(cell, config, device, cache, reporter)
    reporter.cell_finished(cell, result)
    return CellOutcome(cell, result, skipped=False)
