"""What a study table is made of: its rows' sources, cells, rows, test lines and the
computed table, with the words a cell shows for what was not measured.

Kept apart from the computation (``tables.py``) so that rendering, the dynamics table and
the tests read the types without the machinery that fills them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from posharness.boards.compare import MetricComparison
from posharness.run.flags import FLAG_MARK
from posharness.study.table_spec import StudyTable

MISSING, NOT_RUN, NOT_REPORTED = "data missing", "not run", "not reported"
# a task or mode the study left out; a metric its task does not define for a model; a
# mode the model does not have
NOT_IN_STUDY, UNDEFINED, NO_MODE = "not in study", "n/a", "no such mode"
ALPHA = 0.05


@dataclass(frozen=True)
class ModelRow:
    """One of our rows' sources: a model's label and its board."""

    label: str
    board: Path
    baseline: bool = False
    modes: frozenset[str] | None = None  # the modes the model offers (None: unknown)
    pe: str = ""  # the study model's label, where this row is one of its pretraining seeds
    seed: int | None = None


@dataclass
class Cell:
    text: str
    value: float | None = None  # in the column's unit (scaled)
    mark: str = ""  # "▲"/"▼": significantly above / below a baseline after Holm
    flags: tuple[str, ...] = ()  # the cell's degenerate outcomes (run/flags.py): not a finding

    @property
    def shown(self) -> str:
        return self.text + self.mark + (f" {FLAG_MARK}" if self.flags else "")


@dataclass
class TableRow:
    label: str
    mode: str
    cells: list[Cell]
    published: bool = False
    note: str = ""
    seeds: int = 0  # a PE's row: the mean over this many pretraining seeds' rows


@dataclass
class TestLine:
    __test__ = False  # a table line, not a pytest class

    model: str
    mode: str
    column: str
    baseline: str
    comparison: MetricComparison

    @property
    def row(self) -> str:
        return f"{self.model} ({self.mode})"

    def cells(self) -> tuple[str, ...]:
        """The line as a table of tests prints it: row, column, baseline, Δ (PE −
        baseline), Holm p (a raw p at its Monte Carlo floor as "< 1/(R+1)") and the
        test, or the reason there is none; a flagged cell's flags follow the test, so a
        flagged test never reads as a finding on its own."""
        from posharness.stats.paired_tests import format_p

        pair = (self.row, self.column, self.baseline)
        test, flags = self.comparison.test, self.comparison.flags
        flagged = f"; {FLAG_MARK} flagged: {'; '.join(flags)}" if flags else ""
        if test is None:
            return (*pair, "–", "–", self.comparison.note + flagged)
        if test.p_adjusted is not None:
            p = f"{test.p_adjusted:.3g}"
        else:
            p = format_p(test.p_value, test.resamples)
        return (*pair, f"{-test.delta:+.4f}", p, f"{test.name}, n={test.n}{flagged}")


@dataclass
class ComputedTable:
    spec: StudyTable
    header: list[str]
    rows: list[TableRow]
    caption: str
    notes: list[str] = field(default_factory=list)
    tests: list[TestLine] = field(default_factory=list)
    pe_tests: list[Any] = field(default_factory=list)  # seed_level.PELine: PE against PE
    # a scatter with a probe axis: each of our rows' probe length (row label → tokens)
    probe_lengths: dict[str, int] = field(default_factory=dict)
    # a dynamics table: per column label, its curves (dynamics.Series), for the figure
    series: dict[str, Any] = field(default_factory=dict)
