"""The names and task options a study file gives, checked against what is installed
before any work: table ids against the study-table registry, task and group names,
modes, and every task option against the task's own declaration.

Each is a mistake in the file, so each is a :class:`StudyFileError` naming the file's
line and a close match (``word`` → did you mean words), never a task left out as "data
missing": ``allow_missing`` covers data that is absent, not a file that asks for
something that does not exist. These checks read declarations only (no data, no model),
so a wrong name costs seconds, not the hours of compute before a late failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posharness.base.errors import OptionError, PosharnessError
from posharness.study.locator import Locator, close_matches


def check_tables(where: Locator, tables: list[str]) -> None:
    """Every id of ``[study] tables`` is a table some installed family declares."""
    from posharness.study.table_registry import study_tables

    known = study_tables()
    for table in tables:
        if table not in known:
            raise where.error(
                "study",
                "tables",
                f"study table {table!r} does not exist; known tables: {', '.join(known)}",
                known,
                given=table,
                line=where.line_of_value("study", "tables", table),
            )


def check_run(where: Locator, index: int, run: Mapping[str, Any], hint: str = "") -> None:
    """The ``index``-th run section's tasks, modes and task options; ``hint`` follows an
    unknown task's error (the plugin it may have come from)."""
    tasks = _tasks(where, index, listed(run.get("tasks", [])), hint)
    _modes(where, index, listed(run.get("modes", ["both"])))
    _task_options(where, index, run.get("task_args") or {}, tasks)


def task_args_for(task: Any, given: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """A task's ``--task-arg`` values as ``posharness run`` reads them (its group's, the
    task it borrows from, its own): ``run.task_checks.task_args_for``, found where this
    version of the run package keeps it."""
    try:
        from posharness.run.task_checks import task_args_for as found
    except ImportError:  # before it moved out of the planner
        from posharness.run.plan import task_args_for as found  # type: ignore[attr-defined,no-redef]
    return found(task, given)


def listed(values: Any) -> list[str]:
    """A study file's list or comma-separated string (``modes = "both,positional"``) as names."""
    values = [values] if isinstance(values, str) else list(values)
    return [part.strip() for value in values for part in str(value).split(",") if part.strip()]


def _tasks(where: Locator, index: int, names: list[str], hint: str = "") -> list[str]:
    from posharness.plugins import tasks as task_registry

    for name in names:
        try:
            task_registry.expand([name])
        except PosharnessError as exc:
            line = where.line_of_value("run", "tasks", name, index)
            raise where.error("run", "tasks", f"{exc}{hint}", line=line) from None
    return task_registry.expand(names)


def _modes(where: Locator, index: int, modes: list[str]) -> None:
    from posharness.contracts.adapter import Mode

    known = [mode.value for mode in Mode]
    for mode in modes:
        if mode.lower() not in known:
            raise where.error(
                "run",
                "modes",
                f"no mode {mode!r}; modes are {', '.join(known)}",
                known,
                given=mode,
                line=where.line_of_value("run", "modes", mode, index),
            )


def _task_options(where: Locator, index: int, given: Mapping[str, Any], tasks: list[str]) -> None:
    """Each ``task_args`` entry reaches a task of the run (itself, a group holding one, or
    a task whose options a probe borrows: ``snli.train``), and each key is an option that
    every task it reaches declares, with a value of the option's type."""
    from posharness.plugins import tasks as task_registry

    groups = task_registry.groups()
    specs = {name: task_registry.get(name)().spec for name in tasks}
    lent: dict[str, set[str]] = {}
    for spec in specs.values():
        for source, keys in spec.borrows.items():
            lent.setdefault(source, set()).update(keys)
    for target, options in given.items():
        if not isinstance(options, Mapping):
            raise where.error("run", "task_args", f"{target}: give a table of KEY = VALUE")
        members = task_registry.expand([target]) if target in groups else [target]
        reached = [specs[name] for name in members if name in specs]
        for key, value in options.items():
            line = where.line_of_task_option(index, target, key)
            if reached:
                for spec in reached:
                    _declared(where, spec, target, key, value, line)
            elif target in lent:
                if key not in lent[target]:
                    raise where.error(
                        "run",
                        "task_args",
                        f"{target}.{key}: this run uses {target} only through the tasks that "
                        f"borrow its options ({', '.join(sorted(lent[target]))}); add {target} "
                        "to tasks to set its other options",
                        sorted(lent[target]),
                        given=key,
                        line=line,
                    )
            else:
                raise where.error(
                    "run",
                    "task_args",
                    f"names task {target!r}, which this run's tasks do not include: add "
                    f"{target} to tasks, or drop its options",
                    [*tasks, *groups],
                    given=target,
                    line=line,
                )


def _declared(
    where: Locator, spec: Any, target: str, key: str, value: Any, line: int | None
) -> None:
    declaration = spec.option(key)
    if declaration is None:
        known = sorted(option.name for option in spec.options)
        listed = ", ".join(known) if known else "none"
        via = f" (through {target})" if target != spec.name else ""
        raise where.error(
            "run",
            "task_args",
            f"task {spec.name}{via} has no option {key!r}; its options: {listed}",
            known,
            given=key,
            line=line,
        )
    try:  # read as ``posharness run`` reads it: the value as text (config_from's way)
        declaration.read(spec.name, str(value))
    except OptionError as exc:
        raise where.error("run", "task_args", f"{spec.name}.{key}: {exc}", line=line) from None


__all__ = ["check_run", "check_tables", "close_matches"]
