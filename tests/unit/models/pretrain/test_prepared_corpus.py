"""Prepared corpora: packed once, on disk, read as a memory map, shared by every run."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from posharness.base.errors import DataError
from posharness.models.pretrain.corpus import packed_blocks, read_corpus
from posharness.models.pretrain.prepared import (
    BLOCKS,
    MANIFEST,
    load_prepared,
    prepare_corpus,
    prepared_key,
)
from posharness.models.pretrain.vocab import train_wordpiece
from tests.unit.models.pretrain.test_pretrain_corpus import toy_corpus


class CountingTokenizer:
    """A tokenizer that counts how often it is asked to tokenise."""

    def __init__(self, inner) -> None:
        self.inner, self.calls = inner, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.inner(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.inner, name)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return toy_corpus(tmp_path / "text", sentences=400)


@pytest.fixture
def tokenizer(corpus: Path):
    return train_wordpiece(corpus, 80)


def test_prepared_blocks_are_the_packed_blocks_row_for_row(tmp_path, corpus, tokenizer) -> None:
    prepared = prepare_corpus(corpus, tokenizer, 16, tmp_path / "corpora")
    expected = packed_blocks(read_corpus(corpus), tokenizer, 16)
    rows = prepared.blocks()
    assert rows.shape == expected.shape == (prepared.n_blocks, 16) and len(rows) == len(expected)
    every = rows[np.arange(len(rows))]
    assert every.dtype == np.int32 and np.array_equal(every, expected)
    picked = np.array([3, 0, len(rows) - 1, 3])
    assert np.array_equal(rows[picked], expected[picked])
    assert np.array_equal(rows[2], expected[2])
    with pytest.raises(IndexError):
        rows[np.array([len(rows)])]


def test_a_second_run_reads_the_preparation_without_tokenising(tmp_path, corpus, tokenizer):
    first = CountingTokenizer(tokenizer)
    prepare_corpus(corpus, first, 16, tmp_path / "corpora", documents_per_call=8)
    assert first.calls > 1  # streamed in batches of documents, not all at once
    second = CountingTokenizer(tokenizer)
    again = prepare_corpus(corpus, second, 16, tmp_path / "corpora")
    assert second.calls == 0
    assert [p.name for p in (tmp_path / "corpora").iterdir() if not p.name.startswith(".")] == [
        again.folder.name
    ]


def test_another_block_size_is_another_preparation(tmp_path, corpus, tokenizer) -> None:
    a = prepare_corpus(corpus, tokenizer, 16, tmp_path / "corpora")
    b = prepare_corpus(corpus, tokenizer, 24, tmp_path / "corpora")
    assert a.folder != b.folder and b.blocks().shape[1] == 24
    assert a.folder.name == prepared_key(a.corpus_sha256, a.tokenizer_sha256, 16)


def test_an_unfinished_preparation_is_never_read_and_is_swept(tmp_path, corpus, tokenizer):
    root = tmp_path / "corpora"
    done = prepare_corpus(corpus, tokenizer, 16, root)
    key = done.folder.name
    # What a process killed mid-write leaves: a staging folder of a dead pid, no rename.
    staging = root / f".ph-{__import__('socket').gethostname()}-999999999-{key}"
    staging.mkdir()
    (staging / BLOCKS).write_bytes(b"\0" * 12)
    assert load_prepared(staging) is None  # no manifest: not a corpus
    for path in done.folder.iterdir():
        path.unlink()
    done.folder.rmdir()
    again = prepare_corpus(corpus, tokenizer, 16, root)
    rows = again.blocks()
    assert np.array_equal(
        rows[np.arange(len(rows))], packed_blocks(read_corpus(corpus), tokenizer, 16)
    )
    assert not staging.exists()


def test_a_damaged_preparation_is_one_line(tmp_path, corpus, tokenizer) -> None:
    prepared = prepare_corpus(corpus, tokenizer, 16, tmp_path / "corpora")
    with (prepared.folder / BLOCKS).open("ab") as handle:
        handle.write(b"\0\0\0\0")
    with pytest.raises(DataError, match="is damaged .* delete the folder and prepare it again"):
        prepare_corpus(corpus, tokenizer, 16, tmp_path / "corpora")


def test_a_corpus_shorter_than_a_block_leaves_nothing(tmp_path, tokenizer) -> None:
    short = tmp_path / "short.txt"
    short.write_text("the river\n")
    with pytest.raises(DataError, match="not one block of --block-size 64"):
        prepare_corpus(short, tokenizer, 64, tmp_path / "corpora")
    assert [p for p in (tmp_path / "corpora").iterdir() if not p.name.endswith(".lock")] == []


def test_the_manifest_says_what_the_bytes_are(tmp_path, corpus, tokenizer) -> None:
    prepared = prepare_corpus(corpus, tokenizer, 16, tmp_path / "corpora")
    manifest = json.loads((prepared.folder / MANIFEST).read_text())
    assert manifest == {
        "format": 1,
        "n_blocks": prepared.n_blocks,
        "block_size": 16,
        "corpus_sha256": prepared.corpus_sha256,
        "tokenizer_sha256": prepared.tokenizer_sha256,
        "dtype": "int32",
        "identity": {
            "kind": "text files",
            "source": corpus.name,
            "hashed": "sha256 over the sorted relative file names, sizes and bytes",
        },
        "content": {
            "sha256": hashlib.sha256((prepared.folder / BLOCKS).read_bytes()).hexdigest(),
            "max_id": int(np.fromfile(prepared.folder / BLOCKS, dtype=np.int32).max()),
            "sampled_sha256": manifest["content"]["sampled_sha256"],
            "sampled": "the first 4096 bytes of every 1048576 bytes",
        },
    }
    assert str(tmp_path) not in (prepared.folder / MANIFEST).read_text()


def test_pretraining_two_schemes_shares_one_preparation(tmp_path, corpus, tokenizer, monkeypatch):
    """prepare-corpus once; then bert-a and rope pretrain on it without tokenising."""
    from posharness.models.pretrain import prepared as prepared_module
    from tests.cli_helpers import cli

    tokenizer.save_pretrained(str(tmp_path / "tok"))
    root = tmp_path / "corpora"
    common = ("--corpus", str(corpus), "--block-size", "16")
    assert (
        cli("prepare-corpus", *common, "--tokenizer", str(tmp_path / "tok"), "--out", str(root))
        == 0
    )

    tokenising = []
    original = prepared_module.tokenised_documents
    monkeypatch.setattr(
        prepared_module,
        "tokenised_documents",
        lambda *args: tokenising.append(1) or original(*args),
    )
    for name in ("bert-a", "rope"):
        code = cli(
            "pretrain", "--model", name, "--size", "tiny", "--steps", "2", *common,
            "--tokenizer", str(tmp_path / "tok"), "--batch-size", "4", "--device", "cpu",
            "--prepared-dir", str(root), "--out", str(tmp_path / f"run-{name}"),
        )  # fmt: skip
        assert code == 0
    assert tokenising == []
    assert len([p for p in root.iterdir() if not p.name.startswith(".")]) == 1
    assert not list((tmp_path / "run-bert-a").glob("blocks-*.npy"))  # no per-run copy


def test_a_full_disk_is_one_line_and_leaves_nothing_behind(
    tmp_path, corpus, tokenizer, monkeypatch
) -> None:
    """ENOSPC mid-write: the staging folder goes, the message says where and how much room;
    preparing again (with room) equals a clean preparation."""
    import errno

    from posharness.base.errors import OptionError
    from posharness.models.pretrain import prepared as prepared_module

    clean = prepare_corpus(corpus, tokenizer, 16, tmp_path / "clean")
    root = tmp_path / "corpora"
    monkeypatch.setattr(prepared_module, "_ROWS_PER_WRITE", 8)
    original, calls = prepared_module._flush, []

    def filling(*args):
        calls.append(1)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return original(*args)

    monkeypatch.setattr(prepared_module, "_flush", filling)
    with pytest.raises(OptionError) as caught:
        prepare_corpus(corpus, tokenizer, 16, root)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"no space left on device while preparing {corpus} in {root}: ")
    assert re.search(r"free (about \d+ MB|space) \(the rows need ~\d+ MB, \d+ MB are free", message)
    assert message.endswith("or point --prepared-dir elsewhere (--out for prepare-corpus)")
    assert [p.name for p in root.iterdir() if not p.name.endswith(".lock")] == []
    assert load_prepared(root / clean.folder.name) is None

    monkeypatch.setattr(prepared_module, "_flush", original)
    again = prepare_corpus(corpus, tokenizer, 16, root)
    assert again.folder.name == clean.folder.name
    assert np.array_equal(
        again.blocks()[np.arange(again.n_blocks)], clean.blocks()[np.arange(clean.n_blocks)]
    )
    assert (again.folder / BLOCKS).read_bytes() == (clean.folder / BLOCKS).read_bytes()


def test_the_full_disk_estimate_scales_what_was_written_to_the_corpus(
    tmp_path, corpus, monkeypatch
):
    import shutil
    from collections import namedtuple

    from posharness.models.pretrain import prepared as prepared_module

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage(0, 0, 20_000_000))
    progress = prepared_module._Progress()
    progress.characters, progress.written = 1_000, 10_000_000  # 10 kB of ids per character
    size = corpus.stat().st_size
    message = prepared_module._no_space(corpus, tmp_path, progress)
    needed = 10_000 * size
    assert f"free about {-(-(needed - 20_000_000) // 1_000_000)} MB" in message
    assert f"(the rows need ~{needed // 1_000_000 + 1} MB, 20 MB are free)" in message
    progress.written = 0  # nothing written yet: no estimate, still one line
    assert ": free space (the rows take 4 bytes a token) or point --prepared-dir" in (
        prepared_module._no_space(corpus, tmp_path, progress)
    )
