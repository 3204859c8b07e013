"""The root relation scored as Chen et al.'s Table A3 scores it (``dep_heads.score_root``).

Table A3 lists Root at distance 0.0 (spaCy makes the root word its own head), and its
short and macro averages include it. A head finds the root when its argmax at the root
word, the word itself included, is that word; every other relation, and every metric the
task reported before, stays exactly as it was.
"""

from __future__ import annotations

import random
from statistics import fmean

import numpy as np
import pytest
import torch

from posharness.compute.batching import pad_batch
from posharness.contracts.adapter import ATTENTIONS, Mode
from posharness.tasks.dep_heads.counting import count_heads
from posharness.tasks.dep_heads.report import mode_table_markdown, relation_report
from posharness.tasks.dep_heads.scoring import ArcBatch, HeadCounts
from posharness.tasks.dep_heads.tree import ROOT, ROOT_RELATION, Sentence
from posharness.tasks.dep_heads.word_attention import (
    align_words,
    attends_to_itself,
    word_attention,
)
from tests.unit.tasks.dep_heads.test_dep_heads_task import results, run_ok, write_treebank
from tests.unit.tasks.dep_heads.test_dependency_counting import context, model, random_tree

__all__ = ["model"]  # the tiny BERT fixture, shared with the counting tests

SAME = {"full": lambda label: label, "collapsed": lambda label: label}


def arc_batch(counts: HeadCounts, labels: list[str], dependents, heads) -> ArcBatch:
    n = len(labels)
    return ArcBatch(
        row=np.arange(n),
        dependent=np.asarray(dependents, dtype=np.int64),
        head=np.asarray(heads, dtype=np.int64),
        label=counts.label_indices(labels),
        fold=np.arange(n) % 2,
    )


def self_hits(word_map: list[list[float]], root: int, word_ids=None) -> list[bool]:
    """Whether one head, reading this map, finds the root in each direction."""
    pieces = torch.tensor(word_map, dtype=torch.float32)[None, None]  # [1, 1, T, T]
    ids = word_ids if word_ids is not None else tuple(range(len(word_map)))
    words = max(i for i in ids if i is not None) + 1
    alignment = align_words([ids], [words], len(word_map))
    hits = attends_to_itself(
        word_attention(pieces, alignment), alignment, torch.tensor([0]), torch.tensor([root])
    )
    return hits[0, 0].tolist()


def root_counts(hits_per_head: list[list[bool]]) -> HeadCounts:
    """One layer of heads, one root word, each head's two directions' hits given."""
    roots = HeadCounts(layers=1, heads=len(hits_per_head))
    arcs = arc_batch(roots, [ROOT_RELATION], [1], [1])
    roots.add_arcs(arcs)
    roots.add_hits(0, np.array([hits_per_head]), arcs)
    return roots


def report_with(roots: HeadCounts | None, top: int = 20):
    """A small corpus: nsubj (3 arcs, found 2 of 3 at distance 1), obj (2 arcs, found 1
    of 2 at distance 6), amod (1 arc, found); with the root counts given."""
    counts = HeadCounts(layers=1, heads=1)
    labels = ["nsubj", "nsubj", "nsubj", "obj", "obj", "amod"]
    arcs = arc_batch(counts, labels, [0, 0, 0, 0, 0, 0], [1, 1, 1, 6, 6, 1])
    counts.add_arcs(arcs)
    found = np.array([1, 1, 0, 1, 0, 1], dtype=bool)
    counts.add_hits(0, np.stack([found, np.zeros(6, bool)], axis=-1)[:, None, :], arcs)
    return relation_report(counts, None, SAME, "full", top, 4.0, root_words=2, roots=roots)


# --- attention maps built by hand -------------------------------------------------------


def test_a_map_whose_diagonal_dominates_finds_the_root_in_both_directions():
    dominant = [
        [0.7, 0.1, 0.1, 0.1],
        [0.1, 0.7, 0.1, 0.1],
        [0.1, 0.1, 0.7, 0.1],
        [0.1, 0.1, 0.1, 0.7],
    ]
    assert self_hits(dominant, root=2) == [True, True]
    report = report_with(root_counts([self_hits(dominant, root=2)]))
    assert report.metrics()["acc_root"].value == 1.0


