"""Positional encodings of Hugging Face families as PE cards, in the survey's terms
(Dufter et al. 2022, Table 1): catalogued by model type where the PE is not a table
added at the input, read off the position table where it is."""

from __future__ import annotations

from typing import Any

from posharness.contracts.adapter import PECard


# Families whose PE is not a learned table added at the input, in the survey's terms
# (Dufter et al. 2022, Table 1). Parameter counts vary by checkpoint and are left open.
def _card(family: str, reference: str, injection: str, learnable: bool) -> PECard:
    return PECard(family, reference, injection, True, learnable, None, True)


_ROPE = _card("RoPE", "relative", "attention matrix (rotates q, k)", learnable=False)
_T5 = _card("T5 bucketed relative bias", "relative", "attention matrix", learnable=True)
PE_CARDS = {
    "t5": _T5,
    "mt5": _T5,
    "modernbert": _ROPE,
    "roformer": _ROPE,
    "deberta": _card("DeBERTa disentangled relative", "relative", "attention matrix", True),
    "deberta-v2": _card("DeBERTa disentangled relative", "relative", "attention matrix", True),
    "xlnet": _card("Transformer-XL sinusoidal relative", "relative", "attention matrix", True),
    "mpnet": _card(
        "learned absolute + T5-style relative bias",
        "both",
        "input embedding + attention matrix",
        True,
    ),
}


def pe_card_for(model_type: str, position_table: Any, learned: bool) -> PECard:
    """The card of a loaded model: catalogued, else its input position table, else unknown."""
    catalogued = PE_CARDS.get(model_type)
    if catalogued is not None:
        return catalogued
    if position_table is not None:
        return PECard(
            family="learned absolute" if learned else "sinusoidal absolute",
            reference_point="absolute",
            injection="input embedding",
            recurring=False,
            learnable=learned,
            positional_parameters=int(position_table.numel()) if learned else 0,
            unbounded_length=False,
        )
    return PECard(
        family=f"{model_type} (not catalogued)",
        reference_point="unknown",
        injection="unknown",
        recurring=False,
        learnable=True,
        positional_parameters=None,
        unbounded_length=False,
    )
