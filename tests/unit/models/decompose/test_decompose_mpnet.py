"""MPNet: the relative bias as delta, optionally with the absolute PE's positional stream."""

from __future__ import annotations

import pytest
import torch

from posharness.base.errors import OptionError
from posharness.contracts.adapter import Mode
from posharness.models.decompose.core import RECORD_ATTR
from posharness.models.decompose.mpnet import POSITIONAL_STREAM, RELATIVE_BIAS, MPNetSplit
from tests.unit.models.decompose import decompose_checks as checks

VOCAB = 64
REFERENCE_LENGTH = 16  # what checks.random_reference packs


@pytest.fixture(scope="module")
def original():
    from transformers import MPNetConfig, MPNetModel

    torch.manual_seed(0)
    config = MPNetConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=37,
        max_position_embeddings=64,
        # The smallest table that works: MPNetEncoder.compute_position_bias hard-codes
        # num_buckets=32 whatever the config says, so fewer rows index out of range.
        relative_attention_num_buckets=32,
    )
    model = MPNetModel(config).eval()
    model.set_attn_implementation("eager")
    return model


@pytest.fixture(scope="module")
def family():
    return MPNetSplit()


def definition(family: MPNetSplit, name: str):
    return next(d for d in family.definitions if d.name == name)


@pytest.fixture(scope="module", params=[RELATIVE_BIAS, POSITIONAL_STREAM])
def prepared(request, original, family):
    chosen = definition(family, request.param)
    return checks.installed(original, family, chosen, reference_vocab=VOCAB), chosen


def test_relative_bias_is_the_default(family):
    assert family.definitions[0].name == RELATIVE_BIAS
    assert family.definitions[0].exact and not family.definitions[0].needs_reference
    assert family.definitions[1].needs_reference and not family.definitions[1].exact


@pytest.mark.parametrize("pad", [False, True])
def test_both_reproduces_the_unmodified_model(original, prepared, family, pad):
    model, _ = prepared
    ids, mask = checks.batch(VOCAB, pad=pad)
    checks.check_both_reproduces(original, model, family, ids, mask)


@pytest.mark.parametrize("pad", [False, True])
def test_logits_are_gamma_plus_delta_plus_stated_residual(prepared, family, pad):
    model, chosen = prepared
    ids, mask = checks.batch(VOCAB, pad=pad)
    assert checks.check_split_sums(model, family, ids, mask, exact=chosen.exact) < 1e-5


def test_positional_stream_records_a_nonzero_residual(prepared, family):
    model, chosen = prepared
    modules = family.attention_modules(model)
    records: list = []
    for module in modules:
        setattr(module, RECORD_ATTR, records)
    try:
        checks.run_mode(model, family, Mode.BOTH, *checks.batch(VOCAB, pad=False))
    finally:
        for module in modules:
            delattr(module, RECORD_ATTR)
    residuals = [split.residual for _, split in records]
    if chosen.exact:
        assert all(r is None for r in residuals)
    else:
        # The content-position cross terms are in neither gamma nor delta: the residual
        # is real, not rounding.
        assert max(float(r.abs().max()) for r in residuals) > 1e-4


def test_padding_gets_no_attention_in_any_mode(prepared, family):
    model, _ = prepared
    ids, mask = checks.batch(VOCAB, pad=True)
    checks.check_padding_ignored(model, family, ids, mask)


def test_positional_mode_ignores_token_identity(prepared, family):
    model, _ = prepared
    checks.check_positional_content_free(model, family, VOCAB)


def test_modes_differ_from_both(prepared, family):
    model, _ = prepared
    ids, mask = checks.batch(VOCAB, pad=False)
    checks.check_modes_differ(model, family, ids, mask)


