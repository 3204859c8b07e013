"""Chen et al.'s three statements about Figure 3 / Figure A1, checked with an interval.

The paper prints no numbers for these figures, only sentences (§3.3.1):

1. "the accuracy constantly increases as the locality of encodings strengthens" (MR; the
   SUBJ figure too): Spearman's rho between the settings' locality and their mean test
   accuracy;
2. on SUBJ "the accuracy growth slows down at a particular locality value (0.3)": the
   least-squares slope of accuracy on locality below 0.3 against the slope above it;
3. "symmetry affects performance only after a certain value (0.65), and a larger symmetry
   leads to better accuracy": Spearman's rho below 0.65 and above it.

Each interval is a percentile bootstrap over repeats: for every setting its R repeats are
resampled with replacement and averaged, the statistic recomputed (settings are fixed: the
interval says how much the training seeds move the statistic, not other settings). The
verdict is "reproduced" when the interval is on the paper's side, "not reproduced" when
it is on the other side, "inconclusive" otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.stats import rankdata

BOOTSTRAP = 2000
LEVEL = 0.95
LEVEL_OFF_AT = 0.3
SYMMETRY_MATTERS_ABOVE = 0.65
MIN_SIDE = 3  # settings a trend on one side of a threshold needs


def _spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """rho between ``x`` [K] and each row of ``y`` [B, K] (ties averaged)."""
    rx = rankdata(x)
    ry = rankdata(y, axis=-1)
    rx = (rx - rx.mean()) / rx.std()
    ry = (ry - ry.mean(-1, keepdims=True)) / np.maximum(ry.std(-1, keepdims=True), 1e-12)
    return (rx * ry).mean(-1)


def _slope(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares slope of each row of ``y`` [B, K] on ``x`` [K]."""
    xc = x - x.mean()
    return ((y - y.mean(-1, keepdims=True)) * xc).sum(-1) / (xc * xc).sum()


def _resampled_means(acc: np.ndarray, seed: int) -> np.ndarray:
    """[BOOTSTRAP, K]: per setting, the mean of R repeats drawn with replacement."""
    reps, k = acc.shape
    rng = np.random.default_rng(seed)
    draw = rng.integers(0, reps, size=(BOOTSTRAP, reps, k))
    return np.take_along_axis(acc[None], draw, axis=1).mean(1)


def _interval(stat: Callable[[np.ndarray], np.ndarray], acc: np.ndarray, seed: int) -> dict:
    point = float(stat(acc.mean(0)[None])[0])
    boot = stat(_resampled_means(acc, seed))
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(boot, [tail, 100 - tail])
    return {"value": point, "low": float(low), "high": float(high)}


def _side(interval: dict) -> int:
    """+1 interval above 0, -1 below, 0 straddles."""
    return 1 if interval["low"] > 0 else -1 if interval["high"] < 0 else 0


def _verdict(*, holds: bool, contradicted: bool) -> str:
    """One verdict for every statement (the module docstring): "reproduced" where the
    intervals are on the paper's side, else "not reproduced" where one is on the other
    side, else "inconclusive"."""
    if holds:
        return "reproduced"
    return "not reproduced" if contradicted else "inconclusive"


def _sides_of(x: np.ndarray, at: float) -> tuple[np.ndarray, np.ndarray] | None:
    """The settings below ``at`` and those at or above it, as masks over ``x``; None when
    either side has fewer than ``MIN_SIDE`` settings (statements 2 and 3 compare a trend on
    each side, and a trend needs at least three points)."""
    below, above = x < at, x >= at
    if below.sum() < MIN_SIDE or above.sum() < MIN_SIDE:
        return None
    return below, above


