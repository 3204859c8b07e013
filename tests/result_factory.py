"""Synthetic cell results for tests and benchmarks of everything downstream of a run
(leaderboards, compare, report), so they need no model: one place that knows which
fields a :class:`CellResult` must carry, and defaults that say "made up" plainly."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from posharness.contracts.results import (
    CellResult,
    Environment,
    Metric,
    ModeInfo,
    ModelInfo,
    TaskInfo,
    Timings,
    write_result,
)

PLAIN_ENVIRONMENT = Environment(posharness="0", python="3", platform="x", packages={}, device="cpu")
PLAIN_TIMINGS = Timings(started_at="t", finished_at="t", total_s=1.0)


def synthetic_result(
    *,
    spec: str,
    fingerprint: str,
    task: str,
    metrics: Mapping[str, Metric],
    headline: Sequence[str] | None = None,
    mode: ModeInfo | str = "both",
    seed: int = 0,
    cell_id: str | None = None,
    kind: str = "test",
    version: str = "1",
    pe_card: Mapping[str, Any] | None = None,
    options: Mapping[str, Any] | None = None,
    examples_file: str | None = None,
    artifacts: Sequence[str] = (),
    environment: Environment = PLAIN_ENVIRONMENT,
    timings: Timings = PLAIN_TIMINGS,
) -> CellResult:
    """A result whose main metric is the first of ``metrics``; ``headline`` defaults to
    all of them."""
    mode_info = ModeInfo(name=mode, exact=True) if isinstance(mode, str) else mode
    return CellResult(
        cell_id=cell_id or f"{fingerprint}-{mode_info.name}-{task}-{seed}",
        model=ModelInfo(
            spec=spec,
            fingerprint=fingerprint,
            pe_card=dict(pe_card or {"family": "learned absolute"}),
        ),
        mode=mode_info,
        task=TaskInfo(
            name=task,
            version=version,
            kind=kind,
            main_metric=next(iter(metrics)),
            headline_metrics=list(metrics if headline is None else headline),
            data_hash=f"data-{task}",
            options=dict(options or {}),
        ),
        seed=seed,
        metrics=dict(metrics),
        examples_file=examples_file,
        artifacts=list(artifacts),
        environment=environment,
        timings=timings,
    )


def write_examples(stem: Path, rows: Iterable[Mapping[str, Any]]) -> str:
    """Write ``stem/examples.jsonl`` and return the path a result records for it."""
    stem.mkdir(parents=True, exist_ok=True)
    (stem / "examples.jsonl").write_text("".join(json.dumps(dict(r)) + "\n" for r in rows))
    return f"{stem.name}/examples.jsonl"


def save_cell(folder: Path, result: CellResult) -> Path:
    """Write ``result`` where the runner would: ``folder/SPEC/TASK__MODE__seedN.json``."""
    path = folder / result.model.spec / f"{result.task.name}__{result.mode.name}__seed{result.seed}"
    path = path.with_suffix(".json")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_result(result, path)
    return path
