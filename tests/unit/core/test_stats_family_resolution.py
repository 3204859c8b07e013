"""Issue 38, part 1: a test's resolution follows the family it is Holm-adjusted in.

A Monte Carlo p cannot fall below 1/(R+1), and Holm multiplies the smallest p by the
number of tests: with a fixed R of 2,000, from about 50 tests on nothing could be
significant however large the effect. These tests pin that the resamples grow with the
family, so clear effects survive the correction and null effects still do not.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from posharness.stats.paired_tests import (
    ALPHA,
    RESAMPLES,
    adjust,
    family_resamples,
    format_p,
    permutation_test,
    sign_flip_p,
)


def _pairs(rng: np.random.Generator, shift: float, n: int = 30) -> tuple[np.ndarray, np.ndarray]:
    x = rng.normal(0.5, 0.1, size=n)
    return x, x + shift + rng.normal(0.0, 0.25, size=n)


def test_sixty_large_effects_are_all_significant_after_holm():
    rng = np.random.default_rng(38)
    tests = [permutation_test(*_pairs(rng, shift=1.0), seed=i) for i in range(60)]
    effects = [t.effect_size for t in tests]
    assert 3.0 < float(np.median(effects)) < 5.5  # d_z about 4, as in the issue
    adjust(tests)
    assert all(t.resamples == family_resamples(60) for t in tests)
    assert sum(t.significant() for t in tests) == 60


def test_sixty_null_comparisons_reject_no_more_than_the_nominal_share():
    rng = np.random.default_rng(380)
    tests = [permutation_test(*_pairs(rng, shift=0.0), seed=i) for i in range(60)]
    raw = sum(t.p_value < ALPHA for t in tests)
    adjust(tests)
    # fixed seeds: deterministic; the bounds are the nominal 5 % of 60 (raw: + 2 sd)
    assert raw <= 6
    assert sum(t.significant() for t in tests) <= 3


def test_the_resamples_keep_the_floor_twenty_times_below_alpha_over_m():
    for m in (1, 12, 60, 100, 400):
        r = family_resamples(m)
        assert r >= RESAMPLES and 1 / (r + 1) <= ALPHA / (20 * m)


def test_a_large_p_is_not_redrawn_and_a_small_one_is():
    rng = np.random.default_rng(1)
    null = permutation_test(*_pairs(rng, 0.0, n=40), seed=1)
    clear = permutation_test(*_pairs(rng, 1.0, n=40), seed=2)
    assert null.p_value >= 0.1  # the seeded null draws a clearly large p
    adjust([null, clear] + [permutation_test(*_pairs(rng, 1.0, n=40)) for _ in range(8)])
    assert null.resamples == RESAMPLES
    assert clear.resamples == family_resamples(10)


def test_sign_flip_enumerates_small_samples_exactly_as_scipy_does():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=8), rng.normal(size=8) + 0.4
    p, drawn = sign_flip_p(y - x, RESAMPLES, seed=0)
    expected = stats.permutation_test(
        (x, y),
        lambda u, v, axis: np.mean(v - u, axis=axis),
        permutation_type="samples",
        vectorized=True,
    ).pvalue
    assert drawn is None and p == pytest.approx(expected)


def test_a_p_at_its_floor_prints_as_below_the_floor():
    assert format_p(1 / 24001, 24000) == "< 1/24001"
    assert format_p(0.0123, 24000) == "0.0123"
    assert format_p(0.5) == "0.5"
