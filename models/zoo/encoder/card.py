"""The PE card of a configuration, in the survey's terms (Dufter et al. 2022, Table 1).

``positional_parameters`` is counted from the position modules the model would build
(instantiated on the meta device: no memory, no initialisation), so it cannot drift from
the code. What is counted, per scheme:

* learned absolute: the table, n x D (the embedding LayerNorm is shared with the words and
  not counted); sinusoidal, rope, alibi, nope: 0;
* t5: buckets x H (one table shared by all layers);
* shaw: (2k + 1) x head size per layer, x L;
* tisa: 3 S H per layer, 3 S H L in all;
* attenuated / sequence: 2 H L (w, s per head), 2 L (per layer) or 0 (fixed);
* TUPE: table n D + its LayerNorm 2 D + U^Q, U^K 2 D^2 + theta vectors 2 D (not with
  tie_cls) + for TUPE-R (buckets + 1) x H (buckets x H with tie_cls).
"""

from __future__ import annotations

import torch

from posharness.contracts.adapter import PECard
from posharness.models.zoo.encoder.config import PEConfig
from posharness.models.zoo.encoder.schemes import build_layer_score, build_shared

_FAMILIES = {
    "rope": ("RoPE", "relative", "attention matrix (rotates q, k)"),
    "alibi": ("ALiBi linear bias", "relative", "attention matrix"),
    "t5": ("T5 bucketed relative bias", "relative", "attention matrix"),
    "shaw": ("Shaw relative keys (clipped)", "relative", "attention matrix"),
    "tupe-a": ("TUPE-A", "absolute", "attention matrix"),
    "tupe-r": ("TUPE-R", "both", "attention matrix"),
    "tisa": ("TISA", "relative", "attention matrix"),
    "attenuated": ("attenuated (BERT-A*)", "relative", "attention matrix"),
    "sequence": ("attenuated, sequence CA(PA(X))", "relative", "positional attention"),
}
_ABSOLUTE = {"learned": "learned absolute", "sinusoidal": "sinusoidal absolute"}


def positional_parameter_count(config: PEConfig) -> int:
    """Parameters that encode position, counted from freshly built modules (meta device)."""
    with torch.device("meta"):
        count = 0
        if config.absolute == "learned":
            count += config.max_position_embeddings * config.hidden_size
        shared = build_shared(config)
        if shared is not None:
            count += sum(p.numel() for p in shared.parameters())
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
    scheme, absolute = config.scheme, config.absolute
    count = positional_parameter_count(config)
    unbounded = not config.bounded
    if scheme == "nope":
        return PECard("no positional encoding", "none", "none", False, False, 0, True)
    if scheme in ("ape", "sinusoidal"):
        learned = absolute == "learned"
        return PECard(
            _ABSOLUTE[absolute], "absolute", "input embedding", False, learned, count, unbounded
        )
    family, reference, injection = _FAMILIES[scheme]
    learnable = count > 0
    if absolute != "none":
        family = f"{_ABSOLUTE[absolute]} + {family}"
        reference = "both"
        injection = f"input embedding + {injection}"
        learnable = learnable or absolute == "learned"
    return PECard(family, reference, injection, True, learnable, count, unbounded)
