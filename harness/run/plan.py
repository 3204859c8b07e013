"""plan: from a run's configuration to its cells, checked before any work.

A cell is one (model, mode, task, seed). Its key (``CellKey``, built by
``run.identity.key_of``) names its result file and leaderboard row and carries its id,
the hash of everything its result depends on. Everything a user can get wrong — a name,
an option, a mode the model lacks, an ability a task needs, an unwritable folder, a
missing dataset — fails here, in one line, before any cell runs.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from posharness.base.device import check_device_name, resolve_dtype
from posharness.base.errors import (
    OptionError,
    OutputError,
    PlanProblems,
    PosharnessError,
    UnsupportedModeError,
)
from posharness.contracts.adapter import (
    ChecksModes,
    Mode,
    ModelAdapter,
    attention_path_of,
    capability_name,
)
from posharness.contracts.cell_key import CellKey
from posharness.contracts.model_spec import (  # noqa: F401 (build_adapter: importable here)
    LoadOptions,
    ModelSpec,
    build_adapter,
    parse_model_spec,
)
from posharness.contracts.task import ChecksModel, Task
from posharness.run.config import RunConfig
from posharness.run.identity import RunSettings, key_of
from posharness.run.plan_models import planned_models
from posharness.run.task_checks import (
    ALLOW_MISSING_ADVICE,
    add_problems,
    check_task,
    left_out_line,
    plan_error,
)

_log = logging.getLogger(__name__)  # shown on stderr by Python's last-resort handler

DTYPE_CHOICES = ("auto", "float32", "bfloat16", "float16")
_T = TypeVar("_T")


@dataclass
class Cell:
    """One planned cell: what runs it, and its key (id, file name, row: ``CellKey``)."""

    spec: ModelSpec
    model: ModelAdapter
    task: Task
    mode: Mode
    seed: int
    options: dict[str, Any]
    key: CellKey
    output_dir: Path
    attention_path: str | None = None  # "sdpa" | "eager" where the model says (adapter.py)
    device: str = "cpu"  # the resolved device it is planned for (its kind joins the id)

    @property
    def cell_id(self) -> str:
        return self.key.cell_id

    @property
    def path(self) -> Path:
        """The result file: ``<output dir>/<model folder>/<key's file name>``."""
        return self.output_dir / str(self.key.folder) / self.key.file_name

    @property
    def limit(self) -> int | None:  # --limit, which also names the file
        return self.key.limit

    @property
    def train_limit(self) -> int | None:  # --train-limit, likewise
        return self.key.train_limit

    @property
    def label(self) -> str:
        return f"{self.spec.text} · {self.task.spec.name} · {self.mode} · seed {self.seed}"


def parse_batch_size(value: str | int) -> int | str:
    """``auto`` or a positive integer; checked before any model is loaded."""
    if str(value).strip().lower() == "auto":
        return "auto"
    try:
        size = int(value)
    except ValueError:
        raise OptionError(f"--batch-size {value!r}: give a positive integer or 'auto'") from None
    if size < 1:
        raise OptionError(f"--batch-size {size}: must be at least 1 (or 'auto')")
    return size


def parse_modes(modes: list[str]) -> list[Mode]:
    out = []
    for name in modes:
        try:
            out.append(Mode(name.strip().lower()))
        except ValueError:
            choices = ", ".join(m.value for m in Mode)
            raise OptionError(f"--mode {name!r}: choose from {choices}") from None
    return out


