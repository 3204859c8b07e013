"""Differences below numerical precision, and values with no sampling variability.

A paired test asks whether a difference could be sampling noise. Two cases have no
sampling noise to ask about, and testing them produces nonsense (issue 38): a difference
of float rounding (the same model rerun: Δ = −1.25e-08, "p < 0.05"), and a difference of
two exact computations (positional mode: every word gives the same value, sd 5.6e-17, so
any Δ got the floor p, a zero-width interval and d_z = 2.2e15).

The rule, stated once: PRECISION = 1e-6 relative to the values' scale — the largest
absolute per-example value on either side (the aggregate's value on either side where
there are no per-example values), the tolerance within which ``compare`` already checks
that per-example outputs reproduce the board's value.
- Every paired value (example, replicate or run) equal on both sides within PRECISION ×
  scale: "equal within numerical precision", never tested, never significant. This is
  decided on the values the test would use, never on the printed Δ: a Δ of two medians,
  or of two accuracies, can be 0 while the runs or examples behind it differ (issue 47:
  38 of 1,000 simulated median tables of two equal PEs read "exact" while their runs'
  means differed), and that is a null result to test, not a rounding difference.
- Every example gives the same value on each side (max − min <= PRECISION × scale, on
  both sides): "no sampling variability"; Δ is exact, and the verdict is the tolerance
  one (equal within 1e-6 relative, or not), with no p, interval or d_z.
- d_z = mean / sd of the differences only when that sd exceeds PRECISION × scale.
"""

from __future__ import annotations

import numpy as np

PRECISION = 1e-6
EQUAL = "equal within numerical precision"
EXACT_PREFIX = "exact: "  # a note that says why no test is needed
NO_VARIABILITY = "no sampling variability"


def scale_of(*values: np.ndarray | float) -> float:
    """The values' scale: the largest absolute value among them."""
    return max((float(np.max(np.abs(v))) for v in values if np.size(v)), default=0.0)


def tolerance(scale: float) -> float:
    return PRECISION * scale


def within_precision(delta: float, scale: float) -> bool:
    """|Δ| no larger than numerical precision at this scale (Δ = 0 always is)."""
    return abs(delta) <= tolerance(scale)


def same_values(x: np.ndarray, y: np.ndarray, scale: float) -> bool:
    """Every paired value equal on both sides within precision: the two sides measured the
    same numbers (the same model rerun), so Δ is a rounding difference."""
    return len(x) == len(y) > 0 and bool(np.all(np.abs(y - x) <= tolerance(scale)))


def constant(values: np.ndarray, scale: float) -> bool:
    """Every value the same within precision: nothing varies from example to example."""
    return len(values) > 0 and float(np.ptp(values)) <= tolerance(scale)


def exact_verdict(delta: float, scale: float) -> str:
    """The tolerance verdict of an exact Δ."""
    if within_precision(delta, scale):
        return f"exact: {EQUAL} (|Δ| <= {PRECISION:g} × {scale:.3g})"
    return f"exact: differs beyond {PRECISION:g} relative"


def why_exact(
    x: np.ndarray,
    y: np.ndarray,
    delta: float,
    scale: float,
    *,
    units: str,
    every: str | None = None,
    paired: bool = True,
) -> str | None:
    """Why Δ needs no test, decided on the paired values ``x`` and ``y`` the test would
    use (examples, replicates or runs), never on the printed Δ; None when Δ is to be tested.

    The two cases of the rule above, in the order they are checked: neither side varies
    (Δ is exact, the tolerance verdict says whether it is 0), or every pair is equal within
    precision (the same model rerun; only when ``paired``). ``units`` names the values in
    the note ("task seeds", "paired values"), ``every`` all of them (default "every one of
    the <units>"), so a board's test and a test over seeds say it in their own terms."""
    if constant(x, scale) and constant(y, scale):
        every = every or f"every one of the {units}"
        return (
            f"{exact_verdict(delta, scale)}; {NO_VARIABILITY}: {every} gives the same value "
            "on each side, so Δ is exact: no p, interval or d_z"
        )
    if paired and same_values(x, y, scale):
        return (
            f"{EXACT_PREFIX}{EQUAL}; every one of the {len(x)} {units} equal on both sides "
            f"within {PRECISION:g} × the values' scale {scale:.3g}: a rounding difference, "
            "never tested"
        )
    return None