def test_a_map_that_never_attends_to_itself_never_finds_the_root():
    avoiding = [
        [0.0, 0.5, 0.3, 0.2],
        [0.4, 0.0, 0.4, 0.2],
        [0.3, 0.3, 0.0, 0.4],
        [0.2, 0.5, 0.3, 0.0],
    ]
    assert self_hits(avoiding, root=2) == [False, False]
    report = report_with(root_counts([self_hits(avoiding, root=2)]))
    assert report.metrics()["acc_root"].value == 0.0


def test_the_best_head_over_heads_and_directions_is_picked_like_any_relation():
    report = report_with(root_counts([[False, False], [False, True]]))
    assert report.metrics()["acc_root"].value == 1.0
    assert (report.root.best.head, report.root.best.direction) == (1, "head_to_dependent")


def test_ties_go_to_the_leftmost_word_as_for_every_other_relation():
    uniform = [[0.25] * 4 for _ in range(4)]
    assert self_hits(uniform, root=0) == [True, True]  # the leftmost word is itself
    assert self_hits(uniform, root=2) == [False, False]


def test_a_split_root_word_attends_to_itself_through_its_pieces():
    # [CLS] the bark ##ing [SEP]: "barking" (word 1) is two pieces. Each piece sends 0.35
    # to "the" and only 0.2 to each of its own pieces, but summed over the target pieces
    # (Clark et al.'s rule) the word sends itself 0.4: it attends to itself most. [CLS]
    # and [SEP], with no word, never compete.
    pieces = [
        [0.0, 0.1, 0.1, 0.1, 0.7],
        [0.9, 0.0, 0.05, 0.05, 0.0],
        [0.25, 0.35, 0.2, 0.2, 0.0],  # bark
        [0.25, 0.35, 0.2, 0.2, 0.0],  # ##ing
        [0.0, 0.0, 0.0, 0.0, 1.0],
    ]
    assert self_hits(pieces, root=1, word_ids=(None, 0, 1, 1, None)) == [True, True]


# --- the paper's relation set -----------------------------------------------------------


def test_the_with_root_macros_are_means_over_the_relations_and_root():
    report = report_with(root_counts([[True, False]]), top=20)
    metrics = report.metrics()
    nsubj, obj, amod, root = 2 / 3, 1 / 2, 1.0, 1.0
    assert metrics["macro_with_root"].value == pytest.approx(fmean([nsubj, obj, amod, root]))
    assert metrics["macro_short_with_root"].value == pytest.approx(fmean([nsubj, amod, root]))
    assert metrics["macro_long_with_root"].value == pytest.approx(obj)  # root is short
    assert metrics["macro"].value == pytest.approx(fmean([nsubj, obj, amod]))  # as before
    assert metrics["macro_with_root"].n == 3 + 2 + 1 + 1  # arcs, as for every macro
    assert report.root.mean_distance == 0.0


def test_root_is_ranked_among_the_top_relations_by_frequency():
    roots = HeadCounts(layers=1, heads=1)
    arcs = arc_batch(roots, [ROOT_RELATION] * 2, [1, 1], [1, 1])
    roots.add_arcs(arcs)
    roots.add_hits(0, np.ones((2, 1, 2), bool), arcs)
    report = report_with(roots, top=3)  # nsubj 3, root 2, obj 2 (ties by name), amod 1
    assert [r.relation for r in report.with_root] == ["nsubj", "obj", "root"]
    assert [r.relation for r in report.table] == ["nsubj", "obj", "amod"]  # unchanged
    assert report.details()["with_root_relations"] == ["nsubj", "obj", "root"]


def test_without_root_counts_the_report_is_exactly_what_it_was():
    plain, rooted = report_with(None), report_with(root_counts([[True, True]]))
    before, after = plain.metrics(), rooted.metrics()
    new = {"acc_root", "macro_with_root", "macro_short_with_root", "macro_long_with_root"}
    assert set(after) - set(before) == new
    assert {key: after[key] for key in before} == before
    assert "root" not in plain.details() and "root" in rooted.details()
    assert "root" not in plain.flags()[0]  # a thin root is flagged only once scored
    assert "root 1" in rooted.flags()[0]


