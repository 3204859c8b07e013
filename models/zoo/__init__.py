"""Every zoo model name as a registered model (``posharness list models`` shows them).

Each PE variant — the built-in ones (variants.py) and any a plugin registers with
``posharness.pe.register_variant`` or ``register_pe`` — becomes a model name here, so a
plugin's PE is run, pretrained and listed like a built-in one. Registration stays light:
the zoo (torch, transformers) is imported only when a model is loaded. Installed
``posharness.pe`` plugins are imported now, so that their names are known to every command.
"""

from __future__ import annotations

import posharness.models.zoo.variants  # noqa: E402,F401  (the built-in names)
from posharness.contracts.model_spec import ModelEntry
from posharness.pe import Variant, on_variant
from posharness.plugins import models, positional_encodings

_BOTH_MODES = "both, contextual, positional"
POSITION_FREE_SCHEMES = ("nope",)  # the built-in schemes without a positional mode
# Built-in schemes whose logits have no content term (BERT-only-p): no contextual mode.
POSITIONS_ONLY_SCHEMES = ("positions-only",)


def _add_model(variant: Variant, origin: str, source: str) -> None:
    """Register ``variant`` as a model (the zoo's adapter builds it)."""
    if variant.name in models._entries:  # noqa: SLF001 (re-registering the same name)
        return
    modes = (
        "both, contextual"
        if variant.scheme in POSITION_FREE_SCHEMES
        else "both, positional"
        if variant.scheme in POSITIONS_ONLY_SCHEMES
        else _BOTH_MODES
    )
    summary = variant.description or f"{variant.scheme} positional encoding"
    with models.origin(origin, source):
        models.add(
            variant.name,
            ModelEntry(
                build="posharness.models.zoo.adapter:build_native",
                family="native PE zoo",
                modes=modes,
                description=f"{summary}. Use {variant.name}@CHECKPOINT or --model-arg init=random.",
                argument=variant.name,
                check="posharness.models.zoo.checkpoints:check_native",
                default_checkpoint="posharness.models.zoo.checkpoints:default_checkpoint",
            ),
        )


on_variant(_add_model)
positional_encodings.load_plugins()
