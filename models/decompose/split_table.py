"""Which mode split decomposes which transformers ``model_type``.

The table of docs/modes.md, "Families and model types".

Lazy ``module:Class`` strings so that loading one split never imports the others.
"""

from __future__ import annotations

from importlib import import_module

from posharness.models.decompose.mode_split import ModeSplit

_ABSOLUTE = "absolute:AbsoluteSplit"
SPLIT_BY_MODEL_TYPE = {
    "bert": _ABSOLUTE,
    "roberta": _ABSOLUTE,
    "xlm-roberta": _ABSOLUTE,
    "camembert": _ABSOLUTE,
    "electra": _ABSOLUTE,
    "albert": _ABSOLUTE,
    "distilbert": _ABSOLUTE,
    "modernbert": "modernbert:ModernBertSplit",
    "roformer": "roformer:RoFormerSplit",
    "deberta": "deberta:DebertaSplit",
    "deberta-v2": "deberta:DebertaSplit",
    "xlnet": "xlnet:XLNetSplit",
    "t5": "t5:T5Split",
    "mt5": "t5:T5Split",
    "mpnet": "mpnet:MPNetSplit",
}


def split_for(model_type: str) -> ModeSplit | None:
    """A fresh mode split for ``model_type``, or None where no split is implemented."""
    target = SPLIT_BY_MODEL_TYPE.get(model_type)
    if target is None:
        return None
    module_name, _, class_name = target.partition(":")
    module = import_module(f"posharness.models.decompose.{module_name}")
    return getattr(module, class_name)()


def supported_model_types() -> list[str]:
    return sorted(SPLIT_BY_MODEL_TYPE)
