"""A study read once into one immutable plan, passed down: execute → publish → report
(DESIGN.md §12, issue 45 part 4).

The study file is read and checked by :func:`~posharness.study.study_file.read_study`
(keys, tables, tasks, models, plugins); everything the later steps would otherwise look
up again by name is resolved here, once: the family's pretraining stage, each model's
modes, each table's declaration, and the stages with their settings (which hold the
plugin code identities of the models and tasks they run). ``study run`` executes the
plan's stages and publishes from the same plan; ``study status`` reads the folder's
records against it; ``study report`` builds it from the copy of the study file the folder
keeps. No later step reads the study file or resolves a model, task or table name again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from posharness.study.dag import Stage, build_stages, declared_modes
from posharness.study.folder import StudyFolder
from posharness.study.stages import TrainingStage
from posharness.study.study_file import Study
from posharness.study.table_registry import study_table
from posharness.study.table_spec import StudyTable


@dataclass(frozen=True)
class StudyPlan:
    """What a study is and what it will do: every input resolved, nothing run."""

    study: Study
    stages: tuple[Stage, ...]
    missing: Mapping[str, list[str]]  # task → its data problems (left out: allow_missing)
    training: TrainingStage | None  # the installed family's pretraining stage
    tables: tuple[StudyTable, ...]  # the [study] tables' declarations, in the file's order
    # model label → the modes its registered name declares (None: the checkpoint decides)
    modes: Mapping[str, frozenset[str] | None] = field(default_factory=dict)

    @property
    def folder(self) -> StudyFolder:
        return StudyFolder(self.study.folder)


def make_plan(
    study: Study, training: TrainingStage | None, missing: Mapping[str, list[str]]
) -> StudyPlan:
    """The plan of a read study: its stages (``missing`` tasks left out), tables, modes."""
    modes = {model.label: declared_modes(model.spec) for model in study.models}
    stages = build_stages(study, training, frozenset(missing), modes)
    tables = tuple(study_table(table_id) for table_id in study.tables)
    return StudyPlan(study, tuple(stages), dict(missing), training, tables, modes)
