"""Whether a zoo model would train without positions: the guard ``pretrain`` runs before
its first step, and check-pe's ``positions`` check.

Kept apart from check-pe's bench (``check.py``): it takes any built model, not the tiny
float64 bench, and pretraining needs it without the rest of check-pe.
"""

from __future__ import annotations

from typing import Any

import torch

from posharness.pe import registry

# the largest change a permutation may make beyond permuting the outputs, as a share of
# their scale, for a scheme to count as ignoring positions (float64, so rounding is far below)
POSITION_EFFECT_FLOOR = 1e-10
_LENGTH = 12  # the probe's length (check-pe's bench length), capped at the model's positions


def positions_ignored(model: Any) -> str | None:
    """Why ``model`` (any zoo model) would train without positions, or None.

    ``pretrain`` calls this before its first step: a scheme whose positional term is zero or
    constant per row trains exactly like NoPE, and only the loss curve would tell.
    """
    import copy

    from posharness.models.zoo.encoder.schemes import kind

    encoder = model._encoder()
    if kind(encoder.config) == registry.POSITION_FREE:
        return None
    # In float64, so a faithful scheme whose term is small at BERT's initialisation (an MLP
    # of std-0.02 weights moves the outputs by ~1e-7) is told apart from rounding.
    probe = encoder if encoder.dtype == torch.float64 else copy.deepcopy(encoder).double()
    generator = torch.Generator().manual_seed(0)
    n = min(_LENGTH, encoder.config.max_position_embeddings)
    ids = torch.randint(5, encoder.config.vocab_size, (1, n), generator=generator)
    order = torch.randperm(n, generator=generator)
    was_training = probe.training
    probe.eval()
    try:
        with torch.no_grad(), probe.attention_mode_set("both"):
            plain = probe(ids).last_hidden_state[0]
            permuted = probe(ids[:, order]).last_hidden_state[0]
    finally:
        probe.train(was_training)
    scale = max(1.0, float(plain.abs().max()))
    effect = float((permuted - plain[order]).abs().max())
    if effect <= POSITION_EFFECT_FLOOR * scale:
        return (
            f"scheme {encoder.config.scheme} ignores positions: permuting the input only "
            f"permutes the outputs (largest other change {effect:.2g}, at most "
            f"{POSITION_EFFECT_FLOOR:g} of the outputs' scale {scale:.3g}; is its positional "
            "term zero, or constant along each row, at initialisation?)"
        )
    return None
