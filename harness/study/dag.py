"""A study's stages, in the order they can run: corpus → pretraining of each (PE, seed) →
the evaluation cells of each model → boards → study tables → report.

Each stage carries ``settings``: everything that decides its outputs, in plain JSON. A
stage is done when its record holds the digest of the same settings; a study file edited
so that a finished stage's settings differ is caught by :mod:`posharness.study.changes`
instead of silently mixing old outputs with new ones. Paths inside settings are written
relative to the study folder, so a study folder moved or copied keeps its stages done.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from posharness.storage.hashing import hash_obj
from posharness.study.folder import StudyFolder, portable
from posharness.study.name_checks import listed
from posharness.study.stages import TrainingStage
from posharness.study.study_file import Study, StudyModel

CORPUS, PRETRAIN, EVALUATE = "corpus", "pretrain", "evaluate"


@dataclass(frozen=True)
class Stage:
    id: str  # ``corpus``, ``pretrain/BERT-A/seed0``, ``evaluate/BERT-A``
    kind: str
    settings: dict[str, Any]  # what decides the outputs (relative paths)
    depends: tuple[str, ...] = ()
    commands: tuple[tuple[str, ...], ...] = ()  # argv after ``posharness`` (corpus, pretrain)
    run_folder: Path | None = None  # a pretraining run's folder
    model: StudyModel | None = None
    seed: int | None = None  # the pretraining seed of the model this stage trains or scores
    row_label: str = ""  # the model's label in tables (with its seed when it has several)
    spec: str = ""  # the spec the evaluation loads (a checkpoint relative to the study folder)
    evaluate: dict[str, Any] = field(default_factory=dict)  # evaluate()'s keywords
    step: int | None = None  # a [dynamics] stage: the checkpoint's step (None: final/)
    checkpoint: Path | None = None  # that checkpoint's folder

    @property
    def digest(self) -> str:
        return hash_obj(self.settings)[:16]


def build_stages(
    study: Study,
    stage: TrainingStage | None,
    dropped_tasks: frozenset[str] = frozenset(),
    modes: Mapping[str, frozenset[str] | None] | None = None,
) -> list[Stage]:
    """Every stage of the study; ``dropped_tasks`` are left out of evaluation (their data is
    missing and the study runs with ``allow_missing``); ``modes``: each model label's
    declared modes, as the plan resolved them (``plan.make_plan``)."""
    if modes is None:
        modes = {model.label: declared_modes(model.spec) for model in study.models}
    folder = StudyFolder(study.folder)
    stages: list[Stage] = []
    corpora: dict[str, tuple[Stage, dict[str, Any]]] = {}
    for model in study.models:
        seeds: list[int | None] = list(model.seeds) or [None]
        for seed in seeds:
            row = model.row_label(seed)
            spec, depends = model.spec, ()
            if model.pretrained_here and stage is not None and seed is not None:
                corpus_stage, added = _corpus_stage(study, stage, model, folder, corpora, stages)
                pretrain = _pretrain_stage(study, stage, model, seed, folder, corpus_stage, added)
                stages.append(pretrain)
                assert pretrain.run_folder is not None
                # Relative to the study folder, where evaluation runs (execute.py): result
                # folders and boards name the checkpoint as the folder does, on any machine.
                spec = stage.spec(
                    model.spec, pretrain.run_folder.relative_to(study.folder) / "final"
                )
                depends = (pretrain.id,)
            for index, run in enumerate(study.runs):
                name = f"{EVALUATE}/{row}" + (f"/{index + 1}" if len(study.runs) > 1 else "")
                stages.append(
                    _evaluate_stage(
                        study, run, name, model, seed, row, spec, depends, dropped_tasks,
                        offered=modes.get(model.label),
                    )
                )  # fmt: skip
            if (
                study.dynamics is not None
                and depends
                and stage is not None
                and (study.dynamics.seeds is None or seed in study.dynamics.seeds)
            ):
                stages += _checkpoint_stages(
                    study, stage, model, seed, depends, dropped_tasks, modes.get(model.label)
                )
    order = {CORPUS: 0, PRETRAIN: 1, EVALUATE: 2}  # every pretraining before any evaluation
    return sorted(stages, key=lambda stage: order[stage.kind])


def _checkpoint_stages(
    study: Study,
    stage: TrainingStage,
    model: StudyModel,
    seed: int | None,
    depends: tuple[str, ...],
    dropped: frozenset[str],
    offered: frozenset[str] | None = None,
) -> list[Stage]:
    """[dynamics]: the chosen [[run]] sections once per saved checkpoint of the run
    (``evaluate/BERT s0/step300``), each to its own board under ``boards/dynamics/``;
    the last step is the ``final/`` model the run's own stages evaluate."""
    from posharness.base.errors import StudyFileError

    assert study.dynamics is not None and seed is not None
    saved = stage.checkpoint_steps(model.pretrain)
    steps = study.dynamics.steps or saved
    if not steps:
        raise StudyFileError(
            f"{study.path}: [dynamics]: the step count of {model.label}'s runs is not known "
            "before they run (a time budget): give steps = N in [pretrain], or the steps to "
            "read: [dynamics] checkpoints = [300, 600]"
        )
    folder = StudyFolder(study.folder)
    run_folder = folder.pretrain_run(model.label, seed)
    row = model.row_label(seed)
    found = []
    for step in steps:
        if saved and step == saved[-1]:
            continue  # final/: the stages above
        checkpoint = stage.checkpoint(run_folder, step)
        spec = stage.spec(model.spec, checkpoint.relative_to(study.folder))
        for index in study.dynamics.runs:
            several = f"/{index + 1}" if len(study.dynamics.runs) > 1 else ""
            evaluated = _evaluate_stage(
                study,
                study.runs[index],
                f"{EVALUATE}/{row}/step{step}{several}",
                model,
                seed,
                row,
                spec,
                depends,
                dropped,
                board=folder.dynamics_board(row, step),
                offered=offered,
            )
            found.append(replace(evaluated, step=step, checkpoint=checkpoint))
    return found


