"""Run a study's missing stages: serially here, or pretraining as Ray tasks.

Rerun = resume: a stage recorded as done with the same settings is skipped; a pretraining
stage that was killed resumes from its last checkpoint (the ``pretrain`` command's own
resume); an evaluation stage reruns ``evaluate``, which skips the cells that finished. A
stage that fails is recorded with its one-line error and the stages that need it wait;
the others go on, and the study ends with every failure listed at once.

A study says how far it is, as lines (its output is often a log): after each stage the
stages done, the seconds per stage so far and the time left at that rate, at most every
``$POSHARNESS_PROGRESS_SECONDS`` (60); inside an evaluation stage, the work of a cell that
lasts longer (a fine-tuning) the same way; a pretraining stage writes its own progress
lines into its log, whose path the stage's first line names.

A corpus or pretraining command runs from the study folder with every absolute path in
its command line written relative to that folder (:func:`run_commands`), so its log —
the command as run, then the command's own output — names no path of this machine, and
``cd STUDY && posharness ...`` reruns the logged line.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from posharness.base.errors import PosharnessError
from posharness.base.progress_lines import ProgressLines, counter
from posharness.study.child import run_command
from posharness.study.dag import CORPUS, EVALUATE, PRETRAIN, Stage
from posharness.study.folder import StudyFolder
from posharness.study.stages import TrainingStage

Say = Callable[[str], None]


@dataclass
class Outcome:
    done: list[str] = field(default_factory=list)  # run now
    skipped: list[str] = field(default_factory=list)  # done before
    failed: dict[str, str] = field(default_factory=dict)  # stage id → one-line error
    blocked: dict[str, str] = field(default_factory=dict)  # stage id → the failed stage


def is_done(stage: Stage, folder: StudyFolder, training: TrainingStage | None) -> bool:
    record = folder.record(stage.id)
    if record is None or record.get("status") != "done" or not same_settings(stage, folder):
        return False
    if stage.kind == PRETRAIN and training is not None and stage.run_folder is not None:
        return training.finished(stage.run_folder) is not None
    if stage.kind == EVALUATE:
        return stage.evaluate["leaderboard"].is_file()
    return True


def same_settings(stage: Stage, folder: StudyFolder) -> bool:
    """Whether the stage's record was written with the settings it has now: its digest,
    or, for a record written before digests were taken over portable settings (the
    committed cpu-hour study's, whose digests hold the paths of the machine that ran it),
    the settings ``plan.json`` kept for it, which a run rewrites only after refusing or
    discarding a changed stage (``changes.refuse_or_discard``)."""
    record = folder.record(stage.id) or {}
    if record.get("settings") == stage.digest:
        return True
    planned = folder.planned(stage.id)
    return planned is not None and _plain(planned) == _plain(stage.settings)


def _plain(value: Any) -> Any:
    import json

    return json.loads(json.dumps(value, sort_keys=True, default=str))


def run_stages(
    stages: list[Stage],
    folder: StudyFolder,
    training: TrainingStage | None,
    say: Say,
    ray: Any = None,
) -> Outcome:
    """Every stage not done yet, in order. ``ray``: a :class:`~posharness.study.ray_stages.
    RayStages` that runs the pretraining stages as Ray tasks (all of them at once)."""
    outcome = Outcome()
    pending = []
    for stage in stages:
        if is_done(stage, folder, training):
            outcome.skipped.append(stage.id)
        else:
            pending.append(stage)
    if ray is not None:
        parallel = [s for s in pending if s.kind in (CORPUS, PRETRAIN)]
        ray.run(parallel, folder, training, outcome, say)
        pending = [s for s in pending if s not in parallel]
    stages_left = ProgressLines("study", len(pending), say, unit="stage")
    stages_left.start()
    for index, stage in enumerate(pending):
        if index:  # the rate and time left over the stages run so far
            stages_left.update(index)
        blocker = next(
            (d for d in stage.depends if d in outcome.failed or d in outcome.blocked), None
        )
        if blocker is not None:
            outcome.blocked[stage.id] = blocker
            say(f"{stage.id}: waits for {blocker}, which did not finish")
            continue
        folder.mark_running([stage.id])
        log = f" (progress in {folder.log(stage.id)})" if stage.kind in (CORPUS, PRETRAIN) else ""
        say(f"{stage.id}: running{log}")
        error = run_one(stage, folder, training, say)
        record(stage, folder, training, error, outcome, say)
    folder.mark_running([])
    return outcome


def run_one(
    stage: Stage, folder: StudyFolder, training: TrainingStage | None, say: Say
) -> str | None:
    """One stage, to the end; None when it finished, else its one-line error."""
    if stage.kind in (CORPUS, PRETRAIN):
        return run_commands(stage.commands, folder.root, folder.log(stage.id))
    if stage.checkpoint is not None and not stage.checkpoint.is_dir():
        where = stage.checkpoint.relative_to(folder.root)
        return (
            f"checkpoint {where} is missing (not saved, or deleted since): the run's other "
            "checkpoints are evaluated; retrain the run to read this one"
        )
    return _evaluate(stage, say)


def run_commands(
    commands: Sequence[Sequence[str]], root: Path, log: Path, launcher: Sequence[str] = ()
) -> str | None:
    """``posharness`` commands in order, run from the study folder ``root`` with their
    paths relative to it; None, or the first one-line error (``child.run_command``).

    The log line, the command's output and an error naming the log then hold relative
    paths only (issue 39, part 8: logs held this machine's paths).
    """
    root = Path(root).absolute()
    log = Path(log).absolute()
    where = log.relative_to(root) if log.is_relative_to(root) else log
    with _inside(root):
        for argv in commands:
            error = run_command(study_relative(argv, root), where, launcher)
            if error is not None:
                return error
    return None


def study_relative(argv: Sequence[str], root: Path) -> list[str]:
    """``argv`` with each absolute path written relative to the study folder ``root``.

    A path inside the folder becomes its path from there. One outside it is written as
    the study file names it, lexically (``../data`` through a symlinked ``data`` stays
    ``../data``, issue 47 part 9), where that reaches the same file from the folder; only
    where it does not (the study folder itself reached through a symlink, whose ``..``
    the kernel takes from its real location) does it go through the real paths of both.
    """
    root = Path(root).absolute()
    written = []
    for arg in argv:
        if not os.path.isabs(arg):
            written.append(arg)
        elif Path(arg).is_relative_to(root):
            written.append(os.path.relpath(arg, root))
        else:
            as_written = os.path.relpath(arg, root)
            real = os.path.realpath(arg)
            same = os.path.realpath(os.path.join(os.path.realpath(root), as_written)) == real
            written.append(as_written if same else os.path.relpath(real, os.path.realpath(root)))
    return written


def record(
    stage: Stage,
    folder: StudyFolder,
    training: TrainingStage | None,
    error: str | None,
    outcome: Outcome,
    say: Say,
) -> None:
    if error is None and stage.kind == PRETRAIN and training is not None:
        assert stage.run_folder is not None
        if training.finished(stage.run_folder) is None:
            error = f"{training.command} ended without a final checkpoint in {stage.run_folder}"
    if error is None:
        folder.mark_done(stage.id, stage.digest)
        outcome.done.append(stage.id)
        say(f"{stage.id}: done")
    else:
        folder.mark_failed(stage.id, stage.digest, error)
        outcome.failed[stage.id] = error
        say(f"{stage.id}: failed: {error}")


class _CellLines:
    """The runner's reporter as one line per cell finished (the study's own progress)."""

    def __init__(self, say: Say) -> None:
        self.say, self.at = say, ""

    def cell_skipped(self, cell: Any) -> None:
        pass

    def cell_started(self, cell: Any, index: int, total: int) -> None:
        self.at = f"{index}/{total}"

    def cell_finished(self, cell: Any, result: Any) -> None:
        main = result.metrics.get(result.task.main_metric)
        value = f" {result.task.main_metric}={main.value:.4f}" if main else ""
        self.say(f"  cell {self.at} {cell.label}{value}")

    def progress(self, label: str, total: int) -> Callable[[int], None]:
        """Work inside a cell (a fine-tuning's examples) as a line with its rate and the
        time left every ``$POSHARNESS_PROGRESS_SECONDS`` (60); work shorter is silent."""
        return counter(f"  {label}", total, self.say)


@contextlib.contextmanager
def _inside(folder: Path) -> Iterator[None]:
    """Work from the study folder: evaluation names checkpoints relative to it, so results
    and boards hold no path of this machine (every other path handed to evaluate is
    absolute); a corpus or pretraining command's paths are relative to it."""
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _evaluate(stage: Stage, say: Say) -> str | None:
    from posharness.api import evaluate

    if not stage.evaluate["tasks"]:
        return None  # every task of the study lacks data here (allow_missing)
    try:
        with _inside(stage.evaluate["output_dir"].parent):
            outcome = evaluate(**stage.evaluate, reporter=_CellLines(say))
    except PosharnessError as exc:
        return str(exc).splitlines()[0] if "\n" in str(exc) else str(exc)
    superseded = outcome.merged.superseded if outcome.merged is not None else ()
    if superseded:  # docs/studies.md: a plugin edited, its cells recomputed (issue 47, 10)
        board = stage.evaluate["leaderboard"]
        say(
            f"  {board.parent.name}/{board.name}: {len(superseded)} earlier row(s) dropped, "
            f"superseded by this stage's cells (their result files now hold the new cells): "
            f"{'; '.join(superseded)}"
        )
    return None
