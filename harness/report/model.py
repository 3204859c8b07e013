"""What the report shows, as types: computed once from boards and results, then rendered.

``collect`` fills these from files; ``pages`` (HTML) and ``markdown`` only format them, so
the two formats cannot disagree on a number, and each stage is testable alone. Every
``href`` is relative to the report's root folder; a page adds the way back to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from posharness.base.errors import DataError
from posharness.boards.compare import MetricComparison, model_name
from posharness.boards.leaderboard import Column, Row, Score
from posharness.contracts.results import CellResult

ALPHA = 0.05  # a paired test's p below this marks a difference as significant


@dataclass(frozen=True)
class FigureRef:
    href: str
    caption: str
    origin: str  # "drawn" (by the report) | "artifact" (a cell's) | "summary" (across modes)


@dataclass(frozen=True)
class CellFacts:
    """One result file behind a number, copied into the report at ``href``."""

    href: str
    result: CellResult


@dataclass(frozen=True)
class Provenance:
    """How the numbers of one (row, task) were made; one block per pair, shared by its
    metrics, so a board of a thousand numbers does not repeat it a thousand times."""

    anchor: str  # the block's element id on the page
    row: Row
    task: str
    cells: tuple[CellFacts, ...]  # the result files at hand, lowest seed first
    missing: tuple[str, ...]  # result files the board names that are not at hand
    options: dict[str, Any]  # the board's non-default options for the task

    @property
    def at_hand(self) -> bool:
        return bool(self.cells)

    def hover(self) -> str:
        """The one-line summary a pointer resting on a number shows."""
        head = f"{self.row.model} · {self.row.mode} · {self.task} · {self.row.fingerprint}"
        if not self.cells:
            return f"{head} · result files not at hand"
        first = self.cells[0].result
        seeds = ",".join(str(c.result.seed) for c in self.cells)
        return f"{head} · v{first.task.version} · data {first.task.data_hash} · seeds {seeds}"


@dataclass(frozen=True)
class RowView:
    index: int
    row: Row
    label: str  # the model, with its fingerprint where one spec names two models
    mode_label: str  # the mode, and its definition where the split is not exact
    provenance: dict[str, Provenance]  # task → block


@dataclass(frozen=True)
class TaskView:
    name: str
    kind: str
    description: str | None
    columns: tuple[Column, ...]
    figures: tuple[FigureRef, ...]  # drawn by the report first, then the cells' own
    files: tuple[FigureRef, ...] = ()  # the cells' other artifacts (arrays, tables)
    missing_figures: tuple[str, ...] = ()  # listed by a result, absent from its folder


@dataclass(frozen=True)
class KindSection:
    kind: str
    anchor: str
    tasks: tuple[TaskView, ...]
    rows: tuple[RowView, ...]  # rows with at least one score in this kind
    summaries: tuple[FigureRef, ...] = ()  # a run's views across modes (Fig. 5, Table 3 …)
    tables: tuple[FigureRef, ...] = ()  # the same summaries' tables (Markdown, CSV, JSON)

    @property
    def columns(self) -> tuple[Column, ...]:
        return tuple(c for t in self.tasks for c in t.columns)


@dataclass(frozen=True)
class BoardView:
    name: str
    slug: str
    source: str  # the path as the user gave it
    created_at: str
    rows: tuple[RowView, ...]
    kinds: tuple[KindSection, ...]
    results_named: int  # result files the rows name
    results_at_hand: int
    bundle: bool  # per-example outputs kept beside the board (``*.examples.json.gz``)
    how_made: tuple[str, ...]  # environment and settings lines, from results and the board
    figures: tuple[FigureRef, ...] = ()  # drawn across the board (its scatter)
    path: Path | None = None  # the file read, where ``source`` is shown relative to a folder

    @property
    def href(self) -> str:
        return f"boards/{self.slug}.html"

    @property
    def models(self) -> list[str]:
        return sorted({r.row.model for r in self.rows})

    @property
    def model_names(self) -> list[str]:
        """Registered names (``tupe-r`` of ``tupe-r@runs/x``), for a line that must fit."""
        return sorted({model_name(r.row.model) for r in self.rows})

    @property
    def modes(self) -> list[str]:
        order = {"both": 0, "contextual": 1, "positional": 2}
        return sorted({r.row.mode for r in self.rows}, key=lambda m: (order.get(m, 9), m))

    @property
    def tasks(self) -> list[str]:
        return [t.name for f in self.kinds for t in f.tasks]


@dataclass(frozen=True)
class ScatterView:
    """Metric X against metric Y, one point per (model, mode) (Chen et al. 2023, Fig. 2)."""

    x: str
    y: str
    title: str
    figure: FigureRef | None  # None when no row holds both metrics
    points: int


@dataclass(frozen=True)
class PairView:
    a: RowView
    b: RowView
    metrics: tuple[MetricComparison, ...]
    missing: tuple[str, ...]


@dataclass(frozen=True)
class ComparisonView:
    slug: str
    a: BoardView
    b: BoardView
    pairs: tuple[PairView, ...]

    @property
    def href(self) -> str:
        return f"compare/{self.slug}.html"


@dataclass(frozen=True)
class FileCopy:
    target: str  # relative to the report root
    source: Path


# A paper table's published rows are the papers' own numbers, at the papers' scale.
PUBLISHED_LABEL = "published, BERT-base scale"
TEST_HEADER = ("row", "column", "baseline", "Δ", "p (Holm)", "test")


@dataclass(frozen=True)
class PaperTable:
    """A study table (models as rows), ready to show: text cells, already formatted.

    The study layer (above the report) computes it; the report only lays it out, so a
    number reads the same in the study's Markdown/LaTeX and on the report's pages.
    """

    id: str  # "chen2023.table1" (its slug names anchors and copied files)
    title: str
    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]  # every cell as text, first cell the row label
    published: tuple[bool, ...]  # per row: a published row (shown apart, PUBLISHED_LABEL)
    notes: tuple[str, ...] = ()  # footnotes under the table
    tests: tuple[tuple[str, ...], ...] = ()  # paired tests, one line each, as TEST_HEADER
    files: tuple[tuple[str, Path], ...] = ()  # (label, file) copied into the report, linked
    figure: Path | None = None  # a PNG to copy and show (the Fig. 2 scatter)

    def __post_init__(self) -> None:
        width = len(self.header)
        if len(self.published) != len(self.rows):
            raise DataError(
                f"paper table {self.id}: {len(self.rows)} rows but "
                f"{len(self.published)} published flags"
            )
        for k, row in enumerate(self.rows, 1):
            if len(row) != width:
                raise DataError(
                    f"paper table {self.id}: row {k} has {len(row)} cells, the header {width}"
                )
        for k, line in enumerate(self.tests, 1):
            if len(line) != len(TEST_HEADER):
                raise DataError(
                    f"paper table {self.id}: test line {k} has {len(line)} cells, "
                    f"not {len(TEST_HEADER)} ({', '.join(TEST_HEADER)})"
                )


@dataclass(frozen=True)
class PaperTableView:
    """A paper table placed in the report: its anchor, its copied files and figure."""

    table: PaperTable
    slug: str
    files: tuple[FigureRef, ...]  # caption = the file's label ("LaTeX"), href its copy
    figure: FigureRef | None

    @property
    def numeric(self) -> tuple[bool, ...]:
        """Per column: right-aligned, where any cell below the label column reads as a
        number (a "data missing" cell keeps its column's alignment)."""
        return tuple(
            k > 0 and any(_NUMBER.match(row[k]) for row in self.table.rows)
            for k in range(len(self.table.header))
        )

    @property
    def blocks(self) -> tuple[tuple[bool, tuple[tuple[str, ...], ...]], ...]:
        """The rows in runs of published / ours, in the table's order."""
        out: list[tuple[bool, list[tuple[str, ...]]]] = []
        for row, published in zip(self.table.rows, self.table.published, strict=True):
            if not out or out[-1][0] != published:
                out.append((published, []))
            out[-1][1].append(row)
        return tuple((published, tuple(rows)) for published, rows in out)

    @property
    def significant(self) -> tuple[bool | None, ...]:
        """Per test line: its p (Holm) below ``ALPHA``; None where it is no number."""
        verdicts = []
        for line in self.table.tests:
            try:
                verdicts.append(float(line[4]) < ALPHA)
            except ValueError:
                verdicts.append(None)
        return tuple(verdicts)


_NUMBER = re.compile(r"^\s*[-+−]?(\d|\.\d)")


@dataclass
class Study:
    """Everything one report holds; figures are requests the figure store resolves."""

    boards: list[BoardView]
    scatters: list[ScatterView]
    comparisons: list[ComparisonView]
    copies: list[FileCopy] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)  # href → FigureRequest
    stamp: str | None = None  # build time, only when asked for
    paper_tables: list[PaperTableView] = field(default_factory=list)  # a study's tables
    title: str | None = None  # the report's title ("study chen2023-mini"); None: the default


