"""Any bytes through any reader: a parsed value or the reader's one-line error naming the
file — never a traceback from deep inside a library, never a hang.

Hypothesis generates both raw bytes and near-valid files (real lines with one field
broken, truncated, or re-encoded), which is where readers usually crack. Each reader gets
``CASES`` generated files; the figure is in the note of the change that added this.
"""

from __future__ import annotations

import itertools
import json
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from posharness.base.errors import PosharnessError
from posharness.boards.leaderboard import build
from posharness.contracts.results import Metric
from tests.result_factory import synthetic_result

CASES = 60
FUZZ = settings(
    max_examples=CASES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

TSV_LINES = "".join(f"{i}\tA man plays {i}.\tSomeone plays.\tentailment\n" for i in range(3))
CONLLU_SENTENCE = (
    "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n"
    "2\tdog\tdog\tNOUN\tNN\t_\t3\tnsubj\t_\t_\n"
    "3\tbarks\tbark\tVERB\tVBZ\t_\t0\troot\t_\t_\n"
)
SNLI_LINE = json.dumps(
    {
        "sentence1": "A man plays.",
        "sentence2": "Someone plays.",
        "gold_label": "entailment",
        "sentence1_parse": "(ROOT (S (NP (DT A) (NN man)) (VP (VBZ plays)) (. .)))",
        "sentence2_parse": "(ROOT (S (NP (NN Someone)) (VP (VBZ plays)) (. .)))",
        "pairID": "1",
    }
)


def _mutated(valid: str) -> st.SearchStrategy[bytes]:
    """Valid text with a slice replaced, cut, duplicated or re-encoded; or raw bytes."""
    text = st.text(alphabet=string.printable + "\t\n\x00é€", max_size=40)
    cut = st.integers(min_value=0, max_value=len(valid))
    edited = st.tuples(cut, cut, text).map(
        lambda t: (valid[: min(t[0], t[1])] + t[2] + valid[max(t[0], t[1]) :]).encode()
    )
    encodings = st.sampled_from(["utf-16", "latin-1", "utf-8-sig"]).map(
        lambda enc: valid.replace("man", "mañ").encode(enc)
    )
    return st.one_of(edited, encodings, st.binary(max_size=200), st.just(valid.encode()))


def _check(read: Callable[[Path], Any], path: Path, data: bytes) -> None:
    path.write_bytes(data)
    try:
        read(path)
    except PosharnessError as error:
        message = str(error)
        assert "\n" not in message
        assert str(path) in message or path.name in message, message


def _rte(path: Path) -> Any:
    from posharness.tasks.finetune.data.locate import dataset, load_split

    folder = path.parent / "rte"
    folder.mkdir(exist_ok=True)
    (folder / "train.tsv").write_bytes(b"index\tsentence1\tsentence2\tlabel\n" + path.read_bytes())
    return load_split(dataset("rte"), "train", folder / "train.tsv")


def _snli_finetune(path: Path) -> Any:
    from posharness.tasks.finetune.data.locate import dataset, load_split

    return load_split(dataset("snli"), "dev", path)


def _snli_probes(path: Path) -> Any:
    from posharness.tasks.shuffle.probes import build_probes
    from posharness.tasks.shuffle.snli import read_snli

    return build_probes(read_snli(path), 0, ("shuffle_3", "shuffle_sr"))


def _conllu(path: Path) -> Any:
    from posharness.tasks.dep_heads.conllu import iter_conllu, scan_conllu

    scan_conllu(path)
    return list(iter_conllu(path))


def _corpus(path: Path) -> Any:
    from posharness.models.pretrain.corpus import read_corpus

    return list(read_corpus(path))


def _result(path: Path) -> Any:
    from posharness.contracts.results import read_result

    return read_result(path)


def _leaderboard(path: Path) -> Any:
    from posharness.boards.leaderboard import load

    return load(path)


def _probe_file(path: Path) -> Any:
    from posharness.tasks.shuffle.probes import read_probe

    return read_probe(path, "shuffle_3")


def _senteval_probing(path: Path) -> Any:
    from posharness.tasks.senteval.catalog import BY_NAME
    from posharness.tasks.senteval.probing_files import read_probing_file

    return read_probing_file(BY_NAME["bshift"], path)


def _senteval_trec(path: Path) -> Any:
    from posharness.tasks.finetune.data.locate import dataset, load_split

    return load_split(dataset("trec"), "test", path)


def _senteval_sentence_lists(path: Path) -> Any:
    """MR: the fuzzed file is the positive half; the negative half is a valid file."""
    from posharness.tasks.finetune.data.locate import dataset, load_split

    (path.parent / "rt-polarity.neg").write_text("a dull film .\nnot good .\n")
    return load_split(dataset("mr"), "all", path.parent)


def _bracketed_trees(path: Path) -> Any:
    from posharness.tasks.senteval.building.sources import open_source, read_parsed_source

    return read_parsed_source(open_source("ptb", path), 0)


def _builder_conllu(path: Path) -> Any:
    from posharness.tasks.senteval.building.sources import open_source, read_parsed_source

    return read_parsed_source(open_source("conllu", path), 0)


RESULT = synthetic_result(
    spec="m", fingerprint="f", task="t", metrics={"accuracy": Metric(value=0.5, n=10)}
)
BOARD = build([(Path("/r/m/t.json"), RESULT)], "board", Path("/r/board.json"))
PAIR = {"premise": "A man plays .", "hypothesis": "Someone plays .", "label": "entailment"}
PROBE_LINE = json.dumps({"id": "1", **PAIR, "original": PAIR}) + "\n"
PROBING_LINES = "".join(
    f"{split}\t{label}\tthe cat sat on the mat number {i} .\n"
    for i, (split, label) in enumerate(itertools.product(("tr", "va", "te"), ("O", "I")))
)
PTB_TREE = (
    "( (S (NP-SBJ (DT The) (NN dog)) (VP (VBZ barks) (PP (IN at) (NP (NN night)))) (. .)) )\n"
)

READERS = {
    "GLUE tsv": (_rte, "train.tsv", TSV_LINES),
    "SNLI jsonl (fine-tune)": (_snli_finetune, "dev.jsonl", SNLI_LINE + "\n"),
    "SNLI jsonl and parse trees (probes)": (_snli_probes, "test.jsonl", SNLI_LINE + "\n"),
    "CoNLL-U": (_conllu, "trees.conllu", CONLLU_SENTENCE + "\n"),
    "pretraining corpus": (_corpus, "corpus.txt", "One line of text.\nAnother one.\n"),
    "result JSON": (_result, "cell.json", RESULT.model_dump_json(indent=1)),
    "leaderboard JSON": (_leaderboard, "board.json", BOARD.model_dump_json(indent=1)),
    "probe jsonl": (_probe_file, "shuffle_3.jsonl", PROBE_LINE),
    "SentEval probing file": (_senteval_probing, "bigram_shift.txt", PROBING_LINES),
    "SentEval TREC": (_senteval_trec, "TREC_10.label", "NUM:dist How far is it ?\n" * 2),
    "SentEval sentence lists (MR)": (
        _senteval_sentence_lists, "rt-polarity.pos", "a fine film .\nvery good .\n"
    ),
    "bracketed trees (PTB)": (_bracketed_trees, "wsj_0001.mrg", PTB_TREE * 2),
    "CoNLL-U (probe builder)": (_builder_conllu, "ud.conllu", CONLLU_SENTENCE + "\n"),
}  # fmt: skip


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=5,
)
SNLI_RECORDS = st.fixed_dictionaries(
    {},
    optional={
        key: st.one_of(JSON_VALUES, st.just(value)) for key, value in json.loads(SNLI_LINE).items()
    },
).map(lambda record: (json.dumps(record) + "\n").encode())


@pytest.mark.parametrize("read", [_snli_finetune, _snli_probes], ids=["fine-tune", "probes"])
def test_snli_records_with_any_json_values_give_a_value_or_a_one_line_error(read, tmp_path):
    @FUZZ
    @given(data=SNLI_RECORDS)
    def fuzz(data: bytes) -> None:
        _check(read, tmp_path / "records.jsonl", data)

    fuzz()


@pytest.mark.parametrize("reader", sorted(READERS))
def test_any_bytes_give_a_value_or_a_one_line_error_naming_the_file(reader, tmp_path):
    read, name, valid = READERS[reader]

    @FUZZ
    @given(data=_mutated(valid))
    def fuzz(data: bytes) -> None:
        _check(read, tmp_path / name, data)

    fuzz()


@pytest.mark.parametrize("reader", sorted(READERS))
def test_the_valid_file_each_mutation_starts_from_is_read(reader, tmp_path):
    """Mutations of a file its reader already refuses would test only that refusal."""
    read, name, valid = READERS[reader]
    path = tmp_path / name
    path.write_text(valid, encoding="utf-8")
    assert read(path) is not None
