"""The plan a study prints before it does anything: stages by kind, what is done, what
will run, and what it will cost (pretraining tokens, evaluation cells), so a study sized
by mistake for a cluster is seen on a laptop before its first step."""

from __future__ import annotations

from collections import Counter

from posharness.study.dag import CORPUS, EVALUATE, PRETRAIN, Stage
from posharness.study.execute import is_done
from posharness.study.plan import StudyPlan
from posharness.study.stages import TrainingStage


def plan_lines(plan: StudyPlan) -> list[str]:
    """What ``study plan`` and the first lines of ``study run`` print."""
    study, stages, missing = plan.study, list(plan.stages), plan.missing
    folder, training = plan.folder, plan.training
    done = {stage.id for stage in stages if is_done(stage, folder, training)}
    kinds = Counter(stage.kind for stage in stages)
    left = Counter(stage.kind for stage in stages if stage.id not in done)
    lines = [f"study {study.name}: {len(study.models)} model(s), folder {folder.root}"]
    lines += [f"  {note}" for note in study.plugins.notes]  # plugins changed since last run
    for kind in (CORPUS, PRETRAIN, EVALUATE):
        if kinds[kind]:
            lines.append(f"  {kind}: {kinds[kind]} stage(s), {left[kind]} to run")
    lines += _pretraining_cost(stages, done, training)
    lines += _evaluation_cost(stages, done)
    for task, problems in missing.items():
        lines.append(f"  data missing, {task} left out: {problems[0]}")
    lines.append(f"  then: boards, tables ({', '.join(study.tables) or 'none'}), report")
    return lines


def _pretraining_cost(
    stages: list[Stage], done: set[str], training: TrainingStage | None
) -> list[str]:
    runs = [s for s in stages if s.kind == PRETRAIN and s.id not in done]
    if not runs or training is None:
        return []
    tokens, steps, notes = 0, 0, set()
    for stage in runs:
        assert stage.model is not None
        estimate = training.estimate(stage.model.pretrain)
        tokens += estimate.tokens or 0
        steps += estimate.steps or 0
        if estimate.note:
            notes.add(estimate.note)
    started = [s for s in runs if s.run_folder is not None and training.progress(s.run_folder)]
    text = f"  cost: {len(runs)} pretraining run(s), {steps:,} steps, {tokens / 1e6:,.1f}M tokens"
    if started:
        text += f" ({len(started)} resume from a checkpoint)"
    text += "".join(f"; {note}" for note in sorted(notes))
    speed = _measured_speed(stages, training)
    if speed is not None and tokens:
        at = f"{speed:,.0f} tokens/s"
        text += f"; about {_duration(tokens / speed)} at the {at} this study's runs measured"
    elif tokens:
        text += "; time: not measured yet (`posharness pretrain --plan-only` measures it)"
    return [text]


def _measured_speed(stages: list[Stage], training: TrainingStage) -> float | None:
    """Tokens per second over every run of this study that has trained some."""
    found = [
        training.measured(s.run_folder)
        for s in stages
        if s.kind == PRETRAIN and s.run_folder is not None
    ]
    tokens = sum(m[0] for m in found if m is not None)
    seconds = sum(m[1] for m in found if m is not None)
    return tokens / seconds if seconds > 0 else None


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _evaluation_cost(stages: list[Stage], done: set[str]) -> list[str]:
    runs = [s for s in stages if s.kind == EVALUATE and s.id not in done]
    if not runs:
        return []
    cells = 0
    for stage in runs:
        keywords = stage.evaluate
        modes = keywords.get("modes", ("both",))
        seeds = keywords.get("seeds", (0,))
        modes = [modes] if isinstance(modes, str) else modes
        seeds = [seeds] if isinstance(seeds, int) else seeds
        cells += len(keywords["tasks"]) * len(modes) * len(seeds)
    return [
        f"  cost: {cells} evaluation cell(s) over {len({s.row_label for s in runs})} "
        "model(s) (finished cells are skipped)"
    ]
