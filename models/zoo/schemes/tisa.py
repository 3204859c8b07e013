"""Translation-invariant self-attention (Wennberg & Henter 2021): Toeplitz kernel scores."""

from __future__ import annotations

import torch
from torch import nn
from transformers import initialization as init

from posharness.pe import LogitTerm, register_pe, relative_offsets


@register_pe(
    "tisa",
    defaults={"tisa_kernels": 5},
    version=1,
    variant=False,
    claims=("content-free", "translation-invariant"),
)
class TisaScore(LogitTerm):
    """F[i, j] = f_h(j - i), f(k) = sum_s a_s exp(-|b_s| (k - c_s)^2) (their Eq. 5), per layer.

    The paper's convention k = j - i (their released code uses i - j - 1; we follow the
    paper). f is evaluated once per distinct offset and gathered, so every entry with the
    same j - i is the same number. 3 S H parameters per layer. Initialisation for training
    from scratch (the paper regresses onto a pretrained model instead): a ~ N(0, std),
    |b| = 0.5, centres c spread evenly over -(S-1)/2 .. (S-1)/2.
    """

    term = "tisa-toeplitz"
    title = "TISA"
    per_layer = True

    def __init__(self, config, tisa_kernels: int = 5) -> None:
        super().__init__()
        shape = (config.num_attention_heads, tisa_kernels)
        self.amplitude = nn.Parameter(torch.zeros(shape))
        self.sharpness = nn.Parameter(torch.zeros(shape))
        self.centre = nn.Parameter(torch.zeros(shape))

    def init_weights(self, std: float) -> None:
        kernels = self.centre.shape[-1]
        centres = torch.linspace(-(kernels - 1) / 2, (kernels - 1) / 2, kernels)
        init.normal_(self.amplitude, std=std)
        init.constant_(self.sharpness, 0.5)
        init.copy_(self.centre, centres.expand_as(self.centre))

    def profile(self, offsets: torch.Tensor) -> torch.Tensor:
        """f_h(k) for offsets [K] -> [H, K]."""
        k = offsets.to(self.amplitude.dtype).view(1, 1, -1)
        a, b, c = (t.unsqueeze(-1) for t in (self.amplitude, self.sharpness, self.centre))
        return (a * torch.exp(-b.abs() * (k - c) ** 2)).sum(dim=1)

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        offsets = relative_offsets(positions)
        reach = int(offsets.abs().max()) if offsets.numel() else 0
        grid = torch.arange(-reach, reach + 1, device=positions.device)
        table = self.profile(grid)  # [H, 2 reach + 1]
        return table[:, offsets + reach].permute(1, 0, 2, 3)
