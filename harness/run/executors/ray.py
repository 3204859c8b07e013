"""The pending cells of a planned grid as Ray tasks (``posharness run --executor ray``).

The driver plans the grid exactly as a serial run does (so cell keys — ids, result paths
— and the skip of finished cells are the same), then submits each pending cell as a Ray
task with ``--cpus-per-cell`` / ``--gpus-per-cell``. A worker re-plans its one cell from
the run's configuration (models are not shipped between processes), checks that it
arrives at the same cell key, runs it with the one per-cell ``execute``
(``run/cell.py``) and writes the result where the serial run would: the output, cache
and data folders must be on a filesystem every node sees (as on a Slurm cluster). A task
whose cell is several independent trainings
(:class:`posharness.contracts.task.SplitsIntoRuns`, a fine-tune protocol's runs) gets
one Ray task per training first; the cell's task waits for them and finds every run in
the cache. The driver keeps the one progress display and, when all are done, the
runner's caller writes the leaderboard and summaries. We schedule nothing ourselves:
placement, resources and queueing are Ray's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from posharness.base.errors import OptionError, PosharnessError
from posharness.run.ray_settings import (
    RaySettings,
)

if TYPE_CHECKING:
    from posharness.contracts.cell_key import CellKey
    from posharness.contracts.results import CellResult
    from posharness.run.cell import Reporter
    from posharness.run.config import RunConfig
    from posharness.run.plan import Cell


@dataclass(frozen=True)
class CellJob:
    """What a worker needs to plan one cell again: picklable by Ray, no model inside."""

    config: RunConfig
    spec: str
    key: CellKey  # the cell's task, mode and seed; the worker must plan this very key
    task_args: dict[str, str]  # the cell's resolved --task-args (its groups' folded in)
    includes: tuple[str, ...]  # --include files of the driver
    cwd: str  # relative paths in options mean the driver's working folder


@dataclass(frozen=True)
class CellFailure:
    cell: Cell
    error: str  # one line


def connect(settings: RaySettings) -> None:
    """Start or join the cluster and check it can ever run a cell with the resources
    asked for (a request no node can meet would wait forever)."""
    import ray

    env = {"PYTHONUNBUFFERED": "1"}
    try:
        if settings.address is None:
            ray.init(
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
                runtime_env={"env_vars": env},
            )
        else:
            ray.init(address=settings.address, log_to_driver=False, runtime_env={"env_vars": env})
    except (ConnectionError, RuntimeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise OptionError(
            f"--ray-address {settings.address or 'local'}: could not join the cluster ({first}); "
            "start one with `ray start --head`"
        ) from None
    nodes = [n["Resources"] for n in ray.nodes() if n.get("Alive")]
    gpus = max((n.get("GPU", 0.0) for n in nodes), default=0.0)
    cpus = max((n.get("CPU", 0.0) for n in nodes), default=0.0)
    if settings.gpus_per_cell > gpus:
        ray.shutdown()
        raise OptionError(
            f"--gpus-per-cell {settings.gpus_per_cell:g}: no node of this Ray cluster has "
            f"that many GPUs (largest: {gpus:g}); drop --gpus-per-cell or join a GPU cluster"
        )
    if settings.cpus_per_cell > cpus:
        ray.shutdown()
        raise OptionError(
            f"--cpus-per-cell {settings.cpus_per_cell:g}: no node of this Ray cluster has "
            f"that many CPUs (largest: {cpus:g}); ask for fewer"
        )


def jobs_for(cells: list[Cell], config: RunConfig) -> list[CellJob]:
    from posharness.plugins import INCLUDED
    from posharness.run.task_checks import task_args_for

    return [
        CellJob(
            config=config,
            spec=cell.spec.text,
            key=cell.key,
            task_args=task_args_for(cell.task, config.task_args),
            includes=tuple(INCLUDED),
            cwd=os.getcwd(),
        )
        for cell in cells
    ]


def run_cells(
    cells: list[Cell], config: RunConfig, settings: RaySettings, reporter: Reporter
) -> tuple[list[tuple[Cell, CellResult]], list[CellFailure]]:
    """Run ``cells`` on the cluster; (cell, result) for each that finished, and one line
    per cell that failed (its worker died or its task raised): the others still finish."""
    import ray

    from posharness.contracts.results import CellResult
    from posharness.contracts.task import SplitsIntoRuns

    options: dict[str, Any] = {
        "num_cpus": settings.cpus_per_cell,
        "num_gpus": settings.gpus_per_cell,
        "max_retries": 0,  # a dead worker is reported; rerunning the command retries it
    }
    cell_task = ray.remote(**options)(_run_cell)
    warm_task = ray.remote(**options)(_warm_run)
    submitted: dict[Any, Cell] = {}
    for index, (cell, job) in enumerate(zip(cells, jobs_for(cells, config), strict=True), 1):
        runs = (
            cell.task.run_count(cell.options, cell.seed)
            if isinstance(cell.task, SplitsIntoRuns)
            else 1
        )
        warmed = [warm_task.remote(job, k) for k in range(runs)] if runs > 1 else []
        submitted[cell_task.remote(job, *warmed)] = cell  # Ray waits for ``warmed`` first
        reporter.cell_started(cell, index, len(cells))
    finished: list[tuple[Cell, CellResult]] = []
    failures: list[CellFailure] = []
    while submitted:
        done, _ = ray.wait(list(submitted), num_returns=1)
        for ref in done:
            cell = submitted.pop(ref)
            try:
                result = CellResult.model_validate_json(ray.get(ref))
            except Exception as exc:  # RayTaskError, WorkerCrashedError, …: one line each
                failures.append(CellFailure(cell, _one_line(exc)))
                continue
            reporter.cell_finished(cell, result)
            finished.append((cell, result))
    return finished, failures


def shutdown() -> None:
    import ray

    if ray.is_initialized():
        ray.shutdown()


def _one_line(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None)  # RayTaskError wraps the worker's exception
    if isinstance(cause, PosharnessError):
        return str(cause)
    text = " ".join(str(cause or exc).split())
    name = type(cause or exc).__name__
    return f"{name}: {text[:300]}" if text else name


# -- on the workers -------------------------------------------------------------------------


def _plan_one(job: CellJob) -> tuple[Cell, RunConfig, str]:
    from posharness.base.device import resolve_device
    from posharness.plugins import include_paths
    from posharness.run.plan import plan

    if Path(job.cwd).is_dir():
        os.chdir(job.cwd)
    include_paths(job.includes)
    config = replace(
        job.config,
        models=[job.spec],
        tasks=[job.key.task],
        modes=[job.key.mode],
        seeds=[job.key.seed],
        task_args={job.key.task: dict(job.task_args)},
        executor="serial",
    )
    device = resolve_device(config.device)
    cells = plan(config, device)
    same = [cell for cell in cells if cell.key == job.key]  # id, file and row alike
    if not same:
        raise OptionError(
            f"{job.spec} · {job.key.task} · {job.key.mode}: the worker planned another cell "
            f"than the driver (device {device}); pass --device and --dtype explicitly so "
            "every node resolves them alike"
        )
    return same[0], config, device


def _run_cell(job: CellJob, *_warmed: None) -> str:
    from posharness.run.cell import SilentReporter, execute
    from posharness.storage.cache import FeatureCache

    cell, config, device = _plan_one(job)
    result = execute(cell, config, device, FeatureCache(config.cache_dir), SilentReporter())
    return result.model_dump_json()


def _warm_run(job: CellJob, index: int) -> None:
    from posharness.run.cell import SilentReporter, task_context
    from posharness.storage.cache import FeatureCache

    cell, config, device = _plan_one(job)
    ctx = task_context(cell, config, device, FeatureCache(config.cache_dir), SilentReporter())
    cell.task.warm_run(cell.model, ctx, index)  # type: ignore[attr-defined]
