"""Exact McNemar (McNemar 1947) by hand, the printed Δ's format, and which p the family's
refinement redraws (``stats.paired_tests``)."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

from posharness.stats.paired_tests import (
    REFINE_BELOW,
    RESAMPLES,
    adjust,
    format_delta,
    mcnemar,
    permutation_test,
)


def mcnemar_by_hand(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided exact binomial p of the discordant pairs: only B right (c) of c + b,
    p = min(1, 2 P(X <= min(b, c))) for X ~ Bin(b + c, 1/2)."""
    b = int(np.sum((x == 1) & (y == 0)))
    c = int(np.sum((x == 0) & (y == 1)))
    m = b + c
    tail = sum(comb(m, k) for k in range(min(b, c) + 1)) / 2**m
    return min(1.0, 2.0 * tail)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mcnemar_p_is_the_exact_binomial_test_of_the_discordant_pairs(seed: int):
    rng = np.random.default_rng(seed)
    x = (rng.random(60) < 0.6).astype(float)
    y = np.where(rng.random(60) < 0.3, 1.0 - x, x)  # about 18 discordant pairs
    test = mcnemar(x, y)
    assert test.p_value == pytest.approx(mcnemar_by_hand(x, y), rel=1e-12)
    assert test.delta == pytest.approx(float(np.mean(y - x)), abs=1e-15)


def test_mcnemar_of_two_against_ten_discordant_pairs():
    x = np.array([1.0] * 2 + [0.0] * 10 + [1.0] * 8)
    y = np.array([0.0] * 2 + [1.0] * 10 + [1.0] * 8)
    assert mcnemar(x, y).p_value == pytest.approx(2 * (1 + 12 + 66) / 4096, rel=1e-12)


def test_mcnemar_without_discordant_pairs_gives_p_one():
    x = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    assert mcnemar(x, x.copy()).p_value == 1.0


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.3, "+0.3000"), (-0.3, "-0.3000"), (-0.0004, "-4.00e-04"), (0.0004, "+4.00e-04")],
)
def test_a_difference_prints_four_decimals_or_two_significant_digits(value, text):
    assert format_delta(value) == text


def test_only_a_p_below_refine_below_is_redrawn_with_the_familys_resamples():
    rng = np.random.default_rng(4)
    x = rng.normal(size=40)
    clear = permutation_test(x, x + 1.0 + rng.normal(0, 0.3, 40))  # p at its floor
    null = permutation_test(x, x + rng.normal(0, 1.0, 40))  # p far above REFINE_BELOW
    assert null.p_value > REFINE_BELOW
    before = null.p_value
    adjust([clear, null] + [permutation_test(x, x + 1.0) for _ in range(8)])
    assert clear.resamples > RESAMPLES  # redrawn: ten tests need R = 4,000
    assert null.resamples == RESAMPLES and null.p_value == before


def test_the_permutation_tests_default_draws_are_seed_zeros():
    """A rerun of ``compare`` prints the same p: the default seed is 0, as the interval's."""
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=50), rng.normal(0.2, 1.0, size=50)
    default, zero, one = (
        permutation_test(x, y),
        permutation_test(x, y, 0),
        permutation_test(x, y, 1),
    )
    assert default.p_value == zero.p_value != one.p_value
