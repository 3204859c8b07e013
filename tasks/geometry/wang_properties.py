"""Wang et al.'s position-wise properties of a proximity matrix φ (ICLR 2021, "On position
embeddings in BERT", §3, Properties 1-3), each read as a score in [0, 1] that is 1 exactly
when the property holds within ``max_offset``:

* monotonicity (Property 1): m > n ⇔ φ(x, x+m) < φ(x, x+n), proximity falls with distance;
  scored as the share of (near, far) pairs on one side of a position that obey it;
* translation invariance (Property 2): φ(x₁, x₁+m) = φ(x₂, x₂+m) for every x₁, x₂, a
  function of the offset m alone; scored as 1 − the within-offset share of the variance;
* symmetry (Property 3): φ(x, y) = φ(y, x); scored as the symmetric part's share of the
  sum of squares.

φ(i, j) is how strongly position i relates to position j: the dot product of two position
embeddings for an absolute table (Wang et al.'s object), the content-free positional logit
delta for schemes that act on attention. For the sinusoidal table of Vaswani et al. (2017),
E_i·E_j = Σ_k cos(ω_k (i − j)) depends on i − j only and is even in it, so translation
invariance and symmetry are 1 exactly — Wang et al.'s reading of the sinusoidal PE —
while monotonicity holds only as far as the sum of cosines keeps falling, which at
D = 32 depends on the width d (1 at d = 512 and 768, 0.996 at 256, 0.82 at 32; the unit
tests pin these). Every property reads only the pairs within ``max_offset`` of each other
(1 ≤ |i − j| ≤ D, D = 32 by default), so a long table's far pairs do not outweigh the
near ones. ``keep`` marks the entries that are real scores (a sliding window writes the
dtype's minimum elsewhere); pairs that touch a masked entry are left out. The paper states
the properties, not these scores: the formulas, and the choices they make, are in
docs/tasks/geometry.md, "Position-wise properties".
"""

from __future__ import annotations

import numpy as np

from posharness.stats.geometry import MetricInputError

MAX_OFFSET = 32


def _checked(phi: np.ndarray, keep: np.ndarray | None, max_offset: int):
    phi = np.asarray(phi, dtype=np.float64)
    if phi.ndim != 2 or phi.shape[0] != phi.shape[1] or phi.shape[0] < 3:
        raise MetricInputError(
            f"proximity must be an n x n matrix with n >= 3, got shape {phi.shape}: "
            "pass one layer/head, or their mean"
        )
    if max_offset < 2:
        raise MetricInputError(f"max_offset={max_offset}: use at least 2 (two distances)")
    keep = np.ones(phi.shape, dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
    keep = keep & np.isfinite(phi)
    return np.where(keep, phi, 0.0), keep


def _side(phi: np.ndarray, keep: np.ndarray, sign: int, depth: int):
    """values[i, d-1] = φ(i, i + sign·d) for d = 1..depth, and where that entry exists."""
    n = len(phi)
    i = np.arange(n)[:, None]
    j = i + sign * np.arange(1, depth + 1)[None, :]
    inside = (j >= 0) & (j < n)
    j = np.clip(j, 0, n - 1)
    return phi[i, j], inside & keep[i, j]


def monotonicity(phi: np.ndarray, max_offset: int = MAX_OFFSET, keep=None) -> float:
    """Share of triples (i, j, k), j and k on the same side of i, |i−j| < |i−k| ≤ D, with
    φ(i, j) > φ(i, k); a tie counts one half (so a constant φ scores 0.5, like chance).

    1: proximity falls strictly with distance within D; 0.5: no order; 0: it rises.
    """
    phi, keep = _checked(phi, keep, max_offset)
    depth = min(max_offset, len(phi) - 1)
    near_wins = 0.0
    triples = 0
    upper = np.triu(np.ones((depth, depth), dtype=bool), k=1)  # d1 < d2
    for sign in (-1, 1):
        values, valid = _side(phi, keep, sign, depth)
        both = valid[:, :, None] & valid[:, None, :] & upper[None]
        near, far = values[:, :, None], values[:, None, :]
        near_wins += float(np.sum((near > far) & both)) + 0.5 * float(np.sum((near == far) & both))
        triples += int(both.sum())
    if triples == 0:
        raise MetricInputError("no triple (i, j, k) is visible: the matrix is masked everywhere")
    return near_wins / triples


def _offset_pairs(phi: np.ndarray, keep: np.ndarray, depth: int):
    """{m: φ(i, i+m) over the i where it exists} for m = ±1..±depth."""
    out = {}
    for sign in (-1, 1):
        values, valid = _side(phi, keep, sign, depth)
        for d in range(depth):
            out[sign * (d + 1)] = values[valid[:, d], d]
    return out


def translation_invariance(phi: np.ndarray, max_offset: int = MAX_OFFSET, keep=None) -> float:
    """1 − mean over offsets m (±1..±D) of Var_i φ(i, i+m) / Var φ over the same pairs.

    Population variances (ddof 0); offsets with fewer than two positions are skipped. 1: φ
    depends on the offset only (Toeplitz within D); about 0 when the offset explains
    nothing. A φ constant over the pairs is Toeplitz: 1.
    """
    phi, keep = _checked(phi, keep, max_offset)
    depth = min(max_offset, len(phi) - 1)
    groups = [v for v in _offset_pairs(phi, keep, depth).values() if len(v) >= 2]
    if not groups:
        raise MetricInputError("no offset has two visible positions: the matrix is too masked")
    total = float(np.var(np.concatenate(groups)))
    if total <= 0.0:
        return 1.0
    return 1.0 - float(np.mean([np.var(v) for v in groups])) / total


def proximity_symmetry(phi: np.ndarray, max_offset: int = MAX_OFFSET, keep=None) -> float:
    """1 − Σ A² / Σ (φ − c)² over the pairs 1 ≤ |i−j| ≤ D where both φ(i, j) and φ(j, i)
    are visible, with A = (φ − φᵀ)/2 the antisymmetric part and c the pairs' mean.

    The sum of squares splits exactly into symmetric and antisymmetric parts, so this is the
    symmetric part's share: 1 for φ = φᵀ (every dot-product table), about 0.5 for
    independent noise, 0 for φ = −φᵀ. A constant φ is symmetric: 1.
    """
    phi, keep = _checked(phi, keep, max_offset)
    n = len(phi)
    i = np.arange(n)
    distance = np.abs(i[:, None] - i[None, :])
    pairs = keep & keep.T & (distance >= 1) & (distance <= max_offset)
    if not pairs.any():
        raise MetricInputError("no pair (i, j) is visible both ways: the matrix is too masked")
    centred = phi[pairs] - phi[pairs].mean()
    antisymmetric = ((phi - phi.T) / 2.0)[pairs]
    total = float(np.sum(centred**2))
    if total <= 0.0:
        return 1.0
    return 1.0 - float(np.sum(antisymmetric**2)) / total


def position_properties(
    phi: np.ndarray, max_offset: int = MAX_OFFSET, keep=None
) -> dict[str, float]:
    """All three properties of one proximity matrix."""
    return {
        "monotonicity": monotonicity(phi, max_offset, keep),
        "translation_invariance": translation_invariance(phi, max_offset, keep),
        "symmetry": proximity_symmetry(phi, max_offset, keep),
    }
