"""The source of a plugin PE that tests write to a file and edit: a learned bias per head
and clipped offset, times SCALE, so an edit of SCALE changes the model's code identity
and its numbers while a comment changes neither."""

from __future__ import annotations

SCALED_BIAS = '''"""A learned bias per head and clipped offset, scaled."""

from torch import nn

from posharness.pe import LogitTerm, register_pe, relative_offsets

SCALE = 1.0


@register_pe("@@NAME@@", defaults={"max_distance": 4})
class ScaledBias(LogitTerm):
    def __init__(self, config, max_distance=4):
        super().__init__()
        self.max_distance = max_distance
        self.bias = nn.Embedding(2 * max_distance + 1, config.num_attention_heads)

    def forward(self, positions):
        k = relative_offsets(positions).clamp(-self.max_distance, self.max_distance)
        return SCALE * self.bias(k + self.max_distance).permute(0, 3, 1, 2)
'''


def scaled_bias(name: str) -> str:
    """The plugin's source registering the scheme under ``name``."""
    return SCALED_BIAS.replace("@@NAME@@", name)
