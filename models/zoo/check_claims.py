"""The properties a scheme claims of its positional term, verified numerically.

A scheme declares them with ``register_pe(..., claims=(...))`` (names in
``posharness.pe.CLAIMS``); check-pe reads each scheme module's term T [heads, n, n] in
float64 (``check_terms``: query position i in rows, key position j in columns) and gives
one outcome per claim. Where the term involves the words (a query/key transform, Shaw's
relative keys, input positions) it is read with one content vector repeated at every
position, so that T shows positions alone; ``content-free`` instead draws different words.

Each claim is a largest difference measured against ``CLAIM_TOLERANCE`` times the term's
scale (its largest finite entry; a value beyond 1e30 is a mask, not a term). The tolerance
is relative because a faithful term can be small (an MLP at BERT's std-0.02
initialisation) and because the built-ins compute angles and tables in float32 as the model
does (RoPE's Toeplitz error is ~1e-7 of its scale); a property broken by design is broken by
far more (an xPos scale on the queries alone breaks symmetry by ~1e-2 of the scale).

* ``content-free`` — T for two random inputs differs by at most the tolerance;
* ``translation-invariant`` — T(i+1, j+1) = T(i, j) everywhere: T is Toeplitz, a function
  of j - i (Chen et al. 2023's Toeplitz reading of a positional term; Ke et al. 2021's
  relative terms, Wennberg & Henter 2021);
* ``symmetric`` — T(j, i) = T(i, j), with the same content on both sides;
* ``depends-on-query-position`` — T is a function of the query position i and the distance
  |j - i|, and varies with i: FIRE's bias f(psi(|i - j|) / psi(max(L, i))) (Li et al. 2023,
  "Functional Interpolation for Relative Positions", normalised by the query position; its
  bidirectional form here). At a fixed distance k, moving the key to the other side of its
  query, T(i, i + k) vs T(i, i - k), must change nothing (a normaliser that reads the key
  position fails here), and moving the query to the other side of its key,
  T(j + k, j) vs T(j - k, j), must change T by more than the tolerance (a function of j - i
  alone fails there);
* ``causal-only`` — the float64 softmax of each row of T puts exactly zero weight on every
  key after its query (j > i) and a positive one on every other key (for a positional
  attention whose weights are its parameters, the weights themselves).

Each property may also be claimed negated, ``not-<property>`` (``not-symmetric`` for xPos,
whose query and key scales differ by design; ``not-content-free`` for Shaw's relative
keys): it is read from the same measurement and holds where that measurement exceeds the
tolerance, so a false negative claim fails with the number that shows the property holds
(issue 47, part 7).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from posharness.models.zoo.check_faults import PECheckError
from posharness.models.zoo.check_terms import SchemeUnit, Term, content, scheme_units, term
from posharness.pe import registry

CLAIM_TOLERANCE = 1e-6  # of the term's scale
_MASK = 1e30  # |T| beyond this is a mask (-inf, a dtype's minimum), not part of the scale


def claim_checks(model: Any, n: int, seed: int) -> list[tuple[str, Callable[[], str]]]:
    """One (name, check) per claim of each scheme in ``model``; a check returns its detail or
    raises ``PECheckError`` with the one-line failure. A per-layer scheme is checked in every
    layer's module."""
    groups: dict[str, list[SchemeUnit]] = {}
    for unit in scheme_units(model):
        groups.setdefault(unit.declaration.name, []).append(unit)
    claimed = [claim for units in groups.values() for claim in units[0].declaration.claims]
    parts = _is_combination(model.config)  # each claim is a part's: say whose
    checks = []
    for name, units in groups.items():
        for claim in units[0].declaration.claims:
            label = claim if claimed.count(claim) == 1 and not parts else f"{claim} ({name})"
            run = functools.partial(_verify, claim, units, model.config, n, seed)
            checks.append((label, run))
    return checks


def _is_combination(config: Any) -> bool:
    from posharness.models.zoo.encoder.config import scheme_class

    return registry.declaration(scheme_class(config.scheme)).kind == registry.COMBINATION


def _verify(claim: str, units: list[SchemeUnit], config: Any, n: int, seed: int) -> str:
    details = [
        VERIFIERS[claim](unit, config, n, torch.Generator().manual_seed(seed)) for unit in units
    ]
    return details[0] if len(units) == 1 else f"{details[0]} (each of {len(units)} modules)"


