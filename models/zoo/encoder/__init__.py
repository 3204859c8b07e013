"""The native positional-encoding zoo: one BERT-style encoder, any registered positional scheme.

Its self-attention computes the contextual term gamma and the positional term delta
separately (Chen et al. 2023 Eq. 4), so every scheme runs in the three attention modes
with a documented split (modes.py). The family is registered with the transformers Auto
classes at import, so checkpoints load with ``AutoModel*.from_pretrained``::

    from posharness.models.zoo.encoder import PEForMaskedLM, config_for
    model = PEForMaskedLM(config_for("tupe-r", size="mini", vocab_size=30522))
    model.set_attention_mode("positional")
"""

from __future__ import annotations

from transformers import (
    AutoConfig,
    AutoModel,
    AutoModelForMaskedLM,
    AutoModelForSequenceClassification,
)

from posharness.models.zoo.encoder.attention import LayerTerms
from posharness.models.zoo.encoder.attenuation import attenuation_matrix, fit_attenuation
from posharness.models.zoo.encoder.card import pe_card, positional_parameter_count
from posharness.models.zoo.encoder.config import SIZES, PEConfig
from posharness.models.zoo.encoder.heads import PEForMaskedLM, PEForSequenceClassification
from posharness.models.zoo.encoder.modeling import PEModel, PEPreTrainedModel
from posharness.models.zoo.encoder.modes import mode_support
from posharness.models.zoo.encoder.presets import NAMED_MODELS, config_for

AutoConfig.register(PEConfig.model_type, PEConfig, exist_ok=True)
AutoModel.register(PEConfig, PEModel, exist_ok=True)
AutoModelForMaskedLM.register(PEConfig, PEForMaskedLM, exist_ok=True)
AutoModelForSequenceClassification.register(PEConfig, PEForSequenceClassification, exist_ok=True)

__all__ = [
    "NAMED_MODELS",
    "SIZES",
    "LayerTerms",
    "PEConfig",
    "PEForMaskedLM",
    "PEForSequenceClassification",
    "PEModel",
    "PEPreTrainedModel",
    "attenuation_matrix",
    "config_for",
    "fit_attenuation",
    "mode_support",
    "pe_card",
    "positional_parameter_count",
]
