"""Shaw et al. (2018)'s relative keys: a logit term that reads the queries."""

from __future__ import annotations

import torch
from torch import nn

from posharness.pe import ContentLogitTerm, register_pe, relative_offsets


@register_pe(
    "shaw",
    defaults={"shaw_max_distance": 16},
    version=1,
    variant=False,
    claims=("translation-invariant",),
)
class ShawRelativeKeys(ContentLogitTerm):
    """delta_ij = q_i · a_clip(j - i) / sqrt(d) (relative keys only), per layer.

    One table of 2k + 1 key embeddings of head size per layer, shared by the heads as in the
    paper; offsets beyond k are clipped. The scores against all 2k + 1 embeddings are taken
    once and gathered, instead of materialising an n x n x d tensor.
    """

    term = "shaw-relative-keys"
    title = "Shaw relative keys (clipped)"

    def __init__(self, config, shaw_max_distance: int = 16) -> None:
        super().__init__()
        self.clip = shaw_max_distance
        self.keys = nn.Embedding(2 * self.clip + 1, config.head_size)

    def forward(self, query: torch.Tensor, positions: torch.Tensor, scale: float) -> torch.Tensor:
        index = relative_offsets(positions).clamp(-self.clip, self.clip) + self.clip  # [B, n, n]
        scores = torch.matmul(query, self.keys.weight.t()) * scale  # [B, H, n, 2k + 1]
        batch, heads, n, _ = scores.shape
        index = index.unsqueeze(1).expand(batch, heads, n, n)
        return torch.gather(scores, -1, index)
