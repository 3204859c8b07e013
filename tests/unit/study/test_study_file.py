"""A study file is checked before any work: every problem is one line naming the file,
the line and the key, and the keys are the commands' own options."""

from __future__ import annotations

from pathlib import Path

import pytest

from posharness.base.errors import StudyFileError
from posharness.study.stages import training_stage
from posharness.study.study_file import read_study
from tests.unit.study.conftest import GEOMETRY_RUN, PRETRAIN_STUDY, write_study

HEAD = """
[study]
name = "s"

[[model]]
name = "bert-a"
seeds = []
"""


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(StudyFileError) as caught:
        read_study(write_study(tmp_path, text), training_stage())
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_an_unknown_run_key_names_its_line_and_the_close_match(tmp_path: Path) -> None:
    text = HEAD + GEOMETRY_RUN.replace('modes = ["both", "positional"]', 'mdoes = ["both"]')
    message = _error(tmp_path, text)
    line = text.lstrip().splitlines().index('mdoes = ["both"]') + 1
    assert f"line {line}" in message
    assert "[run] mdoes" in message and "modes" in message


def test_an_unknown_model_gets_close_matches(tmp_path: Path) -> None:
    message = _error(tmp_path, HEAD.replace('"bert-a"', '"tupe-rr"') + GEOMETRY_RUN)
    assert "tupe-rr" in message and "tupe-r" in message


def test_a_key_the_study_sets_itself_is_refused(tmp_path: Path) -> None:
    text = PRETRAIN_STUDY.replace("steps = 4", "steps = 4\nseed = 3")
    message = _error(tmp_path, text)
    assert "[pretrain] seed" in message and "set by the study" in message


def test_a_pretrain_value_is_checked_against_its_option_type(tmp_path: Path) -> None:
    message = _error(tmp_path, PRETRAIN_STUDY.replace("steps = 4", 'steps = "many"'))
    assert "[pretrain] steps" in message and "whole number" in message


def test_a_run_value_is_checked_by_the_run_option_itself(tmp_path: Path) -> None:
    message = _error(tmp_path, HEAD + GEOMETRY_RUN.replace('device = "cpu"', 'limit = "ten"'))
    assert "[run] limit" in message


def test_every_pretrain_option_is_a_study_key(tmp_path: Path) -> None:
    """An option added to `posharness pretrain` is a study key with no code of the study's."""
    stage = training_stage()
    assert stage is not None
    samples = {bool: "true", int: "3", float: "0.5", Path: '"x"', str: '"mini"'}
    for option in stage.options:
        if option.name in stage.reserved or option.name == "corpus":
            continue
        value = samples[option.type]
        if option.choices:
            value = f'"{option.choices[0]}"'
        if option.multiple:
            value = '{ tie_cls = "true" }'
        text = PRETRAIN_STUDY  # already holds some options (size, steps …)
        if f"\n{option.name} =" not in text:
            text = text.replace("[run]", f"{option.name} = {value}\n\n[run]", 1)
            text = text.replace("\n\n" + f"{option.name} =", f"\n{option.name} =")
        study = read_study(write_study(tmp_path, text), stage)
        assert option.name in study.models[0].pretrain, option.name


def test_a_baseline_must_be_a_model_label(tmp_path: Path) -> None:
    text = HEAD.replace('name = "s"', 'name = "s"\nbaselines = ["BERT"]') + GEOMETRY_RUN
    assert "'BERT' is not a model label" in _error(tmp_path, text)


def test_paths_are_read_relative_to_the_study_file(tmp_path: Path) -> None:
    study = read_study(write_study(tmp_path, PRETRAIN_STUDY), training_stage())
    assert study.models[0].pretrain["corpus"] == str(tmp_path / "corpus.txt")
    assert study.folder == tmp_path / "study"
    assert [m.seeds for m in study.models] == [(0,), (0,)]


def test_invalid_toml_is_one_line(tmp_path: Path) -> None:
    assert "not valid TOML" in _error(tmp_path, "[study\nname = 1")


def test_two_labels_that_would_share_files_are_refused(tmp_path: Path) -> None:
    text = HEAD.replace("seeds = []", 'label = "BERT-A*"\nseeds = []')
    text += '\n[[model]]\nname = "rope"\nlabel = "BERT-A"\nseeds = []\n' + GEOMETRY_RUN
    assert "names the same files" in _error(tmp_path, text)


def test_a_task_option_naming_a_file_beside_the_study_is_read_from_there(tmp_path: Path) -> None:
    (tmp_path / "train.jsonl").write_text("{}\n")
    run = GEOMETRY_RUN.replace(
        'task_args = { locality_symmetry = { words = "12", length = "32" } }',
        'task_args = { snli = { train = "train.jsonl", protocol = "quick" } }',
    ).replace('tasks = ["locality_symmetry"]', 'tasks = ["locality_symmetry", "snli"]')
    study = read_study(write_study(tmp_path, HEAD + run), training_stage())
    options = study.run["task_args"]["snli"]
    assert options == {"train": str(tmp_path / "train.jsonl"), "protocol": "quick"}
