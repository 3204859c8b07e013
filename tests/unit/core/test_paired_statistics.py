"""compare tests exactly the statistic it prints: properties of its intervals and tests,
the test chosen by the metric's declared type, Holm's adjustment, readable deltas, and
common-resample replicates that pair two cells run apart."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posharness.boards import leaderboard as lb
from posharness.boards.compare import compare_files
from posharness.contracts.metric_types import MEAN_BINARY, OF_EXAMPLES, UNDECLARED, declared_type
from posharness.stats.paired_resampling import (
    common_draws,
    examples_key,
    paired_replicates,
    replicates,
)
from posharness.stats.paired_tests import (
    bca_interval,
    bootstrap_of_aggregate,
    format_delta,
    holm,
    mcnemar,
    mean_interval,
    permutation_test,
)
from tests.cli_helpers import cli
from tests.conftest import write_tiny_bert

ROOT = Path(__file__).resolve().parents[3]
finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(finite, finite), min_size=2, max_size=40))
def test_a_mean_difference_lies_inside_its_own_interval_for_any_data(pairs):
    x, y = (np.array(side) for side in zip(*pairs, strict=True))
    test = permutation_test(x, y)
    assert test.ci_low <= test.delta <= test.ci_high
    assert test.delta == pytest.approx(float(np.mean(y - x)), abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=2, max_size=60))
def test_a_difference_of_accuracies_lies_inside_its_own_interval(pairs):
    x, y = (np.array(side, dtype=float) for side in zip(*pairs, strict=True))
    test = mcnemar(x, y)
    assert test.ci_low <= test.delta <= test.ci_high


@settings(max_examples=40, deadline=None)
@given(finite, st.lists(finite, min_size=2, max_size=200))
def test_a_bca_interval_never_leaves_the_range_of_its_replicates(delta, replicate_deltas):
    """Issue 38: the interval's endpoints are quantiles of the replicates, so it cannot
    leave the range the statistic takes (the re-centred one read -7.3e-7 when every
    difference was >= 0)."""
    replicates = np.array(replicate_deltas)
    low, high = bca_interval(delta, replicates)
    assert replicates.min() <= low <= high <= replicates.max() or low == delta or high == delta


def test_a_one_sided_bootstrap_distribution_says_its_delta_lies_outside():
    replicate_deltas = np.linspace(0.09, 0.12, 500)  # all below the observed 0.14
    test = bootstrap_of_aggregate(0.1415, replicate_deltas, 100, "words")
    assert 0.09 <= test.ci_low <= test.ci_high <= 0.12 and test.p_value < 0.01
    assert "outside its BCa interval" in test.on


def test_the_paired_interval_covers_the_true_difference_about_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    true_delta, covered, trials = 0.3, 0, 400
    for _ in range(trials):
        x = rng.normal(size=40)
        y = x + true_delta + rng.normal(scale=0.5, size=40)
        low, high = mean_interval(y - x)
        covered += low <= true_delta <= high
    assert 0.90 <= covered / trials <= 0.99


def test_holm_matches_the_step_down_by_hand():
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1.0, max_value=1.0))
def test_a_nonzero_delta_never_prints_as_zero(value):
    text = format_delta(value)
    if value != 0.0:
        assert float(text) != 0.0 and text.lstrip("+-") not in {"0.0000", "0.00e+00"}
    else:
        assert text == "0"


def test_declarations_match_a_prefixed_metric_by_its_longest_declared_suffix():
    declared = {"accuracy": MEAN_BINARY, "dev_f1": OF_EXAMPLES}
    assert declared_type(declared, "dev_accuracy") is MEAN_BINARY
    assert declared_type(declared, "matched_dev_f1") is OF_EXAMPLES
    assert declared_type(declared, "loss") is None
    assert not UNDECLARED.declared and UNDECLARED.aggregate == "mean"


def test_common_draws_are_the_same_for_the_same_examples_in_any_order():
    ids = [f"w{i}" for i in range(30)]
    shuffled = list(np.random.default_rng(1).permutation(ids))
    first, second = common_draws(ids, 50), common_draws(shuffled, 50)
    assert [[ids[i] for i in row] for row in first] == [
        [shuffled[i] for i in row] for row in second
    ]
    assert examples_key(ids) == examples_key(shuffled) != examples_key(ids[:-1])


def test_replicates_pair_only_over_the_same_examples():
    values = np.arange(10.0)
    ids = [str(i) for i in range(10)]

    def mean_of(draw):
        return {"m": float(values[draw].mean())}

    a = replicates(ids, mean_of, 100)
    b = replicates(ids, lambda draw: {"m": float(2 * values[draw].mean())}, 100)
    left, right = paired_replicates(a, b, "m")
    assert np.allclose(right, 2 * left)  # the same draws on both sides
    other = replicates(ids[:-1], lambda draw: {"m": 0.0}, 100)
    assert "different examples" in paired_replicates(a, other, "m")


def _geometry_board(tmp_path: Path, name: str, seed: int) -> Path:
    model = write_tiny_bert(tmp_path / f"model-{name}", seed=seed)
    out = tmp_path / f"results-{name}"
    code = cli(
        "run", "--device", "cpu", "--model", f"hf:{model}", "--tasks", "locality_symmetry",
        "--mode", "both", "--output-dir", str(out), "--task-arg", "locality_symmetry.words=12",
        "--task-arg", "locality_symmetry.length=16",
        "--task-arg", "locality_symmetry.figures=false",
        "--task-arg", "locality_symmetry.paired_replicates=300",
    )  # fmt: skip
    assert code == 0
    board = tmp_path / f"{name}.json"
    lb.save(lb.build(lb.collect_results(out), name, board), board)
    return board


def test_geometry_of_averaged_maps_is_tested_on_common_resamples_with_delta_inside(tmp_path):
    """Two models probed with the same words: symmetry (a function of the averaged map)
    gets a paired bootstrap from the replicates each cell kept, locality (a mean of
    per-word values) a permutation test, and every Δ lies inside its interval."""
    comparisons = compare_files(
        _geometry_board(tmp_path, "a", 0), _geometry_board(tmp_path, "b", 1)
    )
    (row,) = comparisons
    tests = {m.key.split("/")[1]: m for m in row.metrics}
    assert tests["symmetry"].test.name == "paired-bootstrap"
    assert tests["symmetry_no_special"].test.name == "paired-bootstrap"
    assert tests["locality"].test.name == "paired-permutation"
    for m in row.metrics:
        if m.test is not None:
            assert m.test.ci_low <= m.delta <= m.test.ci_high, m.key
            assert m.test.delta == pytest.approx(m.delta) and m.test.p_adjusted >= m.test.p_value


def test_compare_json_of_the_committed_zoo_boards_keeps_every_delta_inside_its_interval(
    capsys,
):
    """The issue's "done": no McNemar on a continuous metric, adjusted p-values present,
    and no printed Δ outside the interval the same row prints."""
    boards = ROOT / "leaderboards"
    code = cli(
        "compare", str(boards / "pe-zoo-mini-init.json"), str(boards / "pe-zoo-mini.json"),
        "--format", "json",
    )  # fmt: skip
    assert code == 0
    document = json.loads(capsys.readouterr().out)
    assert document["adjustment"] == "holm"
    tested = [r for r in document["comparisons"] if r["test"] is not None]
    assert tested, "some metric must be tested"
    for record in document["comparisons"]:
        if record["test"] is None:
            assert record["note"] and record["p_holm"] is None
            continue
        assert record["ci_low"] <= record["delta"] <= record["ci_high"], record
        assert record["p_holm"] is not None and record["p_holm"] >= record["p"]
        if record["test"] == "mcnemar-exact":
            assert record["metric_type"] == MEAN_BINARY.label
