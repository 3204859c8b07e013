"""The positional term delta itself, next to identical-word probing (issue: decomposition).

Identical-word probing measures what the whole model attends to when content is held
constant; ``positional_scores`` gives the content-free delta of each layer and head
directly (exact for T5 / XLNet / MPNet biases, estimated under the model's named
definition for absolute and rotary PEs). The geometry tasks measure both, so a reader
sees whether the probe's locality comes from the positional term or from the rest of
the network. Delta does not depend on the mode a cell runs in; it is reported in each.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from posharness.base.errors import DataError
from posharness.contracts.adapter import ModelAdapter

MASKED_BELOW = -1e30  # a family's own mask (ModernBERT's window) writes the dtype's minimum


@dataclass(frozen=True)
class PositionalTerm:
    logits: np.ndarray  # [L, H, n, n] delta, already scaled; masked entries ≈ dtype minimum
    definition: str | None
    weights: np.ndarray | None = None  # PA's own weights where positional mode uses them

    @property
    def visible(self) -> np.ndarray:
        """Where delta is a real score rather than a structural mask (sliding windows)."""
        return self.logits > MASKED_BELOW

    @property
    def attention(self) -> np.ndarray:
        """What positional mode attends with, unpadded: softmax(delta) per layer and head,
        or a positional attention's own weights (CA(PA(X)): the draft's Listing 2 uses its
        table as the attention, so a softmax of it would measure another map)."""
        if self.weights is not None:
            return self.weights
        shifted = self.logits - self.logits.max(axis=-1, keepdims=True)
        weights = np.exp(shifted)
        return weights / weights.sum(axis=-1, keepdims=True)


def positional_term(model: ModelAdapter, length: int) -> tuple[PositionalTerm | None, str]:
    """The model's delta for ``length`` positions, or None and the reason it is absent."""
    from posharness.contracts.adapter import HasPositionalAttention, HasPositionalTerm, Mode

    if not isinstance(model, HasPositionalTerm):
        return None, "the adapter has no positional_scores"
    try:
        scores = model.positional_scores(length)
    except DataError as exc:
        return None, f"unavailable: {exc}"
    if scores is None:
        return None, "the model defines no content-free positional term"
    support = model.modes.get(Mode.POSITIONAL)
    logits = scores.detach().to("cpu").double().numpy()
    weights = None
    if isinstance(model, HasPositionalAttention):
        attention = model.positional_attention(length)
        if attention is not None:
            weights = attention.detach().to("cpu").double().numpy()
    definition = support.definition if support else None
    return PositionalTerm(logits, definition, weights), "ok"
