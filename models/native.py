"""Every native PE zoo name as a registered model (``posharness list models`` shows them).

Registration stays light: the names are listed here and the zoo (torch, transformers)
is imported only when one of them is loaded. A test keeps this list equal to the zoo's
``NAMED_MODELS``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from posharness.plugins import register_model

if TYPE_CHECKING:
    from posharness.model_spec import LoadOptions
    from posharness.models.native_adapter import NativePEAdapter

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


class ZooModel:
    """A zoo scheme: NAME@CHECKPOINT, or NAME with --model-arg init=random [size= seed=]."""

    family = "native PE zoo"
    modes = "both, contextual, positional"

    def __init__(self, name: str) -> None:
        self.name = name
        self.__qualname__ = f"ZooModel({name})"
        # `posharness list models` shows the first docstring line of each entry
        self.__doc__ = f"{ZOO_MODELS[name]}. Use {name}@CHECKPOINT or --model-arg init=random."
        if name == "nope":
            self.modes = "both, contextual"

    def __call__(self, argument: str | None, options: LoadOptions) -> NativePEAdapter:
        from posharness.models.native_adapter import build_native

        return build_native(self.name, argument, options)


for _name in ZOO_NAMES:
    register_model(_name)(ZooModel(_name))