def check_output_dir(folder: Path, what: str = "output folder", hint: str | None = None) -> None:
    """Fail before any work if results (or cache entries) could not be written there."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        # A unique name: runs on several machines may probe one shared folder at once.
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".posharness-write-test-")
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        fix = hint or "pass --output-dir with a folder you can write to"
        raise OutputError(f"{what} {folder} is not writable ({exc.strerror}): {fix}") from exc


def validate(config: RunConfig) -> tuple[list[str], list[Mode]]:
    from posharness.plugins import tasks as task_registry

    if config.limit is not None and config.limit < 1:
        raise OptionError(f"--limit {config.limit}: must be a positive number of examples")
    if config.train_limit is not None and config.train_limit < 1:
        raise OptionError(
            f"--train-limit {config.train_limit}: must be a positive number of examples"
        )
    if config.dtype not in DTYPE_CHOICES:
        raise OptionError(f"--dtype {config.dtype!r}: choose from {', '.join(DTYPE_CHOICES)}")
    if not config.models:
        raise OptionError("no model given: pass --model NAME (see `posharness list models`)")
    if not config.tasks:
        raise OptionError("no task given: pass --tasks NAME[,NAME] (see `posharness list tasks`)")
    check_device_name(config.device)
    check_executor(config)
    if config.data_dir is not None and not config.data_dir.is_dir():
        what = "is not a folder" if config.data_dir.exists() else "does not exist"
        raise OptionError(
            f"--data-dir {config.data_dir} {what}: pass the folder that holds the datasets "
            "(e.g. ../shared/data), or leave --data-dir out"
        )
    task_names = task_registry.expand(config.tasks)
    check_task_arg_targets(config.task_args, task_names)
    modes = parse_modes(config.modes)
    for spec in config.models:
        parse_model_spec(spec)
    check_output_dir(config.output_dir)
    if config.cache_dir is not None:
        check_output_dir(
            config.cache_dir,
            "cache folder",
            "pass a writable --cache-dir, set POSHARNESS_CACHE, or use --no-cache",
        )
    return task_names, modes


def check_executor(config: RunConfig) -> None:
    if config.executor == "serial":
        if config.ray_address is not None:
            raise OptionError("--ray-address needs --executor ray")
        return
    if config.executor != "ray":
        raise OptionError(f"--executor {config.executor!r}: choose serial or ray")
    from posharness.run.ray_settings import check_settings

    check_settings(ray_settings(config))


def ray_settings(config: RunConfig) -> Any:
    from posharness.run.ray_settings import RaySettings

    return RaySettings(config.ray_address, config.cpus_per_cell, config.gpus_per_cell)


def check_task_arg_targets(given: Mapping[str, Mapping[str, str]], task_names: list[str]) -> None:
    """Each ``--task-arg`` must reach a task of this run: itself, a group holding one, or a
    task another one borrows options from (``snli.train=`` for the word-swap probes)."""
    from posharness.plugins import tasks as task_registry

    groups = task_registry.groups()
    borrowed = {
        source: keys
        for name in task_names
        for source, keys in task_registry.get(name)().spec.borrows.items()
    }
    for task, values in given.items():
        members = task_registry.expand([task]) if task in groups else [task]
        if set(members) & set(task_names):
            continue
        if task in borrowed:
            lent = borrowed[task]
            for key in values:
                if key not in lent:
                    raise OptionError(
                        f"--task-arg {task}.{key}: this run uses {task} only through the tasks "
                        f"that borrow its options ({', '.join(lent)}); add {task} to --tasks "
                        "to set its other options"
                    )
            continue
        raise OptionError(
            f"--task-arg names task {task!r}, which this run does not include: add {task} "
            "to --tasks, or drop the option"
        )


def plan(
    config: RunConfig,
    device: str,
    progress: Callable[[str, int], Callable[[int], None]] | None = None,
) -> list[Cell]:
    """Every cell of the run, in order: model, then task, then mode, then seed.

    Cheapest first: the options, then every model spec (names and checkpoints, before
    any weights or data are read), then every task's options and data. Problems of the
    last two steps are collected and reported together (:class:`PlanProblems`), so one
    attempt shows everything that is missing. With ``allow_missing`` a task whose data
    alone is missing is left out, one line each on stderr, and the others are planned
    (``run/task_checks.py``: never a task whose options are wrong); without it, a plan
    that could run other tasks says so. ``progress(label, total)`` shows the data
    checks, which read and hash whole datasets.
    """
    task_names, modes = validate(config)
    options = LoadOptions(
        dtype=config.dtype,
        device=device,
        model_args=tuple(sorted(config.model_args.items())),
        data_dir=config.data_dir,
        cache_dir=config.cache_dir,
    )
    problems: list[PosharnessError] = []
    models = planned_models(config.models, options, _collect, problems)  # plan_models.py
    for spec in models.specs:
        _collect(problems, preflight_model, spec, options)
    advance = progress("checking task data", len(task_names)) if progress else None
    checks = []
    for name in task_names:
        checks.append(check_task(name, config.task_args, config.data_dir))
        if advance:
            advance(1)
    prepared = [check.entry for check in checks if check.entry is not None]
    stopped = [check for check in checks if check.entry is None]
    left_out = [check for check in stopped if config.allow_missing and check.data_missing]
    for check in stopped:
        if check not in left_out:
            add_problems(problems, check.problems)
    if left_out and len(left_out) == len(checks):
        add_problems(problems, [p for check in left_out for p in check.problems])
        problems.append(OptionError("--allow-missing: every task's data is missing here"))
    elif left_out:
        for check in left_out:
            _log.warning("posharness: %s", left_out_line(check))
    if problems:
        # the advice only where the flag would help: not given yet, and data is the problem
        could_leave_out = (
            not config.allow_missing and prepared and any(check.data_missing for check in stopped)
        )
        raise plan_error(problems, ALLOW_MISSING_ADVICE if could_leave_out else None)
    cells = []
    dtype = resolve_dtype(config.dtype, device)
    run = RunSettings(config.limit, config.train_limit, dtype, device, dict(config.model_args))
    for spec in models.specs:
        model = models.build(spec, options)
        if model is None:
            continue
        for mode in modes:
            if mode not in model.modes:
                supported = ", ".join(str(m) for m in model.modes)
                raise UnsupportedModeError(
                    f"model {spec.text} supports modes {supported}, not {mode}: drop it from --mode"
                )
            if isinstance(model, ChecksModes):
                model.check_mode(mode)
        for _, task, task_options, identity in _runnable(spec.text, model, prepared, config):
            for mode in modes:
                for seed in config.seeds:
                    key = key_of(spec, model, task, mode, seed, task_options, identity, run)
                    path = attention_path_of(model, mode, task.spec.needs)
                    cell = Cell(spec, model, task, mode, seed, task_options, key, config.output_dir)
                    cells.append(replace(cell, attention_path=path, device=device))
    return cells


def _collect(problems: list[PosharnessError], step: Callable[..., _T], *args: Any) -> _T | None:
    """Run one planning step; a user error joins ``problems`` (once) instead of stopping.

    A step that found several problems itself (:class:`PlanProblems`, e.g. a word-swap
    probe missing both its SNLI source and the classifier's training data) adds each.
    """
    try:
        return step(*args)
    except PlanProblems as several:
        add_problems(problems, [PosharnessError(text) for text in several.problems])
    except PosharnessError as exc:
        add_problems(problems, [exc])
    return None


def preflight_model(spec: ModelSpec, options: LoadOptions) -> None:
    """The cheap part of loading a model: its name is registered and its checkpoint is
    where the spec says (no weights read). Families declare it as ``ModelEntry.check``."""
    from posharness.contracts.model_spec import registered_factory

    factory = registered_factory(spec)
    check = getattr(factory, "preflight", None)
    if check is not None:
        check(spec.argument, options)


def _runnable(
    model_name: str, model: ModelAdapter, prepared: list[Any], config: RunConfig
) -> list[Any]:
    """The prepared tasks this model can run. A task named on its own that the model
    cannot run stops the run; one reached only through a group (``length``: a masked-LM
    task beside embedding tasks) is left out for this model and said on stderr, so a group
    runs what each model can. A model that can run none of them stops the run as before."""
    kept, left_out = [], []
    for entry in prepared:
        try:
            check_capabilities(model_name, model, entry[1])
            if isinstance(entry[1], ChecksModel):
                entry[1].check_model(model)
        except UnsupportedModeError as exc:
            if entry[0] in config.tasks:
                raise
            left_out.append(exc)
            continue
        kept.append(entry)
    if left_out and not kept:
        raise left_out[0]
    for exc in left_out:
        _log.warning("posharness: %s; left out of this group run for %s", exc, model_name)
    return kept


def check_capabilities(model_name: str, model: ModelAdapter, task: Task) -> None:
    """Fail at planning when the task needs an ability the model's adapter lacks."""
    for ability in task.spec.requires:
        if not isinstance(model, ability):
            raise UnsupportedModeError(
                f"task {task.spec.name} needs a model that is {capability_name(ability)}; "
                f"{model_name}'s adapter lacks it: drop the task or use another model"
            )


def data_problems(config: RunConfig) -> dict[str, list[str]]:
    """Each task of ``config`` whose data or options stop it, with its problems: what a
    study checks for every task before any pretraining, and drops with --allow-missing.
    Writes nothing (no output or cache folder is made)."""
    from posharness.plugins import tasks as task_registry

    task_names = task_registry.expand(config.tasks)
    check_task_arg_targets(config.task_args, task_names)
    found: dict[str, list[str]] = {}
    for name in task_names:
        check = check_task(name, config.task_args, config.data_dir)
        if check.problems:
            found[name] = [" ".join(str(p).split()) for p in check.problems]
    return found
