"""The range a metric's value can take, and an interval of a difference kept inside it.

An interval of Δ = B − A is printed beside a value that cannot leave a known range: a
difference of two accuracies lies in [−1, 1], whatever a t interval over three seeds
says (issue 47 found [0.622, 1.178]). Bootstrap intervals need nothing here: their ends
are quantiles of resampled differences, each a difference of two in-range values. A t
interval (over seeds or a protocol's runs) is symmetric about Δ and can cross a bound;
it is clipped to the range of a difference, [lo − hi, hi − lo], and the row says so.

Where the range comes from: a mean of binary per-example outcomes lies in [0, 1] by its
declaration (``MetricType``); otherwise the metric's base name, when it is one whose
definition bounds it — accuracy and F1 in [0, 1], Matthews' correlation and Pearson's
and Spearman's in [−1, 1], and the attention-map geometry of Chen et al. (2023): locality
(Eq. 6) and symmetry (Eq. 7) of a row-stochastic map, and the mass-weighted symmetry, in
[0, 1]. A name matches when it is one of these or ends in ``_<name>`` once its
length and special-token suffixes (``_len32``, ``_no_special``) are removed, so
``dev_accuracy``, ``locality_len32`` and ``positional_term_symmetry`` match and
``locality_excess_len32`` or ``symmetry_drift`` (differences, with other ranges) do not.
A metric of unknown range is never clipped.
"""

from __future__ import annotations

import re

from posharness.contracts.metric_types import MetricType

Bounds = tuple[float, float]

BOUNDED: dict[str, Bounds] = {
    "accuracy": (0.0, 1.0),
    "f1": (0.0, 1.0),
    "matthews": (-1.0, 1.0),
    "pearson": (-1.0, 1.0),
    "spearman": (-1.0, 1.0),
    "locality": (0.0, 1.0),
    "symmetry": (0.0, 1.0),
    "symmetry_magnitude": (0.0, 1.0),
}
_DECORATION = re.compile(r"(_len\d+|_no_special)+$")
CLIPPED = (
    "interval clipped to [{low:g}, {high:g}], the range of a difference of two values "
    "in [{lo:g}, {hi:g}]"
)


def value_range(metric: str, kind: MetricType | None = None) -> Bounds | None:
    """The range ``metric``'s value can take, or None when it is not known."""
    if kind is not None and kind.aggregate == "mean" and kind.outcome == "binary":
        return (0.0, 1.0)
    base = _DECORATION.sub("", metric)
    for name in sorted(BOUNDED, key=len, reverse=True):
        if base == name or base.endswith("_" + name):
            return BOUNDED[name]
    return None


def difference_range(bounds: Bounds) -> Bounds:
    """The range of B − A when A and B each lie in ``bounds``."""
    lo, hi = bounds
    return (lo - hi, hi - lo)


def clip_interval(low: float, high: float, bounds: Bounds | None) -> tuple[float, float, str]:
    """The interval of a difference kept inside the range it can take, and what was done
    (empty when nothing needed clipping)."""
    if bounds is None:
        return low, high, ""
    floor, ceiling = difference_range(bounds)
    if floor <= low and high <= ceiling:
        return low, high, ""
    said = CLIPPED.format(low=floor, high=ceiling, lo=bounds[0], hi=bounds[1])
    return max(low, floor), min(high, ceiling), said
