"""SentEval's classifier grid, trained as one batch: each configuration as if alone."""

from __future__ import annotations

import numpy as np
import pytest

from posharness.tasks.senteval.probe_grid import Config, Protocol, fit_grid


def _splits(n_train: int, n_eval: int, noise: float = 0.3, dim: int = 16, classes: int = 3):
    """Train, dev and test drawn around the same class centres."""
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(classes, dim)) * 2

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        y = rng.integers(0, classes, n)
        return (centres[y] + rng.normal(size=(n, dim)) * noise).astype(np.float32), y

    return draw(n_train), draw(n_eval), draw(n_eval)


def test_separable_classes_are_learned_and_the_grid_is_senteval_s() -> None:
    train, dev, test = _splits(300, 100)
    result = fit_grid(train, dev, test[0], 3, Protocol(classifier="mlp"))
    assert len(result.configs) == 36  # nhid {50,100,200} × dropout {0,.1,.2} × L2 {1e-5..1e-2}
    assert {c.hidden for c in result.configs} == {50, 100, 200}
    assert {c.l2 for c in result.configs} == {1e-5, 1e-4, 1e-3, 1e-2}
    assert (result.test_predictions == test[1]).mean() > 0.95
    assert result.dev_accuracy[result.best] == result.dev_accuracy.max()
    # early stopping: every configuration stopped after at least 1 + tenacity epochs
    assert (result.passes >= 4 * 6).all() and (result.passes % 4 == 0).all()
    logreg = fit_grid(train, dev, test[0], 3, Protocol(classifier="logreg"))
    assert [c.hidden for c in logreg.configs] == [0, 0, 0, 0]
    assert (logreg.test_predictions == test[1]).mean() > 0.95


def test_a_configuration_trains_the_same_alone_or_in_the_batch() -> None:
    """Without dropout a configuration's trajectory depends only on its own parameters,
    its L2 and the shared batch order: alone and among the other 35 it must end with the
    same dev accuracy, stopping point and predictions."""
    train, dev, test = _splits(200, 80, noise=1.5)
    protocol = Protocol(classifier="mlp")
    whole = fit_grid(train, dev, test[0], 3, protocol)
    for config in (Config(50, 0.0, 1e-3), Config(200, 0.0, 1e-5)):
        alone = fit_grid(train, dev, test[0], 3, protocol, configs=[config])
        index = whole.configs.index(config)
        assert alone.dev_accuracy[0] == pytest.approx(whole.dev_accuracy[index], abs=1.5 / 80)
        assert alone.passes[0] == whole.passes[index]


def test_the_fit_is_deterministic() -> None:
    train, dev, test = _splits(120, 40, noise=2.0)
    a = fit_grid(train, dev, test[0], 3, Protocol())
    b = fit_grid(train, dev, test[0], 3, Protocol())
    assert a.best == b.best and np.array_equal(a.test_predictions, b.test_predictions)
    assert np.array_equal(a.dev_accuracy, b.dev_accuracy)


def test_max_epoch_bounds_the_passes() -> None:
    train, dev, test = _splits(60, 30, noise=3.0)
    result = fit_grid(train, dev, test[0], 3, Protocol(max_epoch=8))
    assert result.total_passes == 8 and (result.passes <= 8).all()
