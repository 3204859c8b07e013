"""``study run`` and ``study status`` as functions: read the file, check everything, plan,
show the plan, run what is missing, then build boards' tables and the report.

Checks come before any work, cheapest first: the file's keys, table ids, tasks, modes and
task options (each a mistake in the file: one line with its line number), the models, and
then the data of every task (a study whose tasks need data that is missing lists every
problem before any pretraining starts; with ``allow_missing`` it drops those tasks and
its tables say "data missing" with the fix). ``allow_missing`` covers absent data only.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from posharness.base.errors import OutputError, PlanProblems, StagesFailed
from posharness.storage.io import atomic_write_json, claimed, read_json_or_none
from posharness.study.changes import refuse_or_discard, save_plan
from posharness.study.dag import EVALUATE, Stage
from posharness.study.execute import Outcome, is_done, run_stages, same_settings
from posharness.study.folder import StudyFolder
from posharness.study.plan import StudyPlan, make_plan
from posharness.study.plan_text import plan_lines
from posharness.study.publish import publish
from posharness.study.stages import training_stage
from posharness.study.study_file import Study, read_study

MISSING_FILE = "missing_data.json"
Say = Callable[[str], None]


Planned = StudyPlan  # the name callers used before the plan held every resolved input


def plan_study(path: Path, allow_missing: bool | None = None, check_data: bool = True) -> StudyPlan:
    """The study's plan, every input checked; nothing is run or written. The file is read
    here and only here (``plan.py``). ``check_data=False`` (``study status``) takes the
    tasks whose data was missing from the folder's last run instead of reading every
    task's data again (seconds of torch and dataset loading for a table of records)."""
    training = training_stage()
    study = read_study(path, training)
    allow = study.allow_missing if allow_missing is None else allow_missing
    if not check_data:
        return make_plan(study, training, read_missing(StudyFolder(study.folder)))
    missing = missing_data(study)
    if missing and not allow:
        problems = [f"{task}: {problem}" for task, found in missing.items() for problem in found]
        problems.append(
            "to run the rest and mark these columns 'data missing', rerun with --allow-missing "
            "(or set [study] allow_missing = true)"
        )
        raise PlanProblems(problems)
    return make_plan(study, training, missing)


def missing_data(study: Study) -> dict[str, list[str]]:
    """Every task of the study whose data is missing here, with the problems; a task
    whose options are wrong stops the study instead (:mod:`posharness.study.data_checks`)."""
    from posharness.study.data_checks import data_problems

    return data_problems(study, StudyFolder(study.folder).results)


def run_study(
    path: Path,
    say: Say,
    allow_missing: bool | None = None,
    discard_changed: bool = False,
) -> Outcome:
    """Run the study at ``path`` to the end, resuming whatever ran before: its plan,
    executed, then published (tables, report, manifest) from the same plan."""
    plan = plan_study(path, allow_missing)
    study, stages, folder = plan.study, list(plan.stages), plan.folder
    folder.root.mkdir(parents=True, exist_ok=True)
    with claimed(folder.lock, what=f"study folder {folder.root}") as held:
        if not held:
            raise OutputError(
                f"another `posharness study run` is running in {folder.root}: let it finish "
                "(`posharness study status` shows it) or stop it, then rerun"
            )
        discarded = refuse_or_discard(stages, folder, discard_changed)
        for stage_id in discarded:
            say(f"{stage_id}: discarded (its settings changed)")
        for line in plan_lines(plan):
            say(line)
        folder.save_study_copy(study.text, study.path)
        save_plan(stages, folder)
        _record_plugins(plan)
        atomic_write_json(folder.root / MISSING_FILE, plan.missing)
        ray = _ray_stages(study)
        try:
            outcome = run_stages(stages, folder, plan.training, say, ray)
        finally:
            if ray is not None:
                ray.close()
        for written in publish(plan):
            say(f"wrote {written}")
    if outcome.failed:
        raise StagesFailed([f"{sid}: {error}" for sid, error in outcome.failed.items()])
    return outcome


