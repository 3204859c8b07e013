"""Rotary PEs (ModernBERT, RoFormer): unrotated q·k versus the mean-qk rotary table.

The split is not exact (RoPE couples content and position multiplicatively), so instead of
``check_split_sums`` with exact=True these tests pin what the modes promise: contextual
mode *is* the model run with every position at 0, positional mode is content-free and
Toeplitz, and ModernBERT's sliding window survives every mode.
"""

from __future__ import annotations

import copy

import pytest
import torch

from posharness.contracts.adapter import Mode
from posharness.models.decompose.core import RECORD_ATTR
from posharness.models.decompose.modernbert import ModernBertSplit
from posharness.models.decompose.roformer import RoFormerSplit
from posharness.models.decompose.rope import MEANS_ATTR, rope_symmetry_parts
from tests.unit.models.decompose import decompose_checks as checks

VOCAB = 64
WINDOW = 4  # ModernBERT local_attention: half-width 2 each side, shorter than the batches


def _modernbert(**overrides):
    from transformers import ModernBertConfig, ModernBertModel

    torch.manual_seed(0)
    config = ModernBertConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=3,
        num_attention_heads=4,
        intermediate_size=37,
        global_attn_every_n_layers=2,  # layers 0, 2 global; layer 1 local
        local_attention=WINDOW,
        max_position_embeddings=64,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
        cls_token_id=1,
        sep_token_id=2,
        **overrides,
    )
    model = ModernBertModel(config).eval()
    model.set_attn_implementation("eager")
    return model


def _roformer(**overrides):
    from transformers import RoFormerConfig, RoFormerModel

    torch.manual_seed(0)
    config = RoFormerConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=37,
        max_position_embeddings=64,
        pad_token_id=0,
        **overrides,
    )
    model = RoFormerModel(config).eval()
    model.set_attn_implementation("eager")
    return model


def _positions_at_zero(model):
    """The unmodified model with every position id 0: rotation by angle 0 everywhere."""
    if model.config.model_type == "roformer":
        frozen = copy.deepcopy(model)
        table = frozen.encoder.embed_positions.weight
        with torch.no_grad():
            table.copy_(table[:1].expand_as(table))
        return frozen, checks.default_run

    def run(m, ids, mask):
        with torch.no_grad():
            out = m(
                input_ids=ids,
                attention_mask=mask,
                position_ids=torch.zeros_like(ids),
                output_hidden_states=True,
                output_attentions=True,
            )
        return list(out.hidden_states), list(out.attentions)

    return model, run


