"""The positional term of one scheme module, read from the module itself: what check-pe's
``structure`` check and a scheme's claims are verified on.

Every kind gives a term T [heads, n, n] (query position i in rows, key position j in
columns) from ``positions`` [1, n] and, for the kinds whose term involves the words, one
content vector per position and side (``query``, ``key``):

* ``LogitTerm``, ``UntiedProduct`` — delta itself (``delta(positions, None)``);
* ``PositionalAttention`` — PA's pre-softmax scores (``logits``), or PA's weights where
  they are the parameters (``weights_are_logits = False``);
* ``ContentLogitTerm`` — ``forward(query, positions, 1/sqrt(d))``;
* ``QueryKeyTransform`` — T(q, i, query) · T(k, j, key), the logit the transform gives a
  query q at i and a key k at j (the ``role`` passed as the encoder passes it);
* ``InputEmbedding`` — (x_i + p_i)·(y_j + p_j) - x_i·y_j, what the positions p add to a
  dot product of inputs x (query side) and y (key side) with identity projections: the
  pp-term plus the two cross terms of Ke et al. (2021, Eq. 7).

A term of the wrong shape, or a tensor held as a plain attribute, is a structural fault
(:func:`structural_faults`), named as such before any other check evaluates the model.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch import nn

from posharness.models.zoo.check_faults import PECheckError, raised_line
from posharness.pe import registry

_READS_CONTENT = (
    registry.CONTENT_LOGIT_TERM,
    registry.QUERY_KEY_TRANSFORM,
    registry.INPUT_EMBEDDING,
)


@dataclass(frozen=True)
class SchemeUnit:
    """One scheme module of a model: where it sits, its kind and its declaration."""

    where: str  # its attribute path in the model ("shared_positions", "layer.0.attention...")
    module: nn.Module
    declaration: registry.Declaration
    heads: int  # the model's attention heads

    @property
    def kind(self) -> str:
        return self.declaration.kind

    @property
    def reads_content(self) -> bool:
        return self.kind in _READS_CONTENT


@dataclass(frozen=True)
class Term:
    """T [heads, n, n] in float64; ``weights``: the entries are attention weights (a PA
    whose weights are its parameters), not logits."""

    values: torch.Tensor
    weights: bool = False


def scheme_units(model: Any) -> list[SchemeUnit]:
    """The outermost ``PositionalEncoding`` modules of ``model`` (a scheme built inside
    another, TUPE-R's T5 bias, belongs to the outer one), in module order."""
    from posharness.models.zoo.encoder.schemes import FunctionTerm
    from posharness.pe import PositionalEncoding

    units: list[SchemeUnit] = []
    for where, module in model.named_modules():
        if not isinstance(module, PositionalEncoding):
            continue
        if any(where.startswith(f"{unit.where}.") for unit in units):
            continue
        scheme = module.function if isinstance(module, FunctionTerm) else type(module)
        declaration = getattr(scheme, "__pe__", None)
        if declaration is not None:  # every module the zoo builds from the registry has one
            heads = model.config.num_attention_heads
            units.append(SchemeUnit(where, module, declaration, heads))
    return units


def plain_tensors(model: Any) -> Iterator[str]:
    """Attribute paths of tensors a scheme module holds as plain attributes (neither an
    ``nn.Parameter`` nor a registered buffer): saving, loading and ``.to()`` leave them out."""
    for unit in scheme_units(model):
        for prefix, module in unit.module.named_modules(prefix=unit.where):
            for attribute, value in vars(module).items():
                if isinstance(value, torch.Tensor):
                    yield f"{prefix}.{attribute}"


def content(
    unit: SchemeUnit, config: Any, n: int, generator: torch.Generator, *, varying: bool, same: bool
) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """Random query- and key-side content for ``unit``'s term, float64, or (None, None).

    ``varying``: a different vector at every position (the words differ); otherwise one
    vector repeated, so the term shows positions alone. ``same``: the key side gets the
    query side's vectors (the symmetric claim compares like with like).
    """
    if not unit.reads_content:
        return None, None
    if unit.kind == registry.INPUT_EMBEDDING:
        shape: tuple[int, ...] = (1, n if varying else 1, config.hidden_size)
    else:
        shape = (1, config.num_attention_heads, n if varying else 1, config.head_size)

    def draw() -> torch.Tensor:
        vectors = torch.randn(shape, generator=generator, dtype=torch.float64)
        return vectors.expand(*shape[:-2], n, shape[-1])

    query = draw()
    return query, query if same else draw()


def term(
    unit: SchemeUnit,
    positions: torch.Tensor,
    query: torch.Tensor | None = None,
    key: torch.Tensor | None = None,
) -> Term:
    """``unit``'s term T at ``positions`` [1, n] (module docstring); a shape other than the
    kind's contract raises ``PECheckError`` naming both."""
    module, kind, n = unit.module, unit.kind, positions.shape[-1]
    with torch.no_grad():
        if kind in (registry.LOGIT_TERM, registry.UNTIED_PRODUCT):
            return Term(_square(unit, module.delta(positions, None), n))
        if kind == registry.POSITIONAL_ATTENTION:
            if module.weights_are_logits:
                return Term(_square(unit, module.logits(positions, None), n))
            return Term(_square(unit, module(positions, None), n), weights=True)
        if kind == registry.CONTENT_LOGIT_TERM:
            scale = 1.0 / math.sqrt(query.shape[-1])
            return Term(_square(unit, module(query, positions, scale), n))
        if kind == registry.QUERY_KEY_TRANSFORM:
            turned_q = _same_shape(unit, module.transform(query, positions, "query"), query)
            turned_k = _same_shape(unit, module.transform(key, positions, "key"), key)
            return Term(_square(unit, turned_q @ turned_k.transpose(-1, -2), n))
        if kind == registry.INPUT_EMBEDDING:
            p = module(positions)
            wanted = (1, n, query.shape[-1])
            if tuple(p.shape) not in (wanted, wanted[1:]):
                raise PECheckError(
                    f"{unit.where} returns input positions of shape {list(p.shape)}: an input "
                    f"embedding returns [B or 1, n, D] = {list(wanted)} for {n} positions"
                )
            p = p.reshape(wanted).to(torch.float64)
            values = (query + p) @ (key + p).transpose(-1, -2) - query @ key.transpose(-1, -2)
            return Term(values)
    raise PECheckError(f"{unit.where}: a {kind} has no term to read")


# A part whose term moves the logits by no more than this share of their scale is a no-op:
# float64 rounding of a transform that returns its input, not a contribution.
NO_OP_FLOOR = 1e-10


def departure(unit: SchemeUnit, config: Any, n: int, seed: int) -> tuple[float, str | None]:
    """How far ``unit``'s term is from adding nothing, and how it gets there: (its largest
    change, ``"by <change>"``), or, for a term that is a no-op at initialisation, whether it
    moves once its parameters do (``"through its parameters (a no-op at initialisation)"``);
    None where it does neither. A logit term adds nothing when it is zero, a query/key
    transform when T(q, i, query) · T(k, j, key) is q · k (the model without it)."""
    moved, scale = _departure(unit, config, n, seed)
    if moved > NO_OP_FLOOR * scale:
        return moved, f"by {moved:.2g}"
    if any(True for _ in unit.module.parameters()):
        nudged = copy.deepcopy(unit.module)
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for parameter in nudged.parameters():
                noise = torch.randn(parameter.shape, generator=generator, dtype=torch.float64)
                parameter.add_(noise.to(parameter.dtype))
        again, scale = _departure(replace(unit, module=nudged), config, n, seed)
        if again > NO_OP_FLOOR * scale:
            return moved, "through its parameters (a no-op at initialisation)"
    return moved, None


def _departure(unit: SchemeUnit, config: Any, n: int, seed: int) -> tuple[float, float]:
    """(largest |T - T0|, the scale it is read against), T0 the term of a no-op."""
    generator = torch.Generator().manual_seed(seed)
    query, key = content(unit, config, n, generator, varying=True, same=False)
    values = term(unit, torch.arange(n).unsqueeze(0), query, key).values
    neutral = torch.zeros_like(values)
    if unit.kind == registry.QUERY_KEY_TRANSFORM:
        neutral = (query @ key.transpose(-1, -2))[0].to(values.dtype)
    gap = torch.where(values == neutral, torch.zeros_like(values), (values - neutral).abs())
    finite = neutral[neutral.isfinite()]
    scale = max(1.0, float(finite.abs().max())) if finite.numel() else 1.0
    return float(gap.nan_to_num(nan=float("inf")).max()), scale


def _square(unit: SchemeUnit, values: torch.Tensor, n: int) -> torch.Tensor:
    """[1, H or 1, n, n] -> [H or 1, n, n] float64, or a one-line shape fault."""
    heads = unit.heads
    shape = tuple(values.shape)
    if len(shape) != 4 or shape[0] != 1 or shape[1] not in (1, heads) or shape[2:] != (n, n):
        raise PECheckError(
            f"the term of {unit.where} ({unit.kind}) has shape {list(shape)}: it must be "
            f"[B or 1, H or 1, n, n] = [1, {heads} or 1, {n}, {n}] for {n} positions of one "
            f"sequence and {heads} heads"
        )
    return values[0].to(torch.float64)


def _same_shape(unit: SchemeUnit, turned: torch.Tensor, given: torch.Tensor) -> torch.Tensor:
    if turned.shape != given.shape:
        raise PECheckError(
            f"{unit.where} maps queries or keys of shape {list(given.shape)} to "
            f"{list(turned.shape)}: a query/key transform keeps the shape of its input"
        )
    return turned.to(torch.float64)


def structural_faults(model: Any, config: Any, n: int) -> tuple[list[str], bool, bool]:
    """What is structurally wrong with ``model``'s schemes: (one line per fault, whether a
    plain tensor was found, whether a term cannot be evaluated in the kind's shape).

    A per-layer scheme has one module in every layer, and each repeats the same fault: it is
    named once, at ``layer.N...``, with the number of layers it was found in (issue 47)."""
    faults: list[str] = []
    plain = list(plain_tensors(model))
    if plain:
        faults.append(
            f"{_once(plain)}: a tensor held as a plain attribute, not an nn.Parameter or a "
            "registered buffer, so save/load and .to() leave it behind: make it "
            "nn.Parameter(...) if it is learned, self.register_buffer(...) if it is fixed"
        )
    unusable = False
    generator = torch.Generator().manual_seed(0)
    positions = torch.arange(n).unsqueeze(0)
    found: dict[str, list[str]] = {}  # the fault with its module as layer.N -> where it occurred
    for unit in scheme_units(model):
        try:
            term(unit, positions, *content(unit, config, n, generator, varying=True, same=False))
            continue
        except PECheckError as fault:
            said = str(fault)
        except Exception as exc:  # the scheme's own code fails on its own term
            said = raised_line(f"evaluating the term of {unit.where}", exc)
        unusable = True
        found.setdefault(said.replace(unit.where, _any_layer(unit.where)), []).append(unit.where)
    for said, places in found.items():
        faults.append(said.replace(_any_layer(places[0]), _once(places)))
    return faults, bool(plain), unusable


_LAYER_INDEX = re.compile(r"(?<![^.])\d+(?=\.)")


def _any_layer(where: str) -> str:
    """``layer.0.attention.layer_score`` -> ``layer.N.attention.layer_score``."""
    return _LAYER_INDEX.sub("N", where)


def _once(places: list[str]) -> str:
    """Attribute paths, each path repeated across layers named once (``layer.N.x``, in each
    of the 2 layers)."""
    groups: dict[str, int] = {}
    for where in places:
        key = _any_layer(where)
        groups[key] = groups.get(key, 0) + 1
    return ", ".join(
        key if count == 1 else f"{key} (in each of {count} layers)" for key, count in groups.items()
    )
