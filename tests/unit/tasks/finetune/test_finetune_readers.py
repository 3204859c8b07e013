"""The original file layouts of GLUE, SentEval and SNLI, read from small files written here."""

from __future__ import annotations

from pathlib import Path

import pytest

from posharness.base.errors import DataError
from posharness.tasks.finetune.data.locate import LoadedSplit, dataset, load_split


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def load(name: str, split: str, path: Path, limit: int | None = None) -> LoadedSplit:
    return load_split(dataset(name), split, path, limit)


def one_line_error(name: str, split: str, path: Path) -> str:
    with pytest.raises(DataError) as info:
        load(name, split, path)
    message = str(info.value)
    assert "\n" not in message
    return message


RTE_HEADER = "index\tsentence1\tsentence2\tlabel\n"


def test_rte_columns_are_found_by_header_name_not_position(tmp_path: Path) -> None:
    path = write(
        tmp_path / "dev.tsv", "label\tsentence2\tindex\tsentence1\nentailment\tH.\t7\tP.\n"
    )
    (example,) = load("rte", "dev", path).examples
    assert (example.id, example.text_a, example.text_b, example.label) == ("7", "P.", "H.", 0)


def test_cola_has_no_header_and_reads_label_and_sentence_by_position(tmp_path: Path) -> None:
    path = write(tmp_path / "train.tsv", "gj04\t1\t\tGood one.\ngj04\t0\t*\tBad one .\n")
    examples = load("cola", "train", path).examples
    assert [(e.text_a, e.label, e.text_b) for e in examples] == [
        ("Good one.", 1, None),
        ("Bad one .", 0, None),
    ]
    assert [e.id for e in examples] == ["train.tsv:1", "train.tsv:2"]


def test_glue_quotes_are_literal_text_and_never_merge_rows(tmp_path: Path) -> None:
    rows = '0\t"He said\tno.\tentailment\n1\tshe left "\tok\tnot_entailment\n'
    examples = load("rte", "train", write(tmp_path / "train.tsv", RTE_HEADER + rows)).examples
    assert [e.text_a for e in examples] == ['"He said', 'she left "']


def test_mrpc_header_starting_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    header = "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
    path = write(tmp_path / "train.tsv", header + "1\t11\t12\tA cat .\tA feline .\n")
    (example,) = load("mrpc", "train", path).examples
    assert (example.text_a, example.text_b, example.label) == ("A cat .", "A feline .", 1)


STSB_HEADER = "\t".join(
    ["index", "genre", "filename", "year", "old_index", "source1", "source2"]
    + ["sentence1", "sentence2", "score"]
)


def stsb_row(index: int, score: str) -> str:
    return f"{index}\tmain-captions\tMSRvid\t2012test\t0001\tnone\tnone\tA.\tB.\t{score}"


def test_stsb_score_is_a_float_label(tmp_path: Path) -> None:
    path = write(tmp_path / "dev.tsv", f"{STSB_HEADER}\n{stsb_row(0, '3.800')}\n")
    assert load("stsb", "dev", path).examples[0].label == pytest.approx(3.8)


@pytest.mark.parametrize(
    ("score", "complaint"),
    [("5.2", "outside the range 0..5"), ("high", "not a number"), ("nan", "not a number")],
)
def test_stsb_score_out_of_range_or_not_a_number_is_rejected(
    tmp_path: Path, score: str, complaint: str
) -> None:
    path = write(tmp_path / "dev.tsv", f"{STSB_HEADER}\n{stsb_row(0, '1')}\n{stsb_row(1, score)}\n")
    message = one_line_error("stsb", "dev", path)
    assert f"{path}:3:" in message and complaint in message


def test_row_with_wrong_column_count_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "train.tsv", RTE_HEADER + "0\tP.\tH.\tentailment\n1\tP.\tentailment\n")
    message = one_line_error("rte", "train", path)
    assert f"{path}:3: expected 4 tab-separated columns, found 3" in message


def test_unknown_label_says_which_labels_are_allowed(tmp_path: Path) -> None:
    path = write(tmp_path / "train.tsv", RTE_HEADER + "0\tP.\tH.\tcontradiction\n")
    message = one_line_error("rte", "train", path)
    assert f"{path}:2:" in message and "'contradiction'" in message
    assert "'entailment', 'not_entailment'" in message


def test_header_without_a_needed_column_names_the_column(tmp_path: Path) -> None:
    path = write(
        tmp_path / "train.tsv", "index\tpremise\tsentence2\tlabel\n0\tP.\tH.\tentailment\n"
    )
    message = one_line_error("rte", "train", path)
    assert f"{path}:1:" in message and "'sentence1'" in message


