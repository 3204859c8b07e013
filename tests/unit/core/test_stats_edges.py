"""Issue 47, parts 1, 2 and 4: statistics at the edges.

Exactness is decided on the runs or examples a test uses, never on the printed Δ (a Δ of
two medians, or of two accuracies, is often 0 while the runs behind it differ); no
printed interval leaves the range its metric's difference can take; a sign-flip test
that enumerated its patterns records them, and says exact or Monte Carlo. Simulations
are vectorised where they draw, and small: the whole file runs in seconds.
"""

from __future__ import annotations

import numpy as np

from posharness.boards.cell_outputs import CellOutputs
from posharness.boards.metric_testing import paired_test
from posharness.boards.run_values import RunValues
from posharness.boards.schema import Score
from posharness.contracts.examples import Example
from posharness.contracts.metric_types import MEAN_BINARY, MEAN_CONTINUOUS, OF_EXAMPLES
from posharness.stats.paired_tests import PairedTest, adjust, permutation_test
from posharness.stats.seed_tests import run_level_test
from posharness.stats.value_ranges import clip_interval, value_range

EXACT = "exact"


def _median_cell(accuracies: np.ndarray) -> tuple[CellOutputs, Score]:
    """A TUPE-like cell: five fine-tuning runs, their median printed."""
    runs = {f"lr=2e-05 seed={k}": {"accuracy": float(v)} for k, v in enumerate(accuracies)}
    median = float(np.median(accuracies))
    return CellOutputs({}, None, RunValues("median", runs)), Score(mean=median, n_seeds=1)


def _seed_score(values: np.ndarray) -> Score:
    per_seed = {str(k): float(v) for k, v in enumerate(values)}
    return Score(mean=float(np.mean(values)), n_seeds=len(values), per_seed=per_seed)


def test_no_exact_verdict_on_median_tables_whose_runs_differ():
    """Two equal PEs (and a real +2-point difference), five runs a side, accuracies on
    200 dev examples (steps of 0.005): the medians are often equal, the runs never."""
    rng = np.random.default_rng(47)
    tables, equal_medians = 0, 0
    for shift, count in ((0.0, 200), (0.02, 100)):
        a_runs = np.round(rng.normal(0.80, 0.01, size=(count, 5)) * 200) / 200
        b_runs = np.round(rng.normal(0.80 + shift, 0.01, size=(count, 5)) * 200) / 200
        for a_values, b_values in zip(a_runs, b_runs, strict=True):
            (cell_a, score_a), (cell_b, score_b) = _median_cell(a_values), _median_cell(b_values)
            equal_medians += score_a.mean == score_b.mean
            test, note = paired_test(cell_a, cell_b, "accuracy", MEAN_BINARY, score_a, score_b)
            assert test is not None, note  # the runs differ: tested, whatever Δ reads
            tables += 1
    assert tables == 300 and equal_medians > 15  # the case the old rule called exact


def test_no_exact_verdict_on_accuracy_seed_tables_whose_seeds_differ():
    """A board's mean over three task seeds of two accuracies that happen to be equal."""
    rng = np.random.default_rng(5)
    a = np.round(rng.normal(0.7, 0.02, size=(300, 3)) * 50) / 50
    b = a[:, [1, 2, 0]]  # the same mean, other values seed by seed
    differ = 0
    for a_values, b_values in zip(a, b, strict=True):
        if np.array_equal(a_values, b_values):
            continue  # equal seed by seed: exact, rightly
        differ += 1
        test, note = paired_test(
            None, None, "accuracy", MEAN_BINARY, _seed_score(a_values), _seed_score(b_values)
        )
        assert not note.startswith(EXACT), note
    assert differ > 250


def test_runs_equal_run_by_run_are_exact_and_never_tested():
    values = {"lr=1e-05 seed=0": 0.81, "lr=1e-05 seed=1": 0.79, "lr=1e-05 seed=2": 0.80}
    test, note = run_level_test(values, {k: v + 1e-9 for k, v in values.items()}, 1e-9, "runs")
    assert test is None and note.startswith("exact: equal within numerical precision")


