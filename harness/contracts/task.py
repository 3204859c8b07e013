"""What a task is: a frozen ``TaskSpec`` plus ``run(model, ctx) -> TaskResult``.

Tasks are small classes registered with ``@register_task``. Their modules must stay light
at import (heavy imports inside ``run``) because the runner imports a task to learn its
version before deciding that a finished cell can be skipped.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from posharness.contracts.examples import Example
from posharness.contracts.metric_types import MetricType
from posharness.contracts.results import Metric
from posharness.contracts.task_options import TaskOption, declared, unknown_option

if TYPE_CHECKING:
    from posharness.compute.batching import BatchedEncoder
    from posharness.contracts.adapter import Mode, ModelAdapter
    from posharness.storage.cache import FeatureCache


@dataclass(frozen=True)
class TaskSpec:
    name: str
    version: str  # bump when the task's numbers would change; part of the cell identity
    kind: str  # what the task measures: attention-geometry | fine-tune | probe | perturbation …
    description: str  # one line, shown by `posharness list tasks`
    main_metric: str
    headline_metrics: tuple[str, ...] = ()  # shown in tables by default (main metric if empty)
    needs: frozenset[str] = frozenset()  # model outputs: {"hidden", "attentions"}
    # Optional model abilities the task cannot run without (protocols in
    # posharness.contracts.adapter, e.g. FineTunable); checked when the run is planned.
    requires: tuple[type, ...] = ()
    data_source: str = "synthetic"
    # The task's options by value, {name: default}: filled from ``options`` when they are
    # declared; a plugin may still pass plain defaults (each read as its default's type).
    defaults: Mapping[str, Any] = field(default_factory=dict)
    # Options this task takes from another task's ``--task-arg``s: {"snli": ("train", ...)}
    # for the word-swap probes, which train and reuse the ``snli`` classifier, so
    # ``snli.train=FILE`` reaches them in a run that names only ``shuffle_sr``.
    borrows: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # How each metric is made from the examples (posharness.contracts.metric_types): what `compare`
    # tests. A metric declared nowhere is read as a mean of continuous per-example values.
    metric_types: Mapping[str, MetricType] = field(default_factory=dict)
    # The task's options declared with a type and a one-line help (contracts/task_options.py);
    # after construction every option is here, plain defaults included.
    options: tuple[TaskOption, ...] = ()

    def __post_init__(self) -> None:
        plain = dict(self.defaults)
        for option in self.options:
            if option.name in plain and plain[option.name] != option.default:
                raise TypeError(f"task {self.name}: option {option.name} has two defaults")
        every = declared(plain, tuple(self.options))
        object.__setattr__(self, "options", every)
        object.__setattr__(self, "defaults", {option.name: option.default for option in every})

    def option(self, name: str) -> TaskOption | None:
        return next((option for option in self.options if option.name == name), None)


_dataclass_init = TaskSpec.__init__


def _init_accepting_family(self: TaskSpec, *args: Any, family: str | None = None, **kw: Any):
    """``TaskSpec(family=...)``, the name before 0.1's layering, still builds a spec (with a
    DeprecationWarning) for one release: "family" now means a package of tasks only."""
    if family is not None:
        warnings.warn(
            "TaskSpec(family=...) is TaskSpec(kind=...) since posharness 0.1",
            DeprecationWarning,
            stacklevel=2,
        )
        kw.setdefault("kind", family)
    _dataclass_init(self, *args, **kw)


TaskSpec.__init__ = _init_accepting_family  # type: ignore[method-assign]


@dataclass
class TaskResult:
    metrics: dict[str, Metric]
    data_hash: str
    details: dict[str, Any] = field(default_factory=dict)  # per-layer/per-head values etc.
    # Per-example outputs for paired tests (posharness.contracts.examples): Example objects,
    # or mappings validated into them when the cell is written (an id is required).
    examples: Sequence[Example | Mapping[str, Any]] | None = None
    artifacts: list[Path] = field(default_factory=list)  # figures, relative to the cell dir
    settings: dict[str, Any] = field(default_factory=dict)  # what the task actually used
    flags: list[str] = field(default_factory=list)  # reasons to distrust the numbers (flags.py)


@dataclass
class TaskContext:
    """Everything a task may use besides the model; built by the runner per cell."""

    mode: Mode
    seed: int
    device: str
    batch_size: int | str
    limit: int | None
    cache: FeatureCache
    artifact_dir: Path
    options: dict[str, Any]
    make_encoder: Callable[[frozenset[str]], BatchedEncoder]
    progress: Callable[[str, int], Callable[[int], None]]  # (label, total) -> advance(n)
    data_dir: Path | None = None  # --data-dir: datasets in their usual layouts
    train_limit: int | None = None  # training examples per fine-tune run (None: all)
    encoders: list[BatchedEncoder] = field(default_factory=list)

    def encoder(self, want: frozenset[str]) -> BatchedEncoder:
        encoder = self.make_encoder(want)
        self.encoders.append(encoder)
        return encoder


class Task(Protocol):
    """What every task provides: a spec and ``run``.

    Optional hooks are protocols of their own (below), checked with ``isinstance`` by the
    runner and the summaries: :class:`ReadsData`, :class:`SummarizesModes`,
    :class:`SummarizesGroup`.
    """

    spec: TaskSpec

    def run(self, model: ModelAdapter, ctx: TaskContext) -> TaskResult: ...


@runtime_checkable
class ReadsData(Protocol):
    """A task that reads files: their identity is checked while the run is planned."""

    def data_identity(self, options: dict[str, Any], data_dir: Path | None) -> Any:
        """Content hashes of the files the task will read, after validating them.

        Called while planning, so a missing or malformed file fails before any model
        loads; the value joins the cell identity, so an edited file is never answered
        with a result computed on the old one.
        """


@runtime_checkable
class ChecksModel(Protocol):
    """A task that can tell while the run is planned that a model it accepts by its
    abilities still cannot run it (a masked-LM task on a checkpoint that has no head)."""

    def check_model(self, model: ModelAdapter) -> None:
        """Raise :class:`posharness.base.errors.UnsupportedModeError` with the reason."""


@runtime_checkable
class SplitsIntoRuns(Protocol):
    """A cell made of independent trainings, each cached on its own: a fine-tune
    protocol's seeds × learning rates (5 runs in Chen et al. 2023, 20 in Ke et al. 2021).

    A distributed executor trains run ``index`` as its own job (:meth:`warm_run`, which
    leaves it in the cache) and then runs the cell, which finds every run there; the
    numbers are those of the serial run because each run is seeded on its own.
    """

    def run_count(self, options: dict[str, Any], seed: int) -> int: ...

    def warm_run(self, model: ModelAdapter, ctx: TaskContext, index: int) -> None: ...


@runtime_checkable
class SummarizesModes(Protocol):
    """A view across the modes of one (model, task, seed), e.g. Chen et al.'s Table A3
    with one column per mode; called after the run with every finished cell of it."""

    def summarize(self, results: list[Any], folder: Path) -> list[Path]: ...


@runtime_checkable
class SummarizesGroup(Protocol):
    """A view across every task carrying ``summary_group`` and every mode, for one
    (model, seed), e.g. the word-swap probes' Table 3."""

    summary_group: str

    def summarize_group(self, results: list[Any], folder: Path) -> list[Path]: ...


def resolve_options(spec: TaskSpec, given: Mapping[str, str]) -> dict[str, Any]:
    """Merge ``--task-arg TASK.KEY=VALUE`` strings into the task's typed defaults, each read
    as its declared type; an unknown KEY is answered with the task's options and their help."""
    options = dict(spec.defaults)
    for key, raw in given.items():
        declaration = spec.option(key)
        if declaration is None:
            raise unknown_option(spec.name, key, spec.options)
        options[key] = declaration.read(spec.name, raw)
    return options
