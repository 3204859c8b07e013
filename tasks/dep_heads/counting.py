"""Stream sentences through a model in one mode and count what each head predicts.

Sentences are read, tokenised and encoded in chunks, and only :class:`HeadCounts` grow
(with the label set, not the corpus), so peak memory stays flat however long the
treebank. A sentence longer than the model allows is never dropped in silence: it is
split into word windows that fit (halving until they do), arcs inside a window are
scored, and arcs that cross windows are counted and reported as not scored. Root words,
when asked for, are scored into counts of their own, which the other counts never see.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from itertools import islice

import torch

from posharness.contracts.adapter import ATTENTIONS, EncoderOutput, ModelAdapter, TokenizedText
from posharness.contracts.task import TaskContext
from posharness.tasks.dep_heads.scoring import FOLDS, ArcBatch, HeadCounts
from posharness.tasks.dep_heads.tree import ROOT, ROOT_RELATION, Sentence
from posharness.tasks.dep_heads.word_attention import (
    align_words,
    attending_words,
    attends_to_itself,
    predicted_words,
    word_attention,
)

CHUNK_SENTENCES = 256  # sentences tokenised and length-sorted together; bounds memory


@dataclass
class Coverage:
    """What happened to every sentence and arc: nothing is dropped without a count."""

    sentences: int = 0
    words: int = 0
    windowed_sentences: int = 0  # longer than the model allows, split into windows
    windows: int = 0  # model inputs (one per sentence unless windowed)
    root_arcs: int = 0  # root words: no other word is their head (scored apart, if asked)
    arcs_scored: int = 0
    arcs_across_windows: int = 0  # dependent and head not in one window: not scored
    arcs_unaligned: int = 0  # dependent or head has no sub-word piece (tokenizer dropped it)

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class Window:
    """Words ``start:end`` of one sentence, as one model input."""

    sentence: Sentence
    fold: int
    start: int
    end: int
    tokens: TokenizedText

    @property
    def count(self) -> int:
        return self.end - self.start


def _fits(tokens: TokenizedText, limit: int, model_max: int) -> bool:
    """True when the input is within the limit and no truncation can have happened.

    The adapter truncates at the model's maximum, so an input of exactly that length may
    have lost pieces: it is treated as not fitting, which only costs a window split.
    """
    return len(tokens) <= limit and len(tokens) < model_max


def windows_of(
    model: ModelAdapter,
    sentence: Sentence,
    fold: int,
    start: int,
    end: int,
    tokens: TokenizedText | None,
    limit: int,
) -> list[Window]:
    """Words ``start:end`` as one window if they fit, else halves (recursively) that do.

    ``tokens`` is the already tokenised span when the caller has it (the whole sentence).
    """
    if tokens is None:
        tokens = model.tokenize([list(sentence.words[start:end])])[0]
    if _fits(tokens, limit, model.max_length):
        return [Window(sentence, fold, start, end, tokens)]
    if end - start == 1:
        return []  # one word longer than the model allows: its arcs are counted as lost
    middle = (start + end) // 2
    return windows_of(model, sentence, fold, start, middle, None, limit) + windows_of(
        model, sentence, fold, middle, end, None, limit
    )


def _chunks(sentences: Iterable[Sentence], size: int) -> Iterator[list[Sentence]]:
    iterator = iter(sentences)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _arcs(windows: list[Window], counts: HeadCounts, coverage: Coverage) -> ArcBatch:
    """The arcs inside each window, in window coordinates; roots and cut arcs are counted."""
    rows, dependents, heads, labels, folds = [], [], [], [], []
    for row, window in enumerate(windows):
        sentence = window.sentence
        for word in range(window.start, window.end):
            head = sentence.heads[word]
            if head == ROOT:
                coverage.root_arcs += 1
                continue
            if not window.start <= head - 1 < window.end:
                coverage.arcs_across_windows += 1
                continue
            rows.append(row)
            dependents.append(word - window.start)
            heads.append(head - 1 - window.start)
            labels.append(sentence.relations[word])
            folds.append(window.fold)
    return ArcBatch.of_lists(rows, dependents, heads, counts.label_indices(labels), folds)


def _root_arcs(windows: list[Window], roots: HeadCounts) -> ArcBatch:
    """Each window's root word as an arc onto itself (dependent = head), labelled
    :data:`ROOT_RELATION`: the self-headed root of spaCy's parses, Chen et al.'s "Root"
    at distance 0.0 (Table A3). Coverage already counts them as ``root_arcs``."""
    rows, words, folds = [], [], []
    for row, window in enumerate(windows):
        for word in range(window.start, window.end):
            if window.sentence.heads[word] == ROOT:
                rows.append(row)
                words.append(word - window.start)
                folds.append(window.fold)
    labels = roots.label_indices([ROOT_RELATION] * len(rows))
    return ArcBatch.of_lists(rows, words, words, labels, folds)


def count_heads(
    model: ModelAdapter,
    ctx: TaskContext,
    sentences: Iterable[Sentence],
    total: int,
    from_word: str,
    max_length: int,
    label: str,
    roots: HeadCounts | None = None,
) -> tuple[HeadCounts, Coverage]:
    """Encode every sentence in ``ctx.mode`` and count each head's correct predictions.

    Folds interleave by sentence order (even sentences fold 0, odd fold 1), which keeps
    them balanced without a random draw. With ``roots`` (empty counts of the model's
    shape), root words are scored too, into ``roots`` only: a head is right when its
    argmax at the root word is the word itself (:func:`attends_to_itself`). The returned
    counts and coverage are the same with or without it.
    """
    counts = HeadCounts(model.num_layers, model.num_heads)
    coverage = Coverage()
    encoder = ctx.encoder(frozenset({ATTENTIONS}))
    advance = ctx.progress(label, total)
    limit = min(max_length or model.max_length, model.max_length)
    ordinal = 0
    for chunk in _chunks(sentences, CHUNK_SENTENCES):
        tokenized = model.tokenize([list(s.words) for s in chunk])
        windows: list[Window] = []
        for sentence, tokens in zip(chunk, tokenized, strict=True):
            parts = windows_of(model, sentence, ordinal % FOLDS, 0, len(sentence), tokens, limit)
            coverage.sentences += 1
            coverage.words += len(sentence)
            if len(parts) != 1:
                coverage.windowed_sentences += 1
                covered = {w for part in parts for w in range(part.start, part.end)}
                lost = [w for w in range(len(sentence)) if w not in covered]
                coverage.root_arcs += sum(sentence.heads[w] == ROOT for w in lost)
                coverage.arcs_across_windows += sum(sentence.heads[w] != ROOT for w in lost)
            windows.extend(parts)
            ordinal += 1
        coverage.windows += len(windows)
        for indices, output in encoder.batches([w.tokens for w in windows]):
            batch = [windows[i] for i in indices]
            _count_batch(counts, coverage, batch, output, from_word, roots)
        advance(len(chunk))
    return counts, coverage


def _count_batch(
    counts: HeadCounts,
    coverage: Coverage,
    batch: list[Window],
    output: EncoderOutput,
    from_word: str,
    roots: HeadCounts | None = None,
) -> None:
    width = int(output.attention_mask.shape[1])
    alignment = align_words(output.word_ids, [w.count for w in batch], width, from_word)
    arcs = _arcs(batch, counts, coverage)
    pieces = alignment.has_pieces.numpy()
    aligned = pieces[arcs.row, arcs.dependent] & pieces[arcs.row, arcs.head]
    coverage.arcs_unaligned += int((~aligned).sum())
    arcs = arcs.subset(aligned)
    coverage.arcs_scored += len(arcs)
    counts.add_arcs(arcs)
    selves = None
    if roots is not None:
        selves = _root_arcs(batch, roots)
        selves = selves.subset(pieces[selves.row, selves.dependent])  # a root without pieces
        roots.add_arcs(selves)  # is left out: root_words - scored roots says how many
    for layer, attention in enumerate(output.attentions):
        words = word_attention(attention, alignment)
        counts.add_predictions(
            layer,
            predicted_words(words, alignment).cpu().numpy(),
            attending_words(words, alignment).cpu().numpy(),
            arcs,
        )
        if selves is not None and len(selves) > 0:
            rows, positions = torch.from_numpy(selves.row), torch.from_numpy(selves.dependent)
            hits = attends_to_itself(words, alignment, rows, positions)
            roots.add_hits(layer, hits.cpu().numpy(), selves)