# -- numbers as text, shared by both formats ---------------------------------------------


def mean_text(score: Score | None) -> str:
    return "–" if score is None else f"{score.mean:.4f}"


def spread_text(score: Score | None) -> str:
    """± sd over seeds, or the task's own 95 % interval with one seed."""
    if score is None:
        return ""
    if score.sd is not None:
        return f"± {score.sd:.4f} ({score.n_seeds} seeds)"
    if score.ci_low is not None and score.ci_high is not None:
        return f"[{score.ci_low:.4f}, {score.ci_high:.4f}]"
    return ""


def settings_text(row: Row, tasks: list[str] | None = None) -> str:
    """What sets a row apart from a plain run: limits, and the options of ``tasks``."""
    parts = [f"{key.replace('_', ' ')} {value}" for key, value in row.key.settings().items()]
    for task, options in sorted(row.settings.get("options", {}).items()):
        if tasks is None or task in tasks:
            parts += [f"{task}.{k}={v}" for k, v in sorted(options.items())]
    return " · ".join(parts)


def when(timestamp: str) -> str:
    """An ISO 8601 time to the minute, for reading; the raw value where it is not one."""
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        return timestamp
    if moment.tzinfo is None:
        return moment.strftime("%Y-%m-%d %H:%M")
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def signed(value: float | None) -> str:
    """A difference that never reads ±0.0000 unless it is zero (``paired_tests``)."""
    from posharness.stats.paired_tests import format_delta

    return format_delta(value)


def plain(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def significant(comparison: MetricComparison) -> bool | None:
    """True / False by the Holm-adjusted p of the paired test at ``ALPHA``; None when
    there is no test."""
    if comparison.test is None:
        return None
    return comparison.test.significant(ALPHA)


def p_text(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


def effect_text(value: float | None) -> str:
    return "–" if value is None else f"{value:+.2f}"