def _relative(value: Any, root: Path, base: Path | None = None) -> Any:
    """A value with the study folder's absolute paths written ``<study>/…`` and, given
    ``base`` (the study file's folder), every other absolute path relative to it as the
    file writes it: settings, and so a stage's digest, name no folder of this machine, and
    a study folder cloned elsewhere keeps its stages done (issue 46: every committed stage
    read ``pending`` on a fresh clone)."""
    if isinstance(value, str) and value.startswith(str(root)):
        return "<study>" + value[len(str(root)) :]
    if isinstance(value, list | tuple):
        return [_relative(item, root, base) for item in value]
    if isinstance(value, dict):
        return {key: _relative(item, root, base) for key, item in value.items()}
    return portable(value, base) if base is not None else value


def _corpus_stage(
    study: Study,
    stage: TrainingStage,
    model: StudyModel,
    folder: StudyFolder,
    corpora: dict[str, tuple[Stage, dict[str, Any]]],
    stages: list[Stage],
) -> tuple[Stage, dict[str, Any]]:
    """One corpus stage per distinct corpus preparation (usually one for the study)."""
    commands, added = stage.corpus_commands(model.pretrain, folder.corpus)
    key = hash_obj(commands)
    if key not in corpora:
        index = len(corpora)
        where = folder.corpus if index == 0 else folder.corpus.with_name(f"corpus{index}")
        if index:
            commands, added = stage.corpus_commands(model.pretrain, where)
        settings = {"commands": _relative(commands, study.folder, study.base)}
        corpus = Stage(
            id=CORPUS if index == 0 else f"{CORPUS}{index}",
            kind=CORPUS,
            settings=settings,
            commands=tuple(tuple(c) for c in commands),
        )
        stages.append(corpus)
        corpora[key] = (corpus, added)
    return corpora[key]


