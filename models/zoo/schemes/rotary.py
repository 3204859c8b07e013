"""Rotary position embedding (Su et al. 2021) as a query/key transform."""

from __future__ import annotations

import torch

from posharness.pe import QueryKeyTransform, register_pe, rotate, rotation_tables


@register_pe(
    "rope",
    defaults={"rope_theta": 10000.0},
    version=1,
    variant=False,
    claims=("translation-invariant", "symmetric"),
)
class Rotary(QueryKeyTransform):
    """x R_p: dimension m paired with m + d/2 turns by p * theta^(-2m/d) (the Hugging Face
    rotate-half layout). A variant changes ``frequencies`` only."""

    term = "rotation"
    title = "RoPE"

    def __init__(self, config, rope_theta: float = 10000.0) -> None:
        super().__init__()
        self.theta = rope_theta

    @classmethod
    def check_config(cls, config) -> str | None:
        if config.head_size % 2:
            return (
                f"rope needs an even head size, got {config.head_size}: change hidden_size or heads"
            )
        return None

    def frequencies(self, head_size: int, device: torch.device) -> torch.Tensor:
        """Angular frequency of each rotated pair, [d/2]."""
        half = head_size // 2
        return self.theta ** (-torch.arange(half, dtype=torch.float32, device=device) / half)

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        cos, sin = rotation_tables(positions, self.frequencies(x.shape[-1], positions.device))
        return rotate(x, cos, sin)
