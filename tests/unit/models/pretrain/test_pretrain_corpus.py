"""Reading, fingerprinting, packing and ordering pretraining text."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from posharness.base.errors import DataError, OptionError
from posharness.models.pretrain.corpus import (
    BlockOrder,
    blocks,
    corpus_identity,
    packed_blocks,
    read_corpus,
)
from tests.conftest import WORDS

# conftest.WORDS is the vocabulary of every toy text; these tests add a few words of their own.
TOY_WORDS = [*WORDS[:18], "child", "river", "boat", "walks", "looks"]

WIKI_FILE = """<doc id="12" url="https://en.wikipedia.org/wiki?curid=12" title="Anarchism">
Anarchism

Anarchism is a political philosophy &amp; movement.
It is sceptical of &lt;authority&gt;.
</doc>
<doc id="25" url="https://en.wikipedia.org/wiki?curid=25" title="Autism">
Autism

Autism is a neurodevelopmental condition.
</doc>
"""


def toy_corpus(folder: Path, sentences: int = 50, seed: int = 0) -> Path:
    """~50 short sentences from a small word list, one per line."""
    rng = random.Random(seed)
    lines = [
        " ".join(rng.choice(TOY_WORDS) for _ in range(rng.randint(5, 10))) + "."
        for _ in range(sentences)
    ]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "corpus.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_blank_line_separated_blocks_are_documents(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("first line\nsame document\n\n\n  second document  \n")
    assert list(read_corpus(path)) == ["first line\nsame document", "second document"]


def test_a_file_without_blank_lines_has_one_document_per_line(tmp_path):
    path = tmp_path / "c.txt"
    path.write_bytes("\ufeffone\r\ntwo\r\nthree\r\n  \r\n".encode())  # BOM, CRLF, blank at end
    assert list(read_corpus(path)) == ["one", "two", "three"]


def test_a_folder_is_read_recursively_in_sorted_order_without_hidden_files(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.txt").write_text("from b/z\n")
    (tmp_path / "a.txt").write_text("from a\n")
    (tmp_path / "b" / "c.txt").write_text("from b/c\n")
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "x.txt").write_text("hidden\n")
    assert list(read_corpus(tmp_path)) == ["from a", "from b/c", "from b/z"]


def test_wikiextractor_documents_lose_tags_and_title_and_html_escapes(tmp_path):
    (tmp_path / "AA").mkdir()
    (tmp_path / "AA" / "wiki_00").write_text(WIKI_FILE)
    documents = list(read_corpus(tmp_path))
    assert documents == [
        "Anarchism is a political philosophy & movement.\nIt is sceptical of <authority>.",
        "Autism is a neurodevelopmental condition.",
    ]


def test_a_wikiextractor_tree_is_read_without_the_notes_beside_it(tmp_path):
    for folder, name in (("AA", "wiki_00"), ("AA", "wiki_01"), ("AB", "wiki_00")):
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / name).write_text(f'<doc id="1">\nT\n\nfrom {folder}/{name}\n</doc>\n')
    (tmp_path / "SOURCE.md").write_text("# Where this dump came from\n")
    (tmp_path / "LICENSE.txt").write_text("Licensed under CC BY-SA\n")
    assert list(read_corpus(tmp_path)) == ["from AA/wiki_00", "from AA/wiki_01", "from AB/wiki_00"]
    identity = corpus_identity(tmp_path)
    (tmp_path / "LICENSE.txt").write_text("another licence\n")
    assert corpus_identity(tmp_path) == identity  # the notes are not part of the corpus


def test_wikiextractor_json_lines_give_their_text(tmp_path):
    path = tmp_path / "wiki_00"
    path.write_text(
        '{"id": "12", "url": "u", "title": "Anarchism", "text": "Anarchism is a philosophy."}\n'
        '{"id": "13", "url": "u", "title": "Empty", "text": ""}\n'
    )
    assert list(read_corpus(path)) == ["Anarchism is a philosophy."]


def test_a_missing_corpus_is_a_one_line_data_error(tmp_path):
    with pytest.raises(DataError, match="does not exist: point --corpus") as caught:
        list(read_corpus(tmp_path / "nowhere"))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("content", [None, "", "\n   \n\n"])
def test_a_corpus_without_text_is_refused(tmp_path, content):
    if content is not None:
        (tmp_path / "empty.txt").write_text(content)
    read = "a folder without files" if content is None else "1 file of .* bytes read, every"
    with pytest.raises(
        DataError, match=f"has no text \\({read}.*\\): point --corpus at plain-text or Wiki"
    ) as caught:
        list(read_corpus(tmp_path))
    assert "\n" not in str(caught.value)


def test_text_that_is_not_utf8_names_its_file_and_line(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("fine\nna\u00efve\n".encode("latin-1"))
    with pytest.raises(DataError, match=r"latin1.txt:2: not UTF-8 text"):
        list(read_corpus(path))
    compressed = tmp_path / "wiki_00.bz2"
    compressed.write_bytes(b"BZh91AY&SY\xff\xfe")
    with pytest.raises(DataError, match="decompress it first"):
        list(read_corpus(compressed))


def test_corpus_identity_follows_the_content_not_the_location(tmp_path):
    first = tmp_path / "one"
    toy_corpus(first)
    copy = tmp_path / "elsewhere" / "two"
    shutil.copytree(first, copy)
    assert corpus_identity(first) == corpus_identity(copy)
    (copy / "corpus.txt").write_text((copy / "corpus.txt").read_text() + "one more line\n")
    assert corpus_identity(first) != corpus_identity(copy)
    (copy / "corpus.txt").rename(copy / "renamed.txt")
    assert corpus_identity(first) != corpus_identity(copy)


def test_blocks_cut_concatenated_documents_into_equal_pieces(tmp_path):
    documents = [[1, 2, 3], [], [4, 5, 6, 7, 8], [9, 10, 11, 12, 13, 14, 15]]
    pieces = list(blocks(documents, block_size=8, separator=99))
    assert pieces == [[1, 2, 3, 99, 4, 5], [6, 7, 8, 99, 9, 10]]  # the tail is dropped
    assert list(blocks(documents, block_size=8)) == [[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12]]


class _Tokenizer:
    """Whitespace 'tokenizer' over integers: enough to check the framing."""

    cls_token_id, sep_token_id = 2, 3

    def __call__(self, texts, add_special_tokens, verbose):
        assert add_special_tokens is False
        return {"input_ids": [[int(w) for w in text.split()] for text in texts]}


def test_packed_blocks_are_framed_by_cls_and_sep():
    texts = ["10 11 12 13", "14 15 16 17 18 19 20 21 22 23 24 25"]
    array = packed_blocks(texts, _Tokenizer(), block_size=8, documents_per_call=1)
    assert array.dtype == np.int32
    assert array.tolist() == [[2, 10, 11, 12, 13, 3, 14, 3], [2, 15, 16, 17, 18, 19, 20, 3]]


def test_too_little_text_for_one_block_is_refused():
    with pytest.raises(DataError, match="fewer than 30 tokens.*smaller --block-size"):
        packed_blocks(["10 11 12"], _Tokenizer(), block_size=32)


def test_a_block_size_below_8_is_refused():
    with pytest.raises(OptionError, match="--block-size 7: must be at least 8"):
        list(blocks([[1, 2, 3]], block_size=7))


def test_every_block_appears_once_per_epoch_and_batches_cross_epochs():
    order = BlockOrder(n_blocks=10, seed=3)
    taken = np.concatenate([order.batch(i, 4) for i in range(5)])  # 20 = two epochs
    assert sorted(taken[:10]) == list(range(10)) and sorted(taken[10:]) == list(range(10))
    assert not np.array_equal(taken[:10], taken[10:])  # each epoch reshuffled
    again = BlockOrder(n_blocks=10, seed=3)
    assert np.array_equal(again.batch(3, 4), order.batch(3, 4))  # found from its index alone
    assert not np.array_equal(BlockOrder(10, seed=4).batch(0, 10), order.batch(0, 10))
