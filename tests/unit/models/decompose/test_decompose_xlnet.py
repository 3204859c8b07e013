"""XLNet: relative attention split two ways, both exact; one delta content-free."""

from __future__ import annotations

import pytest
import torch

from posharness.contracts.adapter import Mode
from posharness.models.decompose.core import RECORD_ATTR
from posharness.models.decompose.xlnet import XLNetSplit
from tests.unit.models.decompose import decompose_checks as checks

VOCAB = 64
FAMILY = XLNetSplit()
CODE_GROUPING, CONTENT_FREE = FAMILY.definitions


def tiny_xlnet(**overrides):
    """A tiny random XLNetModel whose attention is far from uniform.

    XLNet's default init (std 0.02, no embedding LayerNorm) gives logits of order 1e-4,
    so every mode would produce near-uniform attention and the modes could not be told
    apart; larger random weights make each term matter.
    """
    from transformers import XLNetConfig, XLNetModel

    torch.manual_seed(0)
    config = XLNetConfig(vocab_size=VOCAB, d_model=32, n_layer=2, n_head=4, d_inner=37, **overrides)
    model = XLNetModel(config).eval()
    model.set_attn_implementation("eager")
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "layer_norm" in name:
                continue
            big = name.startswith("word_embedding") or name.endswith("_bias")
            parameter.normal_(0.0, 1.0 if big and parameter.dim() < 3 else 0.3)
    return model


def run(model, ids, mask, token_type_ids=None):
    """Hidden states [B, T, D] and content-stream attentions [B, H, T, T] per layer.

    ``XLNetModel`` already permutes its ``ijbn`` attentions back to [B, H, T, T]; with a
    ``target_mapping`` it would return (content, query) pairs instead, which no encoder
    call here uses, so this insists on plain tensors.
    """
    with torch.no_grad():
        out = model(
            input_ids=ids,
            attention_mask=mask,
            token_type_ids=token_type_ids,
            output_hidden_states=True,
            output_attentions=True,
        )
    attentions = list(out.attentions)
    for attention in attentions:
        assert isinstance(attention, torch.Tensor) and attention.shape[-1] == ids.shape[1]
        assert attention.shape[:2] == (ids.shape[0], model.config.n_head)
    return list(out.hidden_states), attentions


def tokenizer_segments(mask):
    """What the XLNet tokenizer emits: 0 for text and ``<sep>``, 2 for ``<cls>`` (last), 3 pad."""
    segments = torch.zeros_like(mask)
    segments[:, -1] = 2
    segments[mask == 0] = 3
    return segments


def run_with_segments(model, ids, mask):
    return run(model, ids, mask, token_type_ids=tokenizer_segments(mask))


def check_real_queries_ignore_padding(model, ids, mask, run_fn=run):
    """XLNet's variant of ``check_padding_ignored`` (left padding, first three positions).

    The shared check also asks padding *rows* to give padding zero weight. XLNet's
    content-stream mask (``non_tgt_mask``) keeps each position's own key open, so the
    unmodified model lets a padding query attend to itself, and mode ``both`` must
    reproduce that. What matters, and what holds in every mode, is that no real query
    attends to padding and real rows still sum to one.
    """
    for mode in Mode:
        _, attentions = checks.run_mode(model, FAMILY, mode, ids, mask, run_fn)
        for layer in attentions:
            assert float(layer[1, :, 3:, :3].abs().max()) == 0.0, f"mode {mode} attends to padding"
            sums = layer[1, :, 3:, 3:].sum(-1)
            torch.testing.assert_close(sums, torch.ones_like(sums), atol=1e-5, rtol=1e-5)


def recorded_splits(model, ids, mask, run_fn=run):
    records = {id(m): [] for m in FAMILY.attention_modules(model)}
    for module in FAMILY.attention_modules(model):
        setattr(module, RECORD_ATTR, records[id(module)])
    try:
        checks.run_mode(model, FAMILY, Mode.BOTH, ids, mask, run_fn)
    finally:
        for module in FAMILY.attention_modules(model):
            delattr(module, RECORD_ATTR)
    return [pair for record in records.values() for pair in record]


@pytest.fixture(scope="module")
def original():
    return tiny_xlnet()


@pytest.fixture(scope="module", params=[CODE_GROUPING, CONTENT_FREE], ids=lambda d: d.name)
def definition(request):
    return request.param


@pytest.fixture(scope="module")
def model(original, definition):
    return checks.installed(original, FAMILY, definition)


def test_install_patches_instances_not_the_class(original, model):
    from transformers.models.xlnet.modeling_xlnet import XLNetRelativeAttention

    assert XLNetRelativeAttention.rel_attn_core is not None
    assert original.layer[0].rel_attn.rel_attn_core.__func__ is XLNetRelativeAttention.rel_attn_core
    assert (
        model.layer[0].rel_attn.rel_attn_core.__func__ is not XLNetRelativeAttention.rel_attn_core
    )
    for got, want in zip(model.state_dict().values(), original.state_dict().values(), strict=True):
        assert torch.equal(got, want)


@pytest.mark.parametrize("pad", [False, True])
def test_both_reproduces_the_unmodified_model(original, model, pad):
    ids, mask = checks.batch(VOCAB, pad=pad, left_pad=True)
    checks.check_both_reproduces(original, model, FAMILY, ids, mask, run)


def test_both_reproduces_with_tokenizer_segments(original, model):
    ids, mask = checks.batch(VOCAB, pad=True, left_pad=True)
    checks.check_both_reproduces(original, model, FAMILY, ids, mask, run_with_segments)


