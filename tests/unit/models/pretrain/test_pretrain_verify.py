"""``--verify`` on the command line (issue 39, part 6): ``posharness prepare-corpus`` and
``posharness pretrain`` hash every byte of a prepared corpus against its manifest before
anything trains, so damage the sampled check on open cannot see is the same one line.

The sampled check reads the first ``SAMPLE_BYTES`` of every chunk; the toy corpus fits in
one sample, so the tests shrink the sample to the first row (where the sampling lives,
``prepared_check``) and swap two valid rows past it: an open then passes, ``--verify`` not.
"""

from __future__ import annotations

import numpy as np
import pytest

from posharness.models.pretrain import prepared_check
from posharness.models.pretrain.prepared import BLOCKS
from tests.cli_helpers import cli, one_line_error

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/models/conftest.py

SAID = "the sha256 of blocks.int32 differs from its manifest.json): delete the folder and prepare"


@pytest.fixture
def scrambled(tmp_path, corpus, tokenizer, monkeypatch):
    """(the prepare-corpus options, the prepared-corpora folder) of a preparation whose
    rows 5 and 9 were swapped where no sample reads."""
    monkeypatch.setattr(prepared_check, "SAMPLE_BYTES", 64)  # one row of 16 int32
    tokenizer.save_pretrained(str(tmp_path / "tok"))
    common = ("--corpus", str(corpus), "--block-size", "16", "--tokenizer", str(tmp_path / "tok"))
    root = tmp_path / "corpora"
    assert cli("prepare-corpus", *common, "--out", str(root)) == 0
    (folder,) = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
    rows = np.fromfile(folder / BLOCKS, dtype=np.int32).reshape(-1, 16)
    assert not np.array_equal(rows[5], rows[9])
    rows[[5, 9]] = rows[[9, 5]]
    rows.tofile(folder / BLOCKS)
    return common, root


def test_prepare_corpus_verify_finds_rows_the_sample_misses(scrambled, capsys) -> None:
    common, root = scrambled
    assert cli("prepare-corpus", *common, "--out", str(root)) == 0  # the sample sees nothing
    capsys.readouterr()
    assert cli("prepare-corpus", *common, "--out", str(root), "--verify") != 0
    assert SAID in one_line_error(capsys)


def test_pretrain_verify_refuses_the_corpus_before_training(scrambled, tmp_path, capsys) -> None:
    common, root = scrambled
    capsys.readouterr()
    code = cli(
        "pretrain", "--model", "bert-a", "--size", "tiny", "--steps", "2", *common,
        "--batch-size", "4", "--device", "cpu", "--prepared-dir", str(root),
        "--out", str(tmp_path / "run"), "--verify",
    )  # fmt: skip
    assert code != 0
    assert SAID in one_line_error(capsys)
    assert not list((tmp_path / "run").glob("checkpoint-*"))  # nothing trained


def test_pretrain_verify_checks_each_block_size_it_reads(tmp_path, corpus, tokenizer) -> None:
    from posharness.models.pretrain.loop import PretrainSettings
    from posharness.models.pretrain.prepared import prepare_corpus
    from posharness.models.pretrain.workflow import verify_prepared

    root = tmp_path / "corpora"
    short = prepare_corpus(corpus, tokenizer, 16, root).folder
    settings = PretrainSettings(steps=4, block_size=16, long_block_size=32)
    assert verify_prepared(corpus, tokenizer, settings, root) == [short]  # 32: not prepared yet
    long = prepare_corpus(corpus, tokenizer, 32, root).folder
    assert verify_prepared(corpus, tokenizer, settings, root) == [short, long]
