"""The data of every task of a study, checked before any work, told apart from the file's
own mistakes.

``allow_missing`` leaves out a task whose data (or a component it reads data with, such
as spaCy) is absent on this machine. It must never leave out a task whose *options* are
wrong: that is a typo in the study file, and a table reading "data missing" for it would
hide it. A task checks some option values only while it validates its data (a fine-tune
protocol's name, a learning rate), as an :class:`OptionError`; such an error is the
file's when the task's default options do not raise it, and then it stops the study with
the file's line. One the defaults raise too (spaCy not installed) is the machine's, and
counts as missing like absent data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posharness.base.errors import OptionError, PlanProblems, PosharnessError
from posharness.storage.cache import run_cache_dir_set
from posharness.study.locator import Locator


def data_problems(study: Any, results: Any) -> dict[str, list[str]]:
    """Each task of the study whose data is missing here, with its problems (each once);
    a :class:`StudyFileError` for a task whose options the file got wrong."""
    from posharness.run.option_schema import config_from

    where = Locator(study.path, study.text)
    found: dict[str, list[str]] = {}
    for index, run in enumerate(study.runs):
        config = config_from({**run, "models": ["checked-per-stage"], "output_dir": results})
        with run_cache_dir_set(config.cache_dir):  # the study's cache, as its runs use
            problems_of = _run_problems(where, index, config)
        for task, problems in problems_of.items():
            found.setdefault(task, [])
            found[task] += [p for p in problems if p not in found[task]]
    return found


def _run_problems(where: Locator, index: int, config: Any) -> dict[str, list[str]]:
    """What ``posharness run``'s planner checks per task (its options, then its data),
    with the option errors raised instead of collected."""
    from posharness.contracts.task import ReadsData, resolve_options
    from posharness.plugins import tasks as task_registry
    from posharness.run.plan import check_task_arg_targets
    from posharness.run.task_checks import defaults_fail_too
    from posharness.study.name_checks import task_args_for

    names = task_registry.expand(config.tasks)
    check_task_arg_targets(config.task_args, names)
    found: dict[str, list[str]] = {}
    for name in names:
        task = task_registry.get(name)()
        given = task_args_for(task, config.task_args)
        try:
            options = resolve_options(task.spec, given)
        except OptionError as exc:  # name_checks reads these first; kept as a backstop
            raise _file_error(where, index, name, given, exc) from None
        if not isinstance(task, ReadsData):
            continue
        try:
            task.data_identity(options, config.data_dir)
        except OptionError as exc:
            if given and not defaults_fail_too(task, config.data_dir):
                raise _file_error(where, index, name, given, exc) from None
            found[name] = [str(exc)]
        except PlanProblems as several:
            found[name] = list(dict.fromkeys(several.problems))
        except PosharnessError as exc:
            found[name] = [str(exc)]
    return found


def _file_error(
    where: Locator, index: int, task: str, given: Mapping[str, str], exc: Exception
) -> PosharnessError:
    keys = [key for key in given if key in str(exc)] or list(given)
    line = where.line_of_task_option(index, task, keys[0]) if keys else None
    return where.error("run", "task_args", f"{task}: {exc}", line=line)
