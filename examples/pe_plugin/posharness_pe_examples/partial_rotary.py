import torch

from posharness.pe import QueryKeyTransform, register_pe, rotate, rotation_tables


@register_pe("p-rope", defaults={"fraction": 0.75, "theta": 10000.0})
class PartialRotary(QueryKeyTransform):
    """RoPE that keeps only its fastest `fraction` of frequencies: the other pairs never turn."""

    def __init__(self, config, fraction=0.75, theta=10000.0):
        super().__init__()
        self.fraction, self.theta = fraction, theta

    def forward(self, x, positions):
        half = x.shape[-1] // 2
        frequencies = self.theta ** (-torch.arange(half, device=x.device) / half)
        frequencies[round(self.fraction * half) :] = 0.0
        cos, sin = rotation_tables(positions, frequencies)
        return rotate(x, cos, sin)
