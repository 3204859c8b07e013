"""The CoNLL-U reader: syntactic words and basic heads out, one-line file:line errors."""

from __future__ import annotations

import hashlib
import types
from pathlib import Path

import pytest

from posharness.base.errors import DataError
from posharness.tasks.dep_heads.conllu import TreebankStats, iter_conllu, scan_conllu
from posharness.tasks.dep_heads.tree import Sentence
from tests.conftest import shared_data_dir

# Line 3 is word 1, line 4 the multi-word token "don't", line 8 an empty node.
DONT_SENTENCE = [
    "# sent_id = answers-0001",
    "# text = I don't like green eggs",
    "1\tI\tI\tPRON\tPRP\tCase=Nom\t3\tnsubj\t3:nsubj\t_",
    "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_",
    "2\tdo\tdo\tAUX\tVBP\tMood=Ind\t4\taux\t4:aux\t_",
    "3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t4:advmod\t_",
    "4\tlike\tlike\tVERB\tVB\tVerbForm=Inf\t0\troot\t0:root\t_",
    "4.1\tlike\tlike\tVERB\tVB\t_\t_\t_\t4:conj\tCopyOf=4",
    "5\tgreen\tgreen\tADJ\tJJ\tDegree=Pos\t6\tamod\t6:amod\t_",
    "6\teggs\tegg\tNOUN\tNNS\tNumber=Plur\t4\tobj\t4:obj\t_",
    "",
]


def word(index: int, form: str, head: object, relation: str = "dep") -> str:
    return f"{index}\t{form}\t_\t_\t_\t_\t{head}\t{relation}\t_\t_"


def write(tmp_path: Path, lines: list[str], *, name: str = "tb.conllu", newline="\n") -> Path:
    path = tmp_path / name
    path.write_bytes(newline.join(lines).encode("utf-8"))
    return path


def two_word_sentence(sent_id: str | None = None) -> list[str]:
    comment = [f"# sent_id = {sent_id}"] if sent_id else []
    return [*comment, word(1, "Dogs", 2, "nsubj"), word(2, "bark", 0, "root"), ""]


def data_error(path: Path) -> DataError:
    with pytest.raises(DataError) as caught:
        list(iter_conllu(path))
    message = str(caught.value)
    assert "\n" not in message
    assert path.name in message
    return caught.value


# ---- reading ---------------------------------------------------------------------------


def test_multiword_tokens_and_empty_nodes_yield_only_syntactic_words(tmp_path: Path) -> None:
    (sentence,) = iter_conllu(write(tmp_path, DONT_SENTENCE))
    assert sentence == Sentence(
        sent_id="answers-0001",
        words=("I", "do", "n't", "like", "green", "eggs"),
        heads=(3, 4, 4, 0, 6, 4),
        relations=("nsubj", "aux", "advmod", "root", "amod", "obj"),
        line=3,
    )


def test_relation_subtypes_are_kept(tmp_path: Path) -> None:
    lines = [word(1, "its", 2, "nmod:poss"), word(2, "wares", 0, "root"), ""]
    (sentence,) = iter_conllu(write(tmp_path, lines))
    assert sentence.relations == ("nmod:poss", "root")


def test_sent_id_is_generated_from_file_name_and_first_word_line_when_absent(
    tmp_path: Path,
) -> None:
    lines = [*two_word_sentence("first"), "# text = Dogs bark", *two_word_sentence()]
    first, second = iter_conllu(write(tmp_path, lines))
    assert first.sent_id == "first"
    assert second.sent_id == "tb.conllu:6"
    assert second.line == 6


def test_crlf_file_reads_the_same_as_lf(tmp_path: Path) -> None:
    lf = list(iter_conllu(write(tmp_path, DONT_SENTENCE, name="lf.conllu")))
    crlf = list(iter_conllu(write(tmp_path, DONT_SENTENCE, name="crlf.conllu", newline="\r\n")))
    assert crlf == lf
    assert crlf[0].sent_id == "answers-0001"


