"""ALiBi as Chen et al.'s ICLR draft uses it in Table 3: a softmax of the linear biases.

"To make ALiBi suit for our experiment, we apply a softmax layer to the linear biases to
obtain an attentional vector, and thus it can be used individually for positional
attention module" (draft §5). Two models follow from that sentence, both fixed (ALiBi has
no parameters, Press et al. 2022):

* ``alibi-softmax`` — softmax_j(-m_h |i - j|) added to the scaled logits, the form the
  attenuated encoding takes in Listing 1 (the draft's "ALiBi" row of Table 3 under our
  reading; the plain additive bias is ``alibi``);
* ``alibi-seq`` — the same rows as the positional attention of the sequence combination
  CA(PA(X)) (Eq. 10, Listing 3): the draft's "ALiBi-Seq".

The softmax runs over each sequence's real keys (padding excluded), so padding never
changes a sequence's weights; the ALiBi slopes are Press et al.'s geometric sequence.
"""

from __future__ import annotations

import torch
from torch import nn

from posharness.pe import (
    LogitTerm,
    PositionalAttention,
    alibi_slopes,
    register_pe,
    relative_offsets,
)


class _SoftmaxAlibi(nn.Module):
    """-m_h |i - j| per head and its softmax over the real keys."""

    def __init__(self, config) -> None:
        super().__init__()
        self.heads = config.num_attention_heads

    def logits(self, positions: torch.Tensor, key_mask: torch.Tensor | None) -> torch.Tensor:
        """ALiBi's biases [B or 1, H, n, n], padding keys at float32's minimum."""
        slopes = alibi_slopes(self.heads).to(positions.device)
        distance = relative_offsets(positions).abs().unsqueeze(1).float()
        logits = -slopes.view(1, -1, 1, 1) * distance
        if key_mask is not None:
            logits = logits.masked_fill(~key_mask, torch.finfo(logits.dtype).min)
        return logits

    def weights(self, positions: torch.Tensor, key_mask: torch.Tensor | None) -> torch.Tensor:
        return torch.softmax(self.logits(positions, key_mask), dim=-1)


@register_pe(
    "alibi-softmax",
    version=1,
    variant=False,
    claims=("content-free", "depends-on-query-position"),
)
class SoftmaxAlibiBias(_SoftmaxAlibi, LogitTerm):
    """softmax_j(-m_h |i - j|) added to the logits of each layer (draft Table 3, "ALiBi")."""

    term = "alibi-softmax"
    title = "ALiBi, softmaxed (Chen et al. draft)"
    per_layer = True
    uses_key_mask = True

    def forward(self, positions: torch.Tensor, key_mask: torch.Tensor | None) -> torch.Tensor:
        return self.weights(positions, key_mask)


@register_pe(
    "alibi-seq",
    version=1,
    variant=False,
    claims=("content-free", "translation-invariant", "symmetric"),
)
class SequenceAlibi(_SoftmaxAlibi, PositionalAttention):
    """PA(X) with the softmaxed ALiBi rows, then content attention (draft "ALiBi-Seq")."""

    title = "ALiBi, softmaxed, sequence CA(PA(X))"

    def forward(self, positions: torch.Tensor, key_mask: torch.Tensor | None) -> torch.Tensor:
        return self.weights(positions, key_mask)