def _trend_on_each_side(
    trend: Callable[[np.ndarray, np.ndarray], np.ndarray],
    x: np.ndarray,
    acc: np.ndarray,
    sides: tuple[np.ndarray, np.ndarray],
    seed: int,
) -> tuple[dict, dict]:
    """The interval of ``trend`` (slope or rho of accuracy on ``x``) over the settings below
    the threshold, then over those at or above it (``sides``, from :func:`_sides_of`)."""
    below, above = sides
    return (
        _interval(lambda y: trend(x[below], y[:, below]), acc, seed),
        _interval(lambda y: trend(x[above], y[:, above]), acc, seed),
    )


def _too_few_settings(statistic: str, at: float) -> dict[str, Any]:
    return {
        "statistic": statistic,
        "verdict": "inconclusive",
        "note": f"fewer than {MIN_SIDE} settings on one side of {at}",
    }


def increases_with(x: np.ndarray, acc: np.ndarray, seed: int = 0) -> dict[str, Any]:
    """Statement 1: rho(x, accuracy) > 0."""
    rho = _interval(lambda y: _spearman(x, y), acc, seed)
    verdict = _verdict(holds=_side(rho) == 1, contradicted=_side(rho) == -1)
    return {"statistic": "Spearman rho", "rho": rho, "verdict": verdict, "settings": len(x)}


def levels_off(x: np.ndarray, acc: np.ndarray, at: float = LEVEL_OFF_AT, seed: int = 0) -> dict:
    """Statement 2: the slope below ``at`` is positive and larger than the slope above it.

    Slopes are in accuracy per unit of locality; ``drop`` = slope below - slope above.
    """
    statistic = "slope below - slope above"
    sides = _sides_of(x, at)
    if sides is None:
        return _too_few_settings(statistic, at)
    sb, sa = _trend_on_each_side(_slope, x, acc, sides, seed)
    below, above = sides
    drop = _interval(
        lambda y: _slope(x[below], y[:, below]) - _slope(x[above], y[:, above]), acc, seed
    )
    verdict = _verdict(
        holds=_side(sb) == 1 and _side(drop) == 1,
        contradicted=_side(drop) == -1 or _side(sb) == -1,
    )
    return {
        "statistic": statistic,
        "at": at,
        "slope_below": sb,
        "slope_above": sa,
        "drop": drop,
        "verdict": verdict,
    }


def matters_only_above(
    x: np.ndarray, acc: np.ndarray, at: float = SYMMETRY_MATTERS_ABOVE, seed: int = 0
) -> dict[str, Any]:
    """Statement 3: rho > 0 above ``at`` and no monotone trend below it."""
    statistic = "Spearman rho below / above"
    sides = _sides_of(x, at)
    if sides is None:
        return _too_few_settings(statistic, at)
    rb, ra = _trend_on_each_side(_spearman, x, acc, sides, seed)
    verdict = _verdict(
        holds=_side(ra) == 1 and _side(rb) == 0,
        contradicted=_side(ra) == -1 or _side(rb) != 0,
    )
    return {
        "statistic": statistic,
        "at": at,
        "rho_below": rb,
        "rho_above": ra,
        "verdict": verdict,
    }


def check_statements(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Every statement on every dataset the sweep ran, in print order."""
    rows = []
    for key, curve in result["curves"].items():
        dataset, kind = key.split("/")
        acc = np.asarray(curve["test_accuracy"], dtype=float)
        x = np.array([s[kind] for s in curve["settings"]])
        if kind == "locality":
            rows.append(
                {
                    "dataset": dataset,
                    "statement": "accuracy increases with locality",
                    **increases_with(x, acc),
                }
            )
            rows.append(
                {
                    "dataset": dataset,
                    "statement": "gain levels off above locality 0.3"
                    + (" (paper: SUBJ)" if dataset == "subj" else " (paper: SUBJ only)"),
                    **levels_off(x, acc),
                }
            )
        else:
            rows.append(
                {
                    "dataset": dataset,
                    "statement": "symmetry matters only above 0.65",
                    **matters_only_above(x, acc),
                }
            )
    return rows
