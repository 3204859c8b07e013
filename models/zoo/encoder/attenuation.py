"""The attenuated encoding of Chen et al. (2023), Eq. 8, and fitting it to a target geometry.

    delta_ij = softmax_j(a_ij),   a_ij = -s*w*l**2 if i <= j else -w*l**2,   l = |i - j|

``w`` sets locality (w -> 0: uniform, w -> inf: the diagonal), ``s`` sets symmetry (s = 1 is
mirror symmetric; s > 1 puts more mass on the preceding tokens, s < 1 on the following ones).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from posharness.base.errors import OptionError

# fit_attenuation(0.17, 1.0, length=128), run once offline (locality residual 2.5e-15):
# BERT's locality 0.17 and symmetry 1.0, the target Chen et al. §3.3.2 tuned BERT-A* to.
BERT_LIKE_W = 0.009871876052538664
BERT_LIKE_S = 1.0


def attenuation_logits(
    positions: torch.Tensor, w: torch.Tensor | float, s: torch.Tensor | float
) -> torch.Tensor:
    """a_ij of Eq. 8 for ``positions`` [..., n]; ``w``, ``s`` broadcast against [..., n, n].

    Per-head values arrive as [H, 1, 1] and give [..., H, n, n] once ``positions`` carries a
    head axis (callers pass [B, 1, n]).
    """
    pos = positions.to(torch.float32)
    offset = pos.unsqueeze(-2) - pos.unsqueeze(-1)  # [.., i, j] = p_j - p_i
    squared = offset * offset
    ahead = offset >= 0  # i <= j: the query and every token after it
    return torch.where(ahead, -s * w * squared, -w * squared)


def attenuation_matrix(length: int, w: float, s: float) -> np.ndarray:
    """softmax_j(a_ij) for one n x n map in float64, the matrix the metrics measure."""
    idx = np.arange(length, dtype=np.float64)
    offset = idx[None, :] - idx[:, None]
    logits = np.where(offset >= 0, -s * w * offset**2, -w * offset**2)
    logits -= logits.max(axis=1, keepdims=True)
    weights = np.exp(logits)
    return weights / weights.sum(axis=1, keepdims=True)


def _locality_at(length: int, w: float, s: float) -> float:
    from posharness.stats.geometry import locality

    return locality(attenuation_matrix(length, w, s))


def _symmetry_at(length: int, w: float, s: float) -> float:
    from posharness.stats.geometry import symmetry_magnitude

    return symmetry_magnitude(attenuation_matrix(length, w, s))


_LOG_W = (-14.0, 8.0)  # w from ~1e-6 (uniform to 1e-9) to ~3000 (the diagonal)
_LOG_S = (0.0, 12.0)


def _w_for_locality(locality: float, length: int, s: float) -> float:
    """Locality rises monotonically with w at fixed s: one bracketed root."""
    from scipy.optimize import brentq

    def gap(log_w: float) -> float:
        return _locality_at(length, math.exp(log_w), s) - locality

    return math.exp(brentq(gap, *_LOG_W, xtol=1e-12, rtol=1e-12))


def symmetry_floor(locality: float, length: int = 128) -> float:
    """The lowest symmetry :func:`fit_attenuation` reaches at ``locality`` (s at the top of
    its bracket), so a caller can name the reachable range (symmetry_floor, 1]."""
    s = math.exp(_LOG_S[1])
    return _symmetry_at(length, _w_for_locality(locality, length, s), s)


def fit_attenuation(locality: float, symmetry: float, length: int = 128) -> tuple[float, float]:
    """(w, s) whose Eq. 8 map at ``length`` has the target locality and symmetry.

    Locality is Chen et al. Eq. 6 (:func:`posharness.stats.geometry.locality`); symmetry is the
    magnitude-based :func:`posharness.stats.geometry.symmetry_magnitude`, because the paper's
    scale-free Eq. 7 scores every Eq. 8 map near 1 whatever ``s`` is. Symmetry 1 gives s = 1;
    below 1 the root with s > 1 (more mass on preceding tokens) is returned: its mirror image
    1/s scores the same. Nested bracketed roots (scipy ``brentq``): w for the locality at each
    s, then s for the symmetry along that curve, so the fit cannot wander off.
    """
    from scipy.optimize import brentq

    if length < 3:
        raise OptionError(f"fit_attenuation needs length >= 3, got {length}: pass a longer length")
    floor = _locality_at(length, math.exp(_LOG_W[0]), 1.0)
    if not floor < locality < 1.0:
        raise OptionError(
            f"locality {locality} is out of reach at length {length}: pick a value in "
            f"({floor:.4f}, 1)"
        )
    if not 0.0 < symmetry <= 1.0:
        raise OptionError(f"symmetry {symmetry} is out of reach: pick a value in (0, 1]")
    if symmetry == 1.0:
        return _w_for_locality(locality, length, 1.0), 1.0

    def gap(log_s: float) -> float:
        s = math.exp(log_s)
        return _symmetry_at(length, _w_for_locality(locality, length, s), s) - symmetry

    if gap(_LOG_S[1]) > 0:
        raise OptionError(
            f"symmetry {symmetry} is out of reach at locality {locality}: pick a higher symmetry"
        )
    s = math.exp(brentq(gap, *_LOG_S, xtol=1e-10, rtol=1e-10))
    return _w_for_locality(locality, length, s), s
