"""Which family splits which transformers ``model_type``.

The table of docs/modes.md, "Families and model types".

Lazy ``module:Class`` strings so that loading one family never imports the others.
"""

from __future__ import annotations

from importlib import import_module

from posharness.models.decompose.family import Family

_ABSOLUTE = "absolute:AbsoluteFamily"
FAMILY_BY_MODEL_TYPE = {
    "bert": _ABSOLUTE,
    "roberta": _ABSOLUTE,
    "xlm-roberta": _ABSOLUTE,
    "camembert": _ABSOLUTE,
    "electra": _ABSOLUTE,
    "albert": _ABSOLUTE,
    "distilbert": _ABSOLUTE,
    "modernbert": "modernbert:ModernBertFamily",
    "roformer": "roformer:RoFormerFamily",
    "deberta": "deberta:DebertaFamily",
    "deberta-v2": "deberta:DebertaFamily",
    "xlnet": "xlnet:XLNetFamily",
    "t5": "t5:T5Family",
    "mt5": "t5:T5Family",
    "mpnet": "mpnet:MPNetFamily",
}


def family_for(model_type: str) -> Family | None:
    """A fresh family object for ``model_type``, or None where no split is implemented."""
    target = FAMILY_BY_MODEL_TYPE.get(model_type)
    if target is None:
        return None
    module_name, _, class_name = target.partition(":")
    module = import_module(f"posharness.models.decompose.{module_name}")
    return getattr(module, class_name)()


def supported_model_types() -> list[str]:
    return sorted(FAMILY_BY_MODEL_TYPE)
