"""The attention modes a scheme has, derived from its kind (never declared by its author).

``mode_split(kind, term, input_positions)[mode] = (exact, definition, content_free_delta)``.
The definition names travel with results and enter the cell identity (docs/modes.md), so
they are the names the zoo has always written. Per kind (docs/new_pe.md states the same):

* logit terms from positions (relative bias, T5, ALiBi, TISA, attenuation, TUPE's untied
  product): contextual ``drop-<term>`` and positional ``<term>``, both exact;
* a logit term that reads the queries (Shaw): exact, but the positional term is content-
  dependent;
* input-added embeddings alone: contextual ``no-input-positions`` (exact: the model with
  those inputs gone), positional ``pp-term`` (the position-position term: an approximation,
  the word-position cross terms are dropped and deeper layers see other inputs);
* a logit term on top of input positions: contextual removes both (exact), positional keeps
  ``<term>+pp-term`` (not exact);
* query/key transforms: contextual ``no-<term>`` (exact), positional ``bias-qk-<term>``
  (the transformed query/key biases: content-free, not exact);
* a positional attention ahead of the content one: component ablations ``bypass-pa`` /
  ``skip-ca``;
* no positions: contextual is the model itself; there is no positional mode;
* a combination of kinds (``posharness.pe.Combination``): each mode joins its parts'
  definitions with ``+`` (contextual ``no-<transform>+drop-<term>``, positional
  ``bias-qk-<transform>+<term>``), exact only if every part's is, content-free only if
  every part's is.
"""

from __future__ import annotations

from posharness.pe import registry

ModeRow = tuple[bool, str, bool | None]

_FROM_POSITIONS = (registry.LOGIT_TERM, registry.UNTIED_PRODUCT)


def mode_split(kind: str, term: str, input_positions: bool) -> dict[str, ModeRow]:
    """Mode -> (exact, definition, content_free_delta) for a scheme of ``kind``.

    ``input_positions``: whether input-added positions come with the scheme (its own, for
    an input embedding; ``absolute=`` for a logit term).
    """
    both: ModeRow = (True, "as-trained", None)
    if kind == registry.POSITION_FREE:
        return {"both": both, "contextual": (True, "no-positions", None)}
    if kind == registry.INPUT_EMBEDDING:
        return {
            "both": both,
            "contextual": (True, "no-input-positions", True),
            "positional": (False, "pp-term", True),
        }
    if kind == registry.QUERY_KEY_TRANSFORM:
        return {
            "both": both,
            "contextual": (True, f"no-{term}", True),
            "positional": (False, f"bias-qk-{term}", True),
        }
    if kind == registry.POSITIONAL_ATTENTION:
        return {
            "both": both,
            "contextual": (False, "bypass-pa", True),
            "positional": (False, "skip-ca", True),
        }
    free = kind in _FROM_POSITIONS
    if input_positions:
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


def combined_split(parts: list[tuple[str, str]], input_positions: bool) -> dict[str, ModeRow]:
    """The modes of a combination of ``parts`` [(kind, term)]: each mode removes or keeps
    every part at once, so it is exact only if it is for every part, and its delta is
    content-free only if every part's is. Input positions come first in contextual and last
    in positional, as for a logit term on top of them."""
    rows = [mode_split(kind, term, False) for kind, term in parts]
    inputs = [mode_split(registry.INPUT_EMBEDDING, "", False)] if input_positions else []
    split: dict[str, ModeRow] = {"both": (True, "as-trained", None)}
    for mode in ("contextual", "positional"):
        ordered = [*inputs, *rows] if mode == "contextual" else [*rows, *inputs]
        split[mode] = (
            all(row[mode][0] for row in ordered),
            "+".join(row[mode][1] for row in ordered),
            all(row[mode][2] is True for row in ordered),
        )
    return split


def split_of(scheme: object, name: str, input_positions: bool) -> dict[str, ModeRow]:
    """The modes of a registered scheme object (a combination's from its parts)."""
    declared = registry.declaration(scheme)
    if declared.kind != registry.COMBINATION:
        term = getattr(scheme, "term", "") or name
        return mode_split(declared.kind, term, input_positions)
    parts = [
        (
            registry.declaration(part).kind,
            getattr(part, "term", "") or registry.declaration(part).name,
        )
        for part in scheme.parts
    ]
    return combined_split(parts, input_positions)
