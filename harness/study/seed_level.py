"""PE-level rows and tests of a study table: a PE's value over its pretraining seeds, and
PE against baseline PE over those seeds (issue 46, part 1; DESIGN.md §12 "Claims").

A study trains each PE from several pretraining seeds; each seed is a different model.
The paired tests over one model's probe words (``tables._tests``) say whether *that*
model differs from *that* baseline model; they say nothing about the encoding, since the
seed-to-seed spread of one PE (TUPE-R's locality: 44.4 and 40.2 over two seeds, then
about 39 on a third) is far wider than the interval over 100 probe words (±0.4). So:

- a PE's row gives the mean over its seeds' rows, which stand above it, each seed's
  value in its own row (the table's "PE (mean of N seeds)" row);
- a PE is tested against a baseline PE over the seed-level values (one number per seed:
  the value its row prints), Welch's two-sample t-test since seed 0 of one PE and seed 0
  of another are two unrelated models (``stats.pe_level``, docs/statistics.md), Holm-
  adjusted over the table's PE-level tests; fewer than ``MIN_SEEDS`` seeds a side: no
  test, no ▲/▼, and the reason printed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MIN_SEEDS = 3
UNIT = "pretraining seeds"


@dataclass
class PELine:
    """One PE-level test line: PE against baseline PE in one column and mode."""

    __test__ = False  # a table line, not a pytest class

    pe: str
    mode: str
    column: str
    baseline: str
    delta: float  # mean over the PE's seeds − mean over the baseline's
    test: Any  # stats.paired_tests.PairedTest, or None
    reason: str  # why there is no test ("" with one)

    def cells(self) -> tuple[str, ...]:
        from posharness.stats.paired_tests import format_p

        pair = (f"{self.pe} ({self.mode})", self.column, self.baseline)
        if self.test is None:
            return (*pair, f"{self.delta:+.4f}", "–", f"no test: {self.reason}")
        p = self.test.p_adjusted if self.test.p_adjusted is not None else self.test.p_value
        shown = f"{p:.3g}" if self.test.p_adjusted is not None else format_p(p, None)
        return (*pair, f"{self.delta:+.4f}", shown, f"{self.test.name}, {self.test.on}")


def pe_test(a: Mapping[str, float], b: Mapping[str, float], delta: float) -> tuple[Any, str]:
    """The test of PE ``b`` against baseline PE ``a`` over their seeds' values, or why
    none: ``stats.pe_level`` where the statistics layer has it, else the run-level t-test
    with the two sides' seeds kept unpaired (their labels made distinct)."""
    try:
        from posharness.stats import pe_level
    except ImportError:
        pe_level = None
    if pe_level is not None and hasattr(pe_level, "pe_level_test"):
        return pe_level.pe_level_test(a, b, delta)
    from posharness.stats.seed_tests import run_level_test

    if min(len(a), len(b)) < MIN_SEEDS:
        return None, (
            f"{len(b)} and {len(a)} {UNIT}; a PE-level test needs at least {MIN_SEEDS} a side"
        )
    return run_level_test(
        {f"baseline {k}": v for k, v in a.items()},
        {f"pe {k}": v for k, v in b.items()},
        delta,
        UNIT,
    )


def adjust_lines(lines: list[PELine]) -> None:
    """Holm over the table's PE-level tests (one family)."""
    from posharness.stats.paired_tests import holm

    tested = [line.test for line in lines if line.test is not None]
    for test, p in zip(tested, holm([t.p_value for t in tested]), strict=True):
        test.p_adjusted = p
