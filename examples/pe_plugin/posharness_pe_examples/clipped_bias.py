from torch import nn

from posharness.pe import LogitTerm, register_pe, relative_offsets


@register_pe("clipped-bias", defaults={"max_distance": 16})
class ClippedBias(LogitTerm):
    """A learned scalar per head and relative distance k = j - i, clipped to [-16, 16]."""

    def __init__(self, config, max_distance=16):
        super().__init__()
        self.max_distance = max_distance
        self.bias = nn.Embedding(2 * max_distance + 1, config.num_attention_heads)

    def forward(self, positions):
        k = relative_offsets(positions).clamp(-self.max_distance, self.max_distance)
        return self.bias(k + self.max_distance).permute(0, 3, 1, 2)
