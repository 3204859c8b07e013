"""Every native PE zoo name as a registered model (``posharness list models`` shows them).

Registration stays light: the names are listed here and the zoo (torch, transformers)
is imported only when one of them is loaded. A test keeps this list equal to the zoo's
``NAMED_MODELS``.
"""

from __future__ import annotations

from posharness.contracts.model_spec import ModelEntry
from posharness.plugins import models

ZOO_MODELS = {
    "bert-a": "BERT-A: learned absolute positions added at the input",
    "bert-r": "BERT-R: learned absolute positions + T5 bucketed relative bias",
    "tupe-a": "TUPE-A: untied positional attention with the [CLS] reset",
    "tupe-a-tie-cls": "TUPE-A without the [CLS] reset",
    "tupe-r": "TUPE-R: TUPE-A + T5 bucketed relative bias",
    "tisa": "TISA: Toeplitz kernel scores, no absolute positions",
    "tisa-ape": "TISA on top of learned absolute positions",
    "bert-a-star": "BERT-A*: attenuated encoding (Eq. 8), w and s learnable per head",
    "bert-a-star-s": "BERT-A*-s: attenuated encoding shared within each layer",
    "bert-a-star-fixed": "attenuated encoding with fixed w and s",
    "bert-a-star-seq": "BERT-A*-Seq: CA(PA(X)), positional then content attention",
    "rope": "rotary position embedding on queries and keys",
    "alibi": "ALiBi linear distance biases",
    "sinusoidal": "fixed sinusoidal positions added at the input",
    "shaw": "Shaw et al. relative key embeddings (clipped at 16)",
    "t5": "T5 bucketed relative bias, no absolute positions",
    "nope": "no positional information at all",
}
ZOO_NAMES = tuple(ZOO_MODELS)
_BOTH_MODES = "both, contextual, positional"

for _name, _summary in ZOO_MODELS.items():
    models.add(
        _name,
        ModelEntry(
            build="posharness.models.zoo.adapter:build_native",
            family="native PE zoo",
            modes="both, contextual" if _name == "nope" else _BOTH_MODES,
            description=f"{_summary}. Use {_name}@CHECKPOINT or --model-arg init=random.",
            argument=_name,
            check="posharness.models.zoo.checkpoints:check_native",
        ),
    )
