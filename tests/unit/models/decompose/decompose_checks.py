"""The decomposition invariants every family must satisfy, written once.

A family test builds a tiny random model, installs its family on a deep copy and calls
these checks with a ``run`` function that returns (hidden states, attentions) of the
model for a batch — the same checks then hold BERT, T5, DeBERTa, XLNet, ... to the
issue's contract:

* mode ``both`` reproduces the unmodified model (atol 1e-5);
* exact splits: the model's logits equal gamma + delta (+ residual);
* padding receives zero attention in every mode;
* content-free delta: positional attention ignores token identity;
* contextual and positional attention differ from ``both``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import torch

from posharness.contracts.adapter import Mode
from posharness.models.decompose.core import RECORD_ATTR, set_modes
from posharness.models.decompose.mode_split import Definition, ModeSplit, Reference
from posharness.models.decompose.reference import mean_attention_inputs

RunFn = Callable[[Any, torch.Tensor, torch.Tensor], tuple[list[torch.Tensor], list[torch.Tensor]]]


def default_run(model: Any, ids: torch.Tensor, mask: torch.Tensor) -> tuple[list, list]:
    with torch.no_grad():
        out = model(
            input_ids=ids, attention_mask=mask, output_hidden_states=True, output_attentions=True
        )
    return list(out.hidden_states), list(out.attentions)


def batch(vocab: int, length: int = 9, pad: bool = True, seed: int = 0, left_pad: bool = False):
    """Two sequences; with ``pad`` the second is three tokens shorter (padded)."""
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab, (2, length), generator=generator)
    mask = torch.ones(2, length, dtype=torch.long)
    if pad:
        if left_pad:
            mask[1, :3] = 0
        else:
            mask[1, -3:] = 0
    return ids, mask


def random_reference(model: Any, family: ModeSplit, vocab: int, length: int = 16) -> Reference:
    sequences = torch.randint(5, vocab, (6, length), generator=torch.Generator().manual_seed(1))
    inputs = mean_attention_inputs(model, family.query_inputs(model), sequences, batch_size=3)
    return Reference(inputs=inputs, description="random ids", corpus_hash="0" * 64)


def installed(
    model: Any, family: ModeSplit, definition: Definition, reference_vocab: int | None = None
) -> Any:
    """A deep copy of ``model`` with the family installed and prepared, mode ``both``."""
    from posharness.models.decompose.core import register_attention_function

    copied = copy.deepcopy(model).eval()
    if family.uses_attention_interface:
        register_attention_function()
        copied.set_attn_implementation("posharness")
    family.install(copied)
    reference = None
    if definition.needs_reference:
        assert reference_vocab is not None, "this definition needs a reference: pass the vocab"
        reference = random_reference(copied, family, reference_vocab)
    family.prepare(copied, definition, reference)
    return copied


def run_mode(model: Any, family: ModeSplit, mode: Mode, ids, mask, run: RunFn = default_run):
    set_modes(family.attention_modules(model), mode)
    try:
        return run(model, ids, mask)
    finally:
        set_modes(family.attention_modules(model), Mode.BOTH)


def check_both_reproduces(original: Any, model: Any, family: ModeSplit, ids, mask, run=default_run):
    want_hidden, want_attn = run(original, ids, mask)
    got_hidden, got_attn = run_mode(model, family, Mode.BOTH, ids, mask, run)
    assert len(got_attn) == len(want_attn)
    for got, want in zip(got_hidden, want_hidden, strict=True):
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
    for got, want in zip(got_attn, want_attn, strict=True):
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def check_split_sums(
    model: Any, family: ModeSplit, ids, mask, run=default_run, exact=True
) -> float:
    """Record (logits, split) per layer; returns the largest |logits - gamma - delta - residual|.

    With ``exact`` it also asserts the residual is None, i.e. the split states no residual.
    """
    records: list[list] = []
    modules = family.attention_modules(model)
    for module in modules:
        record: list = []
        setattr(module, RECORD_ATTR, record)
        records.append(record)
    try:
        run_mode(model, family, Mode.BOTH, ids, mask, run)
    finally:
        for module in modules:
            delattr(module, RECORD_ATTR)
    worst = 0.0
    for record in records:
        assert record, "a module recorded nothing: is the family's forward installed?"
        for logits, split in record:
            total = split.gamma + split.delta
            if split.residual is not None:
                total = total + split.residual
            elif exact:
                pass
            worst = max(worst, float((logits - total).abs().max()))
            if exact:
                torch.testing.assert_close(total.expand_as(logits), logits, atol=1e-5, rtol=1e-5)
    return worst


def check_padding_ignored(model: Any, family: ModeSplit, ids, mask, run=default_run, left=False):
    for mode in Mode:
        _, attentions = run_mode(model, family, mode, ids, mask, run)
        for layer in attentions:
            padded = layer[1, :, :, :3] if left else layer[1, :, :, -3:]
            assert float(padded.abs().max()) == 0.0, f"mode {mode} attends to padding"
            real = layer[1, :, 3:, 3:] if left else layer[1, :, :-3, :-3]
            sums = real.sum(-1)
            torch.testing.assert_close(sums, torch.ones_like(sums), atol=1e-5, rtol=1e-5)


def check_positional_content_free(model: Any, family: ModeSplit, vocab: int, run=default_run):
    ids_a, mask = batch(vocab, seed=3)
    ids_b, _ = batch(vocab, seed=4)
    assert not torch.equal(ids_a, ids_b)
    _, attn_a = run_mode(model, family, Mode.POSITIONAL, ids_a, mask, run)
    _, attn_b = run_mode(model, family, Mode.POSITIONAL, ids_b, mask, run)
    for a, b in zip(attn_a, attn_b, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


def check_modes_differ(model: Any, family: ModeSplit, ids, mask, run=default_run):
    _, both = run_mode(model, family, Mode.BOTH, ids, mask, run)
    for mode in (Mode.CONTEXTUAL, Mode.POSITIONAL):
        _, other = run_mode(model, family, mode, ids, mask, run)
        gap = max(float((a - b).abs().max()) for a, b in zip(both, other, strict=True))
        assert gap > 1e-3, f"mode {mode} gives the same attention as both"


def check_positional_scores(
    model: Any, family: ModeSplit, definition: Definition, length: int, layers: int | None = None
):
    """``layers``: attention calls per forward, if not one per module (ALBERT shares them)."""
    scores = family.positional_scores(model, length, definition)
    assert scores is not None
    layers = layers or len(family.attention_modules(model))
    assert scores.shape[0] == layers and scores.shape[-2:] == (length, length)
    assert torch.isfinite(scores).all()
    return scores


def check_scores_match_positional_attention(
    model: Any, family: ModeSplit, definition: Definition, ids, run=default_run
):
    """Without padding, positional-mode attention is softmax(positional_scores) exactly."""
    mask = torch.ones_like(ids)
    _, attentions = run_mode(model, family, Mode.POSITIONAL, ids, mask, run)
    scores = family.positional_scores(model, ids.shape[1], definition)
    for layer, attention in enumerate(attentions):
        expected = torch.softmax(scores[layer], dim=-1)
        torch.testing.assert_close(attention[0].float(), expected, atol=1e-5, rtol=1e-5)
