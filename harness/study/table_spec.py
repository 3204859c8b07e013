"""What a study table is, declared as data: its columns, the modes it shows, and the
published rows it puts beside ours.

A family declares tables (the papers' Table 1, Table 3 …) through the entry point group
``posharness.study_tables``: a name pointing at a function that returns a tuple of
:class:`StudyTable`. The core renders them from a study's leaderboards
(:mod:`posharness.study.tables`) without knowing any paper.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

PUBLISHED_MARK = "published, BERT-base scale"


@dataclass(frozen=True)
class StudyColumn:
    """One column: a metric of a task, read from the study's boards."""

    key: str  # the column's id; published rows give their values under this key
    label: str  # the header, as the paper prints it (``SST-2``, ``Shuffle-3 Δ``)
    task: str  # the task's name on the boards
    metric: str | None = None  # None: the task's main metric (first headline on the board)
    scale: float = 100.0  # the paper's unit: ×100 for accuracies and correlations
    mode: str | None = None  # read in this mode whatever the row's (Table A3's per-mode columns)
    in_average: bool = True  # part of the table's average column, where it has one
    needs: str = ""  # how a run records the metric, said when a cell reads n/a without it
    # where the value comes from: the study's boards, or (a dynamics table's MLM loss) the
    # pretraining run's loss log at the checkpoint's step
    source: str = "board"
    flat: bool = False  # a dynamics table draws the probe's flat-map value on this column


@dataclass(frozen=True)
class PublishedRow:
    """A row as the paper printed it. ``values`` maps column keys to the printed numbers
    (already in the column's unit); a column the paper did not report is absent."""

    model: str  # as printed (``BERT``, ``TUPE-R``)
    values: Mapping[str, float]
    mode: str = "both"
    pe: str | None = None  # the zoo scheme it corresponds to, where one does
    note: str = ""  # e.g. "average over 5 learning rates"
    average: float | None = None  # the printed average column, shown as printed
    spread: Mapping[str, float] = field(default_factory=dict)  # the printed ± per column


@dataclass(frozen=True)
class PublishedSource:
    paper: str  # ``Chen, Varoquaux, Suchanek 2023, EMNLP Findings``
    table: str  # ``Table 1``
    page: str  # ``p. 6``
    scale: str = PUBLISHED_MARK  # how the published models were trained


@dataclass(frozen=True)
class ProbeAxis:
    """A scatter whose x value depends on the probe's length (locality: a uniform map's
    falls as 1/L): where each point's length is read and the flat map's value there, so
    points of different lengths are drawn in their own panels, each with its baseline."""

    task: str  # the task whose option sets the length (``locality_symmetry``)
    option: str  # that option (``length``)
    default: int  # its default, for a study that left it unset
    published: int  # the length the published points were read at
    flat: Callable[[int], float]  # the x column's value for a uniform map, column's unit


@dataclass(frozen=True)
class StudyTable:
    """A table whose rows are models (and, where ``modes`` lists several, their modes)."""

    id: str  # ``chen2023.table1``: what a study file's ``tables`` key names
    title: str
    columns: tuple[StudyColumn, ...]
    source: PublishedSource
    published: tuple[PublishedRow, ...] = ()
    modes: tuple[str, ...] = ("both",)  # row modes; a column's own ``mode`` overrides
    average: str | None = None  # the label of a mean-over-columns column, or None
    digits: int = 1
    caption: str = ""  # what the table shows and how our protocol differs from the paper's
    # "table"; "scatter" (columns[0] on x, columns[1] on y: Fig. 2); "dynamics" (rows are
    # (PE, tokens seen) over every saved checkpoint of its runs, seeds aggregated: the
    # study's [dynamics] section, docs/studies.md)
    kind: str = "table"
    substitutes: Mapping[str, str] = field(default_factory=dict)  # column key → substitute data
    probe: ProbeAxis | None = None  # a scatter's probe length and flat-map baseline

    @property
    def tasks(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(column.task for column in self.columns))
