"""SentEval's early stopping and configuration choice, as its code runs them.

SentEval's ``PyTorchClassifier.fit`` (``senteval/tools/classifier.py``) counts the dev
checks that do not improve and never sets the count back when one does: with tenacity 5,
training ends at the sixth non-improving check in total. ``SplitClassifier.run``
(``senteval/tools/validation.py``) compares dev accuracies in percent rounded to two
decimals and takes the first of tied values. ``tenacity_reset=True`` keeps the usual
"patience" (reset on every improvement), posharness's rule before task version 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from posharness.tasks.senteval.probe_grid import Protocol, fit_grid
from posharness.tasks.senteval.probe_rules import (
    checks_until_stop,
    choose,
    early_stop_step,
    selection_scores,
)
from tests.cli_helpers import run_isolated
from tests.unit.tasks.senteval.probing_data import write_probing_folder

# best-so-far improves at checks 1, 3 and 5; checks 2, 4, 6, 7, 8 do not improve
DEV = [0.50, 0.40, 0.60, 0.55, 0.70, 0.60, 0.65, 0.69, 0.68, 0.60]


def test_the_count_of_non_improving_checks_is_never_reset_by_default() -> None:
    """tenacity 2: the non-improving checks 2, 4 and 6 are the first, second and third in
    total, so SentEval stops at check 6; a count reset at every improvement starts again
    after check 5 and stops at the third non-improving check in a row, check 8."""
    assert checks_until_stop(DEV, tenacity=2, reset=False) == 6
    assert checks_until_stop(DEV, tenacity=2, reset=True) == 8


def test_tenacity_5_ends_at_the_sixth_non_improving_check_in_total() -> None:
    alternating = [0.1, 0.2, 0.1, 0.3, 0.1, 0.4, 0.1, 0.5, 0.1, 0.6, 0.1, 0.1, 0.1]
    # non-improving checks: 3, 5, 7, 9, 11, 12 → the sixth is check 12
    assert checks_until_stop(alternating, tenacity=5, reset=False) == 12
    assert checks_until_stop(alternating, tenacity=5, reset=True) is None  # needs 6 in a row


def test_an_improvement_leaves_the_count_alone_unless_reset() -> None:
    assert early_stop_step(True, 3, tenacity=5, reset=False) == (3, False)
    assert early_stop_step(True, 3, tenacity=5, reset=True) == (0, False)
    assert early_stop_step(False, 4, tenacity=5, reset=False) == (5, False)
    assert early_stop_step(False, 5, tenacity=5, reset=False) == (5, True)


def _noisy(seed: int = 0, n: int = 240, dim: int = 12):
    """Two heavily overlapping classes: dev accuracy wanders, so the two rules part."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(2, dim)) * 0.4

    def draw(size: int) -> tuple[np.ndarray, np.ndarray]:
        y = rng.integers(0, 2, size)
        return (centres[y] + rng.normal(size=(size, dim))).astype(np.float32), y

    return draw(n), draw(60), draw(60)


@pytest.mark.parametrize("reset", [False, True])
def test_every_configuration_stops_where_its_own_dev_curve_says(reset: bool) -> None:
    """The grid's bookkeeping is the rule applied to each configuration's dev accuracy after
    every epoch of 4 passes."""
    train, dev, test = _noisy()
    protocol = Protocol(classifier="logreg", tenacity=2, tenacity_reset=reset)
    fit = fit_grid(train, dev, test[0], 2, protocol)
    for curve, passes in zip(fit.dev_curves, fit.passes, strict=True):
        checks = checks_until_stop(curve, tenacity=2, reset=reset)
        assert checks == len(curve)  # stopped by the rule, not by max_epoch
        assert passes == protocol.epoch_size * checks


def test_the_reset_variant_trains_at_least_as_long_and_here_longer() -> None:
    train, dev, test = _noisy()
    senteval = fit_grid(train, dev, test[0], 2, Protocol(classifier="logreg", tenacity=2))
    reset = fit_grid(
        train, dev, test[0], 2, Protocol(classifier="logreg", tenacity=2, tenacity_reset=True)
    )
    assert (reset.passes >= senteval.passes).all()
    assert (reset.passes > senteval.passes).any()
    # same seed, same batches: until SentEval's rule stops, the two fits are one trajectory
    for short, long in zip(senteval.dev_curves, reset.dev_curves, strict=True):
        assert long[: len(short)] == short


def test_the_choice_compares_percent_rounded_to_two_decimals() -> None:
    """80.0041 % and 80.0049 % are both 80.0 in SentEval's comparison: a tie, so the first
    wins although the second is higher before rounding."""
    dev = np.array([0.800041, 0.800049, 0.79])
    assert selection_scores(dev) == [80.0, 80.0, 79.0]
    assert choose(dev) == 0
    assert choose(np.array([0.7, 0.800049, 0.800151])) == 2  # 80.00 < 80.02


def test_ties_go_to_the_first_which_is_the_smallest_l2() -> None:
    """SentEval's L2 values ascend (1e-5 … 1e-2) and ``np.argmax`` keeps the first maximum."""
    assert Protocol(classifier="logreg").grid()[0].l2 == 1e-5
    assert choose(np.array([0.61, 0.62, 0.62, 0.62])) == 1


def test_the_fit_chooses_by_the_rounded_comparison() -> None:
    train, dev, test = _noisy(seed=3)
    fit = fit_grid(train, dev, test[0], 2, Protocol(classifier="logreg"))
    assert fit.best == choose(fit.dev_accuracy)


def test_the_option_defaults_to_senteval_s_rule() -> None:
    from posharness.tasks.senteval.task import DEFAULTS

    assert DEFAULTS["tenacity_reset"] is False
    assert Protocol().tenacity_reset is False


def test_the_option_reaches_the_protocol_and_is_recorded(tmp_path: Path, tiny_bert: Path) -> None:
    write_probing_folder(tmp_path / "probes", ["tense"])
    assert run_isolated(
        tmp_path, "--model", f"hf:{tiny_bert}", "--tasks", "tense",
        "--task-arg", f"tense.probes={tmp_path / 'probes'}", "--task-arg", "tense.control=false",
        "--task-arg", "tense.tenacity_reset=true",
    ) == 0  # fmt: skip
    path = next((tmp_path / "results").rglob("tense__both__seed0*.json"))
    out = json.loads(path.read_text())
    assert out["details"]["protocol"]["tenacity_reset"] is True
    assert out["task"]["options"]["tenacity_reset"] is True
