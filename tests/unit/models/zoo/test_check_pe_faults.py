"""check-pe on structural faults and small terms (issue 39, part 2).

The broken schemes here are shared with test_check_pe_claims.py, which shows that each
gives exactly one failing line (``structure``); here a faithful scheme whose term is small
at BERT's initialisation is not mistaken for one that ignores positions.
"""

from __future__ import annotations

import torch
from torch import nn

from posharness.models.zoo.check import check_pe
from posharness.pe import LogitTerm, register_pe, relative_offsets
from tests.unit.models.zoo.test_check_pe import scratch  # noqa: F401  (the fixture)


class PlainTensorBias(LogitTerm):
    """A bias table held as a plain tensor attribute, not an nn.Parameter."""

    def __init__(self, config) -> None:
        super().__init__()
        self.bias = torch.randn(9, config.num_attention_heads)

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        k = relative_offsets(positions).clamp(-4, 4) + 4
        return nn.functional.embedding(k, self.bias.to(positions.device)).permute(0, 3, 1, 2)


class WrongShapeBias(LogitTerm):
    """Returns [B, n, n, H + 1]: neither heads first nor the right count."""

    def __init__(self, config) -> None:
        super().__init__()
        self.bias = nn.Embedding(9, config.num_attention_heads + 1)

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        return self.bias(relative_offsets(positions).clamp(-4, 4) + 4).permute(0, 3, 1, 2)


class SmallMlpBias(LogitTerm):
    """A FIRE-like bias: an MLP of the offset left at BERT's initialisation (std 0.02, zero
    biases), so its term is tiny but real."""

    def __init__(self, config) -> None:
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, config.num_attention_heads)
        )

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        k = relative_offsets(positions).unsqueeze(-1).to(self.mlp[0].weight.dtype)
        return self.mlp(torch.log1p(k.abs())).permute(0, 3, 1, 2)


def outcomes(name: str, scheme: type) -> dict[str, tuple[bool, str]]:
    register_pe(name)(scheme)
    return {o.name: (o.passed, o.detail) for o in check_pe(name)}


def test_a_faithful_small_term_at_berts_initialisation_uses_positions(scratch) -> None:  # noqa: F811
    result = outcomes("t-small-mlp", SmallMlpBias)
    assert result["positions"][0], result["positions"][1]
