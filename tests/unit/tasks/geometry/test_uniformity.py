"""Near-uniform attention is flagged; attention that has learned where to look is not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from posharness.stats.geometry import MetricInputError
from posharness.tasks.geometry.uniformity import uniform_attention_flags, uniformity

N = 64


def softmax_rows(logits: np.ndarray) -> np.ndarray:
    weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True)


def local_map(n: int = N, scale: float = 1.0) -> np.ndarray:
    """Diagonal-heavy attention: softmax(-|i - j| / scale)."""
    i = np.arange(n)
    return softmax_rows(-np.abs(i[:, None] - i[None, :]) / scale)


def test_uniform_attention_per_word_is_flagged():
    maps = np.full((10, N, N), 1.0 / N)  # (words, n, n), an untrained model's maps
    (flag,) = uniform_attention_flags(maps)
    assert flag.startswith("near-uniform attention: the identical-word probe's attention")
    assert "100.00 % of a uniform row's (log 64" in flag
    assert uniformity(maps) == pytest.approx(1.0)


def test_local_diagonal_heavy_attention_is_not_flagged():
    maps = np.stack([local_map()] * 10)
    assert uniformity(maps) < 0.5
    assert uniform_attention_flags(maps) == []


def test_small_noise_on_uniform_attention_is_still_flagged():
    rng = np.random.default_rng(0)
    maps = softmax_rows(rng.normal(0.0, 0.05, size=(4, 2, N, N)))  # (layers, heads, n, n)
    maps *= 1.001  # bf16 rows that miss 1 by 1e-3 are renormalised first
    assert uniform_attention_flags(maps, what="x")[0].startswith("near-uniform attention: x")


def test_broad_but_learned_attention_just_below_the_threshold_is_not_flagged():
    maps = np.stack([local_map(scale=40.0)])  # wide, but still falls off with distance
    assert 0.95 < uniformity(maps) < 0.99
    assert uniform_attention_flags(maps) == []


def test_sharp_heads_that_average_flat_are_not_flagged_per_head_but_their_average_is():
    # each head attends to one fixed offset; 64 heads cover every offset once
    heads = np.stack([np.roll(np.eye(N), k, axis=1) for k in range(N)])[None]  # (1, 64, n, n)
    assert uniform_attention_flags(heads) == []  # per layer and head: sharp
    assert uniform_attention_flags(heads.mean(axis=(0, 1))[None]) != []  # averaged: flat


def test_a_head_that_sinks_into_a_special_token_is_not_read_as_uniform():
    sink = np.full((N, N), 0.02 / (N - 1))
    sink[:, -1] = 0.98  # [SEP] takes almost all weight; the rest is spread evenly
    assert uniform_attention_flags(sink[None]) == []


def test_maps_that_are_not_square_are_refused_in_one_line():
    with pytest.raises(MetricInputError, match=r"not \(\.\.\., n, n\)"):
        uniformity(np.ones((3, 4, 5)))


def test_a_random_init_model_is_flagged_on_its_toeplitz_cell(tiny_bert: Path, tmp_path: Path):
    from posharness.api import evaluate

    outcome = evaluate(
        f"hf:{tiny_bert}",
        "toeplitz",
        output_dir=tmp_path / "results",
        cache_dir=None,
        device="cpu",
        task_args={"toeplitz": {"length": "16", "words": "40", "controls": "2", "figures": "0"}},
    )
    (cell,) = outcome.cells
    assert any(f.startswith("near-uniform attention") for f in cell.result.flags)
    assert cell.result.metrics["attention_r2"].n == 40  # probe words, not positions
    assert not any("fewer than 30" in f for f in cell.result.flags)