def paper_report(column: int):
    """Chen et al.'s Table A3 rows as counts (1000 arcs each, the printed accuracy and
    mean distance), scored through relation_report: column 0 contextual, 1 positional,
    2 both, in the table's order (arXiv v2 App. A.6.2, lines 526-545 of our text dump)."""
    rows = [  # relation, distance, contextual, positional, both
        ("auxpass", 1.1, 44.6, 91.1, 92.9), ("compound", 1.2, 21.7, 75.0, 70.6),
        ("aux", 1.3, 25.2, 77.9, 79.1), ("nummod", 1.3, 26.8, 78.9, 75.5),
        ("amod", 1.4, 19.7, 69.3, 66.9), ("det", 1.8, 47.9, 52.9, 51.6),
        ("advmod", 2.1, 16.5, 62.4, 58.7), ("pobj", 2.3, 9.0, 33.9, 46.3),
        ("nsubj", 2.3, 13.4, 58.2, 52.6), ("poss", 2.3, 15.9, 31.7, 43.5),
        ("dobj", 2.5, 20.0, 34.8, 41.6), ("prep", 2.6, 23.1, 62.8, 63.4),
        ("npadvmod", 3.1, 14.4, 30.0, 43.8), ("cc", 3.1, 28.4, 52.0, 51.6),
        ("mark", 4.1, 25.1, 21.3, 64.4), ("conj", 4.9, 25.1, 31.2, 33.6),
        ("punct", 7.3, 25.9, 30.3, 32.7), ("advcl", 7.6, 18.4, 9.8, 20.1),
        ("ccomp", 8.1, 29.0, 12.4, 33.2),
    ]  # fmt: skip
    n = 1000
    counts = HeadCounts(layers=1, heads=1)
    for relation, distance, *scores in rows:
        far = round(n * distance) - n * int(distance)  # this many arcs one word further
        offsets = np.full(n, int(distance)) + (np.arange(n) < far)
        arcs = arc_batch(counts, [relation] * n, np.zeros(n), offsets)
        counts.add_arcs(arcs)
        found = np.arange(n) < round(10 * scores[column])
        counts.add_hits(0, np.stack([found, np.zeros(n, bool)], -1)[:, None, :], arcs)
    roots = HeadCounts(layers=1, heads=1)
    arcs = arc_batch(roots, [ROOT_RELATION] * n, np.zeros(n), np.zeros(n))
    roots.add_arcs(arcs)
    found = np.arange(n) < round(10 * (99.3, 3.8, 86.5)[column])
    roots.add_hits(0, np.stack([found, np.zeros(n, bool)], -1)[:, None, :], arcs)
    return relation_report(counts, None, SAME, "full", 20, 4.0, root_words=n, roots=roots)


@pytest.mark.parametrize(
    ("column", "macro", "short", "long", "without_root"),
    [
        (0, 27.5, 28.4, 24.7, 23.7),  # contextual
        (1, 46.0, 54.3, 21.0, 48.2),  # positional
        (2, 55.4, 61.6, 36.8, 53.8),  # both
    ],
)
def test_chen_et_al_table_a3_averages_are_the_with_root_macros(
    column, macro, short, long, without_root
):
    """The printed summary rows come back only with root in the set (the issue's check:
    without it the macro would be 23.7 / 48.2 / 53.8)."""
    metrics = paper_report(column).metrics()
    assert 100 * metrics["macro_with_root"].value == pytest.approx(macro, abs=0.05)
    assert 100 * metrics["macro_short_with_root"].value == pytest.approx(short, abs=0.05)
    assert 100 * metrics["macro_long_with_root"].value == pytest.approx(long, abs=0.05)
    assert 100 * metrics["macro"].value == pytest.approx(without_root, abs=0.05)


# --- on a tiny model --------------------------------------------------------------------


def reference_root_hits(model, sentence: Sentence) -> np.ndarray:
    """Root hits [L, H, 2] for one unpadded sentence, word map built with explicit loops
    (sum over target pieces, mean over source pieces), the diagonal left in."""
    tokens = model.tokenize([list(sentence.words)])[0]
    output = model.encode(pad_batch([tokens], model.pad_token_id), Mode.BOTH, {ATTENTIONS})
    pieces: dict[int, list[int]] = {}
    for position, word in enumerate(tokens.word_ids):
        if word is not None:
            pieces.setdefault(word, []).append(position)
    n, root = len(sentence), sentence.heads.index(ROOT)
    hits = np.zeros((len(output.attentions), model.num_heads, 2))
    for layer, attention in enumerate(output.attentions):
        maps = attention[0].double().numpy()
        for head in range(maps.shape[0]):
            words = np.array(
                [
                    [np.mean([maps[head, r, pieces[j]].sum() for r in pieces[i]]) for j in range(n)]
                    for i in range(n)
                ]
            )
            hits[layer, head] = [words[root].argmax() == root, words[:, root].argmax() == root]
    return hits


