"""A dataset corpus naming a missing column suggests a real text column, never itself again."""

from __future__ import annotations

from pathlib import Path

import pytest

from posharness.base.errors import DataError
from posharness.models.pretrain.corpus import read_corpus

datasets = pytest.importorskip("datasets")


def _saved(folder: Path, columns: dict[str, list]) -> Path:
    datasets.Dataset.from_dict(columns).save_to_disk(str(folder))
    return folder


def test_a_missing_column_suggests_a_text_column_not_the_bad_one(tmp_path) -> None:
    saved = _saved(tmp_path / "saved", {"id": [1], "body": ["a b"]})
    with pytest.raises(DataError) as caught:
        list(read_corpus(f"{saved}#nope"))
    message = str(caught.value)
    assert message.endswith(f"e.g. --corpus {saved}#body")  # the int column is not offered
    assert "#nope#" not in message and "\n" not in message


def test_the_suggestion_keeps_a_given_split(tmp_path) -> None:
    splits = datasets.DatasetDict(
        {"train": datasets.Dataset.from_dict({"body": ["a b"]}),
         "validation": datasets.Dataset.from_dict({"body": ["c d"]})}
    )  # fmt: skip
    splits.save_to_disk(str(tmp_path / "dict"))
    with pytest.raises(DataError, match=rf"--corpus {tmp_path / 'dict'}@validation#body$"):
        list(read_corpus(f"{tmp_path / 'dict'}@validation#nope"))


def test_a_dataset_without_any_text_column_says_so(tmp_path) -> None:
    saved = _saved(tmp_path / "saved", {"id": [1, 2]})
    with pytest.raises(DataError, match="no column 'nope' and no text column .*columns: id"):
        list(read_corpus(f"{saved}#nope"))
