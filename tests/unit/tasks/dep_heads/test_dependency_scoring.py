"""Heads scored as parsers on hand-made trees and predictions whose best head is known."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posharness.tasks.dep_heads.scoring import ALL, ArcBatch, HeadCounts, score_relations
from posharness.tasks.dep_heads.tree import base_relation


def arcs_of(counts: HeadCounts, trees: list[list[tuple[int, int, str]]], folds=None) -> ArcBatch:
    """Arcs (dependent, head, label), 0-based word indices, one list per batch row."""
    rows, dependents, heads, labels, fold = [], [], [], [], []
    for row, tree in enumerate(trees):
        for dependent, head, label in tree:
            rows.append(row)
            dependents.append(dependent)
            heads.append(head)
            labels.append(label)
            fold.append(0 if folds is None else folds[row])
    return ArcBatch(
        np.array(rows), np.array(dependents), np.array(heads), counts.label_indices(labels),
        np.array(fold),
    )  # fmt: skip


# "the big dog barks": the→dog (det), big→dog (amod), dog→barks (nsubj)
TREE = [(0, 2, "det"), (1, 2, "amod"), (2, 3, "nsubj")]
GOLD_HEADS = [2, 2, 3, 2]  # what a perfect dependent→head predictor says per word


def predictions(per_head: list[list[int]]) -> np.ndarray:
    """[B=1, H, W] predicted word per head."""
    return np.array([per_head])


NOWHERE = -1  # a predicted word index that is never a head


def add_attended(counts: HeadCounts, layer: int, attended: np.ndarray, arcs: ArcBatch) -> None:
    """Row-argmax (dependent → head) predictions only; the other direction never hits."""
    counts.add_predictions(layer, attended, np.full_like(attended, NOWHERE), arcs)


def test_the_head_that_predicts_every_gold_head_is_chosen_for_every_relation():
    counts = HeadCounts(layers=2, heads=2)
    arcs = arcs_of(counts, [TREE])
    counts.add_arcs(arcs)
    # "dog" heads det and amod and depends by nsubj: the other heads keep it on itself
    add_attended(counts, 0, predictions([[1, 0, 2, 0], [3, 3, 2, 1]]), arcs)
    add_attended(counts, 1, predictions([[3, 3, 2, 0], GOLD_HEADS]), arcs)
    for score in score_relations(counts):
        assert score.best.accuracy == 1.0
        assert (score.best.layer, score.best.head) == (1, 1)
        assert score.best.direction == "dependent_to_head"


def test_head_to_dependent_direction_counts_when_the_head_attends_to_its_dependent():
    counts = HeadCounts(layers=1, heads=1)
    arcs = arcs_of(counts, [[(0, 1, "det")]])  # "the dog": dog attends to "the" most
    counts.add_arcs(arcs)
    counts.add_predictions(0, predictions([[NOWHERE, NOWHERE]]), predictions([[1, 0]]), arcs)
    (score,) = score_relations(counts)
    assert score.best_per_direction["head_to_dependent"].accuracy == 1.0
    assert score.best_per_direction["dependent_to_head"].accuracy == 0.0
    assert score.best.direction == "head_to_dependent"


def test_relations_are_ranked_by_frequency_with_their_mean_distance():
    counts = HeadCounts(layers=1, heads=1)
    arcs = arcs_of(counts, [[(0, 3, "nsubj"), (1, 3, "aux"), (2, 3, "aux"), (4, 3, "obj")]])
    counts.add_arcs(arcs)
    add_attended(counts, 0, predictions([[3, 3, 3, 0, 3]]), arcs)
    scores = score_relations(counts)
    assert [s.relation for s in scores] == ["aux", "nsubj", "obj"]
    assert scores[0].mean_distance == pytest.approx(1.5)
    assert scores[1].mean_distance == 3.0
    assert [s.arcs for s in scores] == [2, 1, 1]


def test_offset_baseline_on_a_chain_finds_offset_plus_one():
    # every word's head is the next word: a fixed offset +1 is always right
    chain = [(i, i + 1, "dep") for i in range(9)]
    counts = HeadCounts(layers=1, heads=1)
    arcs = arcs_of(counts, [chain])
    counts.add_arcs(arcs)
    (score,) = score_relations(counts)
    assert (score.baseline, score.baseline_offset) == (1.0, 1)
    assert score.mean_distance == 1.0


def test_offset_baseline_picks_the_best_of_minus_three_to_plus_two():
    counts = HeadCounts(layers=1, heads=1)
    arcs = arcs_of(counts, [[(5, 2, "obl"), (6, 3, "obl"), (7, 6, "obl"), (0, 4, "obl")]])
    counts.add_arcs(arcs)
    (score,) = score_relations(counts)
    assert (score.baseline, score.baseline_offset) == (0.5, -3)  # +4 is outside the range


def test_subtypes_collapse_by_summing_counts():
    counts = HeadCounts(layers=1, heads=2)
    arcs = arcs_of(counts, [[(0, 1, "nmod:poss"), (2, 3, "nmod"), (4, 3, "nmod:tmod")]])
    counts.add_arcs(arcs)
    add_attended(counts, 0, predictions([[1, 0, 3, 0, 0], [1, 0, 3, 0, 3]]), arcs)
    collapsed = {s.relation: s for s in score_relations(counts.merged(base_relation))}
    assert list(collapsed) == ["nmod"]
    assert collapsed["nmod"].arcs == 3
    assert collapsed["nmod"].best.accuracy == 1.0 and collapsed["nmod"].best.head == 1
    full = {s.relation: s for s in score_relations(counts)}
    assert set(full) == {"nmod", "nmod:poss", "nmod:tmod"}
    assert full["nmod:tmod"].best.head == 1 and full["nmod:poss"].best.head == 0


def test_pooled_counts_pick_one_head_for_every_arc():
    counts = HeadCounts(layers=1, heads=2)
    arcs = arcs_of(counts, [TREE])
    counts.add_arcs(arcs)
    add_attended(counts, 0, predictions([[2, 2, 0, 0], [0, 0, 3, 0]]), arcs)
    (pooled,) = score_relations(counts.pooled())
    assert pooled.relation == ALL
    assert (pooled.arcs, pooled.best.head) == (3, 0)
    assert pooled.best.accuracy == pytest.approx(2 / 3)


def test_held_out_choice_is_honest_when_the_best_head_differs_between_folds():
    # head 0 is right only on fold 0's sentence, head 1 only on fold 1's
    counts = HeadCounts(layers=1, heads=2)
    arcs = arcs_of(counts, [[(0, 1, "det")], [(0, 1, "det")]], folds=[0, 1])
    counts.add_arcs(arcs)
    right, wrong = [1, 2, 0], [2, 2, 0]
    add_attended(counts, 0, np.array([[right, wrong], [wrong, right]]), arcs)
    (score,) = score_relations(counts)
    assert score.best.accuracy == 0.5  # either head, picked on both folds
    assert score.held_out == 0.0  # picked on one fold, it fails on the other


def test_held_out_choice_on_a_selection_treebank_scores_its_pick_here():
    selection = HeadCounts(layers=1, heads=2)
    picked = arcs_of(selection, [[(0, 1, "det")]])
    selection.add_arcs(picked)
    add_attended(selection, 0, np.array([[[2, 2, 0], [1, 2, 0]]]), picked)  # head 1 wins there
    counts = HeadCounts(layers=1, heads=2)
    arcs = arcs_of(counts, [[(0, 1, "det"), (2, 1, "amod")]])
    counts.add_arcs(arcs)
    add_attended(counts, 0, np.array([[[1, 2, 1], [2, 2, 0]]]), arcs)  # head 0 wins here
    scores = {s.relation: s for s in score_relations(counts, selection)}
    assert scores["det"].best.accuracy == 1.0
    assert scores["det"].held_out == 0.0
    assert scores["amod"].held_out is None  # never seen in the selection treebank


def test_saved_counts_round_trip(tmp_path):
    counts = HeadCounts(layers=1, heads=2)
    arcs = arcs_of(counts, [TREE])
    counts.add_arcs(arcs)
    add_attended(counts, 0, predictions([[2, 2, 3, 0], [0, 0, 3, 0]]), arcs)
    saved = np.load(counts.save(tmp_path / "counts.npz"))
    assert list(saved["labels"]) == ["det", "amod", "nsubj"]
    assert np.array_equal(saved["correct"], counts.correct)
    assert saved["correct"].sum() == 4  # 3 + 1 dependent→head hits, no head→dependent hit
    assert list(saved["directions"]) == ["dependent_to_head", "head_to_dependent"]


def test_both_directions_on_a_hand_made_map_match_clark_et_al_not_the_heads_own_row():
    """A word-level map where three readings of a head disagree, counts worked by hand.

    "[CLS] the big dog barks [SEP]"; arcs the→dog (det), big→dog (amod), dog→barks
    (nsubj). Rows attend from, columns attend to.

    * dependent → head (row argmax at the dependent): the→barks, big→the, dog→the: 0 of 3.
    * head ← dependent (Clark et al.'s ``transpose``: who attends most *to* the
      dependent): column "the" → dog (0.6; [CLS]'s 0.9 does not count), column "big" →
      dog (0.3), column "dog" → barks (0.7): 3 of 3.
    * the superseded reading (the head's own row argmax is the dependent) would give
      dog→the ✓, dog→the ✗ (for big), barks→dog ✓: 2 of 3 — it must not be what we count.
    """
    from posharness.tasks.dep_heads.word_attention import (
        align_words,
        attending_words,
        predicted_words,
        word_attention,
    )

    pieces = torch.tensor(
        [
            #  CLS  the  big  dog  barks SEP
            [0.0, 0.9, 0.0, 0.0, 0.05, 0.05],  # [CLS] attends to "the" most of all
            [2.0, 0.0, 0.1, 0.2, 0.7, 1.0],  # the
            [2.0, 0.5, 0.0, 0.4, 0.1, 1.0],  # big
            [2.0, 0.6, 0.3, 0.0, 0.1, 1.0],  # dog
            [2.0, 0.1, 0.2, 0.7, 0.0, 1.0],  # barks
            [0.0, 0.0, 0.0, 0.0, 0.0, 1.0],  # [SEP]
        ]
    )[None, None]
    alignment = align_words([(None, 0, 1, 2, 3, None)], [4], 6)
    words = word_attention(pieces, alignment)
    attended = predicted_words(words, alignment).numpy()
    attending = attending_words(words, alignment).numpy()
    assert attended[0, 0].tolist() == [3, 0, 0, 2]
    assert attending[0, 0].tolist() == [2, 2, 3, 0]

    counts = HeadCounts(layers=1, heads=1)
    arcs = arcs_of(counts, [TREE])
    counts.add_arcs(arcs)
    counts.add_predictions(0, attended, attending, arcs)
    per_relation = counts.correct.sum(axis=0)[:, 0, 0]  # [relations, directions]
    assert per_relation.tolist() == [[0, 1], [0, 1], [0, 1]]  # det, amod, nsubj
    assert counts.correct[..., 1].sum() == 3 != 2  # not the head's own row argmax


def test_clark_all_row_counts_root_words_as_wrong_and_his_relation_set_leaves_out_punct():
    from posharness.tasks.dep_heads.report import relation_report

    counts = HeadCounts(layers=1, heads=1)
    # "dogs bark ." twice over: punct→bark is missed, det-like arc found; one root per sentence
    arcs = arcs_of(counts, [[(0, 1, "nsubj"), (2, 1, "punct")], [(2, 1, "punct")]])
    counts.add_arcs(arcs)
    add_attended(counts, 0, np.array([[[1, 0, 0]], [[1, 0, 0]]]), arcs)
    report = relation_report(
        counts, None, {"full": lambda label: label}, "full", top=20, short_distance=4.0,
        root_words=2,
    )  # fmt: skip
    metrics = report.metrics()
    assert metrics["macro"].value == pytest.approx(0.5)  # punct 0 %, nsubj 100 %
    assert metrics["macro_no_punct"].value == 1.0
    assert metrics["all_arcs"].value == pytest.approx(1 / 3)
    assert metrics["all_words"].value == pytest.approx(1 / 5)  # 3 arcs + 2 root words
    assert report.details()["no_punct_relations"] == ["nsubj"]
