"""The sign-flip permutation p on its Monte Carlo path (n > 10 at 2,000 resamples), pinned
to independent computations.

Under H0 each paired difference is as likely negated; the Monte Carlo p is
(1 + #{|S*| >= |S|}) / (1 + R) over R random sign patterns (Phipson & Smyth 2010), S the
sum of the differences. Two references:

* differences all of one sign: only the two one-signed patterns reach |S|, and a random one
  is drawn with probability 2^(1-n), so with n >= 24 none of R <= 10^4 draws is extreme and
  p is exactly the floor 1/(R+1) (at n = 11, 2,000 draws hit it about twice);
* any other data: ``scipy.stats.permutation_test`` with the same statistic |mean(B - A)|,
  ``permutation_type="samples"`` (swapping a pair's two values negates its difference) and
  ``alternative="greater"``, enumerating all 2^n patterns (n = 14, 16): the exact p. The
  harness's p then differs from it by its own Monte Carlo error only: a binomial standard
  error sqrt(p (1 - p) / R), plus the (1 - p) / (R + 1) the observed pattern adds.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import stats

from posharness.stats.paired_tests import (
    RESAMPLES,
    format_p,
    permutation_test,
    sign_flip_p,
)

# 4.9 binomial standard errors: a correct p fails with probability about 1e-6
Z = 4.9


def absolute_mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.abs(np.mean(y - x, axis=axis))


def exact_p(diff: np.ndarray) -> float:
    """scipy's exact permutation p of |mean(B - A)| over all 2^n sign patterns.

    A zero difference is the same negated, so the p of the nonzero differences alone is
    the p of all of them: a long, sparse difference keeps an exact reference."""
    nonzero = diff[diff != 0.0]
    result = stats.permutation_test(
        (np.zeros_like(nonzero), nonzero),
        absolute_mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf,
        alternative="greater",
    )
    return float(result.pvalue)


def monte_carlo_tolerance(p: float, resamples: int) -> float:
    """How far a correct Monte Carlo p may sit from the exact p: Z binomial standard errors
    of the share of extreme draws, plus the bias of counting the observed pattern."""
    return Z * math.sqrt(p * (1.0 - p) / resamples) + (1.0 - p) / (resamples + 1)


@pytest.mark.parametrize("n", [24, 60, 301])
@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("resamples", [RESAMPLES, 9999])
def test_differences_all_of_one_sign_give_exactly_one_over_r_plus_one(
    n: int, sign: float, resamples: int
):
    diff = sign * np.random.default_rng(n).uniform(0.1, 2.0, size=n)
    p, drawn = sign_flip_p(diff, resamples, seed=0)
    assert drawn == resamples
    assert p == 1.0 / (resamples + 1)


def test_a_one_signed_permutation_test_sits_at_its_printed_floor():
    x = np.zeros(40)
    y = np.linspace(0.5, 1.5, 40)
    test = permutation_test(x, y)
    assert test.resamples == RESAMPLES
    assert test.p_value == 1.0 / (RESAMPLES + 1) == test.floor
    assert test.at_floor
    assert format_p(test.p_value, test.resamples) == f"< 1/{RESAMPLES + 1}"


def continuous_differences(seed: int, n: int, shift: float) -> np.ndarray:
    return np.random.default_rng(seed).normal(shift, 1.0, size=n)


def tied_differences(seed: int, n: int) -> np.ndarray:
    """Differences of -2..2 (scores on a small integer scale): many patterns tie |S|
    exactly, so counting a tie as extreme (>=, not >) matters."""
    scores = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    return np.random.default_rng(seed).choice(scores, n, p=[0.1, 0.2, 0.3, 0.25, 0.15])


def sparse(values: np.ndarray, n: int) -> np.ndarray:
    """``values`` spread over n examples at evenly spaced places, zeros elsewhere."""
    diff = np.zeros(n)
    diff[np.linspace(0, n - 1, len(values)).round().astype(int)] = values
    return diff


CASES = {  # exact p in the name
    "continuous, p 0.011": continuous_differences(5, 14, 0.8),
    "continuous, p 0.045": continuous_differences(5, 14, 0.6),
    "continuous, p 0.27": continuous_differences(4, 14, 0.25),
    "continuous, no effect": continuous_differences(5, 14, 0.0),
    "tied integers": tied_differences(6, 15),
    "tied integers, other draw": tied_differences(7, 14),
    # 30 examples in four groups of eight (one random byte each), 14 of them nonzero
    "zeros between, four byte groups": sparse(continuous_differences(8, 14, 0.4), 30),
}


@functools.cache
def case_p(name: str) -> float:
    return exact_p(CASES[name])


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("resamples", [RESAMPLES, 10_000])
def test_monte_carlo_p_agrees_with_scipys_exact_permutation_p(name: str, resamples: int):
    diff = CASES[name]
    assert 2 ** len(diff) > resamples  # the Monte Carlo path, not the harness's enumeration
    reference = case_p(name)
    p, drawn = sign_flip_p(diff, resamples, seed=1)
    assert drawn == resamples
    assert abs(p - reference) <= monte_carlo_tolerance(reference, resamples), (p, reference)


def test_the_cases_span_small_and_large_p():
    """The agreement above means something only if the cases' p differ widely."""
    references = sorted(case_p(name) for name in CASES)
    assert references[0] < 0.02 and references[-1] > 0.5


