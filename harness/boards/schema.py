"""A leaderboard file's schema: scores, columns, rows and the board, as types.

Its own module so the board's builder (``leaderboard``) and its merge (``merge``) share
it without importing each other.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from posharness.contracts.cell_key import RowKey

SCHEMA_VERSION = 1


class Score(BaseModel):
    mean: float
    sd: float | None = None  # across seeds; None with one seed
    n_seeds: int
    ci_low: float | None = None  # the task's own interval, with one seed
    ci_high: float | None = None
    # seed -> that seed's value, with several seeds: the unit a test over seeds pairs by
    # (stats.seed_tests); absent from boards written before it and from one-seed scores
    per_seed: dict[str, float] | None = Field(default=None, exclude_if=lambda v: v is None)


class Column(BaseModel):
    task: str
    metric: str
    headline: bool  # shown by default

    @property
    def key(self) -> str:
        return f"{self.task}/{self.metric}"


NOT_SHIPPED = "results/"  # the prefix of keys that name result files kept elsewhere
NOT_SHIPPED_NOTE = (
    "result files named results/<output folder>/… are not shipped with this board: they "
    "lay outside its folder when it was built (report: --results DIR with the run's "
    "--output-dir; compare reads the per-example bundle NAME.examples.json.gz)"
)


class Row(BaseModel):
    model: str
    fingerprint: str
    mode: str
    exact: bool
    definition: str | None = None
    pe_family: str
    scores: dict[str, Score]  # column key → score
    results: list[str]  # result files, relative to the leaderboard file (relative_to_board)
    # ROW_SETTINGS values where set, and "options": {task: {key: value}} (row_settings.py)
    settings: dict[str, Any] = {}
    # False on rows written before settings were recorded: their options are unknown, so
    # no merge can be refused for differing from them.
    settings_known: bool = False
    flags: dict[str, list[str]] = {}  # task → degenerate outcomes its cells were flagged with
    # task → the task version its cells ran (with the options in ``settings``, the
    # protocol: compare tests no pair run under different ones); absent on older boards
    task_versions: dict[str, str] = Field(default_factory=dict, exclude_if=lambda v: not v)

    @property
    def key(self) -> RowKey:
        """The row's key by named fields (``contracts.cell_key.RowKey``): what a merge and
        an admission match rows by; its ``pairing`` is what ``compare`` pairs rows by."""
        return RowKey.of(self.fingerprint, self.mode, self.settings)

    @property
    def label(self) -> str:
        """The mode, its definition where not exact, and the row's settings and options."""
        return self.key.label(self.exact, self.definition, self.settings.get("options", {}))

    @property
    def mode_label(self) -> str:
        """The mode and its definition where not exact, without the settings."""
        return self.key.label(self.exact, self.definition, settings=False)


class Leaderboard(BaseModel):
    schema_version: Literal[1] = SCHEMA_VERSION
    name: str
    created_at: str
    columns: list[Column]
    rows: list[Row]
    results_note: str | None = None  # NOT_SHIPPED_NOTE when rows name unshipped results


def results_note_of(rows: list[Row]) -> str | None:
    unshipped = any(path.startswith(NOT_SHIPPED) for row in rows for path in row.results)
    return NOT_SHIPPED_NOTE if unshipped else None


def sorted_rows(rows: list[Row]) -> list[Row]:
    mode_order = {"both": 0, "contextual": 1, "positional": 2}
    # Within one model and mode: the full run first, then limited rows, largest first.
    return sorted(
        rows,
        key=lambda r: (
            r.pe_family,
            r.model,
            mode_order.get(r.mode, 9),
            r.fingerprint,
            -(r.key.limit or float("inf")),
            -(r.key.train_limit or float("inf")),
        ),
    )
