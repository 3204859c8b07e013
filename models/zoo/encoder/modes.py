"""Which attention modes a zoo configuration supports, and under what name.

``mode_support(config)[mode] = (exact, definition, content_free_delta)``, derived from the
registered scheme's kind by ``posharness.pe.split.mode_split`` (never declared by its
author); the definition names travel with results (docs/modes.md). The term's name is the
scheme's ``term`` (its registered name when it sets none).
"""

from __future__ import annotations

from posharness.models.zoo.encoder.config import PEConfig, scheme_class
from posharness.models.zoo.encoder.schemes import content_logits, kind
from posharness.pe import registry
from posharness.pe.split import mode_split, split_of


def mode_support(config: PEConfig) -> dict[str, tuple[bool, str, bool | None]]:
    """Mode -> (exact, definition, content_free_delta) for ``config``'s scheme."""
    scheme = scheme_class(config.scheme)
    term = getattr(scheme, "term", "") or config.scheme
    scheme_kind = kind(config)
    input_positions = config.absolute != "none" and scheme_kind != registry.INPUT_EMBEDDING
    if not content_logits(config):
        # BERT-only-p: every forward is the positional mode, so it is exact and there is no
        # content term to keep alone.
        return {"both": (True, "as-trained", None), "positional": (True, "pp-term", True)}
    if scheme_kind == registry.COMBINATION:
        return split_of(scheme, config.scheme, input_positions)
    return mode_split(scheme_kind, term, input_positions)
