"""Issue 38, parts 3 and 7: a value that combines seeds or a protocol's runs is tested over
them, never over one run's examples; boards carry the task version, and compare tests no
pair of cells run under different protocols."""

from __future__ import annotations

import numpy as np
import pytest

from posharness.boards.cell_outputs import CellOutputs
from posharness.boards.compare import compare_metrics, options_flag, protocol_difference
from posharness.boards.leaderboard import _score
from posharness.boards.metric_testing import paired_test
from posharness.boards.run_values import RunValues, run_values_of
from posharness.boards.schema import Row, Score
from posharness.contracts.examples import Example
from posharness.contracts.metric_types import MEAN_BINARY
from posharness.contracts.task import Metric
from posharness.stats.seed_tests import MIN_RUNS, PAIRED_T, WELCH_T, run_level_test

SEED_SD = 0.05  # five points of accuracy from seed to seed (the simulation)


def _score_of(values: list[float]) -> Score:
    return _score([(seed, Metric(v)) for seed, v in enumerate(values)])


def _median_cell(rng: np.random.Generator, seeds: int, mean: float, rate: str) -> CellOutputs:
    """A TUPE-like cell: ``seeds`` fine-tuning runs at one learning rate, their median
    printed; its per-example rows (the representative run's) are left out on purpose."""
    runs = {
        f"lr={rate} seed={k}": {"accuracy": float(rng.normal(mean, SEED_SD))} for k in range(seeds)
    }
    return CellOutputs({}, None, RunValues("median", runs))


def test_equal_pes_over_five_seeds_reject_at_the_nominal_rate():
    """Two equal PEs, seed sd 5 points, five seeds a side: the test over seeds rejects
    about 5 % (≤ 7 % here over 2,000 simulated tables); McNemar on one run rejected
    31-67 % in the issue's simulation."""
    rng = np.random.default_rng(2026)
    rejected_board = rejected_cells = 0
    simulations = 2000
    for _ in range(simulations):
        a, b = (_score_of(list(rng.normal(0.8, SEED_SD, size=5))) for _ in range(2))
        test, _ = paired_test(None, None, "accuracy", MEAN_BINARY, a, b)
        rejected_board += test.p_value < 0.05
        cell_a = _median_cell(rng, 5, 0.8, "2e-05")
        cell_b = _median_cell(rng, 5, 0.8, "3e-05")  # another best rate: two samples
        score_a = Score(mean=float(np.median(list(cell_a.runs.of("accuracy").values()))), n_seeds=1)
        score_b = Score(mean=float(np.median(list(cell_b.runs.of("accuracy").values()))), n_seeds=1)
        test, _ = paired_test(cell_a, cell_b, "accuracy", MEAN_BINARY, score_a, score_b)
        assert test.name == WELCH_T
        rejected_cells += test.p_value < 0.05
    assert 0.03 <= rejected_board / simulations <= 0.07
    assert 0.02 <= rejected_cells / simulations <= 0.07


def test_a_real_difference_over_seeds_is_found_and_paired_by_seed():
    rng = np.random.default_rng(0)
    shared = rng.normal(0.0, SEED_SD, size=6)  # a seed's data order helps both sides alike
    a = _score_of(list(0.80 + shared + rng.normal(0, 0.005, size=6)))
    b = _score_of(list(0.85 + shared + rng.normal(0, 0.005, size=6)))
    test, note = paired_test(None, None, "accuracy", MEAN_BINARY, a, b)
    assert test is not None and test.name == PAIRED_T and test.n == 6
    assert test.p_value < 1e-4 and test.ci_low < test.delta < test.ci_high
    assert test.delta == pytest.approx(b.mean - a.mean)
    assert "6 task seeds" in note and "paired by run" in note


def test_fewer_than_three_seeds_a_side_gives_no_test_and_says_why():
    a, b = _score_of([0.8, 0.82]), _score_of([0.9, 0.91, 0.92])
    test, note = paired_test(None, None, "accuracy", MEAN_BINARY, a, b)
    assert test is None and f"fewer than {MIN_RUNS} a side" in note and "A 2, B 3" in note


def test_one_seed_against_several_is_never_tested_on_the_one_run():
    examples = {str(i): Example(id=str(i), accuracy=float(i % 2)) for i in range(40)}
    one = CellOutputs(examples)
    a = Score(mean=0.5, n_seeds=1)
    b = _score_of([0.6, 0.62, 0.64])
    test, note = paired_test(one, one, "accuracy", MEAN_BINARY, a, b)
    assert test is None and "A 1, B 3" in note


def test_a_board_written_before_per_seed_values_says_to_rebuild():
    old = Score(mean=0.8, sd=0.01, n_seeds=3)  # no per_seed: an older board
    test, note = paired_test(None, None, "accuracy", MEAN_BINARY, old, _score_of([0.8, 0.81, 0.79]))
    assert test is None and "rebuild it from its results" in note


