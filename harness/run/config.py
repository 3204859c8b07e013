"""A run's configuration: the options of ``posharness run`` and ``posharness.evaluate()``
after parsing, before planning.

Each field is an option of :data:`posharness.run.option_schema.RUN_OPTIONS`, where its help and
its command-line form are declared; :func:`posharness.run.option_schema.config_from` fills it,
and ``tests/unit/core/test_options_schema.py`` fails when a field and the options differ.
Written out (not generated) so the plan and an IDE see typed fields."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class RunConfig:
    models: list[str]
    tasks: list[str]
    modes: list[str] = field(default_factory=lambda: ["both"])
    seeds: list[int] = field(default_factory=lambda: [0])
    output_dir: Path = Path("results")
    cache_dir: Path | None = None  # None: caching off
    batch_size: int | str = "auto"
    device: str = "auto"
    dtype: str = "auto"
    limit: int | None = None  # evaluation examples per task
    train_limit: int | None = None  # training examples per fine-tune (None: all)
    overwrite: bool = False
    allow_missing: bool = False  # leave out tasks whose data is missing (run/task_checks.py)
    task_args: dict[str, dict[str, str]] = field(default_factory=dict)
    model_args: dict[str, str] = field(default_factory=dict)  # --model-arg, e.g. definitions
    data_dir: Path | None = None  # datasets and reference corpora in their usual layouts
    executor: str = "serial"  # serial | ray (posharness.run.executors)
    ray_address: str | None = None  # with executor ray: None local, auto, HOST:PORT
    cpus_per_cell: float = 1.0
    gpus_per_cell: float = 0.0
