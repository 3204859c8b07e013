"""Near-uniform attention: the flag that keeps untrained attention from reading as a finding.

A model that has not learned to attend spreads each query's weight evenly over the keys;
so does any model in a mode that leaves the identical-word probe nothing to tell positions
apart (the contextual mode of an exact decomposition: identical words, no positional term).
Its maps still give numbers — locality ≈ 0.023 at n = 128, a symmetry near 1, a Toeplitz
R² of a constant matrix — and those look like a (non-local, symmetric) positional
pattern. The measure here is the mean row entropy of the attention relative to a uniform
row's, log n (Shannon entropy in nats; a row-stochastic n × n map has at most log n per
row, reached only by the uniform row): within 1 % of it, the cell is flagged.

Which maps: the finest the caller has. Entropy is concave, so the entropy of an average is
at least the average of the entropies: heads that each attend sharply, but to different
offsets, can average into a flat map. Maps per layer and head (averaged over probe words,
which barely differ in the identical-word probe, whose content term is constant) therefore
flag only when the heads themselves are flat; maps already averaged over heads (the
per-word maps) flag whenever the average is flat. Both shapes are accepted, and the
difference is real: trained MiniLM in contextual mode (30 probe words, length 128) has
0.969 of uniform per layer and head — not flagged, its locality 0.038 is above a uniform
map's 0.023 — but 0.993 on the maps averaged over layers and heads, which would flag it.

Special tokens stay in, rows and columns: the question is whether the attention the model
computes is flat, and that is the full map (the paper's main locality and symmetry are
computed on it too). Removing the [CLS]/[SEP] columns and renormalising would make a
trained head that sends almost everything to [SEP] (Clark et al. 2019, §3) look uniform
over the rest — a false flag — while an untrained model is flat either way; the special
tokens' own two rows change the mean by at most 2 / n.
"""

from __future__ import annotations

import numpy as np

from posharness.stats.geometry import MetricInputError

UNIFORM_SHARE = 0.99  # mean row entropy at least this share of log n: near-uniform


def row_entropy(maps: np.ndarray) -> np.ndarray:
    """Shannon entropy (nats) of every row of maps shaped (..., n, n); rows are
    renormalised first (bf16 rows can miss 1 by 1e-3) and 0 · log 0 counts as 0."""
    weights = np.asarray(maps, dtype=np.float64)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    logs = np.log(np.where(weights > 0, weights, 1.0))
    return -(weights * logs).sum(axis=-1)


def uniformity(maps: np.ndarray) -> float:
    """Mean row entropy of the maps over log n: 1 for uniform attention, 0 for attention
    that puts each row's weight on one key."""
    maps = np.asarray(maps)
    if maps.ndim < 2 or maps.shape[-1] != maps.shape[-2]:
        raise MetricInputError(
            f"attention maps of shape {maps.shape} are not (..., n, n): pass maps per layer "
            "and head (layers, heads, n, n) or per word (words, n, n)"
        )
    n = maps.shape[-1]
    return float(row_entropy(maps).mean() / np.log(n)) if n > 1 else 0.0


def uniform_attention_flags(
    maps: np.ndarray, what: str = "the identical-word probe's attention"
) -> list[str]:
    """One flag when the maps' mean row entropy is within 1 % of uniform, else none.

    ``maps``: attention shaped (..., n, n), row-stochastic — per layer and head
    (layers, heads, n, n) where the caller has them, or per probe word (words, n, n).
    """
    share = uniformity(maps)
    if share < UNIFORM_SHARE:
        return []
    n = np.asarray(maps).shape[-1]
    return [
        f"near-uniform attention: {what} has a mean row entropy of {100 * share:.2f} % of a "
        f"uniform row's (log {n}; flagged at {100 * UNIFORM_SHARE:g} % or more): its "
        "locality, symmetry and Toeplitz R² describe flat weights, not positional structure. "
        "Either the model has not learned where to attend (train it longer), or this mode "
        "leaves the probe nothing that tells positions apart (identical words and no "
        "positional term): not a finding about the model either way"
    ]
