"""Raw text parsed by a real spaCy pipeline: a tiny parser trained here, on a toy treebank.

No mocks: the pipeline is a genuine spaCy parser fitted to three dozen short sentences
(det/amod/nsubj/dobj/prep/pobj/punct), saved to disk and loaded back like a user's.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from posharness.base.errors import DataError, OptionError, PosharnessError
from posharness.tasks.dep_heads.spacy_parse import (
    ParseStats,
    load_pipeline,
    parse_lines,
    parse_text_file,
    pipeline_identity,
)
from posharness.tasks.dep_heads.tree import ROOT, Sentence, conllu_lines

spacy = pytest.importorskip("spacy", reason="spaCy is not installed: pip install -e '.[parse]'")

from tests.spacy_toy import toy_treebank, train_parser  # noqa: E402


def read_conllu(path: Path) -> list[tuple[str, list[str], list[int], list[str]]]:
    """(sent_id, words, heads, relations) per sentence: just enough of a reader to check."""
    sentences, sent_id, words, heads, relations = [], None, [], [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# sent_id = "):
            sent_id = line.removeprefix("# sent_id = ")
        elif line.strip():
            columns = line.split("\t")
            assert len(columns) == 10, line
            words.append(columns[1])
            heads.append(int(columns[6]))
            relations.append(columns[7])
        else:
            sentences.append((sent_id, words, heads, relations))
            sent_id, words, heads, relations = None, [], [], []
    assert not words, "the last sentence must end with a blank line"
    return sentences


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, Path, list[Sentence]]:
    """A parser trained on the toy treebank, saved as a pipeline folder; plus the gold file."""
    folder = tmp_path_factory.mktemp("pipeline")
    gold = toy_treebank()
    gold_path = folder.parent / f"{folder.name}-gold.conllu"
    gold_path.write_text(
        "".join("\n".join(conllu_lines(sentence)) + "\n" for sentence in gold), encoding="utf-8"
    )
    return train_parser(gold, folder / "toy_parser"), gold_path, gold


@pytest.fixture(scope="module")
def nlp(trained):
    return load_pipeline(str(trained[0]))


def test_training_treebank_is_written_as_conllu_with_one_tree_per_sentence(trained):
    _, gold_path, gold = trained
    read = read_conllu(gold_path)
    assert [sent_id for sent_id, *_ in read] == [s.sent_id for s in gold]
    assert all(heads.count(ROOT) == 1 for _, _, heads, _ in read)
    assert read[-1][3] == ["det", "nsubj", "root", "det", "dobj", "prep", "det", "pobj", "punct"]


def test_load_pipeline_keeps_the_parser_of_a_trained_folder(nlp):
    assert "parser" in nlp.pipe_names


def test_parsed_file_has_the_words_in_range_heads_one_root_and_fits_gold_trees(
    trained, nlp, tmp_path
):
    _, _, gold = trained
    chosen = [gold[0], gold[5], gold[13], gold[20], gold[26], gold[33]]
    text = tmp_path / "text.txt"
    text.write_text(
        " ".join(chosen[0].words)
        + "\n\n"
        + "\n".join(" ".join(s.words) for s in chosen[1:])
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "parsed" / "text.conllu"
    stats = parse_text_file(text, nlp, out)
    parsed = read_conllu(out)
    assert stats == ParseStats(
        lines=len(chosen), sentences=len(chosen), words=sum(len(s) for s in chosen)
    )
    assert [sent_id for sent_id, *_ in parsed][:2] == ["text.txt:1", "text.txt:3"]
    correct = total = 0
    for (_, words, heads, relations), expected in zip(parsed, chosen, strict=True):
        assert tuple(words) == expected.words
        assert all(0 <= head <= len(words) for head in heads)
        assert heads.count(ROOT) == 1
        assert relations[heads.index(ROOT)] == "root"
        correct += sum(h == g for h, g in zip(heads, expected.heads, strict=True))
        total += len(words)
    assert correct / total >= 0.8
    assert sorted(p.name for p in out.parent.iterdir()) == ["text.conllu"]


def test_parse_lines_collapses_whitespace_and_numbers_ids_by_line(nlp):
    lines = ["  the dog\tchased   a\u00a0cat .  \n", "\n", "a girl saw the bird .\n"]
    sentences = list(parse_lines(nlp, lines, source="mrpc", batch_size=1))
    assert [s.sent_id for s in sentences] == ["mrpc:1", "mrpc:3"]
    assert [s.line for s in sentences] == [1, 3]
    assert sentences[0].words == ("the", "dog", "chased", "a", "cat", ".")
    assert all(word.strip() == word and word for s in sentences for word in s.words)


def test_a_line_with_several_sentences_numbers_them_after_the_line(trained):
    nlp = load_pipeline(str(trained[0]))
    nlp.add_pipe("sentencizer", before="parser")  # fixes the boundaries the parser keeps
    line = "the dog chased a cat . a girl saw the bird ."
    sentences = list(parse_lines(nlp, [line], source="doc"))
    assert [s.sent_id for s in sentences] == ["doc:1.1", "doc:1.2"]
    assert [len(s) for s in sentences] == [6, 6]
    assert all(s.heads.count(ROOT) == 1 and max(s.heads) <= len(s) for s in sentences)


def test_sentence_boundaries_that_cut_a_tree_are_a_data_error(trained):
    nlp = load_pipeline(str(trained[0]))
    nlp.add_pipe("sentencizer", last=True, config={"punct_chars": ["cat"], "overwrite": True})
    with pytest.raises(DataError, match=r"^doc:1\.\d: word \d+ .* head outside its sentence"):
        list(parse_lines(nlp, ["the dog chased a cat in the park ."], source="doc"))


def test_pipeline_identity_is_stable_survives_a_move_and_changes_with_a_file(trained, tmp_path):
    folder = trained[0]
    identity = pipeline_identity(str(folder))
    assert identity == pipeline_identity(str(folder))
    assert identity.startswith("en_pipeline-0.0.0@sha256:")
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    assert pipeline_identity(str(copy)) == identity
    with (copy / "parser" / "model").open("ab") as model:
        model.write(b"\0")
    assert pipeline_identity(str(copy)) != identity


def test_unknown_pipeline_name_says_how_to_download_it():
    for call in (load_pipeline, pipeline_identity):
        with pytest.raises(OptionError) as raised:
            call("en_no_such_pipeline_xyz")
        message = str(raised.value)
        assert "python -m spacy download en_no_such_pipeline_xyz" in message
        assert "\n" not in message


def test_pipeline_without_a_parser_is_refused_in_one_line(tmp_path):
    spacy.blank("en").to_disk(tmp_path / "blank")
    with pytest.raises(OptionError, match="no dependency parser") as raised:
        load_pipeline(str(tmp_path / "blank"))
    assert "\n" not in str(raised.value)


def test_folder_that_is_not_a_pipeline_is_a_one_line_error(tmp_path):
    (tmp_path / "empty").mkdir()
    for call in (load_pipeline, pipeline_identity):
        with pytest.raises(DataError) as raised:
            call(str(tmp_path / "empty"))
        assert "empty" in str(raised.value) and "\n" not in str(raised.value)


def test_text_file_without_a_non_blank_line_is_a_data_error_and_leaves_nothing(nlp, tmp_path):
    text = tmp_path / "blank.txt"
    text.write_text("\n   \n\t\n", encoding="utf-8")
    out = tmp_path / "out.conllu"
    with pytest.raises(DataError, match="no non-blank line"):
        parse_text_file(text, nlp, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blank.txt"]


def test_missing_text_file_is_a_data_error(nlp, tmp_path):
    with pytest.raises(DataError, match="missing.txt"):
        parse_text_file(tmp_path / "missing.txt", nlp, tmp_path / "out.conllu")
    assert not (tmp_path / "out.conllu").exists()


def test_non_utf8_text_names_the_line_and_leaves_nothing_at_out_path(nlp, tmp_path):
    text = tmp_path / "latin1.txt"
    text.write_bytes(b"the dog chased a cat .\n" * 300 + b"a caf\xe9 .\n")
    out = tmp_path / "out.conllu"
    out.write_text("a stale result from an earlier run\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"latin1\.txt:301: not UTF-8") as raised:
        parse_text_file(text, nlp, out)
    assert "\n" not in str(raised.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latin1.txt"]


def test_a_byte_order_mark_is_not_a_word(nlp, tmp_path):
    text = tmp_path / "bom.txt"
    text.write_bytes("\ufeffthe dog chased a cat .\n".encode())
    parse_text_file(text, nlp, tmp_path / "out.conllu")
    assert read_conllu(tmp_path / "out.conllu")[0][1][0] == "the"


def test_output_that_would_overwrite_the_text_is_refused(nlp, tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("the dog chased a cat .\n", encoding="utf-8")
    with pytest.raises(OptionError):
        parse_text_file(text, nlp, text)
    assert text.read_text(encoding="utf-8") == "the dog chased a cat .\n"


def test_batch_size_below_one_is_an_option_error(nlp):
    with pytest.raises(PosharnessError, match="batch_size=0"):
        list(parse_lines(nlp, ["the dog chased a cat ."], source="x", batch_size=0))
