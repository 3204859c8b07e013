"""The label checks every fine-tuning reader shares: a class name as written in the file
turned into its index, a regression score checked against the dataset's range; each
failure is one ``WHERE: what is wrong: what to do`` line."""

from __future__ import annotations

import math
from collections.abc import Mapping

from posharness.base.errors import DataError


def class_index(raw: str, values: Mapping[str, int], where: str, column: str) -> int:
    """The class index of a label as written in the file; unknown labels name the allowed ones."""
    if raw in values:
        return values[raw]
    allowed = ", ".join(repr(value) for value in values)
    raise DataError(
        f"{where}: unknown label {raw!r} in {column}: expected one of {allowed}: "
        "fix the row or check that this is the right file"
    )


def score(raw: object, score_range: tuple[float, float] | None, where: str, column: str) -> float:
    """A regression score as a float inside the dataset's documented range."""
    try:
        value = float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value):
        raise DataError(
            f"{where}: score {raw!r} in {column} is not a number: "
            "fix the row or check that this is the right file"
        )
    if score_range is not None and not score_range[0] <= value <= score_range[1]:
        low, high = score_range
        raise DataError(
            f"{where}: score {value:g} in {column} is outside the range {low:g}..{high:g} "
            "of this dataset: fix the row or check that this is the right file"
        )
    return value
