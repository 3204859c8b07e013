"""Common resamples: a paired bootstrap of an aggregate between two cells run apart.

A paired bootstrap draws the examples once per replicate and recomputes *both* models'
aggregates on that draw (Efron & Tibshirani 1993, ch. 6; Koehn 2004 for paired resampling
of corpus-level scores). When the aggregate is a function of something too large to keep
per example — the symmetry of an identical-word probe's attention averaged over 100
words needs the 100 maps of 128 × 128 — ``compare`` cannot redo the draws later. Instead
each cell draws its resamples from its own example ids alone (sorted, with one fixed
generator seed), so every cell that scored the same examples uses the same draws; it
keeps the aggregate of each draw. Subtracting two cells' replicates draw by draw is then
exactly the paired bootstrap of the difference, with nothing per example kept but the
ids' hash that proves the draws were the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from posharness.storage.hashing import hash_obj

SCHEME = "common-resamples-v1"  # bump when the draws change: old replicates stop pairing
SEED = 20230707  # fixed, so two cells with the same examples draw the same resamples
DEFAULT_COUNT = 1000
# where a cell keeps its replicates: in its result's details and in a board's examples bundle
REPLICATES_KEY = "paired_replicates"


def examples_key(ids: Iterable[str]) -> str:
    """Which examples the draws were made over: the hash of the sorted, distinct ids."""
    ordered = sorted({str(i) for i in ids})
    return hash_obj({"scheme": SCHEME, "ids": ordered})[:16]


def common_draws(ids: list[str], count: int) -> np.ndarray:
    """Resample indices ``(count, n)`` into ``ids`` *as given*, the same draws for every
    cell with the same ids in any order: drawn over the sorted ids, then mapped back."""
    if len(set(ids)) != len(ids):
        raise ValueError("example ids must be distinct to draw common resamples")
    order = np.argsort(np.array([str(i) for i in ids], dtype=object), kind="stable")
    rng = np.random.default_rng(SEED)
    sorted_draws = rng.integers(0, len(ids), size=(count, len(ids)))
    return order[sorted_draws]


def replicates(
    ids: list[str],
    statistic: Callable[[np.ndarray], Mapping[str, float]],
    count: int = DEFAULT_COUNT,
) -> dict[str, Any]:
    """``statistic(indices)`` on each common draw, ready for ``TaskResult.details``.

    ``statistic`` takes the indices of one draw (into ``ids``) and returns each metric's
    value on it. The record holds the scheme, the examples' key and the values per metric,
    rounded to 12 significant digits (the JSON stays small; the tests' resolution does
    not depend on the last digits).
    """
    if count < 2 or len(ids) < 2:
        return {}
    values: dict[str, list[float]] = {}
    for draw in common_draws(ids, count):
        for name, value in statistic(draw).items():
            values.setdefault(name, []).append(float(f"{value:.12g}"))
    return {
        "scheme": SCHEME,
        "examples": examples_key(ids),
        "n": len(ids),
        "count": count,
        "values": values,
    }


def paired_replicates(
    a: Mapping[str, Any] | None, b: Mapping[str, Any] | None, metric: str
) -> tuple[np.ndarray, np.ndarray] | str:
    """Both cells' replicates of ``metric`` when their draws were the same; else why not."""
    if not a or not b:
        return "one side kept no common-resample replicates (rerun its cells with this version)"
    if a.get("scheme") != b.get("scheme"):
        return f"replicates drawn by different schemes ({a.get('scheme')} vs {b.get('scheme')})"
    if a.get("examples") != b.get("examples"):
        return "the two cells scored different examples, so their resamples differ"
    left, right = a.get("values", {}).get(metric), b.get("values", {}).get(metric)
    if left is None or right is None or len(left) != len(right):
        return f"no common-resample replicates of '{metric}' on both sides"
    return np.asarray(left, dtype=np.float64), np.asarray(right, dtype=np.float64)