def test_positional_scores_match_positional_attention(prepared, family):
    model, chosen = prepared
    scores = checks.check_positional_scores(model, family, chosen, 12)
    assert scores.dtype == torch.float32 and scores.device.type == "cpu"
    if chosen.name == RELATIVE_BIAS:
        torch.testing.assert_close(scores[0], scores[1])  # one bias shared by every layer
    ids, _ = checks.batch(VOCAB, length=12, pad=False)
    checks.check_scores_match_positional_attention(model, family, chosen, ids)


def test_stream_delta_is_the_bias_plus_mean_input_scores(original, family):
    stream = definition(family, POSITIONAL_STREAM)
    model = checks.installed(original, family, stream, reference_vocab=VOCAB)
    with_stream = family.positional_scores(model, 12, stream)
    bias_only = family.positional_scores(model, 12, definition(family, RELATIVE_BIAS))
    assert float((with_stream - bias_only).abs().max()) > 1e-4


def test_batch_longer_than_the_reference_is_refused(original, family):
    stream = definition(family, POSITIONAL_STREAM)
    model = checks.installed(original, family, stream, reference_vocab=VOCAB)
    ids, mask = checks.batch(VOCAB, length=REFERENCE_LENGTH + 4, pad=False)
    checks.run_mode(model, family, Mode.BOTH, ids, mask)  # mode both needs no reference
    for mode in (Mode.CONTEXTUAL, Mode.POSITIONAL):
        with pytest.raises(OptionError, match="reference_length="):
            checks.run_mode(model, family, mode, ids, mask)
    with pytest.raises(OptionError, match="reference_length="):
        family.positional_scores(model, REFERENCE_LENGTH + 1, stream)


def test_install_leaves_weights_and_the_class_untouched(original, family):
    from transformers.models.mpnet.modeling_mpnet import MPNetSelfAttention

    model = checks.installed(original, family, family.definitions[0])
    family.install(model)  # a second install is a no-op
    for (name, got), (_, want) in zip(
        model.state_dict().items(), original.state_dict().items(), strict=True
    ):
        assert torch.equal(got, want), name
    assert all("forward" not in vars(m) for m in original.modules())
    assert MPNetSelfAttention.forward.__name__ == "forward"


def test_stream_gamma_is_qk_of_the_input_with_its_position_mean_swapped(original, family):
    """gamma from the tables is q·k recomputed on x_t - u_t + ū (the projection bias cancels)."""
    stream = definition(family, POSITIONAL_STREAM)
    model = checks.installed(original, family, stream, reference_vocab=VOCAB)
    reference = checks.random_reference(model, family, VOCAB)  # the same one installed() used
    module = family.attention_modules(model)[1]
    inputs: list = []
    records: list = []
    handle = module.q.register_forward_pre_hook(lambda _, args: inputs.append(args[0]))
    setattr(module, RECORD_ATTR, records)
    try:
        checks.run_mode(model, family, Mode.BOTH, *checks.batch(VOCAB, length=12, pad=False))
    finally:
        handle.remove()
        delattr(module, RECORD_ATTR)
    u = reference.inputs[1][:12]
    shifted = inputs[0] - u + reference.inputs[1].mean(dim=0)
    heads = (2, 12, module.num_attention_heads, -1)
    with torch.no_grad():
        q = module.q(shifted).view(heads).transpose(1, 2)
        k = module.k(shifted).view(heads).transpose(1, 2)
    want = q @ k.transpose(-1, -2) / module.attention_head_size**0.5
    torch.testing.assert_close(records[0][1].gamma, want, atol=1e-5, rtol=1e-5)


def test_left_padding_gets_no_attention_in_any_mode(prepared, family):
    model, _ = prepared
    ids, mask = checks.batch(VOCAB, pad=True, left_pad=True)
    checks.check_padding_ignored(model, family, ids, mask, left=True)


def test_every_mode_returns_one_attention_map_per_sequence(prepared, family):
    model, _ = prepared
    ids, mask = checks.batch(VOCAB, pad=False)
    for mode in Mode:
        _, attentions = checks.run_mode(model, family, mode, ids, mask)
        assert all(layer.shape == (2, 4, 9, 9) for layer in attentions), mode
