"""T5 encoder: exact split into q·k and the shared bucketed bias."""

from __future__ import annotations

import pytest
import torch

from posharness.models.decompose.t5 import T5Split
from tests.unit.models.decompose import decompose_checks as checks

VOCAB = 64


@pytest.fixture(scope="module")
def original():
    from transformers import T5Config, T5EncoderModel

    torch.manual_seed(0)
    config = T5Config(
        vocab_size=VOCAB,
        d_model=32,
        d_kv=8,
        d_ff=37,
        num_layers=2,
        num_heads=4,
        relative_attention_num_buckets=8,
        relative_attention_max_distance=16,
    )
    model = T5EncoderModel(config).eval()
    model.set_attn_implementation("eager")
    return model


@pytest.fixture(scope="module")
def family():
    return T5Split()


@pytest.fixture(scope="module")
def model(original, family):
    return checks.installed(original, family, family.definitions[0])


@pytest.mark.parametrize("pad", [False, True])
def test_both_reproduces_the_unmodified_model(original, model, family, pad):
    ids, mask = checks.batch(VOCAB, pad=pad)
    checks.check_both_reproduces(original, model, family, ids, mask)


@pytest.mark.parametrize("pad", [False, True])
def test_logits_are_gamma_plus_delta(model, family, pad):
    ids, mask = checks.batch(VOCAB, pad=pad)
    assert checks.check_split_sums(model, family, ids, mask) < 1e-5


def test_padding_gets_no_attention_in_any_mode(model, family):
    ids, mask = checks.batch(VOCAB, pad=True)
    checks.check_padding_ignored(model, family, ids, mask)


def test_positional_mode_ignores_token_identity(model, family):
    checks.check_positional_content_free(model, family, VOCAB)


def test_modes_differ_from_both(model, family):
    ids, mask = checks.batch(VOCAB, pad=False)
    checks.check_modes_differ(model, family, ids, mask)


def test_positional_scores_are_the_bias(model, family):
    definition = family.definitions[0]
    scores = checks.check_positional_scores(model, family, definition, 12)
    torch.testing.assert_close(scores[0], scores[1])  # one bias shared by every layer
    ids, _ = checks.batch(VOCAB, length=12, pad=False)
    checks.check_scores_match_positional_attention(model, family, definition, ids)
