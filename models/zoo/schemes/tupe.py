"""TUPE's untied positional term (Ke et al. 2021, Eq. 8-11), computed once for all layers.

    delta_ij = reset_theta((p_i U^Q)(p_j U^K)^T / sqrt(2d) [+ b_(j-i)], i, j)

p = LayerNorm(learned table) shared by the heads; U^Q, U^K per head (one D x D matrix
each, no bias: the paper's 2 d^2) shared by the layers. The [CLS] reset (Eq. 10): the
[CLS] row, [CLS]->[CLS] included, takes theta_1, the [CLS] column of every other row
theta_2, with theta_k = (p_thetak U^Q)(p_thetak U^K)^T / sqrt(2d) per head from learnable
vectors p_thetak (layer-normed like every p, "whenever it is used"). ``tie_cls`` drops the
reset (TUPE-A^tie-cls). d is the head size, as in the released code.

TUPE-R adds the T5 bucket bias b. Eq. 11 applies the reset to the sum, which would discard
b at [CLS]; the release instead resets the absolute term and gives [CLS] buckets of its own
in b (``T5RelativeBias(cls_buckets=True)``). We follow the release, so the [CLS] row of
TUPE-R is theta_1 + b_h[cls-row bucket] and the column theta_2 + b_h[cls-column bucket].
"""

from __future__ import annotations

import math

import torch
from torch import nn
from transformers import initialization as init

from posharness.models.zoo.schemes.relative_bias import T5RelativeBias
from posharness.pe import UntiedProduct, register_pe


@register_pe(
    "tupe-a", defaults={"tie_cls": False}, version=1, variant=False, claims=("content-free",)
)
class TupeScore(UntiedProduct):
    """TUPE-A: the untied positional product with the [CLS] reset."""

    term = "tupe-untied"
    title = "TUPE-A"

    def __init__(self, config, tie_cls: bool = False, **relative: int) -> None:
        super().__init__()
        size = config.hidden_size
        self.heads = config.num_attention_heads
        self.head_size = config.head_size
        self.scale = 1.0 / math.sqrt(2 * self.head_size)
        self.tie_cls = bool(tie_cls)
        self.table = nn.Embedding(config.max_position_embeddings, size)
        self.norm = nn.LayerNorm(size, eps=config.layer_norm_eps)
        self.query = nn.Linear(size, size, bias=False)  # U^Q, all heads
        self.key = nn.Linear(size, size, bias=False)  # U^K
        if not self.tie_cls:
            self.theta = nn.Parameter(torch.zeros(2, size))  # p_theta1, p_theta2
        self.relative = (
            T5RelativeBias(config, **relative, cls_buckets=not self.tie_cls) if relative else None
        )

    def init_weights(self, std: float) -> None:
        if not self.tie_cls:
            init.normal_(self.theta, std=std)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(*x.shape[:-1], self.heads, self.head_size).transpose(-3, -2)

    def untied(self, positions: torch.Tensor) -> torch.Tensor:
        """(p_i U^Q)(p_j U^K)^T / sqrt(2d), [B or 1, H, n, n], before the reset."""
        p = self.norm(self.table(positions))
        return (
            torch.matmul(self._split(self.query(p)), self._split(self.key(p)).transpose(-1, -2))
            * self.scale
        )

    def thetas(self) -> torch.Tensor:
        """theta_1, theta_2 per head, [2, H]."""
        p = self.norm(self.theta)
        q = self._split(self.query(p).unsqueeze(0)).squeeze(0)  # [H, 2, d]
        k = self._split(self.key(p).unsqueeze(0)).squeeze(0)
        return (q * k).sum(-1).t() * self.scale

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        delta = self.untied(positions)
        if not self.tie_cls:
            n = positions.shape[-1]
            first = torch.arange(n, device=positions.device) == 0
            theta = self.thetas().to(delta.dtype).view(2, 1, -1, 1, 1)
            delta = torch.where(first.view(1, 1, 1, n), theta[1], delta)  # column of [CLS]
            delta = torch.where(first.view(1, 1, n, 1), theta[0], delta)  # row of [CLS]
        if self.relative is not None:
            delta = delta + self.relative(positions)
        return delta


@register_pe(
    "tupe-r",
    defaults={"tie_cls": False, "relative_buckets": 32, "relative_max_distance": 128},
    version=1,
    variant=False,
    claims=("content-free",),
)
class TupeRelative(TupeScore):
    """TUPE-R: TUPE-A plus the T5 bucketed relative bias."""

    term = "tupe-untied+t5-bias"
    title = "TUPE-R"
    reference = "both"

    def __init__(
        self,
        config,
        tie_cls: bool = False,
        relative_buckets: int = 32,
        relative_max_distance: int = 128,
    ) -> None:
        super().__init__(
            config,
            tie_cls,
            relative_buckets=relative_buckets,
            relative_max_distance=relative_max_distance,
        )
