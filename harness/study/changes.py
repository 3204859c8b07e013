"""A study file edited between runs: what changed, and which finished stages it touches.

A rerun is a resume only while every stage that has outputs would be run with the
settings it had. When an edit changes a started or finished stage (a pretraining step
count, a task's options), its old outputs and the new settings must not be mixed in one
table: the run stops and names each change and each stage it invalidates, and
``--discard-changed`` removes those stages' outputs so they are redone. Stages that are
new or whose settings are unchanged are untouched; tables and the report are always
rebuilt, so a new baseline or table never needs a rerun of anything.

``plan.json`` names no path of the machine that ran the study: paths inside the study
folder are already ``<study>/...`` in the settings (``dag.py``), and any other absolute path
(the corpus, read relative to the study file) is written relative to the study file's
folder, as the study file names it. Plans written before that, with absolute paths, are
read the same way, so a rerun of an older folder sees no change (issue 39, part 8).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from typing import Any

from posharness.base.errors import StudyChanged
from posharness.storage.io import atomic_write_json, read_json_or_none
from posharness.study.dag import EVALUATE, PRETRAIN, Stage
from posharness.study.folder import PLAN_FILE, StudyFolder, portable


def changed_stages(stages: Iterable[Stage], folder: StudyFolder) -> list[tuple[Stage, list[str]]]:
    """Stages with outputs (started or recorded) whose settings differ from the last run's,
    each with its differences as ``key: old → new`` lines."""
    previous = _previous_plan(folder)
    base = folder.study_base()
    found = []
    for stage in stages:
        old = previous.get(stage.id)
        if old is None:
            continue
        old, new = portable_settings(old, base), portable_settings(stage.settings, base)
        if old == new or not _has_outputs(stage, folder):
            continue
        diff = (
            _evaluation_differences(old, new) if stage.kind == EVALUATE else differences(old, new)
        )
        if diff:
            found.append((stage, diff))
    return found


def _evaluation_differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What invalidates finished cells: the model, an option common to every cell, or the
    options of a task both runs have. A task, mode or seed added is new work, not a change."""
    tasks_old, tasks_new = old.get("tasks", {}), new.get("tasks", {})
    shared = set(tasks_old) & set(tasks_new)
    return [
        *differences(old.get("spec"), new.get("spec"), "spec"),
        *differences(old.get("run", {}), new.get("run", {}), "run"),
        *differences(
            {t: tasks_old[t] for t in shared}, {t: tasks_new[t] for t in shared}, "task_args"
        ),
    ]


def refuse_or_discard(stages: list[Stage], folder: StudyFolder, discard: bool) -> list[str]:
    """Stop on changed stages, or, with ``discard``, remove their outputs (and those of
    the stages after them) and return what was discarded."""
    changed = changed_stages(stages, folder)
    if not changed:
        return []
    if not discard:
        parts = [f"{stage.id} ({'; '.join(diff[:3])})" for stage, diff in changed[:4]]
        more = f", and {len(changed) - 4} more stage(s)" if len(changed) > 4 else ""
        raise StudyChanged(
            f"the settings of stages that ran in {folder.root} changed (an edited study file, "
            f"or another posharness version): {', '.join(parts)}{more}; rerun with "
            "--discard-changed to redo them (and what depends on them), or set [study] output "
            "to a new folder"
        )
    gone = {stage.id for stage, _ in changed}
    for stage in stages:  # stages after a discarded one (its evaluation) go too
        if gone & set(stage.depends):
            gone.add(stage.id)
    for stage in stages:
        if stage.id in gone:
            _discard(stage, folder)
    return sorted(gone)


def save_plan(stages: Iterable[Stage], folder: StudyFolder) -> None:
    """The settings each stage runs with now: what the next run compares against."""
    plan = _previous_plan(folder)
    base = folder.study_base()
    plan.update({stage.id: portable_settings(stage.settings, base) for stage in stages})
    atomic_write_json(folder.root / PLAN_FILE, plan)


portable_settings = portable  # plan.json's form of a stage's settings (folder.portable)


def differences(old: Any, new: Any, prefix: str = "") -> list[str]:
    if old == new:
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        lines = []
        for key in sorted(set(old) | set(new), key=str):
            where = f"{prefix}.{key}" if prefix else str(key)
            if key not in old:
                lines.append(f"{where}: added {_short(new[key])}")
            elif key not in new:
                lines.append(f"{where}: removed (was {_short(old[key])})")
            elif old[key] != new[key]:
                lines.extend(differences(old[key], new[key], where))
        return lines
    return [f"{prefix or 'value'}: {_short(old)} → {_short(new)}"]


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _previous_plan(folder: StudyFolder) -> dict[str, Any]:
    plan = read_json_or_none(folder.root / PLAN_FILE)
    return plan if isinstance(plan, dict) else {}


def _has_outputs(stage: Stage, folder: StudyFolder) -> bool:
    if folder.record(stage.id) is not None:
        return True
    if stage.kind == PRETRAIN and stage.run_folder is not None:
        return stage.run_folder.exists()
    if stage.evaluate:
        return stage.evaluate["leaderboard"].exists()
    return False


def _discard(stage: Stage, folder: StudyFolder) -> None:
    folder.forget(stage.id)
    if stage.run_folder is not None:
        shutil.rmtree(stage.run_folder, ignore_errors=True)
    if stage.evaluate:
        board = stage.evaluate["leaderboard"]
        board.unlink(missing_ok=True)
        board.with_name(board.stem + ".examples.json.gz").unlink(missing_ok=True)
        # The model's result files: the run's own folder for this spec under results/.
        for result in _results_of(stage, folder):
            result.unlink(missing_ok=True)


def _results_of(stage: Stage, folder: StudyFolder) -> list[Any]:
    """This stage's result files: its model's (found by the spec each records) for its own
    tasks. The model's other stages keep theirs; its board, shared by them, is rebuilt
    from their results when they rerun (their finished cells are skipped)."""
    tasks = set(stage.evaluate.get("tasks", ()))
    found = []
    for path in folder.results.glob("*/*.json"):
        try:
            document = json.loads(path.read_text())
            if document["model"]["spec"] == stage.spec and document["task"]["name"] in tasks:
                found.append(path)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found
