"""A study folder: where each stage writes, and what is recorded about each stage.

Everything a study makes lives under its folder, so the folder alone is the study: it can
be copied, shared, reported on (``study report``) and compared (``compare`` on its
boards). A stage's record (``state/<stage>.json``: done or failed, with the settings it
ran with) is written atomically after the stage's own outputs, so a kill leaves a stage
either recorded as done with its outputs in place, or not recorded at all.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from posharness.storage.io import atomic_write_json, atomic_write_text, read_json_or_none

STUDY_COPY = "study.toml"
PLAN_FILE = "plan.json"
SOURCE_FILE = "source.json"


def slug(text: str) -> str:
    """A file name for a stage or row label (``pretrain/BERT-A/seed0`` gives
    ``pretrain-BERT-A-seed0``)."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "-", text).strip("-") or "x"


def board_name(label: str) -> str:
    """A board's file name for a row label: its slug with each ``*`` spelt ``-star``, so
    a starred label (Chen et al.'s BERT-A*) stays apart from the unstarred one."""
    return re.sub(r"-{2,}", "-", slug(label.replace("*", "-star-")))


@dataclass(frozen=True)
class StudyFolder:
    root: Path

    @property
    def corpus(self) -> Path:
        return self.root / "corpus"

    def pretrain_run(self, label: str, seed: int) -> Path:
        return self.root / "pretrain" / f"{slug(label)}-seed{seed}"

    @property
    def results(self) -> Path:
        return self.root / "results"

    @property
    def boards(self) -> Path:
        return self.root / "boards"

    def board(self, row_label: str) -> Path:
        """``boards/<label>.json``, the label's ``*`` written ``-star`` (``BERT-A*`` is
        ``BERT-A-star-s0.json``, not ``BERT-A-s0.json`` beside BERT's own boards); a
        folder written before keeps its board under the old name, read as it is."""
        named = self.boards / f"{board_name(row_label)}.json"
        legacy = self.boards / f"{slug(row_label)}.json"
        return legacy if legacy != named and legacy.is_file() and not named.is_file() else named

    def dynamics_board(self, row_label: str, step: int) -> Path:
        """The board of one checkpoint's evaluation ([dynamics]): one per run and step."""
        return self.boards / "dynamics" / f"{board_name(row_label)}-step{step}.json"

    @property
    def tables(self) -> Path:
        return self.root / "tables"

    @property
    def report(self) -> Path:
        return self.root / "report"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def log(self, stage_id: str) -> Path:
        return self.logs / f"{slug(stage_id)}.log"

    def record_path(self, stage_id: str) -> Path:
        return self.root / "state" / f"{slug(stage_id)}.json"

    @property
    def lock(self) -> Path:
        """What a running study holds (``storage.io.claimed``: the file ``.study.lock``)."""
        return self.root / "study"

    @property
    def running_file(self) -> Path:
        return self.root / "state" / "running.json"

    # -- records ---------------------------------------------------------------------------
    def record(self, stage_id: str) -> dict[str, Any] | None:
        return read_json_or_none(self.record_path(stage_id))

    def mark_done(self, stage_id: str, digest: str, **facts: Any) -> None:
        atomic_write_json(
            self.record_path(stage_id),
            {"stage": stage_id, "status": "done", "settings": digest, "at": _now(), **facts},
        )

    def mark_failed(self, stage_id: str, digest: str, error: str) -> None:
        atomic_write_json(
            self.record_path(stage_id),
            {"stage": stage_id, "status": "failed", "settings": digest, "error": error,
             "at": _now()},
        )  # fmt: skip

    def planned(self, stage_id: str) -> Any:
        """The settings ``plan.json`` holds for a stage (paths relative to the study
        file's folder), or None."""
        plan = read_json_or_none(self.root / PLAN_FILE)
        return plan.get(stage_id) if isinstance(plan, dict) else None

    def forget(self, stage_id: str) -> None:
        self.record_path(stage_id).unlink(missing_ok=True)

    def mark_running(self, stage_ids: list[str]) -> None:
        atomic_write_json(self.running_file, {"stages": stage_ids, "at": _now()})

    def running(self) -> list[str]:
        running = read_json_or_none(self.running_file)
        return list(running.get("stages") or []) if isinstance(running, dict) else []

    def save_study_copy(self, text: str, study_file: Path) -> None:
        """The study file as it ran, and where its relative paths are read from (its
        folder, relative to this one), for ``study report`` on the folder alone."""
        atomic_write_text(self.root / STUDY_COPY, text)
        base = os.path.relpath(study_file.resolve().parent, self.root.resolve())
        atomic_write_json(self.root / SOURCE_FILE, {"base": base})

    def study_base(self) -> Path:
        source = read_json_or_none(self.root / SOURCE_FILE)
        relative = source.get("base") if isinstance(source, dict) else None
        return self.root if relative is None else (self.root / relative).resolve()


def portable(value: Any, base: os.PathLike[str] | str) -> Any:
    """``value`` with each absolute path written relative to ``base`` (the study file's
    folder), lexically: a path the file gives as ``../data/x`` reads ``../data/x`` again,
    never its target through a symlink. What ``plan.json`` records and what a stage's
    digest is taken over, so a study folder keeps its stages done on any machine."""
    if isinstance(value, str) and os.path.isabs(value):
        return os.path.relpath(value, base)
    if isinstance(value, list | tuple):
        return [portable(item, base) for item in value]
    if isinstance(value, dict):
        return {key: portable(item, base) for key, item in value.items()}
    return value


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
