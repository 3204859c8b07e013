"""The tests over seeds and protocol runs (``stats.seed_tests``), pinned to the t formulas
written out here with numpy and the t distribution's quantiles, and to scipy.

* same runs on both sides: Student's paired t (Student 1908) on d = B − A per run label,
  t = d̄ / (s_d / √n), n − 1 degrees of freedom, interval d̄ ± t_{.975} s_d / √n, d_z = d̄ / s_d;
* other runs: Welch's t (Welch 1947), t = (B̄ − Ā) / se, se² = s_A²/n_A + s_B²/n_B, with
  Welch–Satterthwaite's degrees of freedom se⁴ / Σ (s²/n)² / (n − 1), interval
  (B̄ − Ā) ± t_{.975} se.

The data have unequal variances and unequal counts, where Student's pooled t (equal
variances) gives another p and interval, and a swapped B − A another sign.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from posharness.stats.seed_tests import PAIRED_T, WELCH_T, run_level_test

RTOL = 1e-10


def welch_by_hand(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """(p, low, high) of Welch's test of mean(B) − mean(A), from the formulas."""
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    delta = b.mean() - a.mean()
    p = 2.0 * stats.t.sf(abs(delta / se), df)
    half = stats.t.ppf(0.975, df) * se
    return p, delta - half, delta + half


def paired_by_hand(d: np.ndarray) -> tuple[float, float, float, float]:
    """(p, low, high, d_z) of the paired t-test of mean(d), from the formulas."""
    n, sd = len(d), d.std(ddof=1)
    se = sd / math.sqrt(n)
    p = 2.0 * stats.t.sf(abs(d.mean() / se), n - 1)
    half = stats.t.ppf(0.975, n - 1) * se
    return p, d.mean() - half, d.mean() + half, d.mean() / sd


def runs(values, prefix: str = "seed") -> dict[str, float]:
    return {f"{prefix}{i}": float(v) for i, v in enumerate(values)}


# A: 4 runs, sd about 0.4; B: 7 runs, sd about 3.4 — unequal variances and counts
A_VALUES = np.array([70.1, 70.9, 70.4, 69.8])
B_VALUES = np.array([76.0, 69.5, 73.2, 78.9, 71.1, 74.8, 79.3])


def test_welch_p_and_interval_equal_the_formulas_on_unequal_variances_and_counts():
    a, b = runs(A_VALUES, "a"), runs(B_VALUES, "b")
    delta = float(B_VALUES.mean() - A_VALUES.mean())
    test, note = run_level_test(a, b, delta, "seeds")
    assert test.name == WELCH_T and WELCH_T in note
    p, low, high = welch_by_hand(A_VALUES, B_VALUES)
    assert test.p_value == pytest.approx(p, rel=RTOL)
    assert (test.ci_low, test.ci_high) == pytest.approx((low, high), rel=RTOL)
    assert test.delta == delta and test.n == 11 and test.effect_size is None
    # the formulas are scipy's Welch test, and Student's pooled test is another one here
    scipy_welch = stats.ttest_ind(B_VALUES, A_VALUES, equal_var=False)
    interval = scipy_welch.confidence_interval(0.95)
    assert (p, low, high) == pytest.approx((scipy_welch.pvalue, interval.low, interval.high))
    student = stats.ttest_ind(B_VALUES, A_VALUES, equal_var=True).pvalue
    assert abs(student - p) > 0.01


def test_welch_interval_is_of_b_minus_a_when_a_is_the_larger_side():
    a, b = runs(B_VALUES, "a"), runs(A_VALUES, "b")  # B below A: Δ < 0
    delta = float(A_VALUES.mean() - B_VALUES.mean())
    test, _ = run_level_test(a, b, delta, "seeds")
    p, low, high = welch_by_hand(B_VALUES, A_VALUES)
    assert high < 0.0
    assert (test.p_value, test.ci_low, test.ci_high) == pytest.approx((p, low, high), rel=RTOL)


def test_welch_of_medians_gives_the_p_of_the_means_and_no_interval():
    a, b = runs(A_VALUES, "a"), runs(B_VALUES, "b")
    delta = float(np.median(B_VALUES) - np.median(A_VALUES))
    test, note = run_level_test(a, b, delta, "runs of the protocol", combine="median")
    assert test.p_value == pytest.approx(welch_by_hand(A_VALUES, B_VALUES)[0], rel=RTOL)
    assert test.ci_low is None and test.ci_high is None
    assert "printed: medians" in note


