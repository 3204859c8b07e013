"""Advice in one round (issue 27, part 8): the first error list of a run names every input
it lacks, the training data of a classifier that a task reuses included, so a user never
learns of a missing dataset only after fixing the others."""

from __future__ import annotations

from pathlib import Path

import pytest

from posharness.base.errors import DataError
from posharness.tasks.finetune.data.locate import dataset, locate_splits
from tests.cli_helpers import cli

GLUE = ("cola", "sst2", "mrpc", "stsb", "qqp", "mnli", "qnli", "rte", "wnli")


@pytest.mark.parametrize("data_dir", [False, True], ids=["no-data-dir", "empty-data-dir"])
def test_the_headline_commands_first_list_names_the_snli_training_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data_dir: bool
) -> None:
    extra = ["--data-dir", str(tmp_path / "data")] if data_dir else []
    (tmp_path / "data").mkdir()
    code = cli(
        "run",
        "--model",
        "tupe-r",
        "--tasks",
        "glue,shuffle_sr",
        "--output-dir",
        str(tmp_path / "results"),
        "--no-cache",
        *extra,
    )
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    header, *problems = err.strip().splitlines()
    assert header.endswith(f"{len(problems)} problems stop this run (nothing was run):")
    assert "model tupe-r has no checkpoint" in problems[0]
    for name in GLUE:
        assert sum(line.startswith(f"  - {name}: no train split found") for line in problems) == 1
    snli = [line for line in problems if line.startswith("  - snli: no train split found")]
    assert len(snli) == 1, problems  # the classifier's training data, named once
    assert "(nor dev, test)" in snli[0] and "--task-arg snli.train=FILE" in snli[0]
    source = "snli/snli_1.0/snli_1.0_test.jsonl"  # and the probe's own parsed source
    assert sum(source in line for line in problems if not line.startswith("  - snli:")) == 1
    assert len(problems) == 12


def test_every_missing_split_of_a_dataset_is_named_in_its_one_line(tmp_path: Path) -> None:
    with pytest.raises(DataError) as error:
        locate_splits(dataset("mnli"), tmp_path, None, {})
    assert str(error.value).startswith(
        "mnli: no train split found (nor dev_matched, dev_mismatched)"
    )


def test_a_split_given_as_a_file_is_not_reported_missing(tmp_path: Path) -> None:
    train = tmp_path / "train.jsonl"
    train.write_text("{}\n")
    with pytest.raises(DataError) as error:
        locate_splits(dataset("snli"), tmp_path, None, {"train": str(train)})
    assert str(error.value).startswith("snli: no dev split found (nor test)")