def test_glue_file_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "train.tsv", RTE_HEADER.encode() + b"0\tCaf\xe9.\tH.\tentailment\n")
    message = one_line_error("rte", "train", path)
    assert f"{path}:2: not UTF-8" in message and "re-save the file as UTF-8" in message


def test_gzip_compressed_file_is_reported_as_such(tmp_path: Path) -> None:
    path = write(tmp_path / "snli_1.0_dev.jsonl", b"\x1f\x8b\x08\x00binary")
    assert "gzip-compressed" in one_line_error("snli", "dev", path)


def test_duplicate_ids_within_a_split_are_rejected(tmp_path: Path) -> None:
    rows = "4\tP.\tH.\tentailment\n4\tQ.\tH.\tentailment\n"
    message = one_line_error("rte", "train", write(tmp_path / "train.tsv", RTE_HEADER + rows))
    assert "duplicate id '4' (first on line 2)" in message


MNLI_TRAIN_HEADER = (
    "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\t"
    "sentence1_parse\tsentence2_parse\tsentence1\tsentence2\tlabel1\tgold_label\n"
)


def mnli_row(index: int, premise: str, labels: list[str]) -> str:
    return (
        "\t".join(
            [str(index), "1", f"{index}n", "fiction", "( a )", "( b )", "(ROOT a)"]
            + ["(ROOT b)", premise, "Hyp.", *labels]
        )
        + "\n"
    )


def test_mnli_train_and_dev_layouts_differ_but_columns_are_found_by_name(tmp_path: Path) -> None:
    train = write(tmp_path / "train.tsv", MNLI_TRAIN_HEADER + mnli_row(0, "P.", ["neutral"] * 2))
    dev_header = MNLI_TRAIN_HEADER.replace("label1\t", "label1\tlabel2\tlabel3\tlabel4\tlabel5\t")
    dev_rows = mnli_row(0, "Q.", ["contradiction"] * 6) + mnli_row(1, "R.", ["neutral"] * 5 + ["-"])
    dev = load("mnli", "dev_matched", write(tmp_path / "dev_matched.tsv", dev_header + dev_rows))
    assert load("mnli", "train", train).examples[0].label == 1
    assert [(e.text_a, e.text_b, e.label) for e in dev.examples] == [("Q.", "Hyp.", 2)]
    assert dev.dropped == {"no gold label": 1}


QQP_HEADER = "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"


def test_qqp_reads_question_columns_and_skips_rows_broken_by_newlines(tmp_path: Path) -> None:
    rows = "5\t1\t2\tWhy?\tHow?\t1\n6\t3\t4\tWhat is\n\tnew?\tWhere?\t0\n7\t5\t6\tA?\tB?\t0\n"
    loaded = load("qqp", "train", write(tmp_path / "train.tsv", QQP_HEADER + rows))
    assert [(e.id, e.text_a, e.text_b, e.label) for e in loaded.examples] == [
        ("5", "Why?", "How?", 1),
        ("7", "A?", "B?", 0),
    ]
    assert sum(loaded.dropped.values()) == 2


def test_senteval_sentence_lists_skip_empty_lines_and_count_them(tmp_path: Path) -> None:
    folder = tmp_path / "CR"
    write(folder / "custrev.neg", "bad screen .\n\nawful battery .\n")
    write(folder / "custrev.pos", "great sound .\n")
    loaded = load("cr", "all", folder)
    assert [(e.id, e.text_a, e.label) for e in loaded.examples] == [
        ("custrev.neg:1", "bad screen .", 0),
        ("custrev.pos:1", "great sound .", 1),
        ("custrev.neg:3", "awful battery .", 0),
    ]
    assert loaded.dropped == {"empty line": 1}


def test_senteval_two_file_split_given_a_file_asks_for_its_folder(tmp_path: Path) -> None:
    path = write(tmp_path / "MR" / "rt-polarity.pos", "good .\n")
    message = one_line_error("mr", "all", path)
    assert "rt-polarity.neg, rt-polarity.pos" in message and "folder" in message


def test_trec_train_is_read_as_latin1(tmp_path: Path) -> None:
    path = write(tmp_path / "train_5500.label", b"HUM:ind Who is Ren\xe9 Descartes ?\n")
    (example,) = load("trec", "train", path).examples
    assert example.text_a == "Who is René Descartes ?"
    assert dataset("trec").labels[example.label] == "HUM"


