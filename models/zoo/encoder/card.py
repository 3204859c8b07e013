"""The PE card of a configuration, in the survey's terms (Dufter et al. 2022, Table 1).

Read from the registered scheme: its kind gives the injection and whether it recurs in
every layer, its class the family title and reference point. ``positional_parameters`` is
counted from the modules the model would build (instantiated on the meta device: no
memory, no initialisation) — every parameter of the scheme's modules and of the input
positions — so it is measured, never declared, and cannot drift from the code
(``posharness check-pe`` verifies that each counted parameter moves the positional term).
"""

from __future__ import annotations

import torch

from posharness.contracts.adapter import PECard
from posharness.models.zoo.encoder.config import PEConfig, absolute_class, scheme_class
from posharness.models.zoo.encoder.schemes import (
    build_input_positions,
    build_layer_score,
    build_shared,
    build_shared_transform,
    kind,
)
from posharness.pe import registry


def positional_parameter_count(config: PEConfig) -> int:
    """Parameters that encode position, counted from freshly built modules (meta device)."""
    with torch.device("meta"):
        count = 0
        shared = (build_input_positions(config), build_shared(config))
        for module in (*shared, build_shared_transform(config)):
            if module is not None:
                count += sum(p.numel() for p in module.parameters())
        layer = build_layer_score(config)
        if layer is not None:
            count += config.num_hidden_layers * sum(p.numel() for p in layer.parameters())
    return count


def pe_card(config: PEConfig) -> PECard:
    """Family, reference point, injection, recurrence, learnability, size and boundedness.

    ``unbounded_length`` says whether the model accepts inputs longer than
    ``max_position_embeddings`` (``PEModel.max_length is None``); the survey would call the
    clipped schemes (t5, shaw) bounded, since distant positions share a value.
    """
    scheme = scheme_class(config.scheme)
    count = positional_parameter_count(config)
    unbounded = not config.bounded
    title = getattr(scheme, "title", "") or config.scheme
    if kind(config) == registry.POSITION_FREE:
        return PECard(title, "none", "none", False, False, 0, True)
    if kind(config) == registry.INPUT_EMBEDDING:
        return PECard(title, "absolute", "input embedding", False, count > 0, count, unbounded)
    reference = getattr(scheme, "reference", "relative")
    injection = getattr(scheme, "injection", "attention matrix")
    if config.absolute != "none":
        absolute = absolute_class(config.absolute)
        title = f"{absolute.title or registry.declaration(absolute).name} + {title}"
        reference = "both"
        injection = f"input embedding + {injection}"
    return PECard(title, reference, injection, True, count > 0, count, unbounded)
