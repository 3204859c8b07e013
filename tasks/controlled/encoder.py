"""The purely positional encoder of Chen et al. (2023, §3.3.1, Listing 2), many settings at once.

Listing 2 keeps only the positional weights of Eq. 4: the attention is a fixed table
``pe`` (Eq. 8, with w and s fitted to a target locality and symmetry), the values are the
word vectors themselves (no projection), padded keys are zeroed (``masked_fill(~mask,
0.)``, not renormalised), and ``h = pe @ x``. One layer, one head, nothing learned.

Because nothing in it is learned, the encoder of every setting k is a fixed linear map
A_k, and the sentence vectors of all settings are computed in one batched product
``A[k, :n, :n] @ X[b]`` per sentence length n (no padding beyond the sentence: the
zeroed keys of Listing 2 contribute nothing, and padded queries are not pooled). The
classifier that follows (training.py) then reads precomputed features.

The fit of w and s is BERT-A*'s (``fit_attenuation``, posharness.models.zoo), at the
table's own length (``max_length``): locality and symmetry are those of the L x L table.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch

from posharness.base.errors import OptionError

POOLINGS = ("max", "mean")


@dataclass(frozen=True)
class Setting:
    """One encoder: the target geometry, the fitted Eq. 8 parameters, and what they give."""

    target_locality: float
    target_symmetry: float
    w: float
    s: float
    locality: float  # of the fitted L x L table (Chen et al. Eq. 6)
    symmetry: float  # magnitude-based, as fit_attenuation measures it
    length: int

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def fit_setting(locality: float, symmetry: float, length: int) -> Setting:
    """Eq. 8's w and s for a target (locality, symmetry) at ``length`` positions.

    An unreachable target fails in one line with the reachable range at that length.
    """
    from posharness.models.zoo.encoder.attenuation import (
        attenuation_matrix,
        fit_attenuation,
        symmetry_floor,
    )
    from posharness.stats.geometry import locality as locality_of
    from posharness.stats.geometry import symmetry_magnitude

    floor = locality_of(attenuation_matrix(length, 1e-6, 1.0))
    if not floor < locality < 1.0:
        raise OptionError(
            f"locality {locality} is unreachable by Eq. 8 at {length} positions: "
            f"pick one in ({floor:.4f}, 1)"
        )

    def unreachable() -> OptionError:
        try:
            span = f"pick one in ({symmetry_floor(locality, length):.4f}, 1]"
        except ValueError:  # the floor itself cannot be fitted: only 1 is safe
            span = "pick a higher symmetry (1 is always reachable)"
        return OptionError(
            f"symmetry {symmetry} is unreachable by Eq. 8 at locality {locality} and {length} "
            f"positions: {span}"
        )

    if not 0.0 < symmetry <= 1.0:
        raise unreachable()
    try:
        if symmetry < 1.0 and symmetry <= symmetry_floor(locality, length):
            raise unreachable()
        w, s = fit_attenuation(locality, symmetry, length)
    except ValueError:  # a bracket of the nested fit holds no root
        raise unreachable() from None
    table = attenuation_matrix(length, w, s)
    return Setting(
        target_locality=locality,
        target_symmetry=symmetry,
        w=w,
        s=s,
        locality=float(locality_of(table)),
        symmetry=float(symmetry_magnitude(table)),
        length=length,
    )


def attention_tables(settings: list[Setting]) -> torch.Tensor:
    """The Eq. 8 tables of ``settings`` as one float32 tensor [K, L, L]."""
    from posharness.models.zoo.encoder.attenuation import attenuation_matrix

    tables = [attenuation_matrix(s.length, s.w, s.s) for s in settings]
    return torch.from_numpy(np.stack(tables).astype(np.float32))


def attention_for(tables: torch.Tensor, n: int, max_length: int) -> torch.Tensor:
    """Listing 2's attention for a sentence of ``n`` tokens padded to ``max_length``:
    the table with padded keys zeroed (not renormalised). [K, max_length, max_length]."""
    mask = torch.zeros(max_length, dtype=torch.bool)
    mask[:n] = True
    return tables.masked_fill(~mask, 0.0)


def encode(
    tables: torch.Tensor,
    sentences: list[np.ndarray],
    pooling: str = "max",
    budget: int = 1 << 24,
) -> torch.Tensor:
    """Pooled sentence vectors [K, N, d] of every setting for ``sentences`` ([n_i, d] each).

    Sentences are grouped by length n and multiplied by the tables' top-left n x n block in
    chunks of at most ``budget`` floats, then max- or mean-pooled over the n positions.
    """
    if pooling not in POOLINGS:
        raise OptionError(f"pooling={pooling!r}: expected one of {', '.join(POOLINGS)}")
    k = tables.shape[0]
    d = sentences[0].shape[1]
    out = torch.empty((k, len(sentences), d), dtype=torch.float32)
    lengths = np.array([len(s) for s in sentences])
    for n in np.unique(lengths):
        rows = np.flatnonzero(lengths == n)
        block = tables[:, :n, :n].unsqueeze(1)  # [K, 1, n, n]
        step = max(1, budget // max(k * n * d, 1))
        for start in range(0, len(rows), step):
            chosen = rows[start : start + step]
            x = torch.from_numpy(np.stack([sentences[i] for i in chosen]))  # [B, n, d]
            h = block @ x.unsqueeze(0)  # [K, B, n, d]
            pooled = h.amax(dim=2) if pooling == "max" else h.mean(dim=2)
            out[:, torch.from_numpy(chosen)] = pooled
    return out
