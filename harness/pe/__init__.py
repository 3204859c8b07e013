"""The public API for positional encodings: declare a scheme, name models, check them.

A new positional encoding is one small class with a decorator (docs/new_pe.md)::

    import torch
    from torch import nn
    from posharness.pe import LogitTerm, register_pe, relative_offsets

    @register_pe("clipped-bias", defaults={"max_distance": 16})
    class ClippedBias(LogitTerm):
        \"\"\"A learned scalar per head and clipped relative distance.\"\"\"

        def __init__(self, config, max_distance=16):
            super().__init__()
            self.max_distance = max_distance
            self.bias = nn.Embedding(2 * max_distance + 1, config.num_attention_heads)

        def forward(self, positions):
            k = relative_offsets(positions).clamp(-self.max_distance, self.max_distance)
            return self.bias(k + self.max_distance).permute(0, 3, 1, 2)

The kind (here a logit term from positions) decides the mode split and its exactness;
the card's parameter count is measured from the module; ``posharness check-pe NAME``
verifies the split numerically, and each property the scheme claims of its term
(``register_pe(..., claims=("content-free", "translation-invariant"))``, names in
``CLAIMS``, each also as its negation, ``not-symmetric``). A scheme of several kinds is a
``Combination`` of registered schemes, each applied where its kind belongs
(``posharness.pe.combination``). Every built-in scheme is declared the same way
(``posharness/models/zoo/schemes/``). The registration names load without torch; the
base classes and position arithmetic load on first use.
"""

from typing import TYPE_CHECKING

from posharness.base.lazy_names import lazy_getattr as _lazy_getattr
from posharness.pe.registry import (
    CLAIMS,
    KINDS,
    Declaration,
    Variant,
    declaration,
    on_variant,
    register_pe,
    register_variant,
    scheme,
    scheme_names,
    variant,
    variants,
)

_LAZY = {
    "PositionalEncoding": "posharness.pe.kinds",
    "Combination": "posharness.pe.kinds",
    "InputEmbedding": "posharness.pe.kinds",
    "LogitTerm": "posharness.pe.kinds",
    "ContentLogitTerm": "posharness.pe.kinds",
    "UntiedProduct": "posharness.pe.kinds",
    "QueryKeyTransform": "posharness.pe.kinds",
    "PositionalAttention": "posharness.pe.kinds",
    "NoPositions": "posharness.pe.kinds",
    "relative_offsets": "posharness.pe.positions",
    "t5_buckets": "posharness.pe.positions",
    "alibi_slopes": "posharness.pe.positions",
    "rotary_tables": "posharness.pe.positions",
    "rotation_tables": "posharness.pe.positions",
    "rotate": "posharness.pe.positions",
    "sinusoidal_table": "posharness.pe.positions",
    "mode_split": "posharness.pe.split",
    "combined_split": "posharness.pe.split",
}

if TYPE_CHECKING:
    from posharness.pe.kinds import (
        Combination,
        ContentLogitTerm,
        InputEmbedding,
        LogitTerm,
        NoPositions,
        PositionalAttention,
        PositionalEncoding,
        QueryKeyTransform,
        UntiedProduct,
    )
    from posharness.pe.positions import (
        alibi_slopes,
        relative_offsets,
        rotary_tables,
        rotate,
        rotation_tables,
        sinusoidal_table,
        t5_buckets,
    )
    from posharness.pe.split import combined_split, mode_split


__getattr__ = _lazy_getattr(__name__, _LAZY, globals())


__all__ = [
    "CLAIMS",
    "KINDS",
    "Combination",
    "ContentLogitTerm",
    "Declaration",
    "InputEmbedding",
    "LogitTerm",
    "NoPositions",
    "PositionalAttention",
    "PositionalEncoding",
    "QueryKeyTransform",
    "UntiedProduct",
    "Variant",
    "alibi_slopes",
    "combined_split",
    "declaration",
    "mode_split",
    "on_variant",
    "register_pe",
    "register_variant",
    "relative_offsets",
    "rotary_tables",
    "rotate",
    "rotation_tables",
    "scheme",
    "scheme_names",
    "sinusoidal_table",
    "t5_buckets",
    "variant",
    "variants",
]