def _record_plugins(plan: StudyPlan) -> None:
    """``plugins.json``: the plugins this study's models and tasks came from, so a rerun
    in a new process loads them without ``--include`` (``study.plugins``)."""
    from posharness.study.plugins import record_plugins

    tasks = {task for s in plan.stages if s.kind == EVALUATE for task in s.evaluate["tasks"]}
    specs = [model.spec for model in plan.study.models]
    record_plugins(plan.folder.root, plan.study.path.resolve().parent, specs, sorted(tasks))


def _ray_stages(study: Study) -> Any:
    if study.run.get("executor", "serial") != "ray":
        return None
    from posharness.study.ray_stages import RayStages

    return RayStages(study)


def study_status(path: Path) -> list[tuple[str, str, str]]:
    """(stage, state, detail) per stage: done, running, failed (with its error), pending
    (with progress where a stage has some), read from the folder's records against the
    study's plan (the one ``study run`` executes)."""
    planned = plan_study(path, allow_missing=True, check_data=False)
    folder, training = planned.folder, planned.training
    running = set(folder.running()) if _locked(folder) else set()
    rows = []
    for stage in planned.stages:
        record = folder.record(stage.id) or {}
        if stage.id in running:
            state, detail = "running", _progress(stage, training)
        elif is_done(stage, folder, training):
            state, detail = "done", record.get("at", "") + _weights_note(stage, training)
        elif record.get("status") == "failed" and same_settings(stage, folder):
            state, detail = "failed", record.get("error", "")
        else:
            state, detail = "pending", _progress(stage, training)
        rows.append((stage.id, state, detail))
    for task, problems in planned.missing.items():
        rows.append((f"data/{task}", "missing", problems[0]))
    return rows


WEIGHT_FILES = ("*.safetensors", "*.bin", "*.pt")


def _weights_note(stage: Stage, training: Any) -> str:
    """A finished pretraining run whose weights are not in the folder (a committed study
    keeps run cards and loss logs, not checkpoints): what that means, said once per run."""
    if stage.run_folder is None or training is None:
        return ""
    final = training.finished(stage.run_folder)
    if final is None or any(next(final.glob(p), None) for p in WEIGHT_FILES):
        return ""
    return (
        "; weights absent (run card and loss log only): tables and report rebuild from the "
        "boards, but an evaluation needing this checkpoint fails until it is trained again "
        f"(remove {stage.run_folder.name}'s final/ and its state record to retrain)"
    )


def _locked(folder: StudyFolder) -> bool:
    if not folder.root.is_dir():
        return False
    with claimed(folder.lock, what=f"study folder {folder.root}") as held:
        return not held


def _progress(stage: Stage, training: Any) -> str:
    if stage.run_folder is None or training is None:
        return ""
    step = training.progress(stage.run_folder)
    return f"checkpoint at step {step}" if step else ""


def read_missing(folder: StudyFolder) -> dict[str, list[str]]:
    missing = read_json_or_none(folder.root / MISSING_FILE)
    return missing if isinstance(missing, dict) else {}


def rebuild_report(target: Path) -> list[Path]:
    """Tables, report and manifest again, from a study folder (or the folder of a study
    file) alone: its boards and the copy of the study file it keeps."""
    from posharness.base.errors import StudyFileError
    from posharness.study.folder import STUDY_COPY

    training = training_stage()
    if target.is_dir():
        copy = target / STUDY_COPY
        if not copy.is_file():
            raise StudyFileError(
                f"{target} holds no {STUDY_COPY}: give a study folder `study run` wrote, or "
                "its study file"
            )
        study = read_study(
            copy, training, folder=target.resolve(), base=StudyFolder(target).study_base()
        )
    else:
        study = read_study(target, training)
    return publish(make_plan(study, training, read_missing(StudyFolder(study.folder))))
