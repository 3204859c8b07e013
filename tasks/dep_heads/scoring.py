"""Attention heads scored as dependency parsers (Clark et al. 2019 §4.2; Chen et al. 2023 §3.4).

Every layer × head is a predictor in two directions, as in Clark et al.'s released code
(``attn_head_predictor``, modes ``normal`` and ``transpose``): the word the dependent
attends to most is its head (``dependent_to_head``), or the word that attends most to the
dependent is its head (``head_to_dependent``: the argmax over the dependent's column of
the word-level map — the head attends to its dependent more than any other word does).
Only counts are kept — correct predictions per (fold, relation, layer, head, direction)
— so memory does not grow with the corpus. A relation's score is its best predictor's
accuracy, picked on the very arcs it is scored on, as both papers do; that is
optimistic, so a held-out choice is scored too: picked on another treebank when one is
given, otherwise cross-fitted over two interleaved folds of sentences (pick on one,
score on the other, and back).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

OFFSETS = (-3, -2, -1, 1, 2)  # Clark et al.'s fixed-offset baseline: head = dependent + k
DIRECTIONS = ("dependent_to_head", "head_to_dependent")
FOLDS = 2
ALL = "all"  # every scored (non-root) arc pooled, one best head for all


@dataclass(frozen=True)
class ArcBatch:
    """The scorable arcs of one padded batch, as word indices within each row."""

    row: np.ndarray
    dependent: np.ndarray
    head: np.ndarray
    label: np.ndarray  # indices into ``HeadCounts.labels``
    fold: np.ndarray

    @classmethod
    def of_lists(
        cls,
        rows: list[int],
        dependents: list[int],
        heads: list[int],
        labels: np.ndarray,
        folds: list[int],
    ) -> ArcBatch:
        """The batch of word indices gathered in Python lists (``labels`` already as
        indices): one place that fixes their dtype, for the inner arcs and the root arcs
        alike, so the two kinds of counts index the attention maps the same way."""

        def as_array(values: list[int]) -> np.ndarray:
            return np.array(values, dtype=np.int64)

        return cls(as_array(rows), as_array(dependents), as_array(heads), labels, as_array(folds))

    def __len__(self) -> int:
        return len(self.row)

    def subset(self, keep: np.ndarray) -> ArcBatch:
        return ArcBatch(
            self.row[keep], self.dependent[keep], self.head[keep], self.label[keep], self.fold[keep]
        )


class HeadCounts:
    """Streaming counts of how often each head finds each relation's arcs."""

    def __init__(self, layers: int, heads: int) -> None:
        self.layers, self.heads = layers, heads
        self.labels: list[str] = []
        self._index: dict[str, int] = {}
        self.correct = np.zeros((FOLDS, 0, layers, heads, len(DIRECTIONS)), dtype=np.int64)
        self.arcs = np.zeros((FOLDS, 0), dtype=np.int64)
        self.distance = np.zeros(0, dtype=np.int64)  # sum of |head - dependent| in words
        self.offset_hits = np.zeros((0, len(OFFSETS)), dtype=np.int64)

    def label_indices(self, labels: Sequence[str]) -> np.ndarray:
        """Indices of ``labels``, adding unseen ones (the label set is learnt as we stream)."""
        new = [label for label in dict.fromkeys(labels) if label not in self._index]
        if new:
            for label in new:
                self._index[label] = len(self.labels)
                self.labels.append(label)
            grow = len(new)
            self.correct = np.concatenate(
                [self.correct, np.zeros((FOLDS, grow, *self.correct.shape[2:]), np.int64)], 1
            )
            self.arcs = np.concatenate([self.arcs, np.zeros((FOLDS, grow), np.int64)], 1)
            self.distance = np.concatenate([self.distance, np.zeros(grow, np.int64)])
            self.offset_hits = np.concatenate(
                [self.offset_hits, np.zeros((grow, len(OFFSETS)), np.int64)]
            )
        return np.array([self._index[label] for label in labels], dtype=np.int64)

    def index_of(self, label: str) -> int | None:
        return self._index.get(label)

    def add_arcs(self, arcs: ArcBatch) -> None:
        """Count the arcs themselves: totals, distances and the fixed-offset baseline."""
        np.add.at(self.arcs, (arcs.fold, arcs.label), 1)
        offset = arcs.head - arcs.dependent
        np.add.at(self.distance, arcs.label, np.abs(offset))
        for k, shift in enumerate(OFFSETS):
            np.add.at(self.offset_hits[:, k], arcs.label, (offset == shift).astype(np.int64))

    def add_predictions(
        self, layer: int, attended: np.ndarray, attending: np.ndarray, arcs: ArcBatch
    ) -> None:
        """Score one layer's per-head predictions on the arcs, in both directions.

        ``attended [B, H, W]``: each word's most-attended other word (row argmax);
        ``attending [B, H, W]``: the other word that attends most to each word (column
        argmax). Both predict the dependent's head, so both are read at the dependent.
        """
        if len(arcs) == 0:
            return
        gold = arcs.head[:, None]
        hits = np.stack(
            [
                attended[arcs.row, :, arcs.dependent] == gold,
                attending[arcs.row, :, arcs.dependent] == gold,
            ],
            axis=-1,
        )  # [arcs, H, directions]
        self.add_hits(layer, hits, arcs)

    def add_hits(self, layer: int, hits: np.ndarray, arcs: ArcBatch) -> None:
        """Count one layer's hits ``[arcs, H, directions]`` (true where a head's
        prediction in that direction is the arc's head) under each arc's fold and label."""
        if len(arcs) == 0:
            return
        np.add.at(self.correct[:, :, layer], (arcs.fold, arcs.label), hits.astype(np.int64))

    def merged(self, rename: Callable[[str], str]) -> HeadCounts:
        """The same counts under a coarser label set (e.g. UD subtypes collapsed)."""
        out = HeadCounts(self.layers, self.heads)
        targets = out.label_indices([rename(label) for label in self.labels])
        size = len(out.labels)
        out.correct = np.zeros((FOLDS, size, *self.correct.shape[2:]), np.int64)
        np.add.at(out.correct, (slice(None), targets), self.correct)
        out.arcs = np.zeros((FOLDS, size), np.int64)
        np.add.at(out.arcs, (slice(None), targets), self.arcs)
        out.distance = np.zeros(size, np.int64)
        np.add.at(out.distance, targets, self.distance)
        out.offset_hits = np.zeros((size, len(OFFSETS)), np.int64)
        np.add.at(out.offset_hits, targets, self.offset_hits)
        return out

    def pooled(self) -> HeadCounts:
        """Every relation as one label, :data:`ALL`."""
        return self.merged(lambda _label: ALL)

    def save(self, path: Path) -> Path:
        """The raw counts, so a new selection rule never needs the model again."""
        from posharness.storage.io import atomic_target

        # Through atomic_target like every output: whole or absent, and written by the
        # main process only under a data-parallel launch.
        with atomic_target(path) as tmp, tmp.open("wb") as handle:
            np.savez_compressed(
                handle,
                labels=np.array(self.labels, dtype=str),
                correct=self.correct,
                arcs=self.arcs,
                distance=self.distance,
                offset_hits=self.offset_hits,
                offsets=np.array(OFFSETS),
                directions=np.array(DIRECTIONS, dtype=str),
            )
        return path


