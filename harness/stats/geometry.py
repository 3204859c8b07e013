"""Geometry metrics for attention and position-embedding matrices.

The harness compares positional encodings by the *shape* of what they induce:

* locality and symmetry of attention maps, following Chen et al. (2023),
  "The Locality and Symmetry of Positional Encodings" (Eq. 6 and Eq. 7), and
* translation invariance of position-embedding Gram matrices, measured as the
  R^2 of a least-squares Toeplitz fit, following Wennberg & Henter (2021),
  "The Case for Translation-Invariant Self-Attention in Transformer-Based
  Language Models", Appendix B.

Every public function validates its input through :func:`as_matrix` once and
then delegates to a private helper that takes an already-validated float64
array, so composite functions (:func:`geometry_summary`) never re-validate.
torch is imported lazily, only when a tensor is actually passed in, to keep
``import posharness.stats.geometry`` cheap.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from posharness.base.errors import PosharnessError

_NEG_TOL = -1e-6  # float noise from softmax may dip a hair below zero
# Tight enough to catch unnormalised maps. NB: bfloat16 softmax rows miss 1 by ~2e-3,
# so upcast to float32 before the softmax (or renormalise rows) for bf16 models.
_ROW_SUM_ATOL = 1e-4
# sklearn's MinMaxScaler treats a feature range below 10*eps as zero; matching
# it keeps rounding noise (e.g. 1e-17 differences) from being blown up to [0, 1].
_ZERO_RANGE = 10 * np.finfo(np.float64).eps


class MetricInputError(PosharnessError, ValueError):
    """Invalid input to a metric; the message is one line: problem, then fix."""


def _to_numpy(matrix: Any) -> np.ndarray:
    """Convert torch tensors, arrays or nested lists to a float64 ndarray."""
    if type(matrix).__module__.startswith("torch"):
        import torch  # lazy: only paid for by callers who already use torch

        if isinstance(matrix, torch.Tensor):
            # float64 first: numpy has no bfloat16, and the cast is exact.
            return matrix.detach().to(device="cpu", dtype=torch.float64).numpy()
    try:
        return np.asarray(matrix, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise MetricInputError(
            f"cannot read matrix as numbers ({reason}): pass a numeric numpy array, "
            "torch tensor or rectangular nested list"
        ) from None


def as_matrix(matrix: Any, *, require_row_stochastic: bool) -> np.ndarray:
    """Validate ``matrix`` and return it as a float64 (n, n) numpy array.

    Accepts numpy arrays, torch tensors (any dtype or device; detached) and
    nested lists.  Checks: 2-D, square, n >= 1, all finite.  With
    ``require_row_stochastic`` it also checks that entries are non-negative
    (tolerance -1e-6) and that every row sums to 1 within atol 1e-4, because
    the Chen et al. (2023) metrics read each row as a probability distribution.
    """
    a = _to_numpy(matrix)
    if a.ndim != 2:
        raise MetricInputError(
            f"matrix must be 2-D, got {a.ndim}-D shape {a.shape}: pass a single n x n "
            "matrix (select one layer/head, or average over them first)"
        )
    if a.shape[0] != a.shape[1]:
        raise MetricInputError(f"matrix must be square, got shape {a.shape}: pass an n x n matrix")
    if a.shape[0] == 0:
        raise MetricInputError(
            "matrix is empty, got shape (0, 0): pass an n x n matrix with n >= 1"
        )
    bad = int(np.count_nonzero(~np.isfinite(a)))
    if bad:
        raise MetricInputError(
            f"matrix has {bad} non-finite entries (NaN or inf): fix or mask them "
            "before computing metrics"
        )
    if require_row_stochastic:
        if a.min() < _NEG_TOL:
            i, j = np.unravel_index(int(np.argmin(a)), a.shape)
            raise MetricInputError(
                f"matrix has negative entry {a[i, j]:.6g} at ({i}, {j}): pass attention "
                "probabilities (apply softmax to the scores), not raw logits"
            )
        sums = a.sum(axis=1)
        off = np.flatnonzero(np.abs(sums - 1.0) > _ROW_SUM_ATOL)
        if off.size:
            i = int(off[0])
            raise MetricInputError(
                f"row {i} sums to {sums[i]:.6g}, not 1 (atol {_ROW_SUM_ATOL:g}), "
                f"{off.size} row(s) affected: apply softmax over the last axis or "
                "normalise each row to sum to 1"
            )
    return a


def _locality(a: np.ndarray) -> float:
    n = a.shape[0]
    idx = np.arange(n)
    weights = np.exp2(-np.abs(idx[:, None] - idx[None, :]).astype(np.float64))
    return float((a * weights).sum(axis=1).mean())


def locality(matrix: Any) -> float:
    """Locality of a row-stochastic attention matrix, Chen et al. (2023) Eq. 6.

    Row score: sum_j M[i, j] / 2**|i - j|; the matrix score is the mean over
    rows.  Attention entirely on the query itself scores 1; each step of
    distance halves the credit, so a uniform map at n=128 scores about 0.023.
    """
    return _locality(as_matrix(matrix, require_row_stochastic=True))


def _paired_neighbours(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (left, right, valid), each (n, M) with M = (n - 1) // 2.

    left[i, k-1] = a[i, i-k] and right[i, k-1] = a[i, i+k]; valid marks the
    k <= min(i, n-1-i) for which both neighbours exist.
    """
    n = a.shape[0]
    i = np.arange(n)[:, None]
    k = np.arange(1, (n - 1) // 2 + 1)[None, :]
    valid = k <= np.minimum(i, n - 1 - i)
    left = a[i, np.clip(i - k, 0, n - 1)]
    right = a[i, np.clip(i + k, 0, n - 1)]
    return left, right, valid


def _symmetry(a: np.ndarray) -> float:
    n = a.shape[0]
    if n < 3:
        raise MetricInputError(
            f"symmetry needs n >= 3 (no row has a neighbour on both sides), got n={n}: "
            "pass a longer sequence"
        )
    left, right, valid = _paired_neighbours(a)
    d = np.abs(left - right)
    lo = np.where(valid, d, np.inf).min(axis=1, keepdims=True)
    hi = np.where(valid, d, -np.inf).max(axis=1, keepdims=True)
    span = hi - lo
    constant = ~(span >= _ZERO_RANGE)  # also catches rows with no pairs (inf - inf)
    scaled = np.where(constant, 0.0, (d - lo) / np.where(constant, 1.0, span))
    return float(1.0 - scaled[valid].mean())


def symmetry(matrix: Any) -> float:
    """Symmetry of a row-stochastic attention matrix, Chen et al. (2023) Eq. 7.

    Follows the authors' public reference implementation: for each row i with
    m = min(i, n-1-i) >= 1, pair M[i, i-k] with M[i, i+k] for k = 1..m, take
    |differences|, min-max normalise them *within the row* (a constant row of
    differences maps to 0, as sklearn's MinMaxScaler does), pool the normalised
    values of all rows (pairs are pooled, rows are not averaged) and return
    1 - mean(pool).

    Quirks worth knowing when reading results: the min-max step makes the
    metric scale-free, so 1e-6 logit noise on a mirror-symmetric local map
    (softmax of -|i-j|/2, n=128) already drops it to ~0.93 (i.i.d. noise on a
    uniform map: ~0.67), while causal uniform attention (left neighbours all
    1/(i+1), right ones 0, hence constant differences) scores exactly 1.  The
    first and last rows have no pairs and are skipped.  See
    :func:`symmetry_magnitude` for a mass-weighted companion.  Raises
    :class:`MetricInputError` for n < 3.
    """
    return _symmetry(as_matrix(matrix, require_row_stochastic=True))


def _symmetry_magnitude(a: np.ndarray) -> float:
    left, right, valid = _paired_neighbours(a)
    diff = float(np.abs(left - right)[valid].sum())
    mass = float((left + right)[valid].sum())
    if mass <= 0.0:
        return 1.0  # no mass on any paired cell: nothing can be asymmetric
    return 1.0 - diff / mass


def symmetry_magnitude(matrix: Any) -> float:
    """Mass-weighted symmetry: 1 - sum|M[i,i-t] - M[i,i+t]| / sum(M[i,i-t] + M[i,i+t]).

    Sums run over every row i and t = 1..min(i, n-1-i).  Unlike the scale-free
    Chen et al. (2023) Eq. 7 (:func:`symmetry`), differences count in
    proportion to the attention mass they carry, so causal attention scores 0
    and a row-wise mirror-symmetric map scores 1.  When no paired off-diagonal
    cell carries mass (e.g. the identity) the result is 1.0: with nothing on
    either side there is nothing asymmetric.  n < 3 likewise gives 1.0.
    """
    return _symmetry_magnitude(as_matrix(matrix, require_row_stochastic=True))


def _toeplitz_fit(a: np.ndarray) -> np.ndarray:
    n = a.shape[0]
    idx = np.arange(n)
    offset = (idx[None, :] - idx[:, None] + n - 1).ravel()  # diagonal id 0..2n-2
    counts = np.bincount(offset, minlength=2 * n - 1)
    means = np.bincount(offset, weights=a.ravel(), minlength=2 * n - 1) / counts
    return means[offset].reshape(n, n)


def toeplitz_fit(matrix: Any) -> np.ndarray:
    """Least-squares Toeplitz approximation: every diagonal replaced by its mean.

    A Toeplitz matrix is constant along each diagonal j - i, so the best fit in
    the least-squares sense is the per-diagonal mean (Wennberg & Henter 2021,
    App. B).  Works on any square finite matrix (Gram matrices may be signed).
    """
    return _toeplitz_fit(as_matrix(matrix, require_row_stochastic=False))


def toeplitz_r2(matrix: Any) -> float:
    """Translation invariance as R^2 of a Toeplitz fit, Wennberg & Henter (2021) App. B.

    R^2 = 1 - RSS / TSS with RSS = sum (A - T)^2 for the best Toeplitz fit T and
    TSS = sum (A - mean(A))^2.  1 means A depends only on j - i (perfectly
    translation invariant, e.g. sinusoidal embedding Gram matrices); an i.i.d.
    random matrix scores about (2n - 1) / n^2.  A constant matrix (TSS = 0) is
    trivially Toeplitz, so it returns 1.0 instead of dividing by zero.
    """
    a = as_matrix(matrix, require_row_stochastic=False)
    tss = float(((a - a.mean()) ** 2).sum())
    if tss == 0.0:
        return 1.0
    rss = float(((a - _toeplitz_fit(a)) ** 2).sum())
    return 1.0 - rss / tss


def toeplitz_r2_where(matrix: Any, keep: Any) -> float:
    """:func:`toeplitz_r2` over the entries where ``keep`` is True only.

    For logits that a mask removes (a sliding window sets them to the dtype's minimum):
    those entries say nothing about translation invariance, and letting them in would
    make any banded mask look perfectly Toeplitz.
    """
    keep = np.asarray(keep, dtype=bool)
    a = np.where(keep, np.asarray(matrix, dtype=np.float64), 0.0)
    a = as_matrix(a, require_row_stochastic=False)
    if keep.shape != a.shape:
        raise MetricInputError(f"mask shape {keep.shape} differs from matrix shape {a.shape}")
    n = a.shape[0]
    idx = np.arange(n)
    offset = (idx[None, :] - idx[:, None] + n - 1)[keep]
    values = a[keep]
    if values.size == 0:
        raise MetricInputError("every entry is masked: nothing to fit")
    counts = np.bincount(offset, minlength=2 * n - 1)
    means = np.bincount(offset, weights=values, minlength=2 * n - 1) / np.maximum(counts, 1)
    tss = float(((values - values.mean()) ** 2).sum())
    if tss == 0.0:
        return 1.0
    return 1.0 - float(((values - means[offset]) ** 2).sum()) / tss


def remove_positions(matrix: Any, drop: Sequence[int], *, renormalise: bool = True) -> np.ndarray:
    """Delete rows and columns ``drop`` (e.g. [CLS]/[SEP]) and optionally renormalise.

    This is how "special tokens excluded" attention maps are produced: special
    tokens soak up attention and would otherwise dominate locality/symmetry.
    With ``renormalise`` each remaining row is rescaled to sum to 1 so the
    result is row-stochastic again; a row left with no mass becomes uniform.
    Negative indices count from the end; duplicates are ignored.
    """
    a = as_matrix(matrix, require_row_stochastic=False)
    n = a.shape[0]
    dropped: set[int] = set()
    for p in drop:
        try:
            q = operator.index(p)
        except TypeError:
            raise MetricInputError(
                f"position {p!r} is not an integer: pass integer indices to drop"
            ) from None
        if not -n <= q < n:
            raise MetricInputError(
                f"position {q} is out of range for n={n}: pass indices in [-{n}, {n - 1}]"
            )
        dropped.add(q % n)
    keep = np.array([p for p in range(n) if p not in dropped], dtype=np.intp)
    if keep.size == 0:
        raise MetricInputError(
            f"dropping {len(dropped)} positions leaves an empty matrix: keep at least one position"
        )
    out = a[np.ix_(keep, keep)]
    if not renormalise:
        return out
    if out.min() < _NEG_TOL:
        raise MetricInputError(
            "cannot renormalise rows with negative entries: pass attention "
            "probabilities or use renormalise=False"
        )
    sums = out.sum(axis=1, keepdims=True)
    safe = np.where(sums > 0, sums, 1.0)
    return np.where(sums > 0, out / safe, 1.0 / keep.size)


def geometry_summary(matrix: Any) -> dict[str, float]:
    """Locality, symmetry and symmetry_magnitude of one attention matrix.

    Validates once and reuses the float64 array for all three metrics.
    Raises :class:`MetricInputError` for n < 3 (symmetry is undefined there).
    """
    a = as_matrix(matrix, require_row_stochastic=True)
    return {
        "locality": _locality(a),
        "symmetry": _symmetry(a),
        "symmetry_magnitude": _symmetry_magnitude(a),
    }