def test_a_protocol_cell_is_tested_over_its_runs_not_its_representative_run():
    """The representative (median) run's examples reproduce the printed value, which used
    to be enough for McNemar; the cell is now tested over its five runs."""
    examples = {str(i): Example(id=str(i), accuracy=float(i % 4 != 0)) for i in range(400)}
    runs = {f"lr=2e-05 seed={k}": {"accuracy": 0.75 + 0.01 * k} for k in range(5)}
    a = CellOutputs(examples, None, RunValues("median", runs))
    b_runs = {
        key: {"accuracy": v["accuracy"] + 0.002 * (k % 3)}
        for k, (key, v) in enumerate(runs.items())
    }
    b = CellOutputs(examples, None, RunValues("median", b_runs))
    test, note = paired_test(
        a, b, "accuracy", MEAN_BINARY, Score(mean=0.77, n_seeds=1), Score(mean=0.772, n_seeds=1)
    )
    assert test is not None and test.name == PAIRED_T and test.n == 5
    assert test.ci_low is None  # a median: the t interval is not one of it, so none
    assert "printed: medians" in note


def test_runs_that_all_differ_by_one_amount_are_exact_not_tested():
    runs = {f"lr=2e-05 seed={k}": {"accuracy": 0.75 + 0.01 * k} for k in range(4)}
    shifted = {key: {"accuracy": v["accuracy"] + 0.002} for key, v in runs.items()}
    test, note = paired_test(
        CellOutputs({}, None, RunValues("mean", runs)),
        CellOutputs({}, None, RunValues("mean", shifted)),
        "accuracy",
        MEAN_BINARY,
        Score(mean=0.765, n_seeds=1),
        Score(mean=0.767, n_seeds=1),
    )
    assert test is None and "differs by the same amount" in note and "exact" in note


def test_runs_equal_on_both_sides_are_exact_not_tested():
    runs = RunValues("mean", {f"lr={r} seed=0": {"accuracy": 0.7 + r} for r in (0.01, 0.02, 0.03)})
    score = Score(mean=0.72, n_seeds=1)
    test, note = paired_test(
        CellOutputs({}, None, runs),
        CellOutputs({}, None, runs),
        "accuracy",
        MEAN_BINARY,
        score,
        score,
    )
    assert test is None and note.startswith("exact: equal within numerical precision")


def test_run_level_values_are_read_from_the_finetune_layout_of_older_results():
    details = {
        "aggregate": {"combine": "median", "runs_used": ["lr=3e-05 seed=0", "lr=3e-05 seed=1"]},
        "runs": [
            {"learning_rate": 2e-5, "seed": 0, "scores": {"accuracy": 0.5}},
            {"learning_rate": 3e-5, "seed": 0, "scores": {"accuracy": 0.7}},
            {"learning_rate": 3e-5, "seed": 1, "scores": {"accuracy": 0.8}},
        ],
    }
    found = run_values_of(details)
    assert found is not None and found.combine == "median"
    assert found.of("accuracy") == {"lr=3e-05 seed=0": 0.7, "lr=3e-05 seed=1": 0.8}
    recorded = {"run_values": found.record()}
    assert run_values_of(recorded) == found  # the key finetune writes now reads the same
    assert run_values_of({"run_values": {"combine": "mean", "runs": [{"label": "x"}]}}) is None


def test_welch_when_the_runs_differ_and_its_interval_is_of_the_printed_mean():
    a = {f"seed={k}": v for k, v in enumerate([0.70, 0.72, 0.71, 0.73])}
    b = {f"seed={k}": v for k, v in enumerate([0.80, 0.79, 0.81])}
    delta = float(np.mean(list(b.values())) - np.mean(list(a.values())))
    test, note = run_level_test(a, b, delta, "seeds")
    assert test.name == WELCH_T and test.ci_low < delta < test.ci_high and test.p_value < 0.01
    assert "not the same runs on both sides" in note


def _row(version: str | None, options: dict | None = None) -> Row:
    return Row(
        model="m",
        fingerprint="f",
        mode="both",
        exact=True,
        pe_family="absolute",
        scores={"sst2/accuracy": Score(mean=0.8, n_seeds=1)},
        results=[],
        settings={"options": {"sst2": options}} if options else {},
        settings_known=True,
        task_versions={"sst2": version} if version else {},
    )


def test_cells_of_different_task_versions_are_not_tested():
    a, b = _row("2"), _row("3")
    assert "version A 2, B 3" in protocol_difference(a, b, "sst2")
    [metric] = compare_metrics(["sst2/accuracy"], a, b, {}, {})
    assert metric.test is None and metric.note.startswith("protocols differ")
    assert protocol_difference(_row(None), b, "sst2") is None  # an older board: unknown


def test_cells_of_other_options_are_flagged():
    a, b = _row("2", {"protocol": "tupe2021"}), _row("2")
    flag = options_flag(a, b, "sst2")
    assert flag == "A/B: other sst2 options (A protocol=tupe2021; B defaults)"
    [metric] = compare_metrics(["sst2/accuracy"], a, b, {}, {})
    assert flag in metric.flags


def test_a_board_records_per_seed_values_and_task_versions_only_where_they_exist():
    one = _score([(0, Metric(0.8, ci_low=0.7, ci_high=0.9))])
    assert one.per_seed is None and "per_seed" not in one.model_dump_json()
    three = _score([(2, Metric(0.3)), (0, Metric(0.1)), (1, Metric(0.2))])
    assert three.per_seed == {"0": 0.1, "1": 0.2, "2": 0.3}
    assert "task_versions" not in _row(None).model_dump_json()
    assert '"task_versions":{"sst2":"2"}' in _row("2").model_dump_json()
