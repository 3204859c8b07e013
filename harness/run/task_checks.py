"""One task's planning check, with its problems told apart: the user's options, or data
that is absent on this machine.

``--allow-missing`` (``posharness run``, like a study's ``allow_missing``) leaves out a task
whose *data* is missing and runs the rest (issue 40: ``glue`` had to be replaced by ``rte``
by hand). It must never leave out a task over a typo: an unknown option or a bad value
(``resolve_options``) is the user's. A task validates some option values only while it
checks its data (a fine-tune protocol's name), as an :class:`OptionError`; such an error
is the user's when the task's default options do not raise it too. One the defaults raise
as well (spaCy not installed) is the machine's and counts as missing, the rule
``posharness.study.data_checks`` applies to a study file.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from posharness.base.errors import OptionError, PlanProblems, PosharnessError
from posharness.contracts.task import ReadsData, Task, resolve_options

ALLOW_MISSING_ADVICE = (
    "to run the other tasks and leave out those whose data is missing, rerun with "
    "--allow-missing (evaluate(allow_missing=True))"
)


@dataclass
class TaskCheck:
    """A task as planning found it: ready (``entry``), or stopped by ``problems``."""

    name: str
    entry: tuple[str, Task, dict[str, Any], Any] | None = None  # name, task, options, identity
    problems: list[PosharnessError] = field(default_factory=list)
    data_missing: bool = False  # every problem is absent data: --allow-missing leaves it out


def check_task(
    name: str, task_args: Mapping[str, Mapping[str, str]], data_dir: Path | None
) -> TaskCheck:
    """Resolve the task's options from the run's ``--task-arg``s (an error is the user's),
    then read its data identity."""
    from posharness.plugins import tasks as task_registry

    found = TaskCheck(name)
    given: Mapping[str, str] = {}
    try:
        task: Task = task_registry.get(name)()
        given = task_args_for(task, task_args)
        check_option_names(task, given)
        options = resolve_options(task.spec, given)
    except PosharnessError as exc:
        found.problems = [exc]
        return found
    if not isinstance(task, ReadsData):
        found.entry = (name, task, options, None)
        return found
    try:
        identity = task.data_identity(options, data_dir)
    except PlanProblems as several:
        found.problems = [PosharnessError(text) for text in dict.fromkeys(several.problems)]
        found.data_missing = True
    except OptionError as exc:
        found.problems = [exc]
        found.data_missing = not given or defaults_fail_too(task, data_dir)
    except PosharnessError as exc:
        found.problems = [exc]
        found.data_missing = True
    else:
        found.entry = (name, task, options, identity)
    return found


def check_option_names(task: Task, given: Mapping[str, str]) -> None:
    """An unknown ``--task-arg`` key fails with its close matches first (``word`` → did
    you mean ``words``?), then the task's options with their help."""
    from posharness.contracts.task_options import unknown_option

    declared = [option.name for option in task.spec.options]
    for key in given:
        if key in declared:
            continue
        close = difflib.get_close_matches(key, declared, n=3, cutoff=0.5)
        name = task.spec.name
        hint = f"did you mean {', '.join(f'{name}.{c}' for c in close)}? " if close else ""
        raise OptionError(
            f"--task-arg {name}.{key}: {hint}{unknown_option(name, key, task.spec.options)}"
        )


def defaults_fail_too(task: Any, data_dir: Path | None) -> bool:
    """Whether the task's default options meet an option error too (the machine's)."""
    try:
        task.data_identity(resolve_options(task.spec, {}), data_dir)
    except OptionError:
        return True
    except PosharnessError:
        return False
    return False


def left_out_line(check: TaskCheck) -> str:
    """The one line that says a task was left out, and why."""
    why = "; ".join(" ".join(str(p).split()) for p in check.problems)
    return f"{check.name} left out (--allow-missing), its data is missing: {why}"


def add_problems(problems: list[PosharnessError], found: list[PosharnessError]) -> None:
    """``found`` joins ``problems``, each text once: a shared input is named once."""
    seen = {" ".join(str(problem).split()) for problem in problems}
    for problem in found:
        text = " ".join(str(problem).split())
        if text not in seen:  # a shared input is named once
            problems.append(problem)
            seen.add(text)


def plan_error(problems: list[PosharnessError], advice: str | None) -> PosharnessError:
    """The one error that stops a plan: its one problem, or all of them one line each;
    ``advice`` (the --allow-missing hint) follows them."""
    if len(problems) == 1:
        if advice is None:
            return problems[0]
        return type(problems[0])(f"{problems[0]}; {advice}")
    error = PlanProblems([str(p) for p in problems])
    if advice is not None:
        Exception.__init__(error, f"{error}\n{advice}")
    return error


def task_args_for(task: Task | str, given: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """A task's ``--task-arg`` values: those of a task it borrows options from, then those
    given to a group it is in, then its own (each later one wins).

    ``--task-arg glue.protocol=tupe2021`` sets the protocol of all nine GLUE tasks; a
    task's own value (``rte.protocol=quick``) wins over its group's; ``snli.train=FILE``
    reaches the word-swap probes, which train the ``snli`` classifier.
    """
    from posharness.plugins import tasks as task_registry

    if isinstance(task, str):
        task = task_registry.get(task)()
    name = task.spec.name
    groups = task_registry.groups()
    merged: dict[str, str] = {}
    for source, keys in task.spec.borrows.items():
        merged.update({k: v for k, v in given.get(source, {}).items() if k in keys})
    for group, values in given.items():
        if group in groups and name in task_registry.expand([group]):
            merged.update(values)
    merged.update(given.get(name, {}))
    return merged