CASES = {
    "modernbert": (_modernbert, ModernBertSplit),
    "roformer": (_roformer, RoFormerSplit),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def setup(request):
    build, family_class = CASES[request.param]
    original = build()
    family = family_class()
    definition = family.definitions[0]
    model = checks.installed(original, family, definition, reference_vocab=VOCAB)
    return original, model, family, definition


@pytest.mark.parametrize("pad", [False, True])
def test_both_reproduces_the_unmodified_model(setup, pad):
    original, model, family, _ = setup
    ids, mask = checks.batch(VOCAB, pad=pad)
    checks.check_both_reproduces(original, model, family, ids, mask)


@pytest.mark.parametrize("pad", [False, True])
def test_contextual_mode_is_the_model_with_every_position_at_zero(setup, pad):
    original, model, family, _ = setup
    ids, mask = checks.batch(VOCAB, pad=pad)
    reference_model, run = _positions_at_zero(original)
    want_hidden, want_attn = run(reference_model, ids, mask)
    got_hidden, got_attn = checks.run_mode(model, family, Mode.CONTEXTUAL, ids, mask)
    for got, want in zip(got_hidden + got_attn, want_hidden + want_attn, strict=True):
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def test_recorded_split_is_unrotated_gamma_plus_mean_qk_delta_plus_residual(setup):
    """Not exact: the residual is stated (logits − gamma − delta) and of real size."""
    _, model, family, _ = setup
    ids, mask = checks.batch(VOCAB, pad=True)
    # the stated residual closes the sum, so the shared check holds as if exact
    assert checks.check_split_sums(model, family, ids, mask, exact=True) < 1e-5
    records = []
    for module in family.attention_modules(model):
        setattr(module, RECORD_ATTR, records)
    try:
        _, contextual = checks.run_mode(model, family, Mode.CONTEXTUAL, ids, mask)
    finally:
        for module in family.attention_modules(model):
            delattr(module, RECORD_ATTR)
    assert max(float(split.residual.abs().max()) for _, split in records) > 1e-3
    for layer, ((_, split), attention) in enumerate(zip(records, contextual, strict=True)):
        gamma = split.gamma[1, :, :-3, :-3]  # the padded sequence, real tokens only
        gamma = gamma + _window_mask(family, model, layer, gamma.shape[-1])
        torch.testing.assert_close(torch.softmax(gamma, -1), attention[1, :, :-3, :-3])


def test_padding_gets_no_attention_in_any_mode(setup):
    _, model, family, _ = setup
    ids, mask = checks.batch(VOCAB, pad=True)
    if model.config.model_type != "modernbert":
        checks.check_padding_ignored(model, family, ids, mask)
        return
    # ModernBERT variant of the shared check: a *padded* query row in a local layer whose
    # whole window is padding (row 8, window 6..8) has no visible key, and the unmodified
    # model spreads it over the masked keys too. Real query rows are what the check is for.
    for mode in Mode:
        _, attentions = checks.run_mode(model, family, mode, ids, mask)
        for layer in attentions:
            real_rows = layer[1, :, :-3]
            assert float(real_rows[..., -3:].abs().max()) == 0.0, f"mode {mode} attends to padding"
            sums = real_rows[..., :-3].sum(-1)
            torch.testing.assert_close(sums, torch.ones_like(sums), atol=1e-5, rtol=1e-5)


def test_positional_mode_ignores_token_identity(setup):
    _, model, family, _ = setup
    checks.check_positional_content_free(model, family, VOCAB)


def test_modes_differ_from_both(setup):
    _, model, family, _ = setup
    ids, mask = checks.batch(VOCAB, pad=False)
    checks.check_modes_differ(model, family, ids, mask)


def _window_mask(family, model, layer: int, length: int) -> torch.Tensor:
    window = family.window(model, layer) if hasattr(family, "window") else None
    offsets = torch.arange(length)[None, :] - torch.arange(length)[:, None]
    if window is None:
        return torch.zeros(length, length)
    return torch.where(offsets.abs() <= window, 0.0, torch.finfo(torch.float32).min)


def test_positional_scores_are_what_positional_mode_uses(setup):
    """Longer than ModernBERT's window: positional_scores carry the local layers' window."""
    _, model, family, definition = setup
    checks.check_positional_scores(model, family, definition, 9)
    ids, _ = checks.batch(VOCAB, length=9, pad=False)
    checks.check_scores_match_positional_attention(model, family, definition, ids)


def test_positional_scores_are_the_rotary_table_inside_the_window(setup):
    _, model, family, definition = setup
    length = 9
    scores = family.positional_scores(model, length, definition)
    for layer, table in enumerate(family.rotary_scores(model, length)):
        masked = table + _window_mask(family, model, layer, length)
        torch.testing.assert_close(scores[layer], masked.clamp_min(torch.finfo(torch.float32).min))


def test_positional_scores_are_toeplitz(setup):
    _, model, family, definition = setup
    scores = family.positional_scores(model, 12, definition)
    torch.testing.assert_close(scores[:, :, 1:, 1:], scores[:, :, :-1, :-1], atol=1e-5, rtol=1e-4)


def _manual_rotation(vector, theta: float, pairs: str, length: int) -> torch.Tensor:
    """Rotate [H, d] by positions 0..n−1, written out from the papers: [H, n, d]."""
    size = vector.shape[-1]
    half = size // 2
    index = torch.arange(half)
    first, second = (index, index + half) if pairs == "half" else (2 * index, 2 * index + 1)
    angle = torch.arange(length).float()[:, None] * theta ** (-2.0 * index.float() / size)
    a, b = vector[:, None, first], vector[:, None, second]
    out = torch.empty(vector.shape[0], length, size)
    out[..., first] = a * angle.cos() - b * angle.sin()
    out[..., second] = b * angle.cos() + a * angle.sin()
    return out


def test_positional_scores_follow_each_models_rotation_convention(setup):
    """ModernBERT: pairs (m, m+d/2), theta per layer type; RoFormer: (2m, 2m+1), 10000."""
    _, model, family, definition = setup
    length = 7
    scores = family.rotary_scores(model, length)
    config = model.config
    for layer, module in enumerate(family.attention_modules(model)):
        means = getattr(module, MEANS_ATTR)
        if config.model_type == "modernbert":
            theta = config.rope_parameters[config.layer_types[layer]]["rope_theta"]
            pairs = "half"
        else:
            theta, pairs = 10000.0, "interleaved"
        query = _manual_rotation(means.query, theta, pairs, length)
        key = _manual_rotation(means.key, theta, pairs, length)
        expected = query @ key.transpose(-1, -2) / means.query.shape[-1] ** 0.5
        torch.testing.assert_close(scores[layer], expected, atol=1e-5, rtol=1e-4)


def test_modernbert_global_and_local_layers_use_their_own_theta():
    family = ModernBertSplit()
    model = _modernbert()
    global_cos, _ = family.rotation(model, 0, 5)
    local_cos, _ = family.rotation(model, 1, 5)
    assert not torch.allclose(global_cos, local_cos)
    assert family.window(model, 0) is None and family.window(model, 1) == WINDOW // 2


def test_symmetry_parts_are_even_and_odd_and_sum_to_delta(setup):
    _, model, family, definition = setup
    length = 6
    scores = family.rotary_scores(model, length)
    for layer, (offsets, even, odd) in enumerate(family.symmetry_parts(model, length)):
        torch.testing.assert_close(even, even.flip(-1))
        torch.testing.assert_close(odd, -odd.flip(-1))
        total = (even + odd).sum(1)  # [H, 2n-1], offset k = j - i
        row = scores[layer][:, 0, :]  # i = 0: offsets 0..n-1
        column = scores[layer][:, :, 0]  # j = 0: offsets 0..-(n-1)
        torch.testing.assert_close(total[:, length - 1 :], row, atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(total[:, :length].flip(-1), column, atol=1e-5, rtol=1e-4)
        assert int(offsets[0]) == -(length - 1)


def test_rope_symmetry_parts_rejects_unknown_pairing():
    with pytest.raises(ValueError, match="pairs"):
        rope_symmetry_parts(torch.ones(1, 4), torch.ones(1, 4), torch.ones(2), "spiral", 3, 1.0)


def test_modernbert_sliding_window_mask_is_untouched_in_every_mode():
    """The mask local layers receive is the unmodified model's, and nothing leaks past it."""
    family = ModernBertSplit()
    original = _modernbert()
    model = checks.installed(original, family, family.definitions[0], reference_vocab=VOCAB)
    ids, mask = checks.batch(VOCAB, length=9, pad=True)

    def masks_seen(m, mode=None):
        seen = []
        hooks = [
            layer.attn.register_forward_pre_hook(
                lambda _m, args, kwargs: seen.append(kwargs["attention_mask"]), with_kwargs=True
            )
            for layer in m.layers
        ]
        try:
            if mode is None:
                _, attentions = checks.default_run(m, ids, mask)
            else:
                _, attentions = checks.run_mode(m, family, mode, ids, mask)
        finally:
            for hook in hooks:
                hook.remove()
        return seen, attentions

    want, want_attn = masks_seen(original)
    outside = want_attn[1] == 0  # local layer 1: zero weight outside the window (or padding)
    assert outside[0].any()
    for mode in Mode:
        got, attentions = masks_seen(model, mode)
        for got_mask, want_mask in zip(got, want, strict=True):
            torch.testing.assert_close(got_mask, want_mask)
        assert float(attentions[1][outside].abs().max()) == 0.0, f"mode {mode} leaks the window"


def test_roformer_rotary_value_keeps_values_rotated():
    family = RoFormerSplit()
    original = _roformer(rotary_value=True)
    model = checks.installed(original, family, family.definitions[0], reference_vocab=VOCAB)
    ids, mask = checks.batch(VOCAB, pad=True)
    checks.check_both_reproduces(original, model, family, ids, mask)
    checks.check_padding_ignored(model, family, ids, mask)


def test_mean_qk_needs_a_reference(setup):
    from posharness.base.errors import OptionError

    original, _, family, definition = setup
    with pytest.raises(OptionError, match="reference"):
        family.prepare(copy.deepcopy(original), definition, None)
