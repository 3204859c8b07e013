"""DeBERTa v1–v3: gamma = c2c, delta = c2p + p2c (exact) or its mean-query/key variant."""

from __future__ import annotations

import pytest
import torch

from posharness.contracts.adapter import Mode
from posharness.models.decompose.deberta import DebertaSplit
from tests.unit.models.decompose import decompose_checks as checks

VOCAB = 64
FAMILY = DebertaSplit()
EXACT, MEAN_QK = FAMILY.definitions


def _v2(**overrides):
    from transformers import DebertaV2Config, DebertaV2Model

    settings = dict(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=37,
        max_position_embeddings=64,
        initializer_range=0.3,  # large enough that modes visibly differ
        relative_attention=True,
        pos_att_type=["p2c", "c2p"],
    )
    settings.update(overrides)
    return DebertaV2Model(DebertaV2Config(**settings))


def deberta_v1(**overrides):
    """A tiny DeBERTa v1 with nonzero query/value biases (shared with test_sdpa_modes.py)."""
    from transformers import DebertaConfig, DebertaModel

    settings = dict(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=37,
        max_position_embeddings=64,
        initializer_range=0.3,
        relative_attention=True,
        max_relative_positions=16,
        pos_att_type=["c2p", "p2c"],
    )
    settings.update(overrides)
    model = DebertaModel(DebertaConfig(**settings))
    with torch.no_grad():  # v1 initialises its query/value biases to zero: exercise them
        for layer in model.encoder.layer:
            layer.attention.self.q_bias.normal_(0, 0.5)
            layer.attention.self.v_bias.normal_(0, 0.5)
    return model


CONFIGS = {
    # DeBERTa-v3 settings: log buckets, shared keys, LayerNorm on the relative embeddings.
    "v3": lambda: _v2(
        position_buckets=8,
        share_att_key=True,
        norm_rel_ebd="layer_norm",
        position_biased_input=False,
    ),
    # DeBERTa-v2 without buckets and with separate position projections.
    "v2-unshared": lambda: _v2(
        pos_att_type=["c2p", "p2c"], max_relative_positions=16, share_att_key=False
    ),
    "v1": lambda: deberta_v1(),
    "v1-talking-heads": lambda: deberta_v1(talking_head=True),
}


@pytest.fixture(scope="module", params=list(CONFIGS))
def original(request):
    torch.manual_seed(0)
    model = CONFIGS[request.param]().eval()
    model.set_attn_implementation("eager")
    return model


@pytest.fixture(scope="module")
def exact_model(original):
    return checks.installed(original, FAMILY, EXACT)


@pytest.fixture(scope="module")
def mean_model(original):
    return checks.installed(original, FAMILY, MEAN_QK, reference_vocab=VOCAB)


def _talking_heads(model) -> bool:
    """v1 "talking heads" mixes heads after the softmax: rows no longer sum to one."""
    return getattr(FAMILY.attention_modules(model)[0], "head_weights_proj", None) is not None


def check_padding_ignored_by_real_tokens(model, ids, mask):
    """DeBERTa's variant of ``checks.check_padding_ignored``.

    DeBERTa masks with the outer product of the padding mask, so a padded *query* row is
    fully masked and the unmodified model spreads it uniformly over every position,
    padding included. Mode ``both`` must reproduce that, so the shared check (which
    also looks at padded rows) cannot hold; the promise that matters is that real
    tokens give padding zero weight, and that padded rows stay the model's in every mode.
    With talking heads the probabilities are mixed across heads after the softmax, so
    only the zeros are checked.
    """
    real = int(mask[1].sum())
    normalised = not _talking_heads(model)
    for mode in Mode:
        _, attentions = checks.run_mode(model, FAMILY, mode, ids, mask)
        for layer in attentions:
            rows = layer[1, :, :real]
            assert float(rows[..., real:].abs().max()) == 0.0, f"mode {mode} attends to padding"
            if normalised:
                sums = rows[..., :real].sum(-1)
                torch.testing.assert_close(sums, torch.ones_like(sums), atol=1e-5, rtol=1e-5)
                padded_rows = layer[1, :, real:]
                uniform = torch.full_like(padded_rows, 1.0 / ids.shape[1])
                torch.testing.assert_close(padded_rows, uniform)


@pytest.mark.parametrize("definition", [EXACT, MEAN_QK], ids=lambda d: d.name)
@pytest.mark.parametrize("pad", [False, True])
def test_both_reproduces_the_unmodified_model(original, exact_model, mean_model, definition, pad):
    model = exact_model if definition is EXACT else mean_model
    ids, mask = checks.batch(VOCAB, pad=pad)
    checks.check_both_reproduces(original, model, FAMILY, ids, mask)


