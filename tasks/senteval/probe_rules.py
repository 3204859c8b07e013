"""SentEval's two rules around a probing fit, as its own code applies them: when early
stopping ends a fit (``senteval/tools/classifier.py``, ``PyTorchClassifier.fit``) and which
configuration of the grid becomes the probe (``senteval/tools/validation.py``,
``SplitClassifier.run``). ``probe_grid`` trains the grid; these decide around it.
"""

from __future__ import annotations

import numpy as np


def early_stop_step(improved: bool, count: int, tenacity: int, reset: bool) -> tuple[int, bool]:
    """One dev check of early stopping: the new count of non-improving checks, and whether
    training stops now.

    SentEval's ``PyTorchClassifier.fit`` (``senteval/tools/classifier.py``): a check that
    does not improve stops training when ``tenacity`` non-improving checks came before it,
    and otherwise adds one to the count; an improving check leaves the count as it is.
    ``reset=True`` sets the count back to zero on an improvement (the usual "patience").
    """
    if improved:
        return (0 if reset else count), False
    if count >= tenacity:
        return count, True
    return count + 1, False


def checks_until_stop(dev_accuracies: list[float], tenacity: int, reset: bool) -> int | None:
    """How many dev checks a fit whose successive dev accuracies are ``dev_accuracies``
    runs before early stopping ends it (the stopping check included); None if it does not
    stop within the sequence."""
    best, count = -1.0, 0
    for check, accuracy in enumerate(dev_accuracies, start=1):
        improved = accuracy > best
        best = max(best, accuracy)
        count, stop = early_stop_step(improved, count, tenacity, reset)
        if stop:
            return check
    return None


def selection_scores(dev_accuracy: np.ndarray) -> list[float]:
    """Dev accuracies as SentEval's ``SplitClassifier.run`` compares them: in percent,
    rounded to two decimals (Python's ``round``, as SentEval's)."""
    return [round(100 * float(a), 2) for a in dev_accuracy]


def choose(dev_accuracy: np.ndarray) -> int:
    """The configuration with the best rounded dev accuracy; of tied values the first
    (``np.argmax``, as SentEval picks its L2), i.e. the earliest in the grid."""
    return int(np.argmax(selection_scores(dev_accuracy)))
