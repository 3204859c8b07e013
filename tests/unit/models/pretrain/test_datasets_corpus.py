"""Pretraining corpora from Hugging Face datasets: saved folders, parquet files, hub names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from posharness.base.errors import DataError
from posharness.models.pretrain import datasets_corpus
from posharness.models.pretrain.corpus import corpus_identity, packed_blocks, read_corpus
from posharness.models.pretrain.datasets_corpus import dataset_spec
from posharness.models.pretrain.prepared import MANIFEST, prepare_corpus
from posharness.models.pretrain.vocab import train_wordpiece
from tests.unit.models.pretrain.test_prepared_corpus import CountingTokenizer
from tests.unit.models.pretrain.test_pretrain_corpus import toy_corpus

datasets = pytest.importorskip("datasets")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return toy_corpus(tmp_path / "text", sentences=300)


@pytest.fixture
def lines(corpus: Path) -> list[str]:
    return corpus.read_text().splitlines()


@pytest.fixture
def tokenizer(corpus: Path):
    return train_wordpiece(corpus, 80)


def _saved(folder: Path, columns: dict[str, list]) -> Path:
    datasets.Dataset.from_dict(columns).save_to_disk(str(folder))
    return folder


def _rows(prepared) -> np.ndarray:
    rows = prepared.blocks()
    return rows[np.arange(len(rows))]


def test_a_saved_dataset_gives_the_rows_of_the_same_text_as_a_file(
    tmp_path, corpus, lines, tokenizer
) -> None:
    saved = _saved(tmp_path / "saved", {"id": list(range(len(lines))), "text": lines})
    assert list(read_corpus(saved)) == list(read_corpus(corpus)) == lines
    from_text = prepare_corpus(corpus, tokenizer, 16, tmp_path / "corpora")
    from_dataset = prepare_corpus(saved, tokenizer, 16, tmp_path / "corpora")
    assert from_dataset.folder != from_text.folder  # another identity, the same rows
    assert np.array_equal(_rows(from_dataset), _rows(from_text))
    assert np.array_equal(_rows(from_dataset), packed_blocks(lines, tokenizer, 16))
    manifest = json.loads((from_dataset.folder / MANIFEST).read_text())
    assert manifest["identity"]["kind"] == "datasets save_to_disk folder"
    assert (manifest["identity"]["split"], manifest["identity"]["column"]) == ("train", "text")


def test_a_parquet_folder_and_a_dataset_dict_split_and_column(tmp_path, lines, tokenizer):
    half = len(lines) // 2
    parquet = tmp_path / "parquet"
    parquet.mkdir()
    datasets.Dataset.from_dict({"body": lines[:half]}).to_parquet(str(parquet / "a.parquet"))
    datasets.Dataset.from_dict({"body": lines[half:]}).to_parquet(str(parquet / "b.parquet"))
    assert list(read_corpus(f"{parquet}#body")) == lines
    assert list(read_corpus(f"{parquet / 'a.parquet'}#body")) == lines[:half]  # one file
    assert list(read_corpus(Path(f"{parquet}#body"))) == lines  # what loop.py passes
    expected = packed_blocks(lines, tokenizer, 16)
    prepared = prepare_corpus(Path(f"{parquet}#body"), tokenizer, 16, tmp_path / "corpora")
    assert np.array_equal(_rows(prepared), expected)

    splits = datasets.DatasetDict(
        {
            "train": datasets.Dataset.from_dict({"text": ["not this one"]}),
            "validation": datasets.Dataset.from_dict({"text": lines}),
        }
    )
    splits.save_to_disk(str(tmp_path / "dict"))
    assert list(read_corpus(f"{tmp_path / 'dict'}@validation")) == lines
    assert list(read_corpus(tmp_path / "dict")) == ["not this one"]  # train by default
    with pytest.raises(DataError, match=r"no split 'test' \(splits: train, validation\)"):
        list(read_corpus(f"{tmp_path / 'dict'}@test"))


def test_hf_prefix_reads_a_local_folder_of_json_lines_through_datasets(tmp_path, lines):
    folder = tmp_path / "jsonl"
    folder.mkdir()
    (folder / "train.jsonl").write_text("".join(json.dumps({"t": x}) + "\n" for x in lines))
    spec = dataset_spec(f"hf:{folder}#t")
    assert spec is not None and spec.kind == "files"
    assert list(read_corpus(f"hf:{folder}#t")) == lines


def test_dataset_rows_are_cleaned_like_json_lines_and_empty_ones_skipped(tmp_path) -> None:
    saved = _saved(tmp_path / "s", {"text": ["  one \n\n two  ", "", None, "three"]})
    assert list(read_corpus(saved)) == ["one\ntwo", "three"]


def test_a_missing_text_column_names_the_columns(tmp_path) -> None:
    saved = _saved(tmp_path / "s", {"body": ["a b"], "id": [1]})
    with pytest.raises(DataError, match=r"no column 'text' \(columns: body, id\).*#COLUMN") as e:
        list(read_corpus(saved))
    assert "\n" not in str(e.value)
    with pytest.raises(DataError, match="column 'id' holds int64, not text"):
        list(read_corpus(f"{saved}#id"))


def test_a_dataset_without_text_says_what_was_read(tmp_path) -> None:
    saved = _saved(tmp_path / "s", {"text": ["", "  ", None], "body": ["x", "y", "z"]})
    with pytest.raises(
        DataError, match=r"has no text: 3 rows of column 'text' .*\(columns: text, body\)"
    ) as caught:
        list(read_corpus(saved))
    assert "\n" not in str(caught.value)


def test_identity_follows_the_data_split_and_column_not_the_location(tmp_path, lines):
    import shutil

    saved = _saved(tmp_path / "a", {"text": lines, "other": lines[::-1]})
    shutil.copytree(saved, tmp_path / "moved")
    identity = corpus_identity(saved)
    assert identity == corpus_identity(tmp_path / "moved") == corpus_identity(str(saved))
    assert corpus_identity(f"{saved}#other") != identity
    _saved(tmp_path / "b", {"text": [*lines, "one more"], "other": [*lines[::-1], "x"]})
    assert corpus_identity(tmp_path / "b") != identity
    assert corpus_identity(saved) == identity  # reading does not change it


def test_a_second_prepare_of_a_dataset_tokenises_nothing(tmp_path, lines, tokenizer) -> None:
    saved = _saved(tmp_path / "saved", {"text": lines})
    first = CountingTokenizer(tokenizer)
    prepare_corpus(saved, first, 16, tmp_path / "corpora", documents_per_call=8)
    assert first.calls > 1
    second = CountingTokenizer(tokenizer)
    prepare_corpus(saved, second, 16, tmp_path / "corpora")
    assert second.calls == 0


def test_documents_stream_a_batch_of_rows_at_a_time(tmp_path, monkeypatch) -> None:
    saved = _saved(tmp_path / "s", {"text": [f"row {i}" for i in range(50)]})
    monkeypatch.setattr(datasets_corpus, "_ROWS_PER_BATCH", 7)
    seen: list[int] = []
    original = datasets.Dataset.iter

    def iter_recording(self, batch_size, *args, **kwargs):
        seen.append(batch_size)
        return original(self, batch_size, *args, **kwargs)

    monkeypatch.setattr(datasets.Dataset, "iter", iter_recording)
    documents = read_corpus(saved)
    assert next(documents) == "row 0"
    assert seen == [7]
    assert list(documents)[-1] == "row 49"


def test_spec_syntax() -> None:
    hub = dataset_spec("hf:wikimedia/wikipedia:20231101.en@train[:1%]#text")
    assert hub is not None and (hub.kind, hub.source, hub.config, hub.split, hub.column) == (
        "hub",
        "wikimedia/wikipedia",
        "20231101.en",
        "train[:1%]",
        "text",
    )
    plain = dataset_spec("hf:bookcorpus")
    assert plain is not None and (plain.config, plain.split, plain.column) == (
        None,
        "train",
        "text",
    )
    assert dataset_spec(Path("hf:bookcorpus")) == plain  # survives loop.py's Path(...)
    assert dataset_spec("no/such/folder") is None  # left to the text reader's one-line error
    with pytest.raises(DataError, match="no dataset name after hf:"):
        dataset_spec("hf:")


def test_an_unreachable_hub_fails_at_once_in_one_line(monkeypatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    for proxy in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(proxy, raising=False)
    monkeypatch.setattr(datasets_corpus, "_offline", lambda: False)
    monkeypatch.setattr(datasets_corpus, "_hub_endpoint", lambda: "http://127.0.0.1:9")
    start = time.monotonic()
    with pytest.raises(DataError, match=r"hub \(127.0.0.1\) is unreachable .*save_to_disk") as e:
        list(read_corpus("hf:bookcorpus"))
    assert time.monotonic() - start < 10 and "\n" not in str(e.value)
    with pytest.raises(DataError, match="is unreachable"):
        corpus_identity(Path("hf:bookcorpus"))


def test_offline_a_hub_name_fails_fast_naming_a_local_copy(tmp_path) -> None:
    """In a fresh process with HF_HUB_OFFLINE / HF_DATASETS_OFFLINE set, as a user would."""
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "HF_DATASETS_CACHE": str(tmp_path / "hf" / "datasets"),
    }
    script = (
        "from posharness.base.errors import PosharnessError\n"
        "from posharness.models.pretrain.corpus import read_corpus\n"
        "try:\n    list(read_corpus('hf:bookcorpus'))\n"
        "except PosharnessError as exc:\n    print(type(exc).__name__, exc)\n"
    )
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert time.monotonic() - start < 60
    out = done.stdout.strip()
    assert out.startswith("DataError cannot load dataset bookcorpus") and "\n" not in out
    assert "offline mode is on" in out and "--corpus FOLDER" in out


def test_pretrain_and_prepare_corpus_take_a_dataset_spec(tmp_path, lines, monkeypatch) -> None:
    """The CLI's --corpus (a click Path, then Path(...) in loop.py) carries @SPLIT#COLUMN."""
    from posharness.models.pretrain import prepared as prepared_module
    from tests.cli_helpers import cli

    saved = _saved(tmp_path / "saved", {"body": lines})
    spec = f"{saved}@train#body"
    root = tmp_path / "corpora"
    code = cli(
        "pretrain", "--model", "bert-a", "--size", "tiny", "--steps", "2", "--corpus", spec,
        "--block-size", "16", "--vocab-size", "80", "--batch-size", "4", "--device", "cpu",
        "--prepared-dir", str(root), "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert code == 0
    trained_on = json.loads((tmp_path / "run" / "tokenizer" / "trained_on.json").read_text())
    assert trained_on["corpus_sha256"] == corpus_identity(spec)
    tokenising = []
    original = prepared_module.tokenised_documents
    monkeypatch.setattr(
        prepared_module,
        "tokenised_documents",
        lambda *args: tokenising.append(1) or original(*args),
    )
    code = cli(
        "prepare-corpus", "--corpus", spec, "--tokenizer", str(tmp_path / "run" / "tokenizer"),
        "--block-size", "16", "--out", str(root),
    )  # fmt: skip
    assert code == 0 and tokenising == []  # pretrain prepared it already
    (folder,) = [p for p in root.iterdir() if not p.name.startswith(".")]
    assert json.loads((folder / MANIFEST).read_text())["identity"]["column"] == "body"


def test_a_damaged_parquet_file_is_one_line(tmp_path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "train.parquet").write_bytes(b"PAR1 not really parquet")
    with pytest.raises(DataError, match="cannot read dataset .*: point --corpus at a") as e:
        list(read_corpus(tmp_path / "d"))
    assert "\n" not in str(e.value)
