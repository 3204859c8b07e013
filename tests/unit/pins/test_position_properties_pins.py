"""position_properties on a positional term whose layers and heads see different entries,
pinned to Wang et al.'s properties (ICLR 2021, §3, Properties 1-3) computed here by plain
loops over the pairs.

ModernBERT alternates global layers with local ones whose sliding window writes float32's
minimum outside |i − j| <= w (Warner et al. 2024); a term averaged over layers and heads is
defined only where every head has a real score, so the averaged properties must read the
entries all heads see — averaging a masked head's zeros in would move them silently — while
each head's own properties read that head's window.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from posharness.tasks.geometry.position_properties import PositionProperties

N = 12
FLOOR = float(torch.finfo(torch.float32).min)
# (layer, head) -> half-width of its window; None: global. Layer 0 is local in two heads
# with different windows, layer 1 global but for one narrow head: only |i − j| <= 2 is
# seen by all six.
WINDOWS = [[None, 3, 5], [None, None, 2]]
COMMON = 2


class WindowedTerm:
    """A tiny random positional term: a stand-in adapter with no table and delta of shape
    [L, H, n, n], float32's minimum outside each head's window (as ModernBERT's split)."""

    spec = "windowed-random"
    max_length = N
    modes: dict = {}

    def __init__(self, seed: int = 0) -> None:
        generator = torch.Generator().manual_seed(seed)
        logits = torch.randn(len(WINDOWS), len(WINDOWS[0]), N, N, generator=generator)
        offsets = (torch.arange(N)[None, :] - torch.arange(N)[:, None]).abs()
        for layer, heads in enumerate(WINDOWS):
            for head, window in enumerate(heads):
                if window is not None:
                    logits[layer, head][offsets > window] = FLOOR
        self.logits = logits

    def position_embeddings(self) -> None:
        return None

    def positional_scores(self, length: int) -> torch.Tensor:
        return self.logits[..., :length, :length]


def monotonicity_by_hand(phi, keep, depth: int) -> float:
    """Share of (i, j, k), j and k on one side of i, |i − j| < |i − k| <= depth, with
    φ(i, j) > φ(i, k), ties one half, over the triples whose two entries are kept."""
    wins = count = 0.0
    n = len(phi)
    for i in range(n):
        for sign in (-1, 1):
            for near in range(1, depth + 1):
                for far in range(near + 1, depth + 1):
                    j, k = i + sign * near, i + sign * far
                    if not (0 <= j < n and 0 <= k < n and keep[i, j] and keep[i, k]):
                        continue
                    count += 1
                    wins += 1.0 if phi[i, j] > phi[i, k] else 0.5 if phi[i, j] == phi[i, k] else 0.0
    return wins / count


def translation_invariance_by_hand(phi, keep, depth: int) -> float:
    """1 − mean over offsets of the within-offset population variance / the pooled one."""
    n = len(phi)
    groups = []
    for m in [*range(-depth, 0), *range(1, depth + 1)]:
        values = [phi[i, i + m] for i in range(n) if 0 <= i + m < n and keep[i, i + m]]
        if len(values) >= 2:
            groups.append(values)
    pooled = [v for group in groups for v in group]
    return 1.0 - np.mean([np.var(group) for group in groups]) / np.var(pooled)


def symmetry_by_hand(phi, keep, depth: int) -> float:
    """1 − Σ ((φ(i,j) − φ(j,i))/2)² / Σ (φ(i,j) − c)² over pairs seen both ways."""
    pairs = [
        (i, j)
        for i in range(len(phi))
        for j in range(len(phi))
        if 1 <= abs(i - j) <= depth and keep[i, j] and keep[j, i]
    ]
    centre = np.mean([phi[i, j] for i, j in pairs])
    antisymmetric = sum(((phi[i, j] - phi[j, i]) / 2.0) ** 2 for i, j in pairs)
    total = sum((phi[i, j] - centre) ** 2 for i, j in pairs)
    return 1.0 - antisymmetric / total


def properties_by_hand(phi, keep, depth: int) -> dict[str, float]:
    return {
        "monotonicity": monotonicity_by_hand(phi, keep, depth),
        "translation_invariance": translation_invariance_by_hand(phi, keep, depth),
        "symmetry": symmetry_by_hand(phi, keep, depth),
    }


def run(model: WindowedTerm, max_offset: int) -> dict[str, float]:
    ctx = SimpleNamespace(options={"positions": N, "max_offset": max_offset})
    result = PositionProperties().run(model, ctx)
    return {name: metric.value for name, metric in result.metrics.items()}


@pytest.mark.parametrize("max_offset", [4, 8])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_averaged_term_reads_only_entries_every_head_sees(max_offset: int, seed: int):
    model = WindowedTerm(seed)
    logits = model.logits.double().numpy()
    offsets = np.abs(np.subtract.outer(np.arange(N), np.arange(N)))
    everywhere = offsets <= COMMON  # the narrowest window: all six heads see these
    average = logits.mean(axis=(0, 1))  # finite on ``everywhere``; garbage elsewhere
    expected = properties_by_hand(average, everywhere, max_offset)
    got = run(model, max_offset)
    for name, value in expected.items():
        assert got[f"positional_term_{name}"] == pytest.approx(value, abs=1e-12), name


# 11: offset 10 has two positions (the fewest a variance reads), 11 one (skipped)
@pytest.mark.parametrize("max_offset", [4, 8, 11])
def test_each_heads_properties_read_its_own_window(max_offset: int):
    model = WindowedTerm(2)
    logits = model.logits.double().numpy()
    offsets = np.abs(np.subtract.outer(np.arange(N), np.arange(N)))
    per_head = [
        properties_by_hand(logits[layer, head], offsets <= (window or N), max_offset)
        for layer, heads in enumerate(WINDOWS)
        for head, window in enumerate(heads)
    ]
    got = run(model, max_offset)
    for name in per_head[0]:
        mean_head = np.mean([values[name] for values in per_head])
        assert got[f"positional_term_{name}_mean_head"] == pytest.approx(mean_head, abs=1e-12)


def test_a_head_masked_entry_never_enters_the_average_as_a_zero():
    """The same term with one head's window widened to the whole matrix gives the same
    averaged properties only if the entries outside the narrowest window are never read."""
    model = WindowedTerm(3)
    narrow = run(model, 6)
    widened = WindowedTerm(3)
    widened.logits[0, 1] = torch.where(widened.logits[0, 1] == FLOOR, 5.0, widened.logits[0, 1])
    assert run(widened, 6)["positional_term_symmetry"] == narrow["positional_term_symmetry"]
    # the hand computation that averages masked zeros in gives another value
    logits = model.logits.double().numpy()
    visible = logits > -1e30
    zeros_in = np.where(visible, logits, 0.0).mean(axis=(0, 1))
    some_head = visible.any(axis=(0, 1))
    wrong = symmetry_by_hand(zeros_in, some_head, 6)
    assert abs(wrong - narrow["positional_term_symmetry"]) > 1e-3
