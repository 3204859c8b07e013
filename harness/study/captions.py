"""What a table's caption says about our runs: only what holds for the cells that table
shows.

Our rows are small-scale runs beside the papers' BERT-base rows, so every caption states
the scale of our pretraining, and the evaluation limits (``--limit``, ``--train-limit``)
and fine-tuning protocol of *its* cells: those of the evaluation stages that computed a
(task, mode) the table reads, never those of another table's ``[[run]]``. A protocol the
study left at its default is named too (Chen et al. 2023's Table 1 averages five learning
rates, our default ``quick`` protocol trains one: a reader must see which one ran).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from posharness.study.dag import EVALUATE, Stage
from posharness.study.name_checks import listed
from posharness.study.study_file import Study
from posharness.study.table_spec import StudyTable

LIMITS = ("limit", "train_limit")
INPUT_SIZE = re.compile(r"length|words")  # task options that set what a probe reads


def caption_note(study: Study, table: StudyTable, stages: list[Stage]) -> str:
    """``Ours: <pretraining scale>; evaluated with …; fine-tuned with the … protocol.``
    followed by the study's notes, for ``table``."""
    limits: dict[str, set[str]] = {}
    protocols: dict[str, set[str]] = {}
    options: dict[str, None] = {}
    for stage, tasks in _feeding(table, stages):
        text = _limits_text(stage.evaluate)
        for task in tasks:
            limits.setdefault(text, set()).add(task)
            options.update(dict.fromkeys(_options_text(stage.evaluate, task)))
        for task, protocol in _protocols(stage.evaluate, tasks).items():
            protocols.setdefault(protocol, set()).add(task)
    extra = ""
    if options:  # a probe's length and the like: what the table's numbers were read at
        extra += f"; input sizes {', '.join(options)}"
    if any(limits):
        extra += f"; evaluated with {_grouped(limits, 'without limits')}"
    if protocols:
        named = {f"the {name} protocol": tasks for name, tasks in protocols.items()}
        extra += f"; fine-tuned with {_grouped(named, '')}"
    notes = " ".join(study.notes)
    return f"Ours: {pretraining_text(study)}{extra}. {notes}".strip()


def pretraining_text(study: Study) -> str:
    """The scale and budget of the models pretrained here (every table shows them all)."""
    parts = []
    for model in (m for m in study.models if m.pretrained_here):
        values = model.pretrain
        recipe, steps = values.get("recipe"), values.get("steps")
        text = f"size {values.get('size', 'mini')}" + (f", recipe {recipe}" if recipe else "")
        text += f", {steps} steps" if steps else ""
        parts.append(f"{text}, seeds {', '.join(map(str, model.seeds))}")
    return "; ".join(sorted(set(parts))) or "models as given"


def _feeding(table: StudyTable, stages: list[Stage]) -> Iterable[tuple[Stage, list[str]]]:
    """Each evaluation stage that computed a cell of ``table``, with the table's tasks it
    computed (a task read in a mode the stage did not run is not its)."""
    cells = {(column.task, column.mode or mode) for column in table.columns for mode in table.modes}
    for stage in stages:
        if stage.kind != EVALUATE or stage.step is not None:  # a checkpoint: as the final
            continue
        modes = set(listed(stage.evaluate.get("modes", ["both"])))
        tasks = [
            task
            for task in stage.evaluate.get("tasks", [])
            if any((task, mode) in cells for mode in modes)
        ]
        if tasks:
            yield stage, tasks


def _options_text(run: Mapping[str, Any], task: str) -> list[str]:
    """The input size the study gave ``task`` (``locality_symmetry length=32``,
    ``snli max_length=64``): the options naming a length or a word count, given to the task
    itself or to the task it borrows them from (named once, by that task). The probe
    length a geometry column was read at is part of what its number means (issue 46: a
    caption said 128 tokens where the study probed at 32)."""
    from posharness.plugins import tasks as task_registry

    given = run.get("task_args") or {}
    spec = task_registry.get(task)().spec
    sources = [*spec.borrows, task]
    return [
        f"{source} {key}={value}"
        for source in sources
        for key, value in dict(given.get(source) or {}).items()
        if INPUT_SIZE.search(str(key)) and (source == task or key in spec.borrows[source])
    ]


def _limits_text(run: Mapping[str, Any]) -> str:
    return " ".join(f"--{key.replace('_', '-')} {run[key]}" for key in LIMITS if run.get(key))


def _protocols(run: Mapping[str, Any], tasks: list[str]) -> dict[str, str]:
    """The fine-tuning protocol each task of ``tasks`` ran with, its default included
    (resolved as ``posharness run`` resolves it); tasks that train nothing are absent."""
    from posharness.contracts.task import resolve_options
    from posharness.plugins import tasks as task_registry
    from posharness.study.name_checks import task_args_for

    given = {
        str(task): {str(key): str(value) for key, value in dict(options).items()}
        for task, options in (run.get("task_args") or {}).items()
    }
    found = {}
    for name in tasks:
        task = task_registry.get(name)()
        if task.spec.option("protocol") is not None:
            found[name] = str(resolve_options(task.spec, task_args_for(task, given))["protocol"])
    return found


def _grouped(groups: Mapping[str, set[str]], blank: str) -> str:
    """One setting alone (``--limit 100``); several, each with its tasks
    (``--limit 100 (rte), without limits (sst2)``), those without a setting last."""
    if len(groups) == 1:
        return next(iter(groups)) or blank
    ordered = sorted(groups.items(), key=lambda item: (not item[0], item[0]))  # blank last
    return ", ".join(f"{text or blank} ({', '.join(sorted(tasks))})" for text, tasks in ordered)
