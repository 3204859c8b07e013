"""Identical-word probing and the geometry tasks on an encoder whose attention we choose."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from posharness.base.errors import OptionError
from posharness.contracts.adapter import EncoderOutput, Mode, ModeSupport, PECard, TokenizedText
from posharness.contracts.task import TaskContext
from posharness.models.hf.vocabulary import whole_word_vocabulary
from posharness.run.runner import SilentReporter
from posharness.stats.geometry import locality, toeplitz_r2
from posharness.storage.cache import FeatureCache
from posharness.tasks.geometry.identical_word import build_probe, probe_attention
from posharness.tasks.geometry.locality_symmetry import LocalitySymmetry
from posharness.tasks.geometry.toeplitz import Toeplitz


class BandedAttentionEncoder:
    """An encoder whose every head attends to i and i±1 (weights 1/2, 1/4, 1/4).

    Its positional matrix is known in closed form, so the probe's aggregation and the
    tasks' metrics can be checked exactly. Layer l scales nothing: all layers agree.
    """

    spec = "banded"
    modes = {Mode.BOTH: ModeSupport(exact=True)}
    pad_token_id = 0
    num_layers = 2
    num_heads = 3
    max_length = 64

    def fingerprint(self) -> str:
        return "banded-0"

    def pe_card(self) -> PECard:
        return PECard("synthetic", "relative", "attention matrix", True, False, 0, True)

    def describe(self) -> dict:
        return {"dtype": "float32", "attn_implementation": "synthetic"}

    def probe_vocabulary(self):
        return [(f"w{i}", 10 + i) for i in range(50)]

    def wrap_token_ids(self, ids):
        ids = (1, *ids, 2)
        return TokenizedText(
            ids,
            (True,) + (False,) * (len(ids) - 2) + (True,),
            (None,) + tuple(range(len(ids) - 2)) + (None,),
        )

    @staticmethod
    def banded(n: int) -> torch.Tensor:
        m = torch.zeros(n, n, dtype=torch.float64)
        for i in range(n):
            m[i, i] = 0.5
            for j in (i - 1, i + 1):
                if 0 <= j < n:
                    m[i, j] = 0.25
        return m / m.sum(-1, keepdim=True)

    def encode(self, batch, mode, want):
        b, n = batch.input_ids.shape
        att = self.banded(n).float().expand(b, self.num_heads, n, n)
        return EncoderOutput(
            None, (att, att), batch.attention_mask, batch.special_tokens_mask, batch.word_ids
        )

    def position_embeddings(self):
        positions = torch.arange(64, dtype=torch.float64)[:, None]
        freqs = 1 / 10000 ** (torch.arange(0, 8, 2, dtype=torch.float64) / 8)
        return torch.cat([torch.sin(positions * freqs), torch.cos(positions * freqs)], dim=1)


def context(tmp_path: Path, options: dict, seed: int = 0, model=None) -> TaskContext:
    from posharness.compute.batching import BatchedEncoder

    model = model or BandedAttentionEncoder()
    return TaskContext(
        mode=Mode.BOTH,
        seed=seed,
        device="cpu",
        batch_size=4,
        limit=None,
        cache=FeatureCache(tmp_path / "cache"),
        artifact_dir=tmp_path / "art",
        options=options,
        make_encoder=lambda want: BatchedEncoder(model, Mode.BOTH, want, 4),
        progress=SilentReporter().progress,
    )


def test_probe_repeats_one_word_to_the_full_length_including_specials():
    probe = build_probe(BandedAttentionEncoder(), words=5, length=20, seed=3)
    assert len(probe.inputs) == 5 and all(len(item) == 20 for item in probe.inputs)
    for item, token in zip(probe.inputs, probe.token_ids, strict=True):
        assert set(item.input_ids[1:-1]) == {token}
    assert probe.special_positions == (0, 19)


def test_probe_is_reproducible_per_seed_and_draws_distinct_words():
    model = BandedAttentionEncoder()
    a, b, c = (build_probe(model, 20, 16, s) for s in (1, 1, 2))
    assert a.words == b.words and a.words != c.words
    assert len(set(a.words)) == 20


@pytest.mark.parametrize(
    ("words", "length", "match"), [(500, 16, "only 50"), (5, 4, "too short"), (5, 100, "exceeds")]
)
def test_impossible_probe_settings_are_refused(words, length, match):
    with pytest.raises(OptionError, match=match):
        build_probe(BandedAttentionEncoder(), words, length, 0)


def test_probe_attention_averages_to_the_known_matrix(tmp_path):
    model = BandedAttentionEncoder()
    probe = build_probe(model, 6, 12, 0)
    result = probe_attention(model, context(tmp_path, {}), probe)
    expected = BandedAttentionEncoder.banded(12).double().numpy()
    assert result.per_layer_head.shape == (2, 3, 12, 12)
    np.testing.assert_allclose(result.average, expected, atol=1e-7)
    np.testing.assert_allclose(result.per_word[4], expected, atol=1e-7)


def test_locality_task_reports_the_closed_form_value(tmp_path):
    ctx = context(tmp_path, {"words": 6, "length": 12, "bootstrap": 10, "figures": False})
    result = LocalitySymmetry().run(BandedAttentionEncoder(), ctx)
    expected = locality(BandedAttentionEncoder.banded(12).double().numpy())
    assert result.metrics["locality"].value == pytest.approx(expected, abs=1e-7)
    assert result.metrics["symmetry_magnitude_no_special"].value == pytest.approx(1.0)
    assert len(result.examples) == 6


class FlatAttentionEncoder(BandedAttentionEncoder):
    """An encoder that has not learned to attend: every row uniform."""

    def fingerprint(self) -> str:
        return "flat-0"

    @staticmethod
    def banded(n: int) -> torch.Tensor:
        return torch.full((n, n), 1.0 / n, dtype=torch.float64)


def test_locality_task_flags_flat_attention_and_not_a_local_pattern(tmp_path):
    options = {"words": 6, "length": 12, "bootstrap": 0, "figures": False}
    banded = LocalitySymmetry().run(BandedAttentionEncoder(), context(tmp_path, options))
    flat_model = FlatAttentionEncoder()
    flat = LocalitySymmetry().run(flat_model, context(tmp_path / "f", options, model=flat_model))
    assert banded.flags == []
    assert len(flat.flags) == 1 and flat.flags[0].startswith("near-uniform attention")


def test_locality_task_keeps_common_resample_replicates_for_compare(tmp_path):
    options = {"words": 6, "length": 12, "bootstrap": 0, "figures": False}
    options["paired_replicates"] = 50
    result = LocalitySymmetry().run(BandedAttentionEncoder(), context(tmp_path, options))
    kept = result.details["paired_replicates"]
    assert kept["count"] == 50 and kept["n"] == 6
    assert set(kept["values"]) == {"locality", "symmetry", "symmetry_magnitude"} | {
        f"{m}_no_special" for m in ("locality", "symmetry", "symmetry_magnitude")
    }
    # every word's map is the same band, so every resample's average is too
    assert kept["values"]["locality"] == pytest.approx([result.metrics["locality"].value] * 50)


def test_toeplitz_task_separates_structure_from_its_shuffled_control(tmp_path):
    ctx = context(tmp_path, {"words": 4, "length": 16, "controls": 10, "figures": False})
    result = Toeplitz().run(BandedAttentionEncoder(), ctx)
    metrics = {k: v.value for k, v in result.metrics.items()}
    assert metrics["gram_r2"] == pytest.approx(1.0, abs=1e-9)  # sinusoidal Gram is Toeplitz
    assert metrics["gram_r2_shuffled"] < 0.5
    # a joint relabelling keeps the diagonal on the diagonal, so the control stays high here
    assert metrics["attention_no_special_r2"] > metrics["attention_no_special_r2_shuffled"] + 0.1
    assert result.details["attention_r2_per_layer"][0] == pytest.approx(
        toeplitz_r2(BandedAttentionEncoder.banded(16).double().numpy())
    )


def test_wordpiece_vocabulary_keeps_whole_words_only():
    vocab = {"[CLS]": 0, "the": 1, "##ing": 2, "a": 3, "dog": 4, "[unused1]": 5, "42": 6, "café": 7}
    assert whole_word_vocabulary(vocab, {0}) == [("the", 1), ("dog", 4)]


def test_sentencepiece_vocabulary_needs_the_word_start_marker():
    vocab = {
        "<s>": 0,
        "▁the": 1,
        "ing": 2,
        "▁dog": 3,
        "▁a": 4,
        "▁x": 5,
        "▁house": 6,
        "▁an": 7,
        "▁cat": 8,
        "▁sun": 9,
        "▁tree": 10,
        "▁car": 11,
    }
    words = [w for w, _ in whole_word_vocabulary(vocab, {0})]
    assert words == ["the", "dog", "house", "an", "cat", "sun", "tree", "car"]
