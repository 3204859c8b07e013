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

ZOO_NAMES = (
    "bert-a",
    "bert-r",
    "tupe-a",
    "tupe-a-tie-cls",
    "tupe-r",
    "tisa",
    "tisa-ape",
    "bert-a-star",
    "bert-a-star-s",
    "bert-a-star-fixed",
    "bert-a-star-seq",
    "rope",
    "alibi",
    "sinusoidal",
    "shaw",
    "t5",
    "nope",
)


class ZooModel:
    """A zoo scheme: NAME@CHECKPOINT, or NAME with --model-arg init=random [size= seed=]."""

    family = "native PE zoo"
    modes = "both, contextual, positional"

    def __init__(self, name: str) -> None:
        self.name = name
        self.__qualname__ = f"ZooModel({name})"

    def __call__(self, argument: str | None, options: LoadOptions) -> NativePEAdapter:
        from posharness.models.native_adapter import build_native

        return build_native(self.name, argument, options)


for _name in ZOO_NAMES:
    register_model(_name)(ZooModel(_name))