@dataclass(frozen=True)
class HeadChoice:
    accuracy: float
    layer: int
    head: int
    direction: str


@dataclass(frozen=True)
class RelationScore:
    relation: str
    arcs: int
    mean_distance: float
    best: HeadChoice  # picked on the arcs it is scored on (Clark et al., Chen et al.)
    best_per_direction: dict[str, HeadChoice]
    held_out: float | None  # picked elsewhere, scored here; None without selection data
    baseline: float  # best fixed offset, picked on the scored arcs as the papers do
    baseline_offset: int


def _choice(correct: np.ndarray, arcs: int, directions: Sequence[str] = DIRECTIONS) -> HeadChoice:
    """The best predictor in ``correct [L, H, D]``; ties go to the first in that order."""
    flat = int(np.argmax(correct))
    layer, head, direction = np.unravel_index(flat, correct.shape)
    accuracy = float(correct.flat[flat] / arcs) if arcs else 0.0
    return HeadChoice(accuracy, int(layer), int(head), directions[int(direction)])


def _held_out(counts: HeadCounts, index: int, selection: HeadCounts | None) -> float | None:
    correct, arcs = counts.correct[:, index], counts.arcs[:, index]
    if selection is not None:
        chosen = selection.index_of(counts.labels[index])
        if chosen is None:
            return None
        picked = selection.correct[:, chosen].sum(axis=0)
        flat = int(np.argmax(picked))
        return float(correct.sum(axis=0).flat[flat] / arcs.sum())
    hits = 0
    for fold in range(FOLDS):
        others = np.delete(correct, fold, axis=0).sum(axis=0)
        hits += int(correct[fold].flat[int(np.argmax(others))])
    return hits / int(arcs.sum())


def score_relations(counts: HeadCounts, selection: HeadCounts | None = None) -> list[RelationScore]:
    """Every relation with at least one arc, most frequent first (ties by name)."""
    scores = []
    for index, relation in enumerate(counts.labels):
        arcs = int(counts.arcs[:, index].sum())
        if arcs == 0:
            continue
        correct = counts.correct[:, index].sum(axis=0)  # [L, H, D]
        per_direction = {
            name: _choice(correct[..., d : d + 1], arcs, (name,))
            for d, name in enumerate(DIRECTIONS)
        }
        offset = int(np.argmax(counts.offset_hits[index]))
        scores.append(
            RelationScore(
                relation=relation,
                arcs=arcs,
                mean_distance=float(counts.distance[index] / arcs),
                best=_choice(correct, arcs),
                best_per_direction=per_direction,
                held_out=_held_out(counts, index, selection),
                baseline=float(counts.offset_hits[index, offset] / arcs),
                baseline_offset=OFFSETS[offset],
            )
        )
    return sorted(scores, key=lambda s: (-s.arcs, s.relation))
