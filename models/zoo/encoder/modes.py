"""Which attention modes each scheme supports, whether the split is exact, and under what name.

``mode_support(config)[mode] = (exact, definition, content_free_delta)``; the definition
names travel with results (docs/modes.md: every result records which one was used).
Exact means the logits split into gamma + delta with no residual (or, for removing input
positions, that the counterfactual is the model itself with those inputs gone).
"""

from __future__ import annotations

from posharness.models.zoo.encoder.config import PEConfig

# Attention-level schemes: (name of the term, content-free?).
_TERMS = {
    "t5": ("t5-bias", True),
    "alibi": ("alibi-bias", True),
    "tupe-a": ("tupe-untied", True),
    "tupe-r": ("tupe-untied+t5-bias", True),
    "tisa": ("tisa-toeplitz", True),
    "attenuated": ("attenuation", True),
    "shaw": ("shaw-relative-keys", False),
}


def mode_support(config: PEConfig) -> dict[str, tuple[bool, str, bool | None]]:
    """Mode -> (exact, definition, content_free_delta) for ``config``'s scheme.

    * attention-level term alone: contextual ``drop-<term>``, positional ``<term>``, exact;
    * input positions alone (ape, sinusoidal): contextual ``no-input-positions`` (exact),
      positional ``pp-term`` (content-free, not exact: the word-position cross terms are
      dropped and deeper layers see other inputs);
    * both combined (bert-r, tisa-ape, ...): contextual removes every positional input
      (``no-input-positions+drop-<term>``, exact); positional keeps only delta = the term
      + the pp-term (``<term>+pp-term``, not exact);
    * rope: contextual ``no-rotation`` (exact), positional ``bias-qk-rotation`` (b_Q R b_K,
      content-free, not exact);
    * sequence: component ablations ``bypass-pa`` / ``skip-ca``;
    * nope: contextual is the model itself; there is no positional mode.
    """
    both = (True, "as-trained", None)
    scheme = config.scheme
    absolute = config.absolute != "none"
    if scheme == "nope":
        return {"both": both, "contextual": (True, "no-positions", None)}
    if scheme == "rope":
        return {
            "both": both,
            "contextual": (True, "no-rotation", True),
            "positional": (False, "bias-qk-rotation", True),
        }
    if scheme == "sequence":
        return {
            "both": both,
            "contextual": (False, "bypass-pa", True),
            "positional": (False, "skip-ca", True),
        }
    if scheme in _TERMS:
        term, free = _TERMS[scheme]
        if absolute:
            return {
                "both": both,
                "contextual": (True, f"no-input-positions+drop-{term}", free),
                "positional": (False, f"{term}+pp-term", free),
            }
        return {
            "both": both,
            "contextual": (True, f"drop-{term}", free),
            "positional": (True, term, free),
        }
    return {  # ape, sinusoidal
        "both": both,
        "contextual": (True, "no-input-positions", True),
        "positional": (False, "pp-term", True),
    }
