"""One cell, start to finish in this process: its task context, its computation and the
files it leaves (examples, figures, the result written last and atomically).

Single-process code: the serial executor (``executors/serial.py``) calls it with the
launch's collective decisions already made, and a Ray worker (``executors/ray.py``) calls
:func:`execute`. What a run reports as it goes is the :class:`Reporter`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from posharness.base.device import device_type
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
from posharness.run.plan import Cell
from posharness.storage.cache import FeatureCache
from posharness.storage.io import atomic_write_text, exclusive


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


def read_finished(cell: Cell) -> CellResult | None:
    """The cell's finished result on disk, if any (an old or damaged file: none)."""
    if not cell.path.exists():
        return None
    try:
        result = read_result(cell.path)
    except SchemaError:
        return None  # an old or damaged file for this cell is simply redone
    return result if result.cell_id == cell.cell_id else None


def lock_name(cell: Cell) -> str:
    return f"cell {cell.label}"


def execute(
    cell: Cell, config: RunConfig, device: str, cache: FeatureCache, reporter: Reporter
) -> CellResult:
    """One cell computed and written under its lock (what a Ray worker runs).

    A cell another process finished while this one waited for the lock is read back, not
    computed again, unless ``config.overwrite``.
    """
    with exclusive(cell.path, timeout=None, what=lock_name(cell)):
        done = None if config.overwrite else read_finished(cell)
        return done if done is not None else compute(cell, config, device, cache, reporter)


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


def compute(
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
        key=cell.key,  # the result records its key; readers take rows and pairs from it
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
