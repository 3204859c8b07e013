"""Specification tests for posharness.stats.geometry.

The vectorised metrics are checked against deliberately naive loop
implementations written here from the textual definitions (Chen et al. 2023
Eq. 6 and Eq. 7 as in the authors' reference code; Wennberg & Henter 2021
App. B), plus worked examples and reference values at n = 128.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch
from sklearn.preprocessing import MinMaxScaler

from posharness.stats import geometry as metrics
from posharness.stats.geometry import (
    MetricInputError,
    as_matrix,
    geometry_summary,
    locality,
    remove_positions,
    symmetry,
    symmetry_magnitude,
    toeplitz_fit,
    toeplitz_r2,
)

# --------------------------------------------------------------------------
# Naive reference implementations (plain loops, following the definitions)
# --------------------------------------------------------------------------


def naive_locality_row(row: list[float], i: int) -> float:
    return sum(w / 2 ** abs(i - j) for j, w in enumerate(row))


def naive_locality(m: np.ndarray) -> float:
    n = len(m)
    return sum(naive_locality_row(list(m[i]), i) for i in range(n)) / n


def naive_symmetry(m: np.ndarray) -> float:
    n = len(m)
    pool: list[float] = []
    for i in range(n):
        k_max = min(i, n - 1 - i)
        if k_max == 0:
            continue
        diffs = [abs(m[i][i - k] - m[i][i + k]) for k in range(1, k_max + 1)]
        scaled = MinMaxScaler().fit_transform(np.array(diffs).reshape(-1, 1))
        pool.extend(float(v) for v in scaled.ravel())
    return 1.0 - sum(pool) / len(pool)


def naive_symmetry_magnitude(m: np.ndarray) -> float:
    n = len(m)
    num = den = 0.0
    for i in range(n):
        for t in range(1, min(i, n - 1 - i) + 1):
            num += abs(m[i][i - t] - m[i][i + t])
            den += m[i][i - t] + m[i][i + t]
    return 1.0 if den == 0 else 1.0 - num / den


def naive_toeplitz_r2(a: np.ndarray) -> float:
    n = len(a)
    fit = np.zeros_like(a)
    for off in range(-(n - 1), n):
        cells = [(i, i + off) for i in range(n) if 0 <= i + off < n]
        mean = sum(a[i][j] for i, j in cells) / len(cells)
        for i, j in cells:
            fit[i][j] = mean
    rss = sum((a[i][j] - fit[i][j]) ** 2 for i in range(n) for j in range(n))
    grand = sum(a[i][j] for i in range(n) for j in range(n)) / n**2
    tss = sum((a[i][j] - grand) ** 2 for i in range(n) for j in range(n))
    return 1.0 if tss == 0 else 1.0 - rss / tss


# --------------------------------------------------------------------------
# Matrix builders
# --------------------------------------------------------------------------


def softmax_rows(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def random_stochastic(rng: np.random.Generator, kind: str) -> np.ndarray:
    n = int(rng.integers(3, 41))
    if kind == "softmax":
        return softmax_rows(rng.normal(size=(n, n)))
    if kind == "peaked":
        return softmax_rows(20.0 * rng.normal(size=(n, n)))
    if kind == "sparse":
        w = rng.random((n, n)) * (rng.random((n, n)) < 0.2)
        w[np.arange(n), rng.integers(0, n, size=n)] += 1.0  # no empty row
        return w / w.sum(axis=1, keepdims=True)
    if kind == "ties":
        w = rng.integers(0, 3, size=(n, n)).astype(float)
        w[:, 0] += 1.0
        return w / w.sum(axis=1, keepdims=True)
    raise AssertionError(kind)


def uniform(n: int) -> np.ndarray:
    return np.full((n, n), 1.0 / n)


def previous_token(n: int) -> np.ndarray:
    m = np.zeros((n, n))
    m[0, 0] = 1.0
    m[np.arange(1, n), np.arange(n - 1)] = 1.0
    return m


def causal_uniform(n: int) -> np.ndarray:
    m = np.tril(np.ones((n, n)))
    return m / m.sum(axis=1, keepdims=True)


def sinusoidal_embeddings(n: int, d: int) -> np.ndarray:
    pos = np.arange(n)[:, None]
    freq = 1.0 / 10000 ** (np.arange(0, d, 2) / d)
    e = np.zeros((n, d))
    e[:, 0::2] = np.sin(pos * freq)
    e[:, 1::2] = np.cos(pos * freq)
    return e


def toeplitz_from(values: np.ndarray) -> np.ndarray:
    """values has length 2n-1; cell (i, j) takes values[j - i + n - 1]."""
    n = (len(values) + 1) // 2
    idx = np.arange(n)
    return values[idx[None, :] - idx[:, None] + n - 1]


def dyadic_stochastic(rng: np.random.Generator, n: int) -> np.ndarray:
    """Rows of k/32: exactly representable in bfloat16, float32 and float64."""
    return rng.multinomial(32, np.full(n, 1.0 / n), size=n) / 32.0


KINDS = ["softmax", "peaked", "sparse", "ties"]

# --------------------------------------------------------------------------
# Agreement with the naive references
# --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_vectorised_metrics_match_naive_loops_on_random_stochastic_matrices(kind):
    rng = np.random.default_rng(100 + KINDS.index(kind))
    for _ in range(50):
        m = random_stochastic(rng, kind)
        assert locality(m) == pytest.approx(naive_locality(m), abs=1e-9)
        assert symmetry(m) == pytest.approx(naive_symmetry(m), abs=1e-9)
        assert symmetry_magnitude(m) == pytest.approx(naive_symmetry_magnitude(m), abs=1e-9)


def test_toeplitz_r2_matches_brute_force_diagonal_means_on_random_matrices():
    rng = np.random.default_rng(7)
    for _ in range(30):
        n = int(rng.integers(1, 25))
        a = rng.normal(size=(n, n)) + rng.normal() * np.arange(n)[:, None]
        assert toeplitz_r2(a) == pytest.approx(naive_toeplitz_r2(a), abs=1e-9)


def test_toeplitz_fit_is_constant_along_each_diagonal_and_keeps_diagonal_means():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(9, 9))
    fit = toeplitz_fit(a)
    for off in range(-8, 9):
        diag = np.diagonal(fit, offset=off)
        assert np.allclose(diag, diag[0])
        assert diag[0] == pytest.approx(np.diagonal(a, offset=off).mean())


# --------------------------------------------------------------------------
# Worked examples and reference values
# --------------------------------------------------------------------------


def test_locality_worked_examples_self_attention_is_1_and_distance_4_is_one_sixteenth():
    assert naive_locality_row([1, 0, 0, 0, 0], 0) == 1.0
    assert naive_locality_row([0, 0, 0, 0, 1], 0) == 1.0 / 16
    m = np.eye(5)
    assert locality(m) == 1.0
    m[0] = [0, 0, 0, 0, 1]
    assert locality(m) == pytest.approx((1 / 16 + 4) / 5, abs=1e-15)


@pytest.mark.parametrize(
    ("builder", "expected", "decimals"),
    [(uniform, 0.0232, 4), (np.eye, 1.0, 12), (previous_token, 0.504, 3)],
)
def test_locality_reference_values_at_n_128(builder, expected, decimals):
    assert round(locality(builder(128)), decimals) == expected


def test_symmetry_is_1_when_every_row_is_mirror_symmetric_around_its_diagonal():
    m = np.array(
        [
            [0.6, 0.1, 0.1, 0.1, 0.1],
            [0.3, 0.2, 0.3, 0.1, 0.1],
            [0.1, 0.2, 0.4, 0.2, 0.1],
            [0.1, 0.1, 0.3, 0.2, 0.3],
            [0.0, 0.0, 0.0, 0.5, 0.5],
        ]
    )
    assert symmetry(m) == 1.0
    assert symmetry_magnitude(m) == 1.0


def test_symmetry_pools_pairs_and_scores_single_asymmetric_pair_as_three_quarters():
    # Row 2 pairs (0.3, 0.1) and (0.1, 0.1): diffs [0.2, 0] -> [1, 0]; rows 1
    # and 3 have one pair each -> [0]. Pool [0, 1, 0, 0] -> 1 - 1/4.
    m = np.full((5, 5), 0.2)
    m[2] = [0.1, 0.3, 0.4, 0.1, 0.1]
    assert symmetry(m) == pytest.approx(0.75, abs=1e-12)
    assert symmetry(m) == pytest.approx(naive_symmetry(m), abs=1e-12)


def test_causal_uniform_attention_scores_perfect_symmetry_but_zero_magnitude_symmetry():
    m = causal_uniform(128)
    assert symmetry(m) == 1.0
    assert symmetry_magnitude(m) < 0.05
    assert symmetry_magnitude(m) == pytest.approx(0.0, abs=1e-12)


def test_symmetry_is_scale_free_so_tiny_noise_on_a_symmetric_map_costs_several_points():
    n = 128
    idx = np.arange(n)
    logits = -np.abs(idx[:, None] - idx[None, :]) / 2.0
    noisy = softmax_rows(logits + np.random.default_rng(0).normal(0, 1e-6, (n, n)))
    assert 0.85 < symmetry(noisy) < 0.97
    assert symmetry_magnitude(noisy) > 0.9999


def test_symmetry_magnitude_of_identity_is_1_because_no_paired_mass_exists():
    assert symmetry_magnitude(np.eye(10)) == 1.0


def test_toeplitz_r2_of_exact_toeplitz_matrix_is_1():
    values = np.random.default_rng(1).normal(size=2 * 20 - 1)
    assert toeplitz_r2(toeplitz_from(values)) == pytest.approx(1.0, abs=1e-12)


def test_toeplitz_r2_of_sinusoidal_embedding_gram_matrix_is_1():
    e = sinusoidal_embeddings(128, 64)
    assert toeplitz_r2(e @ e.T) == pytest.approx(1.0, abs=1e-9)


def test_toeplitz_r2_of_iid_random_matrix_is_near_0():
    a = np.random.default_rng(2).normal(size=(64, 64))
    assert toeplitz_r2(a) < 0.1


def test_toeplitz_r2_drops_clearly_when_a_toeplitz_matrix_is_permuted():
    n = 48
    idx = np.arange(n)
    t = np.exp(-np.abs(idx[:, None] - idx[None, :]) / 4.0) + 0.01 * (idx[None, :] - idx[:, None])
    perm = np.random.default_rng(4).permutation(n)
    assert toeplitz_r2(t) == pytest.approx(1.0, abs=1e-12)
    assert toeplitz_r2(t[perm][:, perm]) < 0.5


def test_toeplitz_r2_of_constant_matrix_is_1_rather_than_division_by_zero():
    assert toeplitz_r2(np.full((6, 6), 3.0)) == 1.0
    assert toeplitz_r2([[5.0]]) == 1.0


# --------------------------------------------------------------------------
# Input types
# --------------------------------------------------------------------------


ALL_METRICS = [locality, symmetry, symmetry_magnitude, toeplitz_r2]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_torch_tensors_of_any_float_dtype_give_the_numpy_answer(dtype):
    m = dyadic_stochastic(np.random.default_rng(5), 16)
    t = torch.tensor(m, dtype=dtype)
    for fn in ALL_METRICS:
        assert fn(t) == pytest.approx(fn(m), abs=1e-12)


def test_float32_softmax_tensor_matches_float64_within_float_tolerance():
    logits = torch.randn(24, 24, generator=torch.Generator().manual_seed(0))
    p32 = torch.softmax(logits, dim=-1)
    p64 = torch.softmax(logits.double(), dim=-1)
    assert locality(p32) == pytest.approx(locality(p64), abs=1e-6)
    assert symmetry(p32) == pytest.approx(symmetry(p64), abs=1e-4)
    assert symmetry_magnitude(p32) == pytest.approx(symmetry_magnitude(p64), abs=1e-5)


def test_tensor_requiring_grad_is_detached_and_converted_to_float64_numpy():
    t = torch.eye(4, dtype=torch.float32, requires_grad=True)
    a = as_matrix(t, require_row_stochastic=True)
    assert isinstance(a, np.ndarray) and a.dtype == np.float64
    assert locality(t) == 1.0


def test_bfloat16_softmax_rows_need_renormalising_and_remove_positions_does_it():
    logits = 2 * torch.randn(32, 32, generator=torch.Generator().manual_seed(1))
    p16 = torch.softmax(logits.bfloat16(), dim=-1)
    with pytest.raises(MetricInputError, match="sums to"):
        locality(p16)
    fixed = remove_positions(p16, [])
    assert locality(fixed) == pytest.approx(locality(torch.softmax(logits, -1)), abs=1e-2)


def test_importing_metrics_does_not_import_torch():
    code = "import sys, posharness.stats.geometry; sys.exit('torch' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    assert subprocess.run([sys.executable, "-c", code], env=env).returncode == 0


def test_nested_lists_are_accepted():
    rows = [[0.5, 0.5, 0.0], [0.25, 0.5, 0.25], [0.0, 0.5, 0.5]]
    assert locality(rows) == pytest.approx(locality(np.array(rows)))
    assert symmetry(rows) == 1.0


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------

FIX_WORDS = re.compile(r"\b(pass|apply|normalise|fix|use|keep|select)\b")


def assert_one_line_with_fix(exc: pytest.ExceptionInfo) -> str:
    msg = str(exc.value)
    assert isinstance(exc.value, ValueError)
    assert "\n" not in msg
    problem, _, fix = msg.partition(": ")
    assert problem and FIX_WORDS.search(fix), msg
    return msg


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        (np.ones((3, 4)) / 4, "square"),
        (np.ones(4) / 4, "2-D"),
        (np.ones((2, 3, 3)) / 3, "2-D"),
        (np.zeros((0, 0)), "empty"),
        (np.array([[np.nan, 1.0], [0.5, 0.5]]), "non-finite"),
        (np.array([[1.5, -0.5], [0.5, 0.5]]), "negative"),
        ([[1.0, 0.0], [0.5]], "cannot read"),
    ],
)
def test_invalid_inputs_raise_one_line_metric_input_error_with_a_fix(bad, needle):
    with pytest.raises(MetricInputError) as exc:
        locality(bad)
    assert needle in assert_one_line_with_fix(exc)


def test_rows_not_summing_to_1_are_rejected_naming_the_row_and_its_sum():
    m = np.eye(4)
    m[2] = [0.2, 0.2, 0.2, 0.1]
    with pytest.raises(MetricInputError) as exc:
        symmetry(m)
    msg = assert_one_line_with_fix(exc)
    assert "row 2" in msg and "0.7" in msg and "softmax" in msg


def test_symmetry_needs_at_least_3_positions():
    with pytest.raises(MetricInputError) as exc:
        symmetry(np.eye(2))
    assert "n >= 3" in assert_one_line_with_fix(exc)


def test_toeplitz_r2_accepts_signed_non_stochastic_but_rejects_nan():
    assert toeplitz_r2(-np.eye(3)) == pytest.approx(naive_toeplitz_r2(-np.eye(3)))
    with pytest.raises(MetricInputError) as exc:
        toeplitz_r2([[1.0, np.inf], [0.0, 1.0]])
    assert_one_line_with_fix(exc)


# --------------------------------------------------------------------------
# remove_positions and geometry_summary
# --------------------------------------------------------------------------


def test_remove_positions_drops_rows_and_columns_and_renormalises_rows():
    m = softmax_rows(np.random.default_rng(6).normal(size=(8, 8)))
    out = remove_positions(m, [0, -1])
    assert out.shape == (6, 6)
    block = m[1:7, 1:7]
    assert np.allclose(out, block / block.sum(axis=1, keepdims=True))
    assert np.allclose(out.sum(axis=1), 1.0)
    assert np.array_equal(remove_positions(m, [0, 7, 7], renormalise=False), block)


def test_remove_positions_turns_rows_without_remaining_mass_uniform():
    m = np.zeros((4, 4))
    m[:, 0] = 1.0  # every query attends only to position 0 ([CLS])
    out = remove_positions(m, [0])
    assert np.allclose(out, 1.0 / 3)


@pytest.mark.parametrize("drop", [[5], [-6], [1.5], [0, 1, 2, 3, 4]])
def test_remove_positions_rejects_bad_indices_with_one_line_error(drop):
    with pytest.raises(MetricInputError) as exc:
        remove_positions(np.eye(5), drop)
    assert_one_line_with_fix(exc)


def test_geometry_summary_validates_once_and_matches_individual_metrics(monkeypatch):
    m = random_stochastic(np.random.default_rng(8), "softmax")
    calls = []
    original = metrics.as_matrix

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(metrics, "as_matrix", counting)
    summary = geometry_summary(m)
    assert len(calls) == 1
    assert summary == {
        "locality": locality(m),
        "symmetry": symmetry(m),
        "symmetry_magnitude": symmetry_magnitude(m),
    }


def test_masked_toeplitz_r2_matches_the_plain_one_without_a_mask():
    from posharness.stats.geometry import toeplitz_r2, toeplitz_r2_where

    rng = np.random.default_rng(0)
    a = rng.normal(size=(7, 7))
    assert toeplitz_r2_where(a, np.ones((7, 7), bool)) == pytest.approx(toeplitz_r2(a), abs=1e-12)


def test_masked_toeplitz_r2_ignores_masked_entries_entirely():
    from posharness.stats.geometry import toeplitz_r2, toeplitz_r2_where

    idx = np.arange(8)
    offsets = idx[None, :] - idx[:, None]
    band = np.abs(offsets) <= 2
    toeplitz_inside = np.where(band, -np.abs(offsets).astype(float), -3.4e38)
    assert toeplitz_r2_where(toeplitz_inside, band) == pytest.approx(1.0)
    noisy = toeplitz_inside + np.where(band, np.random.default_rng(1).normal(size=(8, 8)), 0.0)
    assert toeplitz_r2_where(noisy, band) < 0.9
    # the unmasked measure is fooled by the mask: the band structure alone is Toeplitz
    assert toeplitz_r2(np.where(band, noisy, -1e6)) > 0.99
