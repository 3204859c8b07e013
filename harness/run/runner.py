"""A run: plan → skip finished cells → hand the rest to an executor → outcomes.

Planning (``plan.py``) gives each cell an identity; a result file whose ``cell_id``
matches is finished and is not run again unless ``overwrite``. Results are written last
and atomically (``cell.py``), so a run killed at any point leaves either a complete
result or none, and a rerun picks up exactly where it stopped. The pending cells go to an
executor: this process, one after another (``executors/serial.py``, the default), or Ray
tasks on a cluster (``executors/ray.py``).

Under a data-parallel launch (``accelerate launch``, ``torchrun``) the processes of the
launch are one run: each plans the grid, and every decision they must share — what is
finished, which locks are held, whether the board refuses the cells — is made by the main
process at the executor boundary (``launch.py``); every process computes every pending
cell with it, sharing its batches (docs/data_parallel.md).
"""

from __future__ import annotations

from collections.abc import Callable

from posharness.base.device import resolve_device
from posharness.base.distributed import launched, process_device
from posharness.base.errors import DistributedLaunchError
from posharness.run.cell import (  # noqa: F401  (also importable from here, as before)
    CellOutcome,
    Reporter,
    SilentReporter,
    execute,
    task_context,
)
from posharness.run.config import RunConfig
from posharness.run.executors import serial
from posharness.run.launch import agreed_finished, agreed_refusal, cache_for, join, sweep_on_main
from posharness.run.plan import Cell, plan
from posharness.storage.cache import run_cache_dir_set
from posharness.storage.hashing import remember_file_hashes_in


def run(
    config: RunConfig,
    reporter: Reporter | None = None,
    admit: Callable[[list[Cell]], None] | None = None,
) -> list[CellOutcome]:
    """Plan, skip finished cells, execute the rest. ``admit`` sees the planned cells
    before any runs and may refuse them (the API checks the target leaderboard there)."""
    reporter = reporter or SilentReporter()
    device = process_device(resolve_device(config.device))
    if launched() and config.executor == "ray":
        raise DistributedLaunchError(
            "--executor ray under accelerate launch/torchrun: Ray places whole cells itself; "
            "start `posharness run --executor ray` without the launcher, or drop --executor ray"
        )
    join(device)  # under a launch: the process group, through accelerate
    if config.cache_dir is not None:
        remember_file_hashes_in(config.cache_dir / "file-hashes")
    with run_cache_dir_set(config.cache_dir):  # probe sets built while planning go there too
        cells = plan(config, device, reporter.progress)
    sweep_on_main((config.output_dir, config.cache_dir))  # a SIGKILLed run's temporaries
    if admit is not None:
        refusal = agreed_refusal(admit, cells)
        if refusal is not None:
            raise refusal
    outcomes = []
    todo = []
    for cell in cells:
        done = None if config.overwrite else agreed_finished(cell)
        if done is not None:
            reporter.cell_skipped(cell)
            outcomes.append(CellOutcome(cell, done, skipped=True))
        else:
            todo.append(cell)
    announce = getattr(reporter, "run_estimate", None)
    if todo and announce is not None:  # before the first cell: how long the rest takes
        from posharness.run.estimate import borrowed_tasks, estimate

        announce(estimate(todo, config.data_dir, borrowed_tasks(dict(config.task_args))))
    if config.executor == "ray" and todo:
        return _run_on_ray(cells, todo, outcomes, config, reporter)
    cache = cache_for(config.cache_dir)
    outcomes += serial.run_cells(todo, config, device, cache, reporter)
    order = {id(c): i for i, c in enumerate(cells)}
    return sorted(outcomes, key=lambda o: order[id(o.cell)])


def _run_on_ray(
    cells: list[Cell],
    todo: list[Cell],
    outcomes: list[CellOutcome],
    config: RunConfig,
    reporter: Reporter,
) -> list[CellOutcome]:
    """The pending cells as Ray tasks (``run/executors/ray.py``). The driver holds no
    cell lock: each worker's ``execute`` takes its cell's. Failed cells are raised as one
    :class:`CellsFailed` carrying the finished outcomes, which still reach the board."""
    from posharness.base.errors import CellsFailed
    from posharness.run.executors import ray as ray_executor
    from posharness.run.plan import ray_settings

    settings = ray_settings(config)
    ray_executor.connect(settings)
    try:
        finished, failures = ray_executor.run_cells(todo, config, settings, reporter)
    finally:
        ray_executor.shutdown()
    outcomes = outcomes + [CellOutcome(cell, result, skipped=False) for cell, result in finished]
    order = {id(c): i for i, c in enumerate(cells)}
    outcomes.sort(key=lambda o: order[id(o.cell)])
    if failures:
        raise CellsFailed([f"{f.cell.label}: {f.error}" for f in failures], outcomes)
    return outcomes
