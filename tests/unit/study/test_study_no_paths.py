"""plan.json names the corpus relative to the study file, the stage logs name paths
relative to the study folder, and a finished study folder holds no path of the machine
that ran it (issue 39, part 8)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from posharness.study import execute
from posharness.study.changes import changed_stages, portable_settings, save_plan
from posharness.study.dag import CORPUS, PRETRAIN, Stage
from posharness.study.execute import run_commands, study_relative
from posharness.study.folder import PLAN_FILE, StudyFolder
from tests.unit.study.conftest import PRETRAIN_STUDY, write_study


def _stages(base: Path, run_folder: Path) -> list[Stage]:
    corpus = str(base / "corpus.txt")
    return [
        Stage(CORPUS, CORPUS, {"commands": [["prepare-corpus", "--corpus", corpus]]}),
        Stage(
            "pretrain/bert-a/seed0",
            PRETRAIN,
            {"values": {"corpus": corpus, "tokenizer": "<study>/corpus/tokenizer"}},
            run_folder=run_folder,
        ),
    ]


def test_the_plan_names_the_corpus_relative_to_the_study_file(tmp_path) -> None:
    folder = StudyFolder(tmp_path / "out")
    folder.root.mkdir()
    folder.save_study_copy("", tmp_path / "study.toml")  # the study file's folder: tmp_path
    save_plan(_stages(tmp_path, folder.root / "pretrain" / "run"), folder)
    plan = json.loads((folder.root / PLAN_FILE).read_text())
    assert plan[CORPUS]["commands"] == [["prepare-corpus", "--corpus", "corpus.txt"]]
    assert plan["pretrain/bert-a/seed0"]["values"]["corpus"] == "corpus.txt"
    assert str(tmp_path) not in (folder.root / PLAN_FILE).read_text()


def test_a_plan_written_with_absolute_paths_is_no_change(tmp_path) -> None:
    """A folder from before: its plan.json holds the absolute corpus path. A rerun with the
    same study file sees nothing changed, and an edited corpus still counts as a change."""
    folder = StudyFolder(tmp_path / "out")
    (folder.root / "pretrain" / "run").mkdir(parents=True)  # the run has outputs
    folder.save_study_copy("", tmp_path / "study.toml")
    stages = _stages(tmp_path, folder.root / "pretrain" / "run")
    old = {stage.id: stage.settings for stage in stages}  # absolute, as written before
    (folder.root / PLAN_FILE).write_text(json.dumps(old))
    assert changed_stages(stages, folder) == []
    moved = _stages(tmp_path / "elsewhere", folder.root / "pretrain" / "run")
    changed = changed_stages(moved, folder)
    assert [stage.id for stage, _ in changed] == ["pretrain/bert-a/seed0"]
    assert changed[0][1] == ['values.corpus: "corpus.txt" → "elsewhere/corpus.txt"']


def test_only_absolute_paths_are_rewritten() -> None:
    value = {"a": ["/x/y/z", "<study>/k", "plain", 3], "b": ("/x/q",)}
    assert portable_settings(value, "/x") == {"a": ["y/z", "<study>/k", "plain", 3], "b": ["q"]}


def test_stage_commands_run_from_the_study_folder_with_relative_paths(tmp_path, monkeypatch):
    """What a corpus or pretraining stage hands ``child.run_command`` (which writes the
    command into the log and runs it): relative paths, from the study folder."""
    root = tmp_path / "study"
    root.mkdir()
    seen = []

    def run_command(argv, log, launcher=()):
        seen.append((list(argv), str(log), os.getcwd(), tuple(launcher)))

    monkeypatch.setattr(execute, "run_command", run_command)
    before = os.getcwd()
    commands = [
        ["prepare-corpus", "--corpus", str(tmp_path / "data" / "corpus.txt"), "--block-size",
         "16", "--out", str(root / "corpus" / "prepared"), "--tokenizer", "bert-base-uncased"],
        ["pretrain", "--model", "bert-a", "--out", str(root / "pretrain" / "bert-a-seed0")],
    ]  # fmt: skip
    assert run_commands(commands, root, root / "logs" / "corpus.log", ("accelerate",)) is None
    assert os.getcwd() == before
    here = os.path.realpath(root)
    assert seen == [
        (
            [
                "prepare-corpus",
                "--corpus",
                os.path.join("..", "data", "corpus.txt"),
                "--block-size",
                "16",
                "--out",
                os.path.join("corpus", "prepared"),
                "--tokenizer",
                "bert-base-uncased",
            ],
            os.path.join("logs", "corpus.log"),
            here,
            ("accelerate",),
        ),  # fmt: skip
        (
            ["pretrain", "--model", "bert-a", "--out", os.path.join("pretrain", "bert-a-seed0")],
            os.path.join("logs", "corpus.log"),
            here,
            ("accelerate",),
        ),  # fmt: skip
    ]


def test_a_path_outside_a_symlinked_study_folder_still_leads_to_it(tmp_path) -> None:
    """The study folder reached through a symlink one level deeper than its real place:
    a lexical ``..`` from the link would leave the real folder one level too high."""
    (tmp_path / "real" / "study").mkdir(parents=True)
    (tmp_path / "data").mkdir()
    corpus = tmp_path / "data" / "corpus.txt"
    corpus.write_text("text\n")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "link").symlink_to(tmp_path / "real")
    root = tmp_path / "a" / "link" / "study"
    inside = root / "corpus" / "tokenizer"
    (written_corpus, written_inside) = study_relative([str(corpus), str(inside)], root)
    assert written_inside == os.path.join("corpus", "tokenizer")
    assert not os.path.isabs(written_corpus)
    assert os.path.samefile(os.path.join(os.path.realpath(root), written_corpus), corpus)


@pytest.mark.slow
def test_a_finished_study_folder_holds_no_machine_path(tmp_path, corpus) -> None:
    from posharness.study.workflow import run_study
    from tests.unit.models.pretrain.test_pretrain_no_paths import machine_paths

    (tmp_path / "corpus.txt").write_bytes(corpus.read_bytes())
    study = write_study(tmp_path, PRETRAIN_STUDY.replace('[[model]]\nname = "alibi"\n', ""))
    run_study(study, lambda line: None)
    folder = tmp_path / "study"
    assert (folder / "pretrain").is_dir() and (folder / PLAN_FILE).is_file()
    assert sorted(p.name for p in (folder / "logs").iterdir())  # the stage logs are checked
    # The stage logs too: each command ran from the study folder with relative paths.
    assert machine_paths(folder, tmp_path) == []
