"""Registered model names (the papers' variants) and ``config_for``.

Names follow the papers: BERT-A / BERT-R / TUPE-A / TUPE-R (Ke et al. 2021, Table 1),
TISA alone or on top of learned absolute positions (Wennberg & Henter 2021, Table 3),
BERT-A* / BERT-A*-s / BERT-A*-Seq (Chen et al. 2023 §3.3.2, draft §5).
"""

from __future__ import annotations

from typing import Any

from posharness.base.errors import OptionError
from posharness.models.zoo.encoder.config import SIZES, PEConfig

NAMED_MODELS: dict[str, dict[str, Any]] = {
    "bert-a": {"scheme": "ape"},
    # TUPE's BERT-R: learned absolute input positions plus the T5 bucketed relative bias.
    "bert-r": {"scheme": "t5", "absolute": "learned"},
    "tupe-a": {"scheme": "tupe-a"},
    "tupe-a-tie-cls": {"scheme": "tupe-a", "tie_cls": True},
    "tupe-r": {"scheme": "tupe-r"},
    "tisa": {"scheme": "tisa"},
    "tisa-ape": {"scheme": "tisa", "absolute": "learned"},
    "bert-a-star": {"scheme": "attenuated", "attenuation_learnable": "head"},
    "bert-a-star-s": {"scheme": "attenuated", "attenuation_learnable": "layer"},
    "bert-a-star-fixed": {"scheme": "attenuated", "attenuation_learnable": "fixed"},
    "bert-a-star-seq": {"scheme": "sequence", "attenuation_learnable": "head"},
    "rope": {"scheme": "rope"},
    "alibi": {"scheme": "alibi"},
    "sinusoidal": {"scheme": "sinusoidal"},
    "shaw": {"scheme": "shaw"},
    "t5": {"scheme": "t5"},
    "nope": {"scheme": "nope"},
}

# PEConfig's own fields plus the label fields every transformers config takes.
_OPTION_FIELDS = (frozenset(vars(PEConfig)["__annotations__"]) - {"name", "size"}) | {
    "num_labels",
    "id2label",
    "label2id",
    "problem_type",
}


def config_for(
    name: str, size: str = "mini", vocab_size: int = 30522, **overrides: Any
) -> PEConfig:
    """The configuration of registered model ``name`` at preset ``size``.

    ``overrides`` set any ``PEConfig`` field (e.g. ``max_position_embeddings=256``,
    ``attenuation_w=0.1``); an unknown field is refused rather than silently stored.
    """
    if name not in NAMED_MODELS:
        raise OptionError(f"unknown PE model {name!r}: pick one of {', '.join(NAMED_MODELS)}")
    if size not in SIZES:
        raise OptionError(f"unknown size {size!r}: pick one of {', '.join(SIZES)}")
    unknown = sorted(set(overrides) - _OPTION_FIELDS)
    if unknown:
        raise OptionError(
            f"unknown PEConfig option(s) {', '.join(unknown)}: pick from "
            f"{', '.join(sorted(_OPTION_FIELDS))}"
        )
    fields = {**SIZES[size], **NAMED_MODELS[name], "vocab_size": vocab_size, **overrides}
    return PEConfig(name=name, size=size, **fields)
