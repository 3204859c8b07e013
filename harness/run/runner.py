"""plan → skip finished cells → execute → write.

Planning (``planning.py``) gives each cell an identity; a result file whose ``cell_id``
matches is finished and is not run again unless ``overwrite``. Results are written last
and atomically, so a run killed at any point leaves either a complete result or none,
and a rerun picks up exactly where it stopped.

Several runs (and Ray workers) may share one results folder. A cell is computed and
written while its process holds the cell's lock (``.<cell>.json.lock`` beside the
result), and the finished check is repeated under it: of two runs given the same cell,
one computes it and the other reads its result, so the cell's examples, figures and
result all come from one computation. A run first takes the cells nobody holds and only
then waits for the ones another run was computing.

Under a data-parallel launch (``accelerate launch``, ``torchrun``) the processes of the
launch are one run: each plans the grid, the main process alone takes the locks, reads
what is finished and writes, and every process computes every pending cell with it,
sharing its batches (docs/data_parallel.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from posharness.base.device import device_type, resolve_device
from posharness.base.distributed import (
    is_main_process,
    join,
    launched,
    main_decides,
    process_device,
)
from posharness.base.errors import DistributedLaunchError, PosharnessError
from posharness.contracts.adapter import ShowsProgress
from posharness.contracts.examples import as_examples
from posharness.contracts.results import (
    CellResult,
    Environment,
    ModeInfo,
    ModelInfo,
    SchemaError,
    TaskInfo,
    Timings,
    read_result,
    write_result,
)
from posharness.contracts.task import TaskContext, TaskResult
from posharness.run.config import RunConfig
from posharness.run.flags import degenerate_flags
from posharness.run.plan import Cell, plan
from posharness.storage.cache import FeatureCache
from posharness.storage.hashing import remember_file_hashes_in
from posharness.storage.io import atomic_write_text, claimed, exclusive, sweep_stale_temporaries


@dataclass
class CellOutcome:
    cell: Cell
    result: CellResult
    skipped: bool


class Reporter(Protocol):
    """How the runner talks to a user interface; the CLI renders it with rich."""

    def cell_skipped(self, cell: Cell) -> None: ...
    def cell_started(self, cell: Cell, index: int, total: int) -> None: ...
    def cell_finished(self, cell: Cell, result: CellResult) -> None: ...
    def progress(self, label: str, total: int) -> Callable[[int], None]: ...


class SilentReporter:
    def cell_skipped(self, cell: Cell) -> None:
        pass

    def cell_started(self, cell: Cell, index: int, total: int) -> None:
        pass

    def cell_finished(self, cell: Cell, result: CellResult) -> None:
        pass

    def progress(self, label: str, total: int) -> Callable[[int], None]:
        return lambda n: None


def finished_result(cell: Cell) -> CellResult | None:
    """The cell's finished result on disk, if any. Under a data-parallel launch the main
    process reads it and every process gets its answer, so all agree on what is pending."""
    return main_decides(lambda: _read_finished(cell))


def _read_finished(cell: Cell) -> CellResult | None:
    if not cell.path.exists():
        return None
    try:
        result = read_result(cell.path)
    except SchemaError:
        return None  # an old or damaged file for this cell is simply redone
    return result if result.cell_id == cell.cell_id else None


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
    cells = plan(config, device, reporter.progress)
    # A run killed by SIGKILL leaves its temporaries behind; this run removes them.
    for folder in (config.output_dir, config.cache_dir):
        if folder is not None and is_main_process():
            sweep_stale_temporaries(folder)
    if admit is not None:
        refusal = main_decides(lambda: _refusal(admit, cells))
        if refusal is not None:
            raise refusal
    cache = FeatureCache(config.cache_dir)
    outcomes = []
    todo = []
    for cell in cells:
        done = None if config.overwrite else finished_result(cell)
        if done is not None:
            reporter.cell_skipped(cell)
            outcomes.append(CellOutcome(cell, done, skipped=True))
        else:
            todo.append(cell)
    if config.executor == "ray" and todo:
        return _run_on_ray(cells, todo, outcomes, config, reporter)
    started = _Counter(len(todo))
    busy = []  # cells another process was computing when this one came to them
    for cell in todo:
        with _cell_lock(cell, wait=False) as held:
            if held:
                outcomes.append(_run_held(cell, config, device, cache, reporter, started))
            else:
                busy.append(cell)
    for cell in busy:
        with _cell_lock(cell, wait=True):
            outcomes.append(_run_held(cell, config, device, cache, reporter, started))
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


@dataclass
class _Counter:
    """Numbers the cells this run starts, for the reporter's ``index / total``."""

    total: int
    count: int = 0

    def next(self) -> int:
        self.count += 1
        return self.count


def _lock_name(cell: Cell) -> str:
    return f"cell {cell.label}"


@contextmanager
def _cell_lock(cell: Cell, *, wait: bool) -> Iterator[bool]:
    """The cell's lock, taken now if free (``wait=False``, yields whether it is held) or
    waited for. Under a data-parallel launch the main process alone takes it and every
    process follows its answer: the processes of one launch compute a cell together."""
    if not is_main_process():
        yield main_decides(lambda: False)
        return
    if wait:
        with exclusive(cell.path, timeout=None, what=_lock_name(cell)):
            yield main_decides(lambda: True)
        return
    with claimed(cell.path, what=_lock_name(cell)) as held:
        yield main_decides(lambda: held)


def _refusal(admit: Callable[[list[Cell]], None], cells: list[Cell]) -> PosharnessError | None:
    """``admit``'s refusal as a value, so it can be handed to every process of a launch."""
    try:
        admit(cells)
    except PosharnessError as refused:
        return refused
    return None


