import torch
from torch import nn
from transformers import initialization as init

from posharness.pe import InputEmbedding, register_pe, sinusoidal_table


@register_pe("ape-sin-init", defaults={"scale": 1.0}, version="1")
class SinusoidInitAbsolute(InputEmbedding):
    """A learned table of absolute positions that starts as scaled sinusoids."""

    absolute_name = "sin-init"
    bounded = True

    def __init__(self, config, scale=1.0):
        super().__init__(config)
        self.scale = scale
        self.weight = nn.Parameter(self.sinusoids())

    def sinusoids(self):
        positions = torch.arange(self.max_positions).unsqueeze(0)
        return self.scale * sinusoidal_table(positions, self.size)[0]

    def init_weights(self, std):
        init.copy_(self.weight, self.sinusoids())

    def forward(self, positions):
        return nn.functional.embedding(positions, self.weight)
