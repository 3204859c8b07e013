"""Where positional encodings are registered: ``@register_pe`` for schemes, ``register_variant``
for named models.

A *scheme* is code: one class (or function) that contributes positions in one of the ways
the seeds name (``posharness.pe.kinds``). A *variant* is data: a model name, the scheme it
uses and option values (``tupe-a-tie-cls`` = scheme ``tupe-a`` with ``tie_cls=True``).
Everything else — config validation, model building, the PE card, the mode split, the list
of model names — is read from these two registries, for the built-in schemes exactly as for
a plugin's (issue 29: a new PE used to need six private edits, each of which failed
silently when forgotten).

This module imports no torch, so registering names stays as cheap as the rest of the
registries; the scheme classes themselves load when a model is built.
"""

from __future__ import annotations

import contextlib
import difflib
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from posharness.base.errors import OptionError
from posharness.pe import combination

# What a scheme can contribute (posharness.pe.kinds holds one base class per kind); the
# names live in kind_names and are read here as registry.LOGIT_TERM ... by every caller.
from posharness.pe.kind_names import (  # noqa: F401
    COMBINATION,
    CONTENT_LOGIT_TERM,
    INPUT_EMBEDDING,
    KINDS,
    LOGIT_TERM,
    POSITION_FREE,
    POSITIONAL_ATTENTION,
    QUERY_KEY_TRANSFORM,
    UNTIED_PRODUCT,
)
from posharness.plugins import pe_variants, positional_encodings
from posharness.plugins.registry import BUILTIN

# What a scheme may claim of its positional term T(i, j) (query position i, key position j);
# ``posharness check-pe`` verifies each numerically (posharness.models.zoo.check_claims).
PROPERTIES = {
    "content-free": "T does not depend on the words",
    "translation-invariant": "T depends on j - i only (a Toeplitz matrix)",
    "symmetric": "T(i, j) = T(j, i)",
    "depends-on-query-position": (
        "T is a function of the query position i and the distance |j - i|, varying with i "
        "(FIRE's normalisation by the query position)"
    ),
    "causal-only": "every key after its query (j > i) gets no attention weight from T",
}
# A claim is a property or its negation: ``not-symmetric`` says the property's measurement
# exceeds its tolerance (xPos is not symmetric by design), and check-pe verifies it from the
# same measurement, so a false negative claim fails with the number that shows it holds.
NEGATION = "not-"
CLAIMS = {
    **PROPERTIES,
    **{f"{NEGATION}{name}": f"the opposite of {name!r}" for name in PROPERTIES},
}


def claimed_property(claim: str) -> str:
    """The property a claim is about: ``symmetric`` for ``symmetric`` and ``not-symmetric``."""
    return claim.removeprefix(NEGATION)


# Option names every zoo model has (size, vocabulary, ...): a scheme's defaults may not reuse them.
_MODEL_FIELDS = frozenset(
    {
        "vocab_size",
        "hidden_size",
        "num_hidden_layers",
        "num_attention_heads",
        "intermediate_size",
        "max_position_embeddings",
        "scheme",
        "absolute",
        "name",
        "size",
    }
)


@dataclass(frozen=True)
class Declaration:
    """What ``@register_pe`` knows of a scheme without building it."""

    name: str
    kind: str
    defaults: Mapping[str, Any]
    version: str | None  # declared code version; None: the source hash identifies the code
    origin: str  # built-in | plugin | include
    source: str  # the distribution or the included file
    claims: tuple[str, ...] = ()  # properties of its term that check-pe verifies (CLAIMS)
    parts: tuple[str, ...] = ()  # a combination's parts, by registered name


@dataclass(frozen=True)
class Variant:
    """A model name: a scheme plus option values (data, never code)."""

    name: str
    scheme: str
    options: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""


_listeners: list[Callable[[Variant, str, str], None]] = []