def _run_held(
    cell: Cell,
    config: RunConfig,
    device: str,
    cache: FeatureCache,
    reporter: Reporter,
    started: _Counter,
) -> CellOutcome:
    """A cell whose lock this process holds: skipped if another process finished it
    meanwhile, computed and written otherwise."""
    done = None if config.overwrite else finished_result(cell)
    if done is not None:
        reporter.cell_skipped(cell)
        return CellOutcome(cell, done, skipped=True)
    reporter.cell_started(cell, started.next(), started.total)
    result = _compute(cell, config, device, cache, reporter)
    reporter.cell_finished(cell, result)
    return CellOutcome(cell, result, skipped=False)


def execute(
    cell: Cell, config: RunConfig, device: str, cache: FeatureCache, reporter: Reporter
) -> CellResult:
    """One cell computed and written under its lock (what a Ray worker runs).

    A cell another process finished while this one waited for the lock is read back, not
    computed again, unless ``config.overwrite``.
    """
    with exclusive(cell.path, timeout=None, what=_lock_name(cell)):
        done = None if config.overwrite else finished_result(cell)
        return done if done is not None else _compute(cell, config, device, cache, reporter)


def task_context(
    cell: Cell, config: RunConfig, device: str, cache: FeatureCache, reporter: Reporter
) -> TaskContext:
    """What a task's ``run`` (or a Ray worker's ``warm_run``) is given for ``cell``."""
    from posharness.compute.batching import BatchedEncoder

    return TaskContext(
        mode=cell.mode,
        seed=cell.seed,
        device=device,
        batch_size=config.batch_size,
        limit=config.limit,
        train_limit=config.train_limit,
        cache=cache,
        artifact_dir=cell.path.with_suffix(""),
        options=dict(cell.options),
        make_encoder=lambda want: BatchedEncoder(
            cell.model, cell.mode, want, config.batch_size, device_type(device)
        ),
        progress=reporter.progress,
        data_dir=config.data_dir,
    )


def _compute(
    cell: Cell, config: RunConfig, device: str, cache: FeatureCache, reporter: Reporter
) -> CellResult:
    """Run the cell's task and write its files; the caller holds the cell's lock."""
    started = datetime.now(UTC)
    clock = time.perf_counter()
    ctx = task_context(cell, config, device, cache, reporter)
    artifact_dir = ctx.artifact_dir
    if isinstance(cell.model, ShowsProgress):
        cell.model.set_progress(reporter.progress)
    outcome: TaskResult = cell.task.run(cell.model, ctx)
    examples_file = None
    examples = None
    if outcome.examples is not None:
        examples = as_examples(cell.task.spec.name, outcome.examples)  # refused without ids
        examples_path = artifact_dir / "examples.jsonl"
        atomic_write_text(examples_path, "".join(_jsonl(e.record()) for e in examples))
        examples_file = str(examples_path.relative_to(cell.path.parent))
    elapsed = time.perf_counter() - clock
    result = CellResult(
        cell_id=cell.cell_id,
        model=ModelInfo(
            spec=cell.spec.text,
            fingerprint=cell.model.fingerprint(),
            pe_card=_as_dict(cell.model.pe_card()),
            details=cell.model.describe(),
        ),
        mode=ModeInfo.of(cell.mode, cell.model.modes[cell.mode], cell.attention_path),
        task=TaskInfo.of(cell.task.spec, outcome.data_hash, cell.options, outcome.settings),
        seed=cell.seed,
        limit=config.limit,
        train_limit=config.train_limit,
        metrics=dict(outcome.metrics),
        details=outcome.details,
        examples_file=examples_file,
        artifacts=[
            str((artifact_dir / a).relative_to(cell.path.parent)) for a in outcome.artifacts
        ],
        flags=outcome.flags
        + degenerate_flags(cell.task.spec.main_metric, outcome.metrics, examples),
        environment=_environment(cell, device, ctx),
        timings=Timings(
            started_at=started.isoformat(),
            finished_at=datetime.now(UTC).isoformat(),
            total_s=round(elapsed, 4),
            encode_s=round(sum(e.log.seconds for e in ctx.encoders), 4) if ctx.encoders else None,
        ),
    )
    write_result(result, cell.path)
    return result


def _environment(cell: Cell, device: str, ctx: TaskContext) -> Environment:
    from posharness.base.environment import (
        git_hash,
        package_versions,
        platform_name,
        python_version,
    )
    from posharness.base.version import __version__

    details = cell.model.describe()
    batch: dict[str, Any] = {"requested": ctx.batch_size}
    if ctx.encoders:
        logs = [e.log for e in ctx.encoders]
        used = sorted({s for log in logs for s in log.sizes_used}, reverse=True)
        tokens = sum(log.tokens for log in logs)
        padded = sum(log.padded_tokens for log in logs)
        batch.update(
            sizes_used=used,
            halvings_on_oom=sum(log.halvings for log in logs),
            sequences=sum(log.sequences for log in logs),
            padding_fraction=round(1 - tokens / padded, 4) if padded else 0.0,
        )
    return Environment(
        posharness=__version__,
        python=python_version(),
        platform=platform_name(),
        packages=package_versions(),
        git_hash=git_hash(),
        device=device,
        dtype=details.get("dtype"),
        attn_implementation=details.get("attn_implementation"),
        batch=batch,
    )


def _as_dict(obj: Any) -> dict[str, Any]:
    from dataclasses import asdict, is_dataclass

    if is_dataclass(obj):
        return asdict(obj)  # type: ignore[arg-type]
    return dict(obj)


def _jsonl(example: dict[str, Any]) -> str:
    import json

    return json.dumps(example, sort_keys=True, default=float) + "\n"