def _pretrain_stage(
    study: Study,
    stage: TrainingStage,
    model: StudyModel,
    seed: int,
    folder: StudyFolder,
    corpus: Stage,
    added: dict[str, Any],
) -> Stage:
    run_folder = folder.pretrain_run(model.label, seed)
    values = {**model.pretrain, **added, "name": model.spec, "seed": seed}
    if model.model_args:
        values["model_args"] = dict(model.model_args)
    from posharness.plugins import INCLUDED

    # A plugin PE loaded with --include reaches the child through the same option.
    includes = [part for path in INCLUDED for part in ("--include", path)]
    argv = [stage.command, *includes, *stage.arguments(values), "--out", str(run_folder)]
    return Stage(
        id=f"{PRETRAIN}/{model.label}/seed{seed}",
        kind=PRETRAIN,
        settings={"values": _relative(values, study.folder, study.base)},
        depends=(corpus.id,),
        commands=(tuple(argv),),
        run_folder=run_folder,
        model=model,
        seed=seed,
        row_label=model.row_label(seed),
    )


def _evaluate_stage(
    study: Study,
    run: Any,
    stage_id: str,
    model: StudyModel,
    seed: int | None,
    row: str,
    spec: str,
    depends: tuple[str, ...],
    dropped: frozenset[str],
    board: Path | None = None,
    offered: frozenset[str] | None = None,
) -> Stage:
    folder = StudyFolder(study.folder)
    run = dict(run)
    if offered is not None:  # a mode the model lacks (nope: positional) is left out
        run["modes"] = [m for m in listed(run.get("modes", ["both"])) if m in offered]
    tasks = [task for task in _expanded(run["tasks"]) if task not in dropped]
    run["tasks"] = tasks
    if model.model_args and not model.pretrained_here:
        run["model_args"] = {**dict(run.get("model_args") or {}), **model.model_args}
    keywords = {
        **run,
        "models": [spec],
        "output_dir": folder.results,
        "leaderboard": board or folder.board(row),
    }
    settings = _evaluation_settings(spec, run, study.folder, study.base)
    from posharness.study.plugins import plugin_code

    code = plugin_code([spec], tasks)
    if code:  # a plugin's code edited: the stage runs again (its unchanged cells are kept)
        settings["plugins"] = code
    return Stage(
        id=stage_id,
        kind=EVALUATE,
        settings=settings,
        depends=depends,
        model=model,
        seed=seed,
        row_label=row,
        spec=spec,
        evaluate=keywords,
    )


# run options that change how cells run, never what they compute (a cell's own key holds
# what it computes, device kind included): editing them is no change to a finished stage
EXECUTION_ONLY = frozenset(
    {"executor", "ray_address", "cpus_per_cell", "gpus_per_cell", "batch_size", "cache_dir",
     "overwrite"}
)  # fmt: skip


def _evaluation_settings(
    spec: str, run: dict[str, Any], root: Path, base: Path | None = None
) -> dict[str, Any]:
    """Per task: its options; then the options common to every cell. Laid out so that a
    task, mode or seed added to the file changes no finished task's entry."""
    from posharness.study.name_checks import task_args_for

    given = run.get("task_args") or {}
    common = {
        key: value
        for key, value in run.items()
        if key not in EXECUTION_ONLY and key not in ("tasks", "modes", "seeds", "task_args")
    }
    return {
        "spec": _relative(spec, root, base),
        "run": _relative(common, root, base),
        "tasks": {task: _relative(task_args_for(task, given), root, base) for task in run["tasks"]},
        "modes": list(run.get("modes", ["both"])),
        "seeds": run.get("seeds", [0]),
    }


def declared_modes(spec: str) -> frozenset[str] | None:
    """The modes a model's registered name offers, where it declares them plainly (the zoo
    and most entries); None where it depends on the checkpoint (``hf:``)."""
    from posharness.contracts.model_spec import ModelEntry, parse_model_spec
    from posharness.plugins import models

    name = parse_model_spec(spec).name
    try:
        entry = models.get(name)
    except Exception:  # an unknown name fails in the study file check, not here
        return None
    if not isinstance(entry, ModelEntry) or ";" in entry.modes:
        return None
    return frozenset(m.strip() for m in entry.modes.split(",") if m.strip())


def _expanded(tasks: Any) -> list[str]:
    from posharness.plugins import tasks as task_registry

    names = [tasks] if isinstance(tasks, str) else list(tasks)
    names = [part.strip() for name in names for part in name.split(",") if part.strip()]
    return task_registry.expand(names)
