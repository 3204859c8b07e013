"""No positional encoding (NoPE): attention sees a bag of words, up to the [CLS] token."""

from __future__ import annotations

from posharness.pe import NoPositions, register_pe


@register_pe("nope", version=1, variant=False)
class NoPE(NoPositions):
    """No positional information at all."""

    title = "no positional encoding"
