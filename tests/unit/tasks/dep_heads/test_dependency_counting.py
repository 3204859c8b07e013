"""Streaming head counts on the tiny BERT equal a sentence-by-sentence reference, and long
sentences are windowed and accounted for, never dropped."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from posharness.compute.batching import BatchedEncoder, pad_batch
from posharness.contracts.adapter import ATTENTIONS, Mode
from posharness.contracts.model_spec import LoadOptions
from posharness.contracts.task import TaskContext
from posharness.models.hf.adapter import HFEncoderAdapter
from posharness.run.runner import SilentReporter
from posharness.storage.cache import FeatureCache
from posharness.tasks.dep_heads.counting import count_heads
from posharness.tasks.dep_heads.tree import ROOT, Sentence

VOCABULARY = ["the", "a", "man", "dogs", "cats", "parked", "plays", "big", "river", "boats", "on"]
LABELS = ["det", "nsubj", "obj", "amod", "nmod:poss", "obl"]


def random_tree(rng: random.Random, length: int, index: int) -> Sentence:
    """A random projective-or-not tree: each word attaches to one already in the tree."""
    order = list(range(length))
    rng.shuffle(order)
    heads = [0] * length
    attached = [order[0]]
    for word in order[1:]:
        heads[word] = rng.choice(attached) + 1
        attached.append(word)
    return Sentence(
        sent_id=f"s{index}",
        words=tuple(rng.choice(VOCABULARY) for _ in range(length)),
        heads=tuple(heads),
        relations=tuple("root" if h == ROOT else rng.choice(LABELS) for h in heads),
        line=index,
    )


@pytest.fixture(scope="module")
def model(tiny_bert: Path) -> HFEncoderAdapter:
    options = LoadOptions(device="cpu", model_args=(("absolute", "mean-word-stream"),))
    return HFEncoderAdapter(tiny_bert, options)


def context(model, tmp_path: Path, mode: Mode = Mode.BOTH, batch_size: int = 4) -> TaskContext:
    return TaskContext(
        mode=mode,
        seed=0,
        device="cpu",
        batch_size=batch_size,
        limit=None,
        cache=FeatureCache(None),
        artifact_dir=tmp_path / "art",
        options={},
        make_encoder=lambda want: BatchedEncoder(model, mode, want, batch_size),
        progress=SilentReporter().progress,
    )


def reference_hits(model, sentence: Sentence, from_word: str) -> dict[str, np.ndarray]:
    """Per relation, hits [L, H, 2] from one unpadded sentence, with explicit loops."""
    tokens = model.tokenize([list(sentence.words)])[0]
    output = model.encode(pad_batch([tokens], model.pad_token_id), Mode.BOTH, {ATTENTIONS})
    pieces: dict[int, list[int]] = {}
    for position, word in enumerate(tokens.word_ids):
        if word is not None:
            pieces.setdefault(word, []).append(position)
    n = len(sentence)
    hits: dict[str, np.ndarray] = {}
    for layer, attention in enumerate(output.attentions):
        maps = attention[0].double().numpy()
        for head in range(maps.shape[0]):
            words = np.zeros((n, n))
            for i in range(n):
                rows = pieces[i] if from_word == "mean" else pieces[i][:1]
                for j in range(n):
                    words[i, j] = np.mean([maps[head, r, pieces[j]].sum() for r in rows])
            np.fill_diagonal(words, -np.inf)
            best = words.argmax(axis=1)  # the word each word attends to most
            attending = words.argmax(axis=0)  # the word that attends most to each word
            for dependent, head_word in enumerate(sentence.heads):
                if head_word == ROOT:
                    continue
                label = sentence.relations[dependent]
                counts = hits.setdefault(
                    label, np.zeros((len(output.attentions), maps.shape[0], 2))
                )
                counts[layer, head, 0] += best[dependent] == head_word - 1
                counts[layer, head, 1] += attending[dependent] == head_word - 1
    return hits


@pytest.mark.parametrize("from_word", ["mean", "first"])
def test_streamed_batched_counts_equal_a_sentence_by_sentence_reference(model, tmp_path, from_word):
    rng = random.Random(4)
    sentences = [random_tree(rng, rng.randint(2, 12), i) for i in range(9)]
    counts, coverage = count_heads(
        model, context(model, tmp_path), sentences, len(sentences), from_word, 0, "test"
    )
    expected: dict[str, np.ndarray] = {}
    for sentence in sentences:
        for label, hits in reference_hits(model, sentence, from_word).items():
            expected[label] = expected.get(label, 0) + hits
    for label, hits in expected.items():
        got = counts.correct[:, counts.labels.index(label)].sum(axis=0)
        assert np.array_equal(got, hits), label
    assert coverage.arcs_scored == sum(len(s) - 1 for s in sentences)
    assert coverage.root_arcs == len(sentences)


def test_folds_interleave_sentences(model, tmp_path):
    rng = random.Random(1)
    sentences = [random_tree(rng, 5, i) for i in range(6)]
    counts, _ = count_heads(model, context(model, tmp_path), sentences, 6, "mean", 0, "test")
    assert counts.arcs.sum(axis=1).tolist() == [12, 12]


def test_long_sentences_are_windowed_and_every_arc_is_accounted_for(model, tmp_path):
    # a chain: every word's head is the next one, so windows cut exactly one arc each
    length = 40
    chain = Sentence(
        sent_id="chain",
        words=tuple(["the"] * length),
        heads=tuple(list(range(2, length + 1)) + [0]),
        relations=tuple(["dep"] * (length - 1) + ["root"]),
        line=1,
    )
    counts, coverage = count_heads(model, context(model, tmp_path), [chain], 1, "mean", 12, "t")
    assert coverage.windowed_sentences == 1
    assert coverage.windows == 4  # 40 → 20 + 20 → 10 ×4 words, each within 12 pieces
    assert coverage.arcs_across_windows == coverage.windows - 1
    assert coverage.arcs_scored + coverage.arcs_across_windows + coverage.root_arcs == length
    assert counts.arcs.sum() == coverage.arcs_scored


def test_a_sentence_longer_than_the_model_is_windowed_at_the_models_limit(model, tmp_path):
    rng = random.Random(2)
    long = random_tree(rng, 80, 0)  # the tiny BERT has 64 positions
    _, coverage = count_heads(model, context(model, tmp_path), [long], 1, "mean", 0, "t")
    assert coverage.windowed_sentences == 1 and coverage.windows >= 2
    assert coverage.arcs_scored + coverage.arcs_across_windows + coverage.root_arcs == 80


def test_modes_change_the_counts_but_not_the_arcs(model, tmp_path):
    rng = random.Random(3)
    sentences = [random_tree(rng, 10, i) for i in range(6)]
    results = {}
    for mode in (Mode.BOTH, Mode.POSITIONAL):
        results[mode] = count_heads(
            model, context(model, tmp_path, mode), sentences, 6, "mean", 0, "t"
        )[0]
    assert np.array_equal(results[Mode.BOTH].arcs, results[Mode.POSITIONAL].arcs)
    assert not np.array_equal(results[Mode.BOTH].correct, results[Mode.POSITIONAL].correct)
