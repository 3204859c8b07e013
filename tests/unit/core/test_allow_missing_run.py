"""``allow_missing`` for ``posharness run`` (issue 40, part 5): a task whose data is absent
is left out with one line saying so, the rest is planned; a typo or an unknown model is
never "data missing"; without the option, the error names it when other tasks could run."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from posharness.base.errors import OptionError, PosharnessError
from posharness.run.option_schema import config_from
from posharness.run.plan import plan
from posharness.run.task_checks import ALLOW_MISSING_ADVICE


def _config(tmp_path: Path, model: str, tasks: list[str], **extra):
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    values = {
        "models": [model],
        "tasks": tasks,
        "output_dir": tmp_path / "results",
        "cache_dir": None,
        "data_dir": data,
        "device": "cpu",
        **extra,
    }
    return config_from(values)


def test_a_task_without_data_is_left_out_in_one_line_and_the_rest_is_planned(
    tmp_path: Path, tiny_bert: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = _config(tmp_path, f"hf:{tiny_bert}", ["rte", "toeplitz"], allow_missing=True)
    with caplog.at_level(logging.WARNING):
        cells = plan(config, "cpu")
    assert [cell.task.spec.name for cell in cells] == ["toeplitz"]
    lines = [r.getMessage() for r in caplog.records if "left out" in r.getMessage()]
    assert len(lines) == 1 and len(lines[0].splitlines()) == 1
    assert lines[0].startswith("posharness: rte left out (--allow-missing), its data is missing")


def test_without_it_the_error_names_the_option_when_other_tasks_could_run(
    tmp_path: Path, tiny_bert: Path
) -> None:
    config = _config(tmp_path, f"hf:{tiny_bert}", ["rte", "toeplitz"])
    with pytest.raises(PosharnessError) as error:
        plan(config, "cpu")
    assert str(error.value).startswith("rte: no train split found")
    assert str(error.value).endswith(ALLOW_MISSING_ADVICE)


def test_a_task_option_typo_is_never_left_out(tmp_path: Path, tiny_bert: Path) -> None:
    config = _config(
        tmp_path,
        f"hf:{tiny_bert}",
        ["rte", "locality_symmetry"],
        allow_missing=True,
        task_args={"locality_symmetry": {"word": "30"}},
    )
    with pytest.raises(OptionError, match="locality_symmetry has no option 'word'") as error:
        plan(config, "cpu")
    assert "--allow-missing" not in str(error.value)


def test_an_unknown_model_is_never_left_out(tmp_path: Path) -> None:
    config = _config(tmp_path, "no-such-model", ["rte", "toeplitz"], allow_missing=True)
    with pytest.raises(PosharnessError, match="no-such-model"):
        plan(config, "cpu")


def test_when_every_task_lacks_data_the_run_stops_with_their_problems(
    tmp_path: Path, tiny_bert: Path
) -> None:
    config = _config(tmp_path, f"hf:{tiny_bert}", ["rte", "mrpc"], allow_missing=True)
    with pytest.raises(PosharnessError) as error:
        plan(config, "cpu")
    text = str(error.value)
    assert "rte: no train split" in text and "mrpc: no train split" in text
    assert "every task's data is missing" in text


def test_posharness_run_allow_missing_runs_the_rest(
    tmp_path: Path,
    tiny_bert: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    from tests.cli_helpers import run_isolated

    code = run_isolated(
        tmp_path,
        "--model",
        f"hf:{tiny_bert}",
        "--tasks",
        "rte,toeplitz",
        "--limit",
        "4",
        "--allow-missing",
        "--task-arg",
        "toeplitz.length=16",
    )
    err = capsys.readouterr().err
    assert code == 0, err
    assert "rte left out (--allow-missing)" in err + caplog.text  # the logger's stderr line
    assert (tmp_path / "board.json").exists()