def test_last_sentence_without_final_blank_line_is_read(tmp_path: Path) -> None:
    lines = [*two_word_sentence("a"), *two_word_sentence("b")[:-1]]
    sentences = list(iter_conllu(write(tmp_path, lines)))
    assert [s.sent_id for s in sentences] == ["a", "b"]
    assert sentences[1].words == ("Dogs", "bark")


def test_several_blank_lines_and_comment_only_blocks_are_not_sentences(tmp_path: Path) -> None:
    lines = ["# newdoc id = d1", "", "", *two_word_sentence("a"), "", "", *two_word_sentence("b")]
    assert [s.sent_id for s in iter_conllu(write(tmp_path, lines))] == ["a", "b"]


def test_several_roots_are_allowed(tmp_path: Path) -> None:
    lines = [word(1, "Hello", 0, "root"), word(2, "world", 0, "root"), ""]
    (sentence,) = iter_conllu(write(tmp_path, lines))
    assert sentence.heads == (0, 0)


def test_iter_conllu_is_lazy_and_yields_good_sentences_before_a_bad_one(tmp_path: Path) -> None:
    lines = [*two_word_sentence("good"), word(1, "Dogs", 2), word(2, "bark", 9), ""]
    sentences = iter_conllu(write(tmp_path, lines))
    assert isinstance(sentences, types.GeneratorType)
    assert next(sentences).sent_id == "good"
    with pytest.raises(DataError, match=r"tb\.conllu:6: HEAD 9 of word 2"):
        next(sentences)


# ---- scan ------------------------------------------------------------------------------


def test_scan_counts_sentences_and_syntactic_words_and_hashes_the_bytes(tmp_path: Path) -> None:
    path = write(tmp_path, [*DONT_SENTENCE, *two_word_sentence("b")])
    stats = scan_conllu(path)
    assert stats == TreebankStats(
        path=str(path),
        sentences=2,
        words=8,
        sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
    )


@pytest.mark.parametrize("lines", [[], ["# newdoc id = d1", "# only comments", ""]])
def test_scan_of_a_file_without_sentences_is_a_data_error(tmp_path: Path, lines) -> None:
    path = write(tmp_path, lines)
    with pytest.raises(DataError, match="no sentences found.*10 tab-separated columns") as caught:
        scan_conllu(path)
    assert str(path) in str(caught.value)


# ---- errors ----------------------------------------------------------------------------


def test_missing_file_is_reported_when_iter_conllu_is_called(tmp_path: Path) -> None:
    path = tmp_path / "absent.conllu"
    with pytest.raises(DataError, match=r"absent\.conllu: no such file") as caught:
        iter_conllu(path)
    assert "\n" not in str(caught.value)


def test_non_utf8_byte_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.conllu"
    text = "\n".join([*two_word_sentence("a"), word(1, "café", 0, "root"), ""])
    path.write_bytes(text.encode("latin-1"))
    error = data_error(path)
    assert "latin1.conllu:5:" in str(error)
    assert "UTF-8" in str(error)


def test_spaces_instead_of_tabs_give_the_column_count_and_its_usual_cause(
    tmp_path: Path,
) -> None:
    lines = [*two_word_sentence("a"), "1 Dogs _ _ _ _ 0 root _ _", ""]
    message = str(data_error(write(tmp_path, lines)))
    assert "tb.conllu:5:" in message
    assert "found 1 tab-separated column" in message
    assert "expected 10" in message
    assert "spaces" in message


def test_too_many_columns_are_counted(tmp_path: Path) -> None:
    lines = [word(1, "Dogs", 0, "root") + "\textra", ""]
    message = str(data_error(write(tmp_path, lines)))
    assert "tb.conllu:1: found 11 tab-separated column" in message


