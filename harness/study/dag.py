"""A study's stages, in the order they can run: corpus → pretraining of each (PE, seed) →
the evaluation cells of each model → boards → study tables → report.

Each stage carries ``settings``: everything that decides its outputs, in plain JSON. A
stage is done when its record holds the digest of the same settings; a study file edited
so that a finished stage's settings differ is caught by :mod:`posharness.study.changes`
instead of silently mixing old outputs with new ones. Paths inside settings are written
relative to the study folder, so a study folder moved or copied keeps its stages done.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from posharness.storage.hashing import hash_obj
from posharness.study.folder import StudyFolder
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

    @property
    def digest(self) -> str:
        return hash_obj(self.settings)[:16]


def build_stages(
    study: Study, stage: TrainingStage | None, dropped_tasks: frozenset[str] = frozenset()
) -> list[Stage]:
    """Every stage of the study; ``dropped_tasks`` are left out of evaluation (their data is
    missing and the study runs with ``allow_missing``)."""
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
                        study, run, name, model, seed, row, spec, depends, dropped_tasks
                    )
                )
    order = {CORPUS: 0, PRETRAIN: 1, EVALUATE: 2}  # every pretraining before any evaluation
    return sorted(stages, key=lambda stage: order[stage.kind])


def _relative(value: Any, root: Path) -> Any:
    """A value with the study folder's absolute paths written relative to it."""
    if isinstance(value, str) and value.startswith(str(root)):
        return "<study>" + value[len(str(root)) :]
    if isinstance(value, list | tuple):
        return [_relative(item, root) for item in value]
    if isinstance(value, dict):
        return {key: _relative(item, root) for key, item in value.items()}
    return value


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
        settings = {"commands": _relative(commands, study.folder)}
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
        settings={"values": _relative(values, study.folder)},
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
) -> Stage:
    folder = StudyFolder(study.folder)
    run = dict(run)
    offered = declared_modes(model.spec)
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
        "leaderboard": folder.board(row),
    }
    settings = _evaluation_settings(spec, run, study.folder)
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


def _evaluation_settings(spec: str, run: dict[str, Any], root: Path) -> dict[str, Any]:
    """Per task: its options; then the options common to every cell. Laid out so that a
    task, mode or seed added to the file changes no finished task's entry."""
    from posharness.run.plan import task_args_for

    given = run.get("task_args") or {}
    common = {
        key: value
        for key, value in run.items()
        if key not in EXECUTION_ONLY and key not in ("tasks", "modes", "seeds", "task_args")
    }
    return {
        "spec": _relative(spec, root),
        "run": _relative(common, root),
        "tasks": {task: _relative(task_args_for(task, given), root) for task in run["tasks"]},
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