def register_pe(
    name: str,
    *,
    defaults: Mapping[str, Any] | None = None,
    version: str | int | None = None,
    description: str = "",
    variant: bool = True,
    claims: Iterable[str] = (),
) -> Callable[[Any], Any]:
    """Register a positional scheme under ``name`` (and, unless ``variant=False``, a model of
    the same name with the scheme's defaults).

    ``defaults`` are the scheme's options: every key must be a keyword of the class's
    ``__init__`` (or the function's signature), and becomes a ``--model-arg KEY=VALUE`` typed
    by its default. ``version``: declare one to keep cell ids across edits of the code (the
    built-ins do); without it the hash of the scheme's source files is its identity.
    ``claims``: properties of the scheme's positional term, names from ``CLAIMS`` (e.g.
    ``claims=("content-free", "translation-invariant")``, or a negation such as
    ``"not-symmetric"``); ``posharness check-pe`` verifies each on the tiny model, so a claim
    is a test, not a label. Declare only what holds for every option value.

    A ``Combination`` (several kinds, ``posharness.pe.combination``) takes its options from
    its parts and claims nothing itself: each part claims what holds of its own term.
    """
    claimed = _check_claims(name, claims)

    def decorate(obj: Any) -> Any:
        kind = kind_of(obj, name)
        options = dict(defaults or {})
        parts: tuple[Any, ...] = ()
        if kind == COMBINATION:
            parts = combination.checked_parts(name, obj)
            options = combination.combined_defaults(name, parts, options)
            combination.derive_attributes(name, obj, parts)
        else:
            _check_defaults(name, obj, options)
        if claimed and kind == COMBINATION:
            raise OptionError(
                f"combination {name!r} claims {claimed!r}: claim each property on the part whose "
                "term has it (check-pe verifies every part's claims)"
            )
        if claimed and kind == POSITION_FREE:
            raise OptionError(
                f"positional encoding {name!r} has no positional term (NoPositions), so it can "
                f"claim nothing: drop claims={claimed!r}"
            )
        earlier = vars(obj).get("__pe__")
        if earlier is not None and earlier.name != name:
            raise OptionError(
                f"{_where(obj)} is already registered as {earlier.name!r}: register a subclass "
                f"for {name!r}, or name other option values with register_variant"
            )
        origin, source = _current_origin()
        declared = Declaration(
            name=name,
            kind=kind,
            defaults=options,
            version=None if version is None else str(version),
            origin=origin,
            source=source,
            claims=claimed,
            parts=tuple(part.__pe__.name for part in parts),
        )
        positional_encodings.add(name, obj)
        obj.__pe__ = declared
        if variant:
            register_variant(name, name, description=description or _summary(obj))
        return obj

    return decorate


def register_variant(name: str, scheme: str, *, description: str = "", **options: Any) -> Variant:
    """A model name for ``scheme`` with ``options`` (e.g. ``register_variant("mynope", "nope")``).

    Also registers ``name`` as a model (``posharness run --model NAME@CHECKPOINT``,
    ``posharness pretrain --model NAME``) through whoever listens (the zoo does).
    """
    made = Variant(name, scheme, dict(options), description)
    origin, source = _current_origin()
    existing = pe_variants._entries.get(name)  # noqa: SLF001 (a re-import registers again)
    if existing is not None and existing.obj == made:
        return made
    with pe_variants.origin(origin, source):
        pe_variants.add(name, made)
    for listener in _listeners:
        listener(made, origin, source)
    return made


def on_variant(listener: Callable[[Variant, str, str], None]) -> None:
    """Call ``listener(variant, origin, source)`` for every variant, past and future.

    The zoo subscribes so that each variant is also a model name; the core stays unaware of
    the zoo (it imports no family).
    """
    _listeners.append(listener)
    for entry in list(pe_variants._entries.values()):  # noqa: SLF001 (no plugin loading here)
        if entry.obj is not None:
            listener(entry.obj, entry.origin, entry.source)