# -- the claims ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """What one property's measurement found: whether the property holds, the evidence (the
    measured number, phrased for that outcome), and for a property that does not hold a
    hint at the likely fault (shown only to a scheme that claimed the property)."""

    holds: bool
    evidence: str
    hint: str = ""


def _content_free(unit: SchemeUnit, config: Any, n: int, generator: torch.Generator) -> Finding:
    first = _read(unit, config, n, generator, varying=True)
    second = _read(unit, config, n, generator, varying=True)
    scale = max(_scale(first.values), _scale(second.values))
    measured, at = _worst(_gap(first.values, second.values))
    if not measured <= CLAIM_TOLERANCE * scale:
        return Finding(
            False,
            f"its term changes with the words: two random inputs give terms {measured:.3g} "
            f"apart ({_at(at)}), {_beyond(scale)}",
        )
    article = "an" if unit.kind[0] in "aeiou" else "a"
    how = "" if unit.reads_content else f" ({article} {unit.kind} reads positions only)"
    return Finding(True, f"two random inputs give the same term{how}: {_within(measured, scale)}")


def _translation_invariant(
    unit: SchemeUnit, config: Any, n: int, generator: torch.Generator
) -> Finding:
    values = _read(unit, config, n, generator).values
    return _equal_views(
        unit,
        values,
        values[:, 1:, 1:],
        values[:, :-1, :-1],
        difference="its term is not a function of j - i: T(i+1, j+1) - T(i, j)",
        equality="T(i+1, j+1) = T(i, j)",
    )


def _symmetric(unit: SchemeUnit, config: Any, n: int, generator: torch.Generator) -> Finding:
    values = _read(unit, config, n, generator, same=True).values
    return _equal_views(
        unit,
        values,
        values,
        values.transpose(-1, -2),
        difference="T(j, i) - T(i, j)",
        equality="T(j, i) = T(i, j)",
        note=", the same content on both sides",
    )


def _equal_views(
    unit: SchemeUnit,
    values: torch.Tensor,
    first: torch.Tensor,
    second: torch.Tensor,
    *,
    difference: str,
    equality: str,
    note: str = "",
) -> Finding:
    """Whether two re-indexed views of the term ``values`` (shifted along the diagonal,
    transposed) agree within the tolerance of its scale: translation invariance and
    symmetry are both this one measurement, phrased by ``difference`` (what reaches the
    worst gap), ``equality`` (what holds) and ``note`` (beside the place of the gap). A
    query/key transform that fails gets the hint on the roles of its maps."""
    scale = _scale(values)
    measured, at = _worst(_gap(first, second))
    if not measured <= CLAIM_TOLERANCE * scale:
        return Finding(
            False,
            f"{difference} reaches {measured:.3g} ({_at(at)}{note}), {_beyond(scale)}",
            _ROLE_HINT if unit.kind == registry.QUERY_KEY_TRANSFORM else "",
        )
    return Finding(True, f"{equality} at every i, j and head: {_within(measured, scale)}")


def _depends_on_query_position(
    unit: SchemeUnit, config: Any, n: int, generator: torch.Generator
) -> Finding:
    values = _read(unit, config, n, generator).values
    scale = _scale(values)
    key_side, query_side = [], []
    for k in range(1, (n + 1) // 2):
        ahead = torch.diagonal(values, offset=k, dim1=-2, dim2=-1)  # T(c, c + k), c = 0 ..
        behind = torch.diagonal(values, offset=-k, dim1=-2, dim2=-1)  # T(c + k, c)
        key_side.append(_gap(ahead[:, k : n - k], behind[:, : n - 2 * k]))
        query_side.append(_gap(behind[:, k : n - k], ahead[:, : n - 2 * k]))
    moved_key = max(_worst(gap)[0] for gap in key_side)
    moved_query = max(_worst(gap)[0] for gap in query_side)
    tolerance = CLAIM_TOLERANCE * scale
    if not moved_key <= tolerance:
        return Finding(
            False,
            f"at a fixed distance its term changes when the key moves to the other side of the "
            f"query: |T(i, i+k) - T(i, i-k)| reaches {moved_key:.3g}, {_beyond(scale)}",
            "; it reads the key's position (FIRE normalises by the query's, Li et al. 2023)",
        )
    if not moved_query > tolerance:
        return Finding(
            False,
            f"at a fixed distance its term does not change with the query position: "
            f"|T(j+k, j) - T(j-k, j)| is at most {moved_query:.3g}, within {CLAIM_TOLERANCE:g} "
            f"of its scale {scale:.3g}",
            " (a function of the offset alone: claim translation-invariant instead)",
        )
    return Finding(
        True,
        f"a function of the query position and |j - i|: moving the key across the query "
        f"changes T by {moved_key:.2g}, moving the query across the key by {moved_query:.3g} "
        f"(tolerance {CLAIM_TOLERANCE:g} of the scale {scale:.3g})",
    )


def _causal_only(unit: SchemeUnit, config: Any, n: int, generator: torch.Generator) -> Finding:
    read = _read(unit, config, n, generator)
    weights = read.values if read.weights else torch.softmax(read.values, dim=-1)
    after = torch.ones(n, n, dtype=torch.bool).triu(1).expand_as(weights)
    leaked = torch.where(after, weights, torch.zeros_like(weights)).nan_to_num(nan=1.0)
    measured, at = _worst(leaked)
    if measured > 0:
        return Finding(
            False,
            f"a key after its query keeps attention weight {measured:.3g} from its term "
            f"({_at(at)})",
            ": give keys j > i a logit of -inf",
        )
    kept = torch.where(after, torch.ones_like(weights), weights).nan_to_num(nan=0.0)
    smallest, at = _worst(-kept)
    if -smallest <= 0:
        return Finding(
            False,
            f"its term also masks a key at or before its query ({_at(at)})",
            ": only keys j > i may be masked",
        )
    return Finding(
        True,
        "every key after its query gets weight 0 from the term, every other key a positive one",
    )


Measure = Callable[[SchemeUnit, Any, int, torch.Generator], Finding]
# One measurement per property; a claim is the property ("symmetric") or its negation
# ("not-symmetric"), and both are read from the same measurement.
MEASURES: dict[str, Measure] = {
    "content-free": _content_free,
    "translation-invariant": _translation_invariant,
    "symmetric": _symmetric,
    "depends-on-query-position": _depends_on_query_position,
    "causal-only": _causal_only,
}


def _claim_check(claim: str) -> Callable[[SchemeUnit, Any, int, torch.Generator], str]:
    """The check of ``claim``: the detail when it holds, else ``PECheckError`` with the
    measured number. A negative claim (``not-symmetric``) holds where the property's own
    measurement exceeds the tolerance, and fails with the number that shows it holds."""
    prop = registry.claimed_property(claim)
    negated = prop != claim
    measure = MEASURES[prop]

    def check(unit: SchemeUnit, config: Any, n: int, generator: torch.Generator) -> str:
        found = measure(unit, config, n, generator)
        if found.holds != negated:
            return f"not {prop}, as claimed: {found.evidence}" if negated else found.evidence
        if negated:
            raise PECheckError(
                f"{_who(unit)} claims {claim}, but it is {prop}: {found.evidence}; drop the "
                f"claim, or claim {prop}"
            )
        raise PECheckError(f"{_who(unit)} claims {claim}, but {found.evidence}{found.hint}")

    return check


VERIFIERS = {claim: _claim_check(claim) for claim in registry.CLAIMS}

_ROLE_HINT = (
    " (a query/key transform is read as T(q, i, query) · T(k, j, key): for this claim its "
    "query and key maps must mirror each other, so a map on one side only, or the same map "
    "on both where the claim needs opposite ones, fails; take the role argument, "
    "forward(x, positions, role))"
)


# -- measuring ----------------------------------------------------------------------------


def _read(
    unit: SchemeUnit,
    config: Any,
    n: int,
    generator: torch.Generator,
    *,
    varying: bool = False,
    same: bool = False,
) -> Term:
    query, key = content(unit, config, n, generator, varying=varying, same=same)
    return term(unit, torch.arange(n).unsqueeze(0), query, key)


def _gap(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """|a - b| entrywise, 0 where both are the same mask (-inf), inf where either is NaN."""
    gap = torch.where(a == b, torch.zeros_like(a), (a - b).abs())
    return gap.nan_to_num(nan=float("inf"))


def _worst(gap: torch.Tensor) -> tuple[float, tuple[int, ...]]:
    """The largest entry of ``gap`` [heads, ...] and where it is."""
    if not gap.numel():
        return 0.0, ()
    flat = int(gap.argmax())
    at = torch.unravel_index(torch.tensor(flat), gap.shape)
    return float(gap.flatten()[flat]), tuple(int(i) for i in at)


def _scale(values: torch.Tensor) -> float:
    kept = values[values.abs() < _MASK]
    return float(kept.abs().max()) if kept.numel() else 0.0


def _who(unit: SchemeUnit) -> str:
    return f"{unit.declaration.name} ({unit.where})"


def _at(at: tuple[int, ...]) -> str:
    return f"head {at[0]}, i={at[1]}, j={at[2]}" if len(at) == 3 else "somewhere"


def _beyond(scale: float) -> str:
    return f"more than {CLAIM_TOLERANCE:g} of the term's scale {scale:.3g}"


def _within(measured: float, scale: float) -> str:
    share = f"{measured / scale:.2g}" if scale else "0"
    return (
        f"largest difference {measured:.2g}, {share} of the term's scale {scale:.3g} "
        f"(tolerance {CLAIM_TOLERANCE:g})"
    )
