"""A study folder: where each stage writes, and what is recorded about each stage.

Everything a study makes lives under its folder, so the folder alone is the study: it can
be copied, shared, reported on (``study report``) and compared (``compare`` on its
boards). A stage's record (``state/<stage>.json``: done or failed, with the settings it
ran with) is written atomically after the stage's own outputs, so a kill leaves a stage
either recorded as done with its outputs in place, or not recorded at all.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from posharness.storage.io import atomic_write_json, atomic_write_text

STUDY_COPY = "study.toml"
PLAN_FILE = "plan.json"
SOURCE_FILE = "source.json"


def slug(text: str) -> str:
    """A file name for a stage or row label (``pretrain/BERT-A/seed0`` gives
    ``pretrain-BERT-A-seed0``)."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "-", text).strip("-") or "x"


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
        return self.boards / f"{slug(row_label)}.json"

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
        path = self.record_path(stage_id)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

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

    def forget(self, stage_id: str) -> None:
        self.record_path(stage_id).unlink(missing_ok=True)

    def mark_running(self, stage_ids: list[str]) -> None:
        atomic_write_json(self.running_file, {"stages": stage_ids, "at": _now()})

    def running(self) -> list[str]:
        try:
            return list(json.loads(self.running_file.read_text())["stages"])
        except (OSError, ValueError, KeyError):
            return []

    def save_study_copy(self, text: str, study_file: Path) -> None:
        """The study file as it ran, and where its relative paths are read from (its
        folder, relative to this one), for ``study report`` on the folder alone."""
        atomic_write_text(self.root / STUDY_COPY, text)
        base = os.path.relpath(study_file.resolve().parent, self.root.resolve())
        atomic_write_json(self.root / SOURCE_FILE, {"base": base})

    def study_base(self) -> Path:
        try:
            relative = json.loads((self.root / SOURCE_FILE).read_text())["base"]
        except (OSError, ValueError, KeyError):
            return self.root
        return (self.root / relative).resolve()


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
