"""xPos (Sun et al. 2022, "A Length-Extrapolatable Transformer", §3.2): rotary embeddings
whose queries and keys are also scaled, the query at position n by zeta^(n/B) and the key at
position m by zeta^(-m/B), per rotated pair i with zeta_i = (2i/d + gamma) / (1 + gamma),
gamma = 0.4 and B = 512 (their released code's ``scale_base``). The logit of (n, m) is
then RoPE's times zeta^((n - m)/B): below 1 for a key behind the query (n > m), growing for
one ahead. Sun et al. design it for causal attention (n >= m always); in a bidirectional
encoder the score is asymmetric in the offset, which is the point of having it here: a
query/key transform that treats the two sides differently (``role``).

Positional mode, as for every query/key transform, keeps the transformed biases alone:
T(b_Q, query) R T(b_K, key), content-free and not exact.
"""

from __future__ import annotations

import torch

from posharness.models.zoo.schemes.rotary import Rotary
from posharness.pe import register_pe, rotate, rotation_tables

_OPTIONS = {"rope_theta": 10000.0, "xpos_gamma": 0.4, "xpos_scale_base": 512.0}


@register_pe("xpos", defaults=_OPTIONS, version=1, variant=False, claims=("translation-invariant",))
class XPos(Rotary):
    """RoPE (the rotate-half layout of ``rope``) times zeta^(+n/B) on queries and
    zeta^(-m/B) on keys."""

    term = "xpos"
    title = "xPos (rotary with an extrapolation scale)"

    def __init__(
        self,
        config,
        rope_theta: float = 10000.0,
        xpos_gamma: float = 0.4,
        xpos_scale_base: float = 512.0,
    ) -> None:
        super().__init__(config, rope_theta)
        self.gamma, self.scale_base = float(xpos_gamma), float(xpos_scale_base)

    @classmethod
    def check_config(cls, config) -> str | None:
        options = config.pe_options or {}
        if float(options.get("xpos_gamma", 0.4)) <= 0:
            return "xpos_gamma must be positive (Sun et al. use 0.4): pick a value above 0"
        if float(options.get("xpos_scale_base", 512.0)) <= 0:
            return "xpos_scale_base must be positive (Sun et al. use 512): pick a value above 0"
        return super().check_config(config)

    def zeta(self, head_size: int, device: torch.device) -> torch.Tensor:
        """zeta_i = (2i/d + gamma) / (1 + gamma) for each rotated pair i, [d/2]."""
        pairs = torch.arange(head_size // 2, dtype=torch.float32, device=device)
        return (2 * pairs / head_size + self.gamma) / (1 + self.gamma)

    def scale(self, positions: torch.Tensor, head_size: int, role: str) -> torch.Tensor:
        """zeta^(+-p/B) [B or 1, 1, n, d] in the rotate-half layout (pair i at i and i + d/2)."""
        sign = 1.0 if role == "query" else -1.0
        exponent = sign * positions.to(torch.float32).unsqueeze(-1) / self.scale_base
        scale = self.zeta(head_size, positions.device) ** exponent  # [B, n, d/2]
        return torch.cat([scale, scale], dim=-1).unsqueeze(1)

    def forward(self, x: torch.Tensor, positions: torch.Tensor, role: str) -> torch.Tensor:
        head_size = x.shape[-1]
        cos, sin = rotation_tables(positions, self.frequencies(head_size, positions.device))
        return rotate(x, cos, sin) * self.scale(positions, head_size, role).to(x.dtype)