def test_predictions_that_differ_are_tested_even_when_their_f1_is_equal():
    """F1 recomputed from two prediction sets with the same F1 but other predictions."""
    gold = [1, 1, 0, 0, 1, 0, 1, 0]
    a_pred = [1, 0, 0, 0, 1, 0, 1, 1]  # one miss, one false alarm
    b_pred = [0, 1, 0, 1, 1, 0, 1, 0]  # the same counts, on other examples

    def cell(predictions: list[int]) -> CellOutputs:
        return CellOutputs(
            {
                str(i): Example(id=str(i), label=g, prediction=p)
                for i, (g, p) in enumerate(zip(gold, predictions, strict=True))
            }
        )

    test, note = paired_test(
        cell(a_pred), cell(b_pred), "f1", OF_EXAMPLES, *[Score(mean=0.75, n_seeds=1)] * 2
    )
    assert test is not None and not note.startswith(EXACT), note
    same, why = paired_test(
        cell(a_pred), cell(a_pred), "f1", OF_EXAMPLES, *[Score(mean=0.75, n_seeds=1)] * 2
    )
    assert same is None and why.startswith("exact: equal")


def test_seed_level_intervals_stay_inside_the_range_of_a_difference():
    """Three task seeds of accuracies near opposite bounds: the t interval would reach
    past 1 (issue 47: [0.622, 1.178]); clipped to [−1, 1], and the row says so."""
    rng = np.random.default_rng(2)
    a = np.clip(rng.normal(0.08, 0.08, size=(200, 3)), 0, 1)
    b = np.clip(rng.normal(0.97, 0.03, size=(200, 3)), 0, 1)
    clipped = 0
    for a_values, b_values in zip(a, b, strict=True):
        sa, sb = _seed_score(a_values), _seed_score(b_values)
        test, note = paired_test(None, None, "accuracy", MEAN_BINARY, sa, sb)
        assert test is not None and -1.0 <= test.ci_low <= test.delta <= test.ci_high <= 1.0
        clipped += "clipped to [-1, 1]" in note
    assert clipped > 0  # the case exists in the simulation, and is said


def test_example_intervals_never_cross_a_bound_the_differences_respect():
    """Every per-example difference >= 0, most of them 0, board values rounded to 7
    digits: the interval's lower end is never below 0 (a shift gave −9e-7)."""
    rng = np.random.default_rng(9)
    for _ in range(80):
        x = rng.uniform(0.0, 1.0, size=100)
        y = x.copy()
        lifted = rng.choice(100, size=3, replace=False)
        y[lifted] = np.minimum(1.0, y[lifted] + rng.uniform(1e-4, 1e-3, size=3))
        cells = [
            CellOutputs({str(i): Example(id=str(i), locality=v) for i, v in enumerate(s)})
            for s in (x, y)
        ]
        scores = [Score(mean=float(f"{s.mean():.7g}"), n_seeds=1) for s in (x, y)]
        test, note = paired_test(*cells, "locality", MEAN_CONTINUOUS, *scores)
        assert test is not None, note
        assert min(0.0, test.delta) <= test.ci_low <= test.delta <= test.ci_high <= 1.0


def test_value_ranges_come_from_declarations_and_bounded_definitions():
    assert value_range("acc_nsubj", MEAN_BINARY) == (0.0, 1.0)
    assert value_range("locality_len32") == (0.0, 1.0)
    assert value_range("cola_matthews") == (-1.0, 1.0)
    assert value_range("locality_excess_len32") is None  # a difference: no known range
    assert clip_interval(0.622, 1.178, (0.0, 1.0))[:2] == (0.622, 1.0)
    assert clip_interval(-3.0, 3.0, None) == (-3.0, 3.0, "")


def test_an_enumerated_sign_flip_test_records_its_patterns_and_says_exact():
    rng = np.random.default_rng(0)
    x = rng.normal(size=8)
    test = permutation_test(x, x + 1.0 + rng.normal(scale=0.1, size=8))
    assert test.resamples is None and test.patterns == 2**8
    assert test.p_method == "exact" and test.p_how == "exact: all 256 sign patterns"
    drawn = permutation_test(rng.normal(size=40), rng.normal(size=40))
    assert drawn.patterns is None and drawn.p_method == "Monte Carlo"


def test_a_redraw_that_enumerates_records_patterns_not_the_draws_it_would_have_made():
    """n = 12: 4,096 patterns, drawn at 2,000 on the first pass; a family of 12 tests
    needs 4,800, more than the patterns, so the redraw enumerates them."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=12)
    test = permutation_test(x, x + 2.0 + rng.normal(scale=0.1, size=12))
    assert test.resamples == 2000 and test.p_value < 0.1
    others = [PairedTest("paired-t", 5, 0.0, 0.5) for _ in range(11)]
    adjust([test, *others])
    assert test.resamples is None and test.patterns == 4096 and test.p_method == "exact"
    assert test.p_value == 2 / 4096  # the observed pattern and its mirror image