@pytest.mark.parametrize(
    ("bad_line", "expected"),
    [
        (word(3, "bark", 0, "root"), "word ID 3 where 2 was expected"),
        (word(1, "bark", 0, "root"), "blank line missing"),
        (word("x", "bark", 0, "root"), "ID 'x' is not a word number"),
    ],
)
def test_word_ids_must_count_from_one(tmp_path: Path, bad_line: str, expected: str) -> None:
    lines = ["# sent_id = s", word(1, "Dogs", 0, "root"), bad_line, ""]
    message = str(data_error(write(tmp_path, lines)))
    assert message.startswith(f"{tmp_path / 'tb.conllu'}:3: ")
    assert expected in message


def test_first_word_id_must_be_one(tmp_path: Path) -> None:
    message = str(data_error(write(tmp_path, [word(2, "Dogs", 0, "root"), ""])))
    assert "tb.conllu:1: word ID 2 where 1 was expected" in message


@pytest.mark.parametrize("head", ["_", "2.1", "one"])
def test_head_that_is_not_an_integer_names_its_line(tmp_path: Path, head: str) -> None:
    lines = [*two_word_sentence("a"), word(1, "Dogs", 0, "root"), word(2, "bark", head), ""]
    message = str(data_error(write(tmp_path, lines)))
    assert "tb.conllu:6:" in message
    assert f"HEAD {head!r} of word 2 is not an integer" in message


@pytest.mark.parametrize("head", [4, -1])
def test_head_outside_the_sentence_names_the_line_of_its_word(tmp_path: Path, head: int) -> None:
    lines = [word(1, "Dogs", 2), word(2, "bark", 0, "root"), word(3, "loudly", head), ""]
    message = str(data_error(write(tmp_path, lines)))
    assert "tb.conllu:3:" in message
    assert f"HEAD {head} of word 3 is outside 0..3" in message


@pytest.mark.parametrize("relation", ["_", ""])
def test_missing_deprel_names_its_line(tmp_path: Path, relation: str) -> None:
    lines = [word(1, "Dogs", 2, relation), word(2, "bark", 0, "root"), ""]
    message = str(data_error(write(tmp_path, lines)))
    assert "tb.conllu:1:" in message
    assert "DEPREL of word 1" in message


def test_cycle_names_the_sentence_line_id_and_words(tmp_path: Path) -> None:
    lines = [
        *two_word_sentence("ok"),
        "# sent_id = loop",
        word(1, "The", 2, "det"),
        word(2, "dog", 3, "nsubj"),
        word(3, "saw", 0, "root"),
        word(4, "cats", 5, "obj"),
        word(5, "run", 4, "acl"),
        "",
    ]
    message = str(data_error(write(tmp_path, lines)))
    assert "tb.conllu:6:" in message
    assert "'loop'" in message
    assert "cycle" in message
    assert "4 'cats' -> 5 'run' -> 4 'cats'" in message


def test_word_that_heads_itself_is_a_cycle(tmp_path: Path) -> None:
    lines = [word(1, "Dogs", 1), word(2, "bark", 0, "root"), ""]
    message = str(data_error(write(tmp_path, lines)))
    assert "tb.conllu:1:" in message
    assert "1 'Dogs' -> 1 'Dogs'" in message


def test_sentence_without_root_is_reported_as_no_root(tmp_path: Path) -> None:
    lines = [*two_word_sentence("ok"), word(1, "Dogs", 2), word(2, "bark", 1), ""]
    message = str(data_error(write(tmp_path, lines)))
    assert "tb.conllu:5:" in message
    assert "'tb.conllu:5'" in message  # the generated sent_id
    assert "no root" in message
    assert "1 'Dogs' -> 2 'bark' -> 1 'Dogs'" in message


# ---- real data -------------------------------------------------------------------------


@pytest.mark.integration
def test_scan_of_ud_english_ewt_test_matches_its_published_size() -> None:
    data = shared_data_dir()
    path = data / "ud_english_ewt" / "en_ewt-ud-test.conllu" if data else None
    if path is None or not path.is_file():
        pytest.skip("UD English EWT test set not found under ../shared/data/ud_english_ewt")
    stats = scan_conllu(path)
    assert (stats.sentences, stats.words) == (2077, 25094)
