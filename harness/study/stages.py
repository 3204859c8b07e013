"""What the study layer needs from a family that pretrains: its options, the commands that
prepare a corpus and pretrain one model, and how to tell a finished run.

The core knows no family (``pyproject``'s import contracts), so a family declares one
:class:`TrainingStage` through the entry point group ``posharness.study_stages``
(``pretrain = "module:STAGE"``). The study runs the family's own commands in a child
process (``python -m posharness pretrain …``): the same code path as a user typing them,
rerun = resume for free, and on Ray the same command line is the task.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from posharness.base.errors import PosharnessError
from posharness.run.option_schema import Option

STAGES_GROUP = "posharness.study_stages"


@dataclass(frozen=True)
class Estimate:
    """A pretraining run's size before it runs: tokens it trains on, and what the number
    rests on (a recipe's time budget fixes steps only when measured)."""

    steps: int | None
    tokens: int | None
    note: str = ""


@dataclass(frozen=True)
class TrainingStage:
    """A family's pretraining, as the study layer drives it."""

    command: str  # the posharness command that trains one model, e.g. "pretrain"
    options: tuple[Option, ...]  # that command's options: the study file's [pretrain] keys
    # options the study sets itself for each run (the model, its seed, the run folder …)
    reserved: frozenset[str]
    can_pretrain: Callable[[str], bool]  # a model name this stage trains
    # (values, corpus folder) → command lines (argv after ``posharness``) that prepare the
    # corpus once for every run, and the values they add to each run (tokenizer, prepared)
    corpus_commands: Callable[[Mapping[str, Any], Path], tuple[list[list[str]], dict[str, Any]]]
    finished: Callable[[Path], Path | None]  # run folder → its final checkpoint, or None
    progress: Callable[[Path], int | None]  # run folder → steps done so far, or None
    estimate: Callable[[Mapping[str, Any]], Estimate]
    spec: Callable[[str, Path], str]  # (model name, checkpoint) → the model spec runs load
    # run folder → (tokens trained, seconds it took), where the run has trained some: the
    # speed the plan's time estimate rests on
    measured: Callable[[Path], tuple[int, float] | None] = lambda folder: None
    # a run's values → the steps it saves a checkpoint at, its last step included (empty:
    # unknown before it runs): the checkpoints a study's [dynamics] evaluates
    checkpoint_steps: Callable[[Mapping[str, Any]], tuple[int, ...]] = lambda values: ()
    # (run folder, step) → its checkpoint's folder (``checkpoint-300``)
    checkpoint: Callable[[Path, int], Path] = lambda folder, step: folder / f"checkpoint-{step}"
    # run folder → {step: (tokens seen, training loss logged at that step)}, read from the
    # run's own log (kept in a study folder without its weights)
    trajectory: Callable[[Path], Mapping[int, tuple[int, float | None]]] = lambda folder: {}

    def arguments(self, values: Mapping[str, Any]) -> list[str]:
        """A command line from option values, each written with its documented flag."""
        argv: list[str] = []
        by_name = {option.name: option for option in self.options}
        for name, value in values.items():
            option = by_name[name]
            if value is None or value is False:
                continue
            if option.type is bool:
                argv.append(option.cli_flag)
            elif isinstance(value, Mapping):
                for key, item in value.items():
                    argv += [option.cli_flag, f"{key}={item}"]
            elif isinstance(value, Sequence) and not isinstance(value, str):
                for item in value:
                    argv += [option.cli_flag, str(item)]
            else:
                argv += [option.cli_flag, str(value)]
        return argv


def training_stage() -> TrainingStage | None:
    """The installed family's pretraining stage, or None when no family declares one."""
    from posharness.plugins.registry import import_target

    found = sorted(entry_points(group=STAGES_GROUP), key=lambda e: e.name)
    if not found:
        return None
    stage = import_target(found[0].value, "study stage", found[0].name)
    if not isinstance(stage, TrainingStage):
        raise PosharnessError(
            f"study stage {found[0].name!r} at {found[0].value} is not a TrainingStage"
        )
    return stage
