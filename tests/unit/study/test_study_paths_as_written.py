"""Paths as the study file writes them (issue 47, part 9) and superseded rows said
(part 10): a corpus named through a symlinked folder is recorded and run by the name the
file gives, relative to the study, never by the link's target; an evaluation that drops
earlier rows of a board as superseded says so, as docs/studies.md promises."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from posharness.study.changes import save_plan
from posharness.study.dag import EVALUATE, Stage, build_stages
from posharness.study.execute import run_one, study_relative
from posharness.study.folder import StudyFolder
from posharness.study.stages import training_stage
from posharness.study.study_file import read_study
from tests.unit.study.conftest import PRETRAIN_STUDY, write_study


def test_a_corpus_through_a_symlink_is_recorded_as_the_file_names_it(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "deep"
    target.mkdir(parents=True)
    (target / "corpus.txt").write_text("a b c\n")
    here = tmp_path / "work"
    here.mkdir()
    (here / "data").symlink_to(target)
    text = PRETRAIN_STUDY.replace('corpus = "corpus.txt"', 'corpus = "data/corpus.txt"')
    study = read_study(write_study(here, text), training_stage())
    stages = build_stages(study, training_stage())
    folder = StudyFolder(study.folder)
    save_plan(stages, folder)
    plan = json.loads((folder.root / "plan.json").read_text())
    assert plan["pretrain/bert-a/seed0"]["values"]["corpus"] == "data/corpus.txt"
    corpus = next(s for s in stages if s.id == "corpus")
    argv = study_relative(corpus.commands[0], folder.root)
    assert argv[argv.index("--corpus") + 1] == "../data/corpus.txt"
    assert "elsewhere" not in json.dumps(plan) + " ".join(argv)


def test_superseded_rows_are_said_by_the_stage_that_drops_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import posharness.api

    merged = SimpleNamespace(superseded=("tupe-r@x (both): locality_symmetry",))
    monkeypatch.setattr(
        posharness.api, "evaluate", lambda **keywords: SimpleNamespace(merged=merged)
    )
    folder = StudyFolder(tmp_path)
    keywords = {
        "tasks": ["locality_symmetry"],
        "output_dir": folder.results,
        "leaderboard": folder.board("TUPE-R"),
    }
    stage = Stage("evaluate/TUPE-R", EVALUATE, {}, evaluate=keywords)
    said: list[str] = []
    assert run_one(stage, folder, None, said.append) is None
    assert any("superseded" in line and "tupe-r@x (both)" in line for line in said)
