"""Relative biases shared by every layer: T5's buckets (Raffel et al. 2020) and ALiBi (Press et
al. 2022). Each maps positions [B or 1, n] to delta [B or 1, H, n, n]."""

from __future__ import annotations

import torch
from torch import nn

from posharness.pe import LogitTerm, alibi_slopes, register_pe, relative_offsets, t5_buckets


@register_pe(
    "t5",
    defaults={"relative_buckets": 32, "relative_max_distance": 128},
    version=1,
    variant=False,
    claims=("content-free", "translation-invariant"),
)
class T5RelativeBias(LogitTerm):
    """b_h[bucket(j - i)]: one learned scalar per bucket and head.

    With ``cls_buckets`` (TUPE-R, as in the TUPE release) [CLS] gets buckets of its own: its
    row (including [CLS]->[CLS]) takes the never-used bucket ``buckets // 2`` and its column
    (from every other token) an extra bucket ``buckets``; the sequence's first token is [CLS].
    """

    term = "t5-bias"
    title = "T5 bucketed relative bias"

    def __init__(
        self,
        config,
        relative_buckets: int = 32,
        relative_max_distance: int = 128,
        cls_buckets: bool = False,
    ) -> None:
        super().__init__()
        self.num_buckets = relative_buckets
        self.max_distance = relative_max_distance
        self.cls_buckets = cls_buckets
        self.bias = nn.Embedding(self.num_buckets + int(cls_buckets), config.num_attention_heads)

    def buckets(self, positions: torch.Tensor) -> torch.Tensor:
        buckets = t5_buckets(relative_offsets(positions), self.num_buckets, self.max_distance)
        if self.cls_buckets:
            n = positions.shape[-1]
            rows = torch.arange(n, device=positions.device)
            first_row = (rows == 0).unsqueeze(-1)  # [n, 1]
            first_col = (rows == 0).unsqueeze(0)  # [1, n]
            buckets = torch.where(first_col, self.num_buckets, buckets)
            buckets = torch.where(first_row, self.num_buckets // 2, buckets)
        return buckets

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        return self.bias(self.buckets(positions)).permute(0, 3, 1, 2)


@register_pe(
    "alibi",
    version=1,
    variant=False,
    claims=("content-free", "translation-invariant", "symmetric"),
)
class AlibiBias(LogitTerm):
    """-m_h |i - j|: fixed slopes per head, no parameters."""

    term = "alibi-bias"
    title = "ALiBi linear bias"

    def __init__(self, config) -> None:
        super().__init__()
        self.heads = config.num_attention_heads

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        slopes = alibi_slopes(self.heads).to(positions.device)
        distance = relative_offsets(positions).abs().unsqueeze(1).float()  # [B, 1, n, n]
        return -slopes.view(1, -1, 1, 1) * distance