def test_streamed_root_counts_equal_a_sentence_by_sentence_reference(model, tmp_path):
    rng = random.Random(7)
    sentences = [random_tree(rng, rng.randint(2, 12), i) for i in range(9)]
    roots = HeadCounts(model.num_layers, model.num_heads)
    ctx = context(model, tmp_path)
    count_heads(model, ctx, sentences, len(sentences), "mean", 0, "t", roots)
    expected = sum(reference_root_hits(model, sentence) for sentence in sentences)
    assert roots.labels == [ROOT_RELATION]
    assert roots.arcs.sum() == len(sentences) and roots.distance.sum() == 0
    assert np.array_equal(roots.correct[:, 0].sum(axis=0), expected)


def test_scoring_roots_leaves_every_other_count_as_it_was(model, tmp_path):
    rng = random.Random(5)
    sentences = [random_tree(rng, rng.randint(2, 30), i) for i in range(12)]
    ctx = context(model, tmp_path)
    plain, plain_coverage = count_heads(model, ctx, sentences, 12, "first", 20, "t")
    roots = HeadCounts(model.num_layers, model.num_heads)
    rooted, rooted_coverage = count_heads(model, ctx, sentences, 12, "first", 20, "t", roots)
    assert plain.labels == rooted.labels and ROOT_RELATION not in rooted.labels
    for name in ("correct", "arcs", "distance", "offset_hits"):
        assert np.array_equal(getattr(plain, name), getattr(rooted, name)), name
    assert plain_coverage == rooted_coverage
    assert plain_coverage.windowed_sentences > 0  # windows cut some sentences (20 pieces)
    assert roots.arcs.sum() == rooted_coverage.root_arcs  # every root lies in one window


def test_the_option_adds_root_metrics_and_changes_no_other_number(tmp_path, tiny_bert):
    treebank = write_treebank(tmp_path / "trees.conllu", sentences=10)
    common = ("--task-arg", f"dep_heads.treebank={treebank}", "--task-arg", "dep_heads.figures=0")
    run_ok(tmp_path / "plain", tiny_bert, *common)
    run_ok(tmp_path / "root", tiny_bert, *common, "--task-arg", "dep_heads.score_root=true")
    plain, rooted = results(tmp_path / "plain")["both"], results(tmp_path / "root")["both"]
    assert {k: rooted["metrics"][k] for k in plain["metrics"]} == plain["metrics"]
    added = set(rooted["metrics"]) - set(plain["metrics"])
    assert added == {"acc_root", "macro_with_root", "macro_short_with_root", "macro_long_with_root"}
    assert rooted["metrics"]["acc_root"]["n"] == 10  # one root word per sentence
    assert rooted["task"]["settings"]["root_coverage"] == {
        "root_words": 10,
        "scored": 10,
        "not_scored": 0,
    }
    assert "root_coverage" not in plain["task"]["settings"]
    assert "root_counts.npz" in " ".join(rooted["artifacts"])
    folder = next((tmp_path / "root" / "results").iterdir())
    table = (folder / "dep_heads__seed0__summary" / "table.md").read_text()
    assert "**macro avg with root**" in table and "| root | 10 | 0.00 |" in table


def test_the_mode_table_has_no_root_section_unless_root_was_scored():
    class Cell:  # the fields of a finished cell the table reads
        def __init__(self, report) -> None:
            self.details, self.metrics, self.flags = report.details(), report.metrics(), []
            self.mode = type("M", (), {"name": "both", "exact": True, "definition": ""})()
            self.model = type("S", (), {"spec": "toy"})()
            self.task = type("T", (), {"settings": {"input": "toy"}, "data_hash": "0"})()
            self.limit = self.train_limit = None

    assert "with root" not in mode_table_markdown([Cell(report_with(None))])
    assert "**macro avg with root**" in mode_table_markdown(
        [Cell(report_with(root_counts([[True, True]])))]
    )


def test_bad_option_value_is_one_line(tmp_path, tiny_bert, capsys):
    from tests.unit.tasks.dep_heads.test_dep_heads_task import fails_with

    treebank = write_treebank(tmp_path / "trees.conllu", sentences=2)
    args = ("--task-arg", f"dep_heads.treebank={treebank}", "--task-arg", "dep_heads.score_root=x")
    fails_with(capsys, tmp_path, tiny_bert, "dep_heads.score_root=false", args=args)
