"""A positional encoding made of several kinds, each applied where its kind belongs.

Transformer-XL's relative attention (Dai et al. 2019, Eq. 4, terms (b)-(d)) adds a learned
global bias to the queries beside a term that reads the query and the relative position;
RoPE is often trained beside a bias such as ALiBi. In the seeds' terms (Chen et al. 2023,
Eq. 4) each is one contribution to the logits, and the encoder has one place for each kind:

* ``shared`` — a logit term from positions shared by the layers (``shared_positions``);
* ``transform`` — a query/key transform shared by the layers (``shared_transform``: in a
  combination it sits beside the logit term, so it gets a place of its own);
* ``layer`` — a per-layer term: a content logit term, or a logit term with ``per_layer``
  (``layer.N.attention.layer_score``).

A combination is declared as a class of kind ``combination`` whose ``parts`` are registered
schemes of those kinds, at most one per place (``posharness.pe.Combination``). Each part
keeps its own declaration: its options, claims and code identity, and check-pe reads its
term and claims as it would alone. A class that inherits two kinds is refused: the encoder
would place it by one of them and silently drop the other (issue 47, part 6).

This module imports no torch: it reads the classes' attributes and declarations only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posharness.base.errors import OptionError
from posharness.pe.kind_names import (
    COMBINATION,
    CONTENT_LOGIT_TERM,
    INPUT_EMBEDDING,
    KINDS,
    PART_KINDS,
    QUERY_KEY_TRANSFORM,
)

PLACES = ("shared", "transform", "layer")
_GUIDE = "docs/new_pe.md, 'A scheme of several kinds'"


def inherited_kinds(obj: Any) -> list[type]:
    """The kind base classes ``obj`` inherits, the most derived of each line only
    (``UntiedProduct`` is one kind, though it subclasses ``LogitTerm``)."""
    found = [c for c in getattr(obj, "__mro__", ()) if vars(c).get("kind") in KINDS]
    return [c for c in found if not any(o is not c and issubclass(o, c) for o in found)]


def refuse_two_kinds(name: str, obj: Any, where: str) -> None:
    """One line when ``obj`` inherits more than one kind without being a combination."""
    kinds = inherited_kinds(obj)
    if len(kinds) > 1:
        names = " and ".join(k.__name__ for k in kinds)
        raise OptionError(
            f"positional encoding {name!r} ({where}) inherits two kinds, {names}, and the "
            "encoder places a scheme by one kind only, so the other would never be applied: "
            "declare each kind as its own registered class and combine them in a "
            f"posharness.pe.Combination with parts = (...) ({_GUIDE})"
        )


def place(part: Any) -> str:
    """Where the encoder applies a part of a combination (module docstring)."""
    kind = part.__pe__.kind
    if kind == CONTENT_LOGIT_TERM or getattr(part, "per_layer", False):
        return "layer"
    return "transform" if kind == QUERY_KEY_TRANSFORM else "shared"


def checked_parts(name: str, obj: Any) -> tuple[Any, ...]:
    """The parts of combination ``obj``, or one line saying what is wrong with them."""
    parts = tuple(getattr(obj, "parts", ()))
    if len(parts) < 2:
        raise OptionError(
            f"combination {name!r} needs parts = (A, B, ...), two or more registered schemes of "
            f"different kinds, got {len(parts)}: a scheme of one kind subclasses that kind"
        )
    placed: dict[str, str] = {}
    for part in parts:
        declared = getattr(part, "__pe__", None) if isinstance(part, type) else None
        if declared is None:
            label = getattr(part, "__name__", repr(part))
            raise OptionError(
                f"combination {name!r}: part {label} is not a registered scheme class: "
                f"decorate it with @register_pe('<name>', variant=False) before the combination"
            )
        if declared.kind not in PART_KINDS:
            why = (
                "give input positions with the combination's absolute = '<name>'"
                if declared.kind == INPUT_EMBEDDING
                else "only logit terms, content logit terms and query/key transforms act on one "
                "attention side by side"
            )
            article = "an" if declared.kind[0] in "aeiou" else "a"
            raise OptionError(
                f"combination {name!r}: part {declared.name!r} is {article} {declared.kind}, "
                f"which a combination cannot hold: {why}"
            )
        if declared.kind == QUERY_KEY_TRANSFORM and getattr(part, "per_layer", False):
            raise OptionError(
                f"combination {name!r}: part {declared.name!r} is a per-layer query/key "
                "transform: a transform is shared by the layers, drop per_layer"
            )
        where = place(part)
        if where in placed:
            raise OptionError(
                f"combination {name!r}: parts {placed[where]!r} and {declared.name!r} both act "
                f"as the {_PLACE_NAMES[where]}: merge them into one scheme of that kind"
            )
        placed[where] = declared.name
    return parts


_PLACE_NAMES = {
    "shared": "logit term shared by the layers",
    "transform": "query/key transform",
    "layer": "per-layer term",
}


def combined_defaults(name: str, parts: tuple[Any, ...], own: Mapping[str, Any]) -> dict:
    """The options of a combination: its parts' defaults, each key owned by one part."""
    if own:
        raise OptionError(
            f"combination {name!r}: its options are its parts' defaults, so it takes no "
            f"defaults= of its own ({', '.join(own)}): declare them on the part that uses them"
        )
    options: dict[str, Any] = {}
    owner: dict[str, str] = {}
    for part in parts:
        for key, value in part.__pe__.defaults.items():
            if key in owner:
                raise OptionError(
                    f"combination {name!r}: option {key!r} is declared by both parts "
                    f"{owner[key]!r} and {part.__pe__.name!r}: rename it in one of them"
                )
            owner[key] = part.__pe__.name
            options[key] = value
    return options


def derive_attributes(name: str, obj: Any, parts: tuple[Any, ...]) -> None:
    """Set what the card and the encoder read of ``obj`` from its parts, where the class does
    not set it itself: the input positions the parts require, boundedness, TUPE's content
    scale, whether the logits keep a content term, the injection and the reference point."""
    own = vars(obj)
    fixed = {getattr(p, "absolute", None) for p in parts} - {None}
    if "absolute" in own and own["absolute"] is not None:
        fixed.add(own["absolute"])
    if len(fixed) > 1:
        raise OptionError(
            f"combination {name!r}: its parts require different input positions "
            f"({', '.join(sorted(fixed))}): combine parts that agree"
        )
    references = {getattr(p, "reference", "relative") for p in parts}
    derived = {
        "absolute": next(iter(fixed), None),
        "bounded": any(getattr(p, "bounded", False) for p in parts),
        "content_scale_factor": max(getattr(p, "content_scale_factor", 1) for p in parts),
        "content_logits": all(getattr(p, "content_logits", True) for p in parts),
        "injection": " + ".join(dict.fromkeys(getattr(p, "injection", "") for p in parts)),
        "reference": references.pop() if len(references) == 1 else "both",
    }
    for attribute, value in derived.items():
        if attribute not in own:
            setattr(obj, attribute, value)


def parts_of(scheme: Any) -> tuple[Any, ...]:
    """A combination's parts; for a scheme of one kind, the scheme itself."""
    declared = getattr(scheme, "__pe__", None)
    if declared is not None and declared.kind == COMBINATION:
        return tuple(scheme.parts)
    return (scheme,)


__all__ = [
    "PLACES",
    "checked_parts",
    "combined_defaults",
    "derive_attributes",
    "inherited_kinds",
    "parts_of",
    "place",
    "refuse_two_kinds",
]