def test_the_permutation_test_reads_the_difference_as_b_minus_a():
    a = continuous_differences(8, 30, 0.0)
    b = a + continuous_differences(9, 30, 0.4)
    test = permutation_test(a, b, seed=2)
    diff = b - a
    assert test.delta == pytest.approx(float(np.mean(diff)), abs=1e-15)
    assert test.effect_size == pytest.approx(np.mean(diff) / np.std(diff, ddof=1), rel=1e-12)
    reference = float(
        stats.permutation_test(
            (a, b),
            absolute_mean_difference,
            permutation_type="samples",
            vectorized=True,
            n_resamples=20_000,
            alternative="greater",
            rng=np.random.default_rng(0),
        ).pvalue
    )
    # two Monte Carlo estimates of one p: their binomial errors add
    spread = math.sqrt(reference * (1 - reference) * (1 / RESAMPLES + 1 / 20_000))
    assert abs(test.p_value - reference) <= Z * spread + 1 / (RESAMPLES + 1)


@pytest.mark.parametrize("n", [3, 7, 10])
def test_the_enumerated_p_of_ten_or_fewer_examples_is_scipys_exact_p(n: int):
    diff = continuous_differences(10 + n, n, 0.5)
    p, drawn = sign_flip_p(diff, RESAMPLES, seed=0)
    assert drawn is None  # 2^n <= 2,000: every pattern enumerated
    assert p == pytest.approx(exact_p(diff), rel=1e-12)
    tied = tied_differences(20 + n, n)
    if np.any(tied):
        assert sign_flip_p(tied, RESAMPLES, seed=0)[0] == pytest.approx(exact_p(tied), rel=1e-12)


def test_identical_sides_give_p_one_and_a_zero_interval():
    x = continuous_differences(11, 25, 0.0)
    test = permutation_test(x, x.copy())
    assert (test.delta, test.p_value, test.ci_low, test.ci_high) == (0.0, 1.0, 0.0, 0.0)


def test_every_byte_value_is_drawn_for_a_group_of_eight():
    """Eight one-signed differences, then zeros: only the patterns that flip none or all
    of the eight reach |S|, so p = 2/256 exactly; a draw that missed one byte value (the
    eight unflipped, say) would read about 1/255. 60,000 draws tell the two apart by
    more than the tolerance."""
    diff = np.zeros(24)
    diff[:8] = np.linspace(0.5, 1.2, 8)
    assert exact_p(diff) == pytest.approx(2 / 256, rel=1e-12)
    resamples = 60_000
    p, _ = sign_flip_p(diff, resamples, seed=3)
    assert abs(p - 2 / 256) <= monte_carlo_tolerance(2 / 256, resamples)
    assert monte_carlo_tolerance(2 / 256, resamples) < 2 / 256 - 1 / 255