@pytest.mark.parametrize("pad", [False, True])
@pytest.mark.parametrize("segments", [False, True], ids=["no-segments", "segments"])
def test_logits_are_gamma_plus_delta_plus_stated_residual(model, pad, segments):
    ids, mask = checks.batch(VOCAB, pad=pad, left_pad=True)
    run_fn = run_with_segments if segments else run
    assert checks.check_split_sums(model, FAMILY, ids, mask, run_fn) < 1e-5


def test_code_grouping_residual_is_the_segment_term_only(original):
    model = checks.installed(original, FAMILY, CODE_GROUPING)
    ids, mask = checks.batch(VOCAB, pad=False)
    assert all(split.residual is None for _, split in recorded_splits(model, ids, mask))
    one_segment = recorded_splits(
        model, ids, mask, lambda m, i, k: run(m, i, k, token_type_ids=torch.zeros_like(k))
    )
    for _, split in one_segment:  # constant along each row: softmax ignores it
        row_spread = split.residual - split.residual[..., :1]
        assert float(row_spread.abs().max()) < 1e-5
    with_cls = recorded_splits(model, ids, mask, run_with_segments)
    spread = max(float((s.residual - s.residual[..., :1]).abs().max()) for _, s in with_cls)
    assert spread > 1e-3  # <cls> (segment 2) stands out in every row


def test_padding_gets_no_attention_from_real_tokens_in_any_mode(model):
    ids, mask = checks.batch(VOCAB, pad=True, left_pad=True)
    check_real_queries_ignore_padding(model, ids, mask)
    check_real_queries_ignore_padding(model, ids, mask, run_with_segments)


def test_positional_mode_ignores_token_identity_only_when_content_free(model, definition):
    if definition.content_free_delta:
        checks.check_positional_content_free(model, FAMILY, VOCAB, run)
    else:  # (q + v)·W_R r carries the query: positional attention follows the tokens
        with pytest.raises(AssertionError):
            checks.check_positional_content_free(model, FAMILY, VOCAB, run)


def test_modes_differ_from_both(model):
    ids, mask = checks.batch(VOCAB, pad=False)
    checks.check_modes_differ(model, FAMILY, ids, mask, run)


def test_positional_scores_are_the_content_free_delta(model, definition):
    scores = checks.check_positional_scores(model, FAMILY, definition, 12)
    assert scores.dtype == torch.float32 and scores.device.type == "cpu"
    for i in range(1, 12):  # no clamp_len: depends on i - j alone
        torch.testing.assert_close(scores[:, :, i, 1:], scores[:, :, i - 1, :-1])
    torch.testing.assert_close(scores, FAMILY.positional_scores(model, 12, CONTENT_FREE))
    if definition.content_free_delta:
        ids, _ = checks.batch(VOCAB, length=12, pad=False)
        checks.check_scores_match_positional_attention(model, FAMILY, definition, ids, run)


@pytest.mark.parametrize("overrides", [{"clamp_len": 3}, {"bi_data": True}], ids=str)
def test_positional_scores_follow_clamp_len_and_bi_data(overrides):
    """With ``bi_data`` batch element 0 gets the forward encodings, as the scores do."""
    original = tiny_xlnet(**overrides)
    model = checks.installed(original, FAMILY, CONTENT_FREE)
    ids, mask = checks.batch(VOCAB, length=12, pad=False)
    checks.check_both_reproduces(original, model, FAMILY, ids, mask, run)
    checks.check_scores_match_positional_attention(model, FAMILY, CONTENT_FREE, ids, run)
    if "clamp_len" in overrides:  # offsets 11 and 4 both clamp to 3
        scores = FAMILY.positional_scores(model, 12, CONTENT_FREE)
        torch.testing.assert_close(scores[:, :, 11, 0], scores[:, :, 11, 7])


def test_causal_uni_attention_keeps_its_mask_in_positional_mode():
    """``attn_type="uni"``: positional attention is softmax(scores) over the allowed keys.

    transformers' XLNetModel crashes with ``attn_type="uni"`` plus an ``attention_mask``
    on a batch of more than one (an in-place ``+=`` that must broadcast), so this run
    gives no mask: the batch has no padding.
    """
    original = tiny_xlnet(attn_type="uni")
    model = checks.installed(original, FAMILY, CONTENT_FREE)
    ids, mask = checks.batch(VOCAB, length=12, pad=False)

    def run_unmasked(model, ids, mask):
        return run(model, ids, None)

    checks.check_both_reproduces(original, model, FAMILY, ids, mask, run_unmasked)
    _, attentions = checks.run_mode(model, FAMILY, Mode.POSITIONAL, ids, mask, run_unmasked)
    scores = FAMILY.positional_scores(model, 12, CONTENT_FREE)
    future = torch.ones(12, 12, dtype=torch.bool).triu(1)
    for layer, attention in enumerate(attentions):
        expected = torch.softmax(scores[layer].masked_fill(future, float("-inf")), dim=-1)
        torch.testing.assert_close(attention[0], expected, atol=1e-5, rtol=1e-5)


def test_task_heads_expose_the_same_attention_modules():
    from transformers import XLNetForSequenceClassification

    head = XLNetForSequenceClassification(tiny_xlnet().config).eval()
    assert FAMILY.attention_modules(head) == [layer.rel_attn for layer in head.transformer.layer]
    assert FAMILY.query_inputs(head) == FAMILY.attention_modules(head)
    assert FAMILY.positional_scores(head, 5, CONTENT_FREE).shape == (2, 4, 5, 5)