def test_trec_file_in_utf8_is_read_as_utf8(tmp_path: Path) -> None:
    path = write(tmp_path / "TREC_10.label", "LOC:city Where is Orléans ?\nNUM:dist How far ?\n")
    loaded = load("trec", "test", path)
    assert [e.text_a for e in loaded.examples] == ["Where is Orléans ?", "How far ?"]
    assert [dataset("trec").labels[e.label] for e in loaded.examples] == ["LOC", "NUM"]


@pytest.mark.parametrize(
    ("line", "complaint"),
    [("What is it ?", "expected 'COARSE:fine question'"), ("FOO:bar Why ?", "unknown label 'FOO'")],
)
def test_trec_line_without_a_known_coarse_label_is_rejected(
    tmp_path: Path, line: str, complaint: str
) -> None:
    path = write(tmp_path / "TREC_10.label", f"NUM:dist How far ?\n{line}\n")
    message = one_line_error("trec", "test", path)
    assert f"{path}:2:" in message and complaint in message


SICK_HEADER = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment"


def test_sick_test_file_with_crlf_line_ends_is_read_cleanly(tmp_path: Path) -> None:
    rows = ["6\tA boy .\tA kid .\t4.5\tENTAILMENT", "7\tA .\tB .\t1\tCONTRADICTION"]
    text = "".join(f"{line}\r\n" for line in [SICK_HEADER, *rows])
    path = write(tmp_path / "SICK_test_annotated.txt", text)
    relatedness = load("sickr", "test", path).examples
    entailment = load("sicke", "test", path).examples
    assert [e.label for e in relatedness] == [4.5, 1.0]
    assert [dataset("sicke").labels[e.label] for e in entailment] == ["entailment", "contradiction"]
    assert [(e.id, e.text_b) for e in entailment] == [("6", "A kid ."), ("7", "B .")]


def test_sick_relatedness_below_one_is_outside_its_range(tmp_path: Path) -> None:
    path = write(tmp_path / "SICK_train.txt", f"{SICK_HEADER}\n1\tA .\tB .\t0.5\tNEUTRAL\n")
    assert "outside the range 1..5" in one_line_error("sickr", "train", path)


def test_sick_file_that_is_not_utf8_is_rejected(tmp_path: Path) -> None:
    path = write(
        tmp_path / "SICK_trial.txt", f"{SICK_HEADER}\n".encode() + b"1\t\xff\tB\t3\tNEUTRAL\n"
    )
    assert f"{path}:2: not UTF-8" in one_line_error("sicke", "dev", path)


def test_senteval_sst_binary_is_headerless_sentence_then_label(tmp_path: Path) -> None:
    path = write(tmp_path / "sentiment-dev", "a gem .\t1\na dud .\t0\n")
    assert [(e.text_a, e.label) for e in load("sst", "dev", path).examples] == [
        ("a gem .", 1),
        ("a dud .", 0),
    ]


def snli_line(pair_id: str, gold: str) -> str:
    return (
        f'{{"gold_label": "{gold}", "pairID": "{pair_id}", "sentence1": "A man.", '
        '"sentence2": "A person.", "annotator_labels": ["neutral"]}\n'
    )


def test_snli_drops_pairs_without_gold_label_and_keys_by_pair_id(tmp_path: Path) -> None:
    text = (
        snli_line("1r1e", "entailment")
        + snli_line("1r1n", "-")
        + snli_line("1r1c", "contradiction")
    )
    loaded = load("snli", "dev", write(tmp_path / "snli_1.0_dev.jsonl", text))
    assert [(e.id, e.label) for e in loaded.examples] == [("1r1e", 0), ("1r1c", 2)]
    assert loaded.dropped == {"no gold label": 1}


@pytest.mark.parametrize(
    ("bad_line", "complaint"),
    [
        ('{"sentence1": "A.", "sentence2": "B."', "not a JSON line"),
        ('["A.", "B.", "neutral"]', "not an object"),
        ('{"sentence1": "A.", "sentence2": "B."}', "no 'gold_label' field"),
        ('{"sentence1": "A.", "gold_label": "neutral"}', "no 'sentence2' field"),
    ],
)
def test_snli_line_that_is_not_a_pair_names_file_and_line(
    tmp_path: Path, bad_line: str, complaint: str
) -> None:
    path = write(tmp_path / "snli_1.0_test.jsonl", snli_line("1", "neutral") + bad_line + "\n")
    message = one_line_error("snli", "test", path)
    assert f"{path}:2:" in message and complaint in message