@pytest.mark.parametrize("pad", [False, True])
def test_exact_logits_are_c2c_plus_position_terms(exact_model, pad):
    ids, mask = checks.batch(VOCAB, pad=pad)
    assert checks.check_split_sums(exact_model, FAMILY, ids, mask) < 1e-5


@pytest.mark.parametrize("pad", [False, True])
def test_mean_qk_logits_sum_with_the_stated_residual(mean_model, pad):
    ids, mask = checks.batch(VOCAB, pad=pad)
    assert checks.check_split_sums(mean_model, FAMILY, ids, mask, exact=False) < 1e-5


@pytest.mark.parametrize("definition", [EXACT, MEAN_QK], ids=lambda d: d.name)
def test_padding_gets_no_attention_from_real_tokens_in_any_mode(
    exact_model, mean_model, definition
):
    model = exact_model if definition is EXACT else mean_model
    ids, mask = checks.batch(VOCAB, pad=True)
    check_padding_ignored_by_real_tokens(model, ids, mask)


def test_mean_qk_positional_mode_ignores_token_identity(mean_model):
    checks.check_positional_content_free(mean_model, FAMILY, VOCAB)


def test_exact_positional_mode_reads_token_content(exact_model):
    """c2p and p2c contain the query and key: the exact delta is not content-free."""
    ids_a, mask = checks.batch(VOCAB, seed=3)
    ids_b, _ = checks.batch(VOCAB, seed=4)
    _, attn_a = checks.run_mode(exact_model, FAMILY, Mode.POSITIONAL, ids_a, mask)
    _, attn_b = checks.run_mode(exact_model, FAMILY, Mode.POSITIONAL, ids_b, mask)
    assert max(float((a - b).abs().max()) for a, b in zip(attn_a, attn_b, strict=True)) > 1e-4


@pytest.mark.parametrize("definition", [EXACT, MEAN_QK], ids=lambda d: d.name)
def test_modes_differ_from_both(exact_model, mean_model, definition):
    model = exact_model if definition is EXACT else mean_model
    ids, mask = checks.batch(VOCAB, pad=False)
    checks.check_modes_differ(model, FAMILY, ids, mask)


def test_mean_qk_positional_scores_are_the_positional_logits(mean_model):
    scores = checks.check_positional_scores(mean_model, FAMILY, MEAN_QK, 12)
    ids, _ = checks.batch(VOCAB, length=12, pad=False)
    if _talking_heads(mean_model):
        # the scores are the (head-mixed) logits; the model mixes heads again after the
        # softmax, so attention is that mix of softmax(scores), not softmax(scores).
        _, attentions = checks.run_mode(mean_model, FAMILY, Mode.POSITIONAL, ids, ids * 0 + 1)
        for module, layer, attention in zip(
            FAMILY.attention_modules(mean_model), scores, attentions, strict=True
        ):
            with torch.no_grad():
                mixed = module.head_weights_proj(torch.softmax(layer, -1).permute(1, 2, 0))
            torch.testing.assert_close(attention[0], mixed.permute(2, 0, 1))
    else:
        checks.check_scores_match_positional_attention(mean_model, FAMILY, MEAN_QK, ids)
    # content-free and relative: each diagonal of a layer's table holds one value
    # (before clamping/bucketing merges offsets, which keeps it constant anyway).
    for offset in range(-11, 12):
        diagonal = torch.diagonal(scores, offset=offset, dim1=-2, dim2=-1)
        torch.testing.assert_close(diagonal, diagonal[..., :1].expand_as(diagonal))


def test_exact_definition_reports_positional_scores_only_with_a_reference(
    original, exact_model, mean_model
):
    assert FAMILY.positional_scores(exact_model, 12, EXACT) is None
    with_reference = checks.installed(original, FAMILY, EXACT, reference_vocab=VOCAB)
    reference = checks.random_reference(with_reference, FAMILY, VOCAB)
    FAMILY.prepare(with_reference, EXACT, reference)
    scores = FAMILY.positional_scores(with_reference, 12, EXACT)
    torch.testing.assert_close(scores, FAMILY.positional_scores(mean_model, 12, MEAN_QK))


def test_install_leaves_the_weights_untouched(original, exact_model):
    want = original.state_dict()
    got = exact_model.state_dict()
    assert want.keys() == got.keys()
    for name, tensor in want.items():
        assert torch.equal(tensor, got[name]), name
