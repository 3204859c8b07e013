"""Valid generated files round-trip: what a reader returns is what was written.

The fuzz tests (test_reader_fuzz.py) show that no input breaks a reader; these show that
no valid input is misread — text with quotes, accents, digits or odd spacing inside a
field, any tree shape, any finite number in a result. Hypothesis generates the content,
the test writes it in the format's own layout and reads it back.
"""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from posharness.boards.leaderboard import build, load, save
from posharness.contracts.results import Metric, read_result, write_result
from tests.result_factory import synthetic_result

CASES = 40
ROUNDS = settings(
    max_examples=CASES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# A word: letters (accented too), digits and punctuation, never a separator of any format.
WORD = st.text(
    alphabet=st.characters(
        categories=("L", "N", "P"), exclude_characters="()\t\n\r\x0b\x0c\x1c\x1d\x1e\x85"
    ),
    min_size=1,
    max_size=8,
)
SENTENCE = st.lists(WORD, min_size=1, max_size=12).map(" ".join)


@ROUNDS
@given(
    pairs=st.lists(
        st.tuples(SENTENCE, SENTENCE, st.sampled_from(["entailment", "not_entailment"])),
        min_size=1,
        max_size=8,
    )
)
def test_glue_tsv(tmp_path, pairs):
    from posharness.tasks.finetune.data.locate import dataset, load_split

    path = tmp_path / "train.tsv"
    body = "".join(f"{i}\t{a}\t{b}\t{label}\n" for i, (a, b, label) in enumerate(pairs))
    path.write_text("index\tsentence1\tsentence2\tlabel\n" + body, encoding="utf-8")
    spec = dataset("rte")
    read = load_split(spec, "train", path).examples
    assert [(e.text_a, e.text_b, spec.labels[int(e.label)]) for e in read] == pairs


@ROUNDS
@given(
    records=st.lists(
        st.tuples(SENTENCE, SENTENCE, st.sampled_from(["entailment", "neutral", "contradiction"])),
        min_size=1,
        max_size=8,
    )
)
def test_snli_jsonl(tmp_path, records):
    from posharness.tasks.finetune.data.locate import dataset, load_split

    path = tmp_path / "dev.jsonl"
    lines = [
        json.dumps({"pairID": str(i), "sentence1": a, "sentence2": b, "gold_label": label})
        for i, (a, b, label) in enumerate(records)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    spec = dataset("snli")
    read = load_split(spec, "dev", path).examples
    assert [(e.text_a, e.text_b, spec.labels[int(e.label)]) for e in read] == records


@st.composite
def dependency_trees(draw):
    """A sentence whose every word attaches to one already in the tree (any shape)."""
    from posharness.tasks.dep_heads.tree import ROOT, Sentence

    length = draw(st.integers(min_value=1, max_value=12))
    order = draw(st.permutations(range(length)))
    heads = [ROOT] * length
    for position, word in enumerate(order[1:], start=1):
        heads[word] = order[draw(st.integers(min_value=0, max_value=position - 1))] + 1
    words = draw(st.lists(WORD, min_size=length, max_size=length))
    relations = [
        "root" if head == ROOT else draw(st.sampled_from(["nsubj", "obj", "nmod:poss", "obl"]))
        for head in heads
    ]
    return Sentence("s", tuple(words), tuple(heads), tuple(relations), 1)


@ROUNDS
@given(trees=st.lists(dependency_trees(), min_size=1, max_size=4))
def test_conllu(tmp_path, trees):
    from posharness.tasks.dep_heads.conllu import iter_conllu
    from posharness.tasks.dep_heads.tree import conllu_lines

    path = tmp_path / "trees.conllu"
    path.write_text("".join("\n".join(conllu_lines(t)) + "\n\n" for t in trees), encoding="utf-8")
    read = list(iter_conllu(path))
    assert [(s.words, s.heads, s.relations) for s in read] == [
        (t.words, t.heads, t.relations) for t in trees
    ]


LABELS = st.sampled_from(["NP", "VP", "PP", "SBAR", "ADJP", "S"])
TAGS = st.sampled_from(["DT", "NN", "VBZ", "IN", "JJ", "PRP$"])
CONSTITUENTS = st.recursive(
    st.tuples(TAGS, WORD).map(lambda leaf: f"({leaf[0]} {leaf[1]})"),
    lambda inner: st.tuples(LABELS, st.lists(inner, min_size=1, max_size=3)).map(
        lambda node: f"({node[0]} {' '.join(node[1])})"
    ),
    max_leaves=12,
)


@ROUNDS
@given(sentence=CONSTITUENTS)
def test_bracketed_trees(sentence):
    """Any tree under SNLI's ``(ROOT (S …))`` reads back to itself, tag for tag."""
    from posharness.tasks.senteval.building.trees import read_tree

    text = f"(ROOT (S {sentence}))"
    tree = read_tree(text)
    assert _bracketed(tree) == text


def _bracketed(node) -> str:
    if node.word is not None:
        return f"({node.label} {node.word})"
    return f"({node.label} {' '.join(_bracketed(child) for child in node.children)})"


@ROUNDS
@given(rows=st.lists(st.tuples(SENTENCE, st.sampled_from(["O", "I"])), min_size=1, max_size=6))
def test_senteval_probing_file(tmp_path, rows):
    from posharness.tasks.senteval.catalog import BY_NAME
    from posharness.tasks.senteval.probing_files import read_probing_file

    every = [  # each split needs both classes; the generated rows come after
        (split, label, f"the {split} sentence {label} .")
        for split in ("tr", "va", "te")
        for label in ("O", "I")
    ] + [("tr", label, text) for text, label in rows]
    path = tmp_path / "bigram_shift.txt"
    path.write_text(
        "".join(f"{split}\t{label}\t{text}\n" for split, label, text in every), encoding="utf-8"
    )
    data = read_probing_file(BY_NAME["bshift"], path)
    assert list(data.sentences) == [text for _, _, text in every]
    assert data.labels.tolist() == [label for _, label, _ in every]


FINITE = st.floats(allow_nan=False, allow_infinity=False, width=64)


@ROUNDS
@given(
    values=st.lists(st.tuples(FINITE, st.integers(min_value=1, max_value=10**6)), min_size=1,
                    max_size=4),
    spec=SENTENCE,
)  # fmt: skip
def test_result_and_leaderboard_json(tmp_path, values, spec):
    metrics = {f"m{i}": Metric(value=value, n=n) for i, (value, n) in enumerate(values)}
    result = synthetic_result(spec=spec, fingerprint="f", task="t", metrics=metrics)
    path = tmp_path / "results" / "cell.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_result(result, path)
    assert read_result(path) == result
    board = build([(path, result)], "b", tmp_path / "board.json")
    save(board, tmp_path / "board.json")
    again = load(tmp_path / "board.json")
    assert again == board
    assert all(
        math.isclose(again.rows[0].scores[f"t/m{i}"].mean, value, rel_tol=0, abs_tol=0)
        for i, (value, _) in enumerate(values)
    )