def declaration(scheme: Any) -> Declaration:
    """The declaration of a registered scheme object (class or function)."""
    return scheme.__pe__


def scheme(name: str) -> Any:
    """The registered scheme class or function ``name`` (imports it on first use)."""
    return positional_encodings.get(name)


def variant(name: str) -> Variant:
    return pe_variants.get(name)


def variants() -> dict[str, Variant]:
    return {name: pe_variants.get(name) for name in pe_variants.names()}


def scheme_names() -> list[str]:
    return positional_encodings.names()


def kind_of(obj: Any, name: str) -> str:
    """The contribution kind of a scheme object, or a one-line error when it has none."""
    kind = getattr(obj, "kind", None)
    if inspect.isfunction(obj):
        return LOGIT_TERM  # a function of positions: a parameter-free logit term
    if kind not in KINDS:
        raise OptionError(
            f"positional encoding {name!r} ({_where(obj)}) declares no positional "
            "contribution: subclass one of posharness.pe's InputEmbedding, LogitTerm, "
            "ContentLogitTerm, UntiedProduct, QueryKeyTransform, PositionalAttention, "
            "Combination (several kinds), or NoPositions for a model without positions"
        )
    combination.refuse_two_kinds(name, obj, _where(obj))
    return kind


def _check_claims(name: str, claims: Iterable[str]) -> tuple[str, ...]:
    """``claims`` as a tuple of known names (order kept, repeats dropped), or one line."""
    if isinstance(claims, str):
        raise OptionError(
            f"positional encoding {name!r}: claims must be a sequence of names, got the string "
            f"{claims!r}: write claims=({claims!r},)"
        )
    checked: list[str] = []
    for claim in claims:
        if claim not in CLAIMS:
            close = difflib.get_close_matches(str(claim), list(CLAIMS), n=1, cutoff=0.5)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise OptionError(
                f"positional encoding {name!r}: unknown claim {claim!r}: {hint}"
                f"(known: {', '.join(CLAIMS)})"
            )
        if claim not in checked:
            checked.append(claim)
    for claim in checked:
        if claim.startswith(NEGATION) and claimed_property(claim) in checked:
            raise OptionError(
                f"positional encoding {name!r} claims both {claimed_property(claim)!r} and "
                f"{claim!r}: keep the one that holds for every option value"
            )
    return tuple(checked)


def _check_defaults(name: str, obj: Any, defaults: Mapping[str, Any]) -> None:
    target = obj if inspect.isfunction(obj) else obj.__init__
    parameters = inspect.signature(target).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    for key in defaults:
        if key in _MODEL_FIELDS:
            raise OptionError(
                f"positional encoding {name!r}: default {key!r} is a model field, not a scheme "
                "option: rename the option"
            )
        if key not in parameters and not takes_any:
            raise OptionError(
                f"positional encoding {name!r}: default {key!r} is not a keyword of "
                f"{_where(obj)}: add it to the signature or drop it from defaults"
            )


def _where(obj: Any) -> str:
    """Where ``obj`` is defined, as its author knows it: an --include file by its file name."""
    module = getattr(obj, "__module__", "?") or "?"
    if module.startswith("posharness_include_"):
        with contextlib.suppress(TypeError):  # a built-in object has no source file
            module = Path(inspect.getsourcefile(obj) or module).name
        return f"{module}: {getattr(obj, '__qualname__', '?')}"
    return f"{module}.{getattr(obj, '__qualname__', '?')}"


def _summary(obj: Any) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.splitlines()[0].rstrip(".") if doc else ""


def _current_origin() -> tuple[str, str]:
    """Where the code registering now comes from (an --include file, a plugin, built-in)."""
    stacks = (positional_encodings._origin_stack, pe_variants._origin_stack)  # noqa: SLF001
    for stack in stacks:
        if stack:
            return stack[-1]
    return BUILTIN, "posharness"
