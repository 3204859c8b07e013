"""`study plan` fails on every mistake in a study file before any work: an unknown table
id, a task-option typo, an unknown task, mode or model, each one line with the file's
line and a close match. ``allow_missing`` covers absent data only: a typo never becomes
"data missing", and its error never advises --allow-missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from posharness.base.errors import StudyFileError
from posharness.study.plan_text import plan_lines
from posharness.study.workflow import plan_study, run_study
from tests.unit.study.conftest import write_study

STUDY = """
[study]
name = "checks"
tables = ["chen2023.fig2"]
allow_missing = true

[[model]]
name = "bert-a"
seeds = []

[run]
tasks = ["locality_symmetry"]
modes = ["both", "positional"]
model_args = { init = "random", size = "tiny" }
task_args = { locality_symmetry = { words = 30 } }
"""


def _plan_error(tmp_path: Path, text: str, wrong: str) -> str:
    """The one-line error of `study plan`, checked to name the line holding ``wrong``."""
    path = write_study(tmp_path, text)
    with pytest.raises(StudyFileError) as caught:
        plan_study(path)
    message = str(caught.value)
    line = next(n for n, t in enumerate(path.read_text().splitlines(), 1) if wrong in t)
    assert "\n" not in message
    assert message.startswith(f"{path} line {line}: "), message
    assert "--allow-missing" not in message and "data missing" not in message
    return message


def test_an_unknown_table_id_fails_the_plan_with_its_line_and_a_close_match(
    tmp_path: Path,
) -> None:
    text = STUDY.replace('"chen2023.fig2"', '"chen2023.fig3"')
    message = _plan_error(tmp_path, text, "chen2023.fig3")
    assert "study table 'chen2023.fig3' does not exist" in message
    assert "did you mean chen2023.fig2" in message


def test_an_unknown_table_id_in_a_list_over_several_lines_names_its_own_line(
    tmp_path: Path,
) -> None:
    text = STUDY.replace(
        'tables = ["chen2023.fig2"]', 'tables = [\n  "chen2023.fig2",\n  "tisa2021.toepliz",\n]'
    )
    message = _plan_error(tmp_path, text, "tisa2021.toepliz")
    assert "did you mean tisa2021.toeplitz" in message


def test_a_task_option_typo_is_an_error_even_with_allow_missing(tmp_path: Path) -> None:
    text = STUDY.replace("words = 30", "word = 30")
    message = _plan_error(tmp_path, text, "word = 30")
    assert "[run] task_args: task locality_symmetry has no option 'word'" in message
    assert "did you mean words" in message


def test_a_task_option_under_its_own_header_names_that_line(tmp_path: Path) -> None:
    text = STUDY.replace(
        "task_args = { locality_symmetry = { words = 30 } }",
        "\n[run.task_args.locality_symmetry]\nlength = 32\nword = 30",
    )
    message = _plan_error(tmp_path, text, "word = 30")
    assert "did you mean words" in message


def test_a_typo_in_the_second_run_section_names_the_line_in_that_section(
    tmp_path: Path,
) -> None:
    second = (
        '\n[[run]]\ntasks = ["toeplitz"]\nmodes = ["positional"]\n'
        'model_args = { init = "random", size = "tiny" }\n'
        "task_args = { toeplitz = { lenght = 32 } }\n"
    )
    text = STUDY.replace("[run]", "[[run]]") + second
    path = write_study(tmp_path, text)
    with pytest.raises(StudyFileError) as caught:
        plan_study(path)
    lines = path.read_text().splitlines()
    message = str(caught.value)
    assert f"line {len(lines)}:" in message
    assert "task toeplitz has no option 'lenght'" in message and "did you mean length" in message


def test_a_task_option_value_of_the_wrong_type_names_its_line(tmp_path: Path) -> None:
    text = STUDY.replace("words = 30", 'words = "many"')
    message = _plan_error(tmp_path, text, 'words = "many"')
    assert "locality_symmetry.words" in message and "whole number" in message


def test_options_for_a_task_the_run_does_not_include_are_refused(tmp_path: Path) -> None:
    text = STUDY.replace(
        "{ locality_symmetry = { words = 30 } }",
        "{ locality_symmetry = { words = 30 }, toeplitx = { length = 32 } }",
    )
    message = _plan_error(tmp_path, text, "toeplitx")
    assert "names task 'toeplitx'" in message


def test_an_unknown_mode_fails_with_a_close_match(tmp_path: Path) -> None:
    text = STUDY.replace('"positional"]', '"positonal"]')
    message = _plan_error(tmp_path, text, "positonal")
    assert "no mode 'positonal'" in message and "did you mean positional" in message


def test_an_unknown_task_fails_with_a_close_match(tmp_path: Path) -> None:
    text = STUDY.replace('tasks = ["locality_symmetry"]', 'tasks = ["locality_symetry"]')
    message = _plan_error(tmp_path, text, "locality_symetry")
    assert "locality_symmetry" in message


def test_an_unknown_model_fails_with_its_line(tmp_path: Path) -> None:
    text = STUDY.replace('name = "bert-a"', 'name = "bert-aa"')
    message = _plan_error(tmp_path, text, "bert-aa")
    assert "[model] name" in message and "bert-a" in message


def test_an_option_the_task_checks_with_its_data_is_still_the_files_error(
    tmp_path: Path,
) -> None:
    """A fine-tune protocol's name is checked while the task validates its data; a wrong
    one is the file's mistake even though the data is absent too."""
    text = (
        STUDY.replace('tasks = ["locality_symmetry"]', 'tasks = ["rte"]')
        .replace('modes = ["both", "positional"]', f'data_dir = "{tmp_path / "none"}"')
        .replace("{ locality_symmetry = { words = 30 } }", '{ rte = { protocol = "quik" } }')
        .replace("chen2023.fig2", "chen2023.table1")
    )
    message = _plan_error(tmp_path, text, "quik")
    assert "rte: protocol 'quik' is not known" in message


def test_absent_data_with_allow_missing_still_reads_data_missing(tmp_path: Path) -> None:
    text = (
        STUDY.replace('tasks = ["locality_symmetry"]', 'tasks = ["rte"]')
        .replace('modes = ["both", "positional"]', f'data_dir = "{tmp_path / "none"}"')
        .replace("{ locality_symmetry = { words = 30 } }", '{ rte = { protocol = "quick" } }')
        .replace("chen2023.fig2", "chen2023.table1")
    )
    planned = plan_study(write_study(tmp_path, text))
    assert list(planned.missing) == ["rte"]
    shown = "\n".join(plan_lines(planned))
    assert "data missing, rte left out" in shown


def test_study_run_fails_on_the_same_mistake_before_writing_anything(tmp_path: Path) -> None:
    path = write_study(tmp_path, STUDY.replace('"chen2023.fig2"', '"chen2023.fig3"'))
    with pytest.raises(StudyFileError, match="did you mean chen2023.fig2"):
        run_study(path, lambda line: None)
    assert not (tmp_path / "checks").exists()