# Paired by label: five seeds, the differences vary (sd about 1.1)
SEED_A = {"s3": 81.0, "s1": 80.2, "s5": 79.4, "s2": 82.6, "s4": 80.9}
SEED_B = {"s1": 81.9, "s2": 82.8, "s3": 83.4, "s4": 81.1, "s5": 81.7}  # another key order


def test_paired_t_pairs_runs_by_label_and_equals_the_formulas():
    labels = sorted(SEED_A)
    x = np.array([SEED_A[k] for k in labels])
    y = np.array([SEED_B[k] for k in labels])
    delta = float(np.mean(y - x))
    test, note = run_level_test(SEED_A, SEED_B, delta, "seeds")
    assert test.name == PAIRED_T and "paired by run" in note
    p, low, high, d_z = paired_by_hand(y - x)
    assert test.p_value == pytest.approx(p, rel=RTOL)
    assert (test.ci_low, test.ci_high) == pytest.approx((low, high), rel=RTOL)
    assert test.effect_size == pytest.approx(d_z, rel=RTOL)
    assert test.n == 5
    reference = stats.ttest_rel(y, x)
    interval = reference.confidence_interval(0.95)
    assert (p, low, high) == pytest.approx((reference.pvalue, interval.low, interval.high))
    # pairing by the order the runs were listed in would test other differences
    unpaired = np.array(list(SEED_B.values())) - np.array(list(SEED_A.values()))
    assert abs(paired_by_hand(unpaired)[0] - p) > 0.01


def test_paired_t_of_a_negative_difference_keeps_its_sign():
    delta = float(np.mean([SEED_A[k] - SEED_B[k] for k in SEED_A]))
    test, _ = run_level_test(SEED_B, SEED_A, delta, "seeds")
    labels = sorted(SEED_A)
    d = np.array([SEED_A[k] - SEED_B[k] for k in labels])
    p, low, high, d_z = paired_by_hand(d)
    assert d_z < 0.0 and test.effect_size == pytest.approx(d_z, rel=RTOL)
    assert (test.p_value, test.ci_low, test.ci_high) == pytest.approx((p, low, high), rel=RTOL)


def test_three_runs_a_side_are_tested_and_two_are_not():
    three_a, three_b = runs([1.0, 1.4, 0.7], "a"), runs([2.0, 2.9, 1.1], "b")
    test, _ = run_level_test(three_a, three_b, 0.97, "seeds")
    assert test is not None
    p, _, _ = welch_by_hand(np.array([1.0, 1.4, 0.7]), np.array([2.0, 2.9, 1.1]))
    assert test.p_value == pytest.approx(p, rel=RTOL)
    two, note = run_level_test(runs([1.0, 1.4], "a"), three_b, 1.0, "seeds")
    assert two is None and "fewer than 3" in note


# -- PE against PE over pretraining seeds (stats.pe_level): Welch, never paired ----------


def test_pe_level_test_is_welch_over_seeds_on_unequal_variances_and_counts():
    from posharness.stats.pe_level import pe_level_test

    a = dict(enumerate(A_VALUES))  # seeds 0-3
    b = dict(enumerate(B_VALUES))  # seeds 0-6
    test, _ = pe_level_test(a, b)
    p, low, high = welch_by_hand(A_VALUES, B_VALUES)
    assert test.name == WELCH_T and test.n == 11
    assert test.delta == pytest.approx(B_VALUES.mean() - A_VALUES.mean(), rel=RTOL)
    assert (test.p_value, test.ci_low, test.ci_high) == pytest.approx((p, low, high), rel=RTOL)


def test_pe_level_test_never_pairs_two_pes_by_seed_number():
    """Seed 0 of one PE and seed 0 of another share only a number: the same seed labels on
    both sides still give Welch's two-sample test, not the paired one."""
    from posharness.stats.pe_level import pe_level_test

    x = np.array([SEED_A[k] for k in sorted(SEED_A)])
    y = np.array([SEED_B[k] for k in sorted(SEED_B)])
    test, _ = pe_level_test(dict(enumerate(x)), dict(enumerate(y)))
    p, low, high = welch_by_hand(x, y)
    assert test.name == WELCH_T
    assert (test.p_value, test.ci_low, test.ci_high) == pytest.approx((p, low, high), rel=RTOL)
    assert abs(paired_by_hand(y - x)[0] - p) > 0.01  # pairing would print another p
    none, note = pe_level_test({0: 1.0, 1: 2.0}, dict(enumerate(y)))
    assert none is None and "fewer than 3" in note
    three, _ = pe_level_test(dict(enumerate(x[:3])), dict(enumerate(y[:3])))  # the fewest
    assert three.p_value == pytest.approx(welch_by_hand(x[:3], y[:3])[0], rel=RTOL)
