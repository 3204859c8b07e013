"""A damaged prepared corpus is one line that names the folder and says to prepare it again.

Issue 39, part 6: each damage used to surface as a traceback (a missing blocks file), a
re-tokenisation whose rename then blamed the free space (an unreadable manifest), an
``IndexError`` inside the embedding (ids beyond the vocabulary) or nothing at all (rows
scrambled). Each case here damages a real preparation and opens it again.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from posharness.base.errors import DataError
from posharness.models.pretrain import prepared as prepared_module
from posharness.models.pretrain import prepared_check
from posharness.models.pretrain.prepared import (
    BLOCKS,
    MANIFEST,
    SAMPLE_CHUNK,
    load_prepared,
    prepare_corpus,
)

DELETE = r"is damaged \(.*\): delete the folder and prepare it again$"


@pytest.fixture
def prepared(tmp_path, corpus, tokenizer):
    return prepare_corpus(corpus, tokenizer, 16, tmp_path / "corpora")


def reopen(prepared, corpus, tokenizer, **options):
    return prepare_corpus(corpus, tokenizer, 16, prepared.folder.parent, **options)


def one_line(caught: pytest.ExceptionInfo, folder: Path) -> str:
    message = str(caught.value)
    assert "\n" not in message and str(folder) in message
    return message


def test_a_missing_blocks_file_is_one_line(prepared, corpus, tokenizer) -> None:
    (prepared.folder / BLOCKS).unlink()
    with pytest.raises(DataError, match=DELETE) as caught:
        reopen(prepared, corpus, tokenizer)
    assert f"{BLOCKS} is missing" in one_line(caught, prepared.folder)


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda path: path.unlink(), "manifest.json is missing"),
        (lambda path: path.write_text('{"format": 1, "n_blo'), "not valid JSON"),
        (lambda path: path.write_bytes(b"\xff\xfe\x00"), "not valid JSON"),
        (lambda path: path.write_text("[1, 2]"), "not a JSON object"),
        (lambda path: path.write_text('{"format": 1}'), "lacks a valid 'n_blocks'"),
        (lambda path: path.write_text('{"format": 7}'), "says format 7, not 1"),
    ],
)
def test_an_unreadable_manifest_is_one_line_and_nothing_is_tokenised_again(
    prepared, corpus, tokenizer, monkeypatch, damage, said
) -> None:
    damage(prepared.folder / MANIFEST)
    monkeypatch.setattr(
        prepared_module, "_write", lambda *a, **k: pytest.fail("re-tokenised a damaged corpus")
    )
    with pytest.raises(DataError, match=DELETE) as caught:
        reopen(prepared, corpus, tokenizer)
    assert said in one_line(caught, prepared.folder)


def test_ids_beyond_the_vocabulary_are_one_line_before_training(
    prepared, corpus, tokenizer
) -> None:
    rows = np.fromfile(prepared.folder / BLOCKS, dtype=np.int32)
    manifest = json.loads((prepared.folder / MANIFEST).read_text())
    # A preparation whose manifest agrees with its rows, but made for a larger vocabulary.
    manifest["content"]["max_id"] = len(tokenizer) + 5
    (prepared.folder / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(DataError, match=DELETE) as caught:
        reopen(prepared, corpus, tokenizer)
    assert f"token id {len(tokenizer) + 5}, beyond the tokenizer's" in one_line(
        caught, prepared.folder
    )
    assert rows.max() < len(tokenizer)


def test_an_overwritten_id_in_a_sample_is_caught_by_the_cheap_check(
    prepared, corpus, tokenizer
) -> None:
    rows = np.fromfile(prepared.folder / BLOCKS, dtype=np.int32)
    rows[3] = 10_000  # the first sample covers the first 4 KiB
    rows.tofile(prepared.folder / BLOCKS)
    with pytest.raises(DataError, match=DELETE) as caught:
        reopen(prepared, corpus, tokenizer)
    assert "sampled hash" in one_line(caught, prepared.folder)


def test_ids_beyond_the_vocabulary_in_an_old_manifest_are_caught_by_the_sample(
    prepared, corpus, tokenizer
) -> None:
    manifest = json.loads((prepared.folder / MANIFEST).read_text())
    del manifest["content"]  # written before the content hash: size and sampled ids only
    (prepared.folder / MANIFEST).write_text(json.dumps(manifest))
    assert reopen(prepared, corpus, tokenizer) == prepared
    rows = np.fromfile(prepared.folder / BLOCKS, dtype=np.int32)
    rows[5] = len(tokenizer)
    rows.tofile(prepared.folder / BLOCKS)
    with pytest.raises(DataError, match=f"holds token id {len(tokenizer)}, beyond") as caught:
        reopen(prepared, corpus, tokenizer)
    one_line(caught, prepared.folder)


def test_scrambled_rows_outside_the_samples_need_the_full_hash(tmp_path, monkeypatch) -> None:
    """Two valid rows swapped where no sample reads: the open passes, verify refuses."""
    monkeypatch.setattr(prepared_check, "SAMPLE_BYTES", 64)  # where the sampling lives
    folder = tmp_path / "blocks16-x"
    folder.mkdir()
    rows = np.arange(64 * 16, dtype=np.int32).reshape(64, 16) % 50
    rows.tofile(folder / BLOCKS)
    summary = prepared_module.content_summary(folder / BLOCKS, full=True)
    manifest = {
        "format": 1,
        "n_blocks": 64,
        "block_size": 16,
        "corpus_sha256": "c",
        "tokenizer_sha256": "t",
        "content": {"max_id": 49, **summary},
    }
    (folder / MANIFEST).write_text(json.dumps(manifest))
    rows[[10, 20]] = rows[[20, 10]]  # bytes 640.. and 1280..: past the 64-byte sample
    rows.tofile(folder / BLOCKS)
    assert load_prepared(folder, vocabulary=50) is not None
    with pytest.raises(DataError, match="the sha256 of blocks.int32 differs") as caught:
        load_prepared(folder, vocabulary=50, verify=True)
    one_line(caught, folder)


def test_every_chunk_is_sampled(tmp_path) -> None:
    path = tmp_path / BLOCKS
    np.zeros(3 * SAMPLE_CHUNK // 4 + 7, dtype=np.int32).tofile(path)
    before = prepared_module.content_summary(path)
    data = np.fromfile(path, dtype=np.int32)
    data[2 * SAMPLE_CHUNK // 4] = 1  # the start of the third chunk
    data.tofile(path)
    after = prepared_module.content_summary(path)
    assert before["sampled_sha256"] != after["sampled_sha256"]
    assert after["sampled_max_id"] == 1


def test_a_sound_preparation_opens_with_and_without_verify(prepared, corpus, tokenizer) -> None:
    assert reopen(prepared, corpus, tokenizer) == prepared
    assert reopen(prepared, corpus, tokenizer, verify=True) == prepared


def test_rows_close_quietly_at_interpreter_exit(tmp_path) -> None:
    """``PreparedRows`` left open in a module global is finalised after ``os`` may be gone."""
    rows = tmp_path / "rows.int32"
    np.arange(32, dtype=np.int32).tofile(rows)
    script = (
        "from posharness.models.pretrain.prepared import PreparedRows\n"
        f"ROWS = PreparedRows({str(rows)!r}, 2, 16)\n"
        "ROWS[[0, 1]]\n"
        "HALF = PreparedRows.__new__(PreparedRows)\n"  # __init__ never ran
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0 and "Exception ignored" not in done.stderr, done.stderr


@pytest.mark.parametrize("damage", ["blocks", "manifest", "vocabulary"])
def test_pretrain_on_a_damaged_preparation_prints_one_line(
    tmp_path, corpus, tokenizer, capsys, damage
) -> None:
    """What a user sees: ``posharness pretrain`` exits with one line, no traceback."""
    from tests.cli_helpers import cli, one_line_error

    tokenizer.save_pretrained(str(tmp_path / "tok"))
    common = ("--corpus", str(corpus), "--block-size", "16", "--tokenizer", str(tmp_path / "tok"))
    root = tmp_path / "corpora"
    assert cli("prepare-corpus", *common, "--out", str(root)) == 0
    (folder,) = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
    if damage == "blocks":
        (folder / BLOCKS).unlink()
    elif damage == "manifest":
        (folder / MANIFEST).write_text("{not json")
    else:
        rows = np.fromfile(folder / BLOCKS, dtype=np.int32)
        rows[7] = len(tokenizer) + 3
        rows.tofile(folder / BLOCKS)
    capsys.readouterr()
    code = cli(
        "pretrain", "--model", "bert-a", "--size", "tiny", "--steps", "2", *common,
        "--batch-size", "4", "--device", "cpu", "--prepared-dir", str(root),
        "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert code != 0
    error = one_line_error(capsys)
    assert str(folder) in error and error.endswith("delete the folder and prepare it again")
