"""Everything the CLI shows a person: progress bars, result tables, registry listings.

Kept apart from the runner so the runner stays usable (and silent) from Python.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from rich.cells import cell_len
from rich.console import Console, JustifyMethod
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from posharness.base.progress_lines import counter, interval_from_environment
from posharness.cli.heartbeat import Heartbeat
from posharness.contracts.results import CellResult


@functools.cache
def console() -> Console:
    return Console()


@functools.cache
def err_console() -> Console:
    return Console(stderr=True)


def progress_bar() -> Progress:
    """Bars on stderr, gone when done: the one look of every command's progress."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console(),
        transient=True,
    )


class RichReporter:
    """Bars on stderr (one for the cells, one for the work inside a cell); a line per cell
    on stdout, so stderr carries nothing but bars and, on failure, the one error line.
    Where stderr is no terminal (a Slurm log, ``| cat``) no bar is drawn, so the work
    inside a cell (a fine-tuning's examples, a task's batches) writes progress lines with
    its rate and the time left instead, every ``$POSHARNESS_PROGRESS_SECONDS`` (30)."""

    def __init__(self, progress: Progress) -> None:
        self.bar = progress
        self.cells = progress.add_task("cells", total=None)
        # Where no bar is drawn, a cell silent for an interval says it is still running.
        self.heartbeat = (
            None if err_console().is_terminal else Heartbeat(log_line, interval_from_environment())
        )

    def set_total(self, total: int) -> None:
        self.bar.update(self.cells, total=total)

    def run_estimate(self, estimate) -> None:
        """The whole run's estimate (``run/estimate.py``), once, before the first cell."""
        console().print(Text(estimate.text()), soft_wrap=True)

    def cell_skipped(self, cell) -> None:
        console().print(f"[dim]skip[/] {cell.label} (finished: {cell.path})")

    def cell_started(self, cell, index: int, total: int) -> None:
        self.bar.update(
            self.cells, total=total, completed=index - 1, description=f"cell {index}/{total}"
        )
        console().print(f"[bold]run[/]  {cell.label}")
        if self.heartbeat is not None:
            self.heartbeat.cell(cell.label)

    def cell_finished(self, cell, result: CellResult) -> None:
        if self.heartbeat is not None:
            self.heartbeat.idle()
        self.bar.advance(self.cells)
        main = result.metrics.get(result.task.main_metric)
        value = f"{result.task.main_metric}={main.value:.4f}" if main else ""
        console().print(f"[green]done[/] {cell.label} {value} ({result.timings.total_s:.1f} s)")
        for flag in result.flags:
            console().print(f"  [yellow]warning:[/] {flag}")

    def progress(self, label: str, total: int) -> Callable[[int], None]:
        task = self.bar.add_task(label, total=total)
        done = [0]
        lines = None if self.heartbeat is None else counter(label, total, self._line)

        def advance(n: int) -> None:
            self.bar.advance(task, n)
            if lines is not None:  # no bar is drawn: a line with the rate and time left
                lines(n)
            done[0] += n
            if done[0] >= total:
                self.bar.remove_task(task)

        return advance

    def _line(self, text: str) -> None:
        if self.heartbeat is not None:
            self.heartbeat.heard()
        log_line(text)

    def close(self) -> None:
        if self.heartbeat is not None:
            self.heartbeat.close()


def log_line(text: str) -> None:
    """One progress line on stderr, as it is (a log's reader sees no bar)."""
    err_console().print(Text(text), soft_wrap=True)


def evaluate_with_progress(**arguments) -> None:
    """:func:`posharness.evaluate` with bars on stderr and the outcome on stdout."""
    from posharness.api import evaluate
    from posharness.base.distributed import is_main_process

    if not is_main_process():  # under a launch the main process shows the run
        evaluate(**arguments)
        return
    progress = progress_bar()
    reporter = RichReporter(progress)
    try:
        with progress:
            outcome = evaluate(**arguments, reporter=reporter)
    finally:
        reporter.close()
    if outcome.leaderboard is None:
        return
    from posharness.boards import views as views  # the board's code, once there is one
    from posharness.boards.leaderboard import MergeSummary

    if outcome.replaced_unreadable:
        err_console().print(
            f"[yellow]replaced unreadable leaderboard {outcome.leaderboard_path}:[/] "
            f"{outcome.replaced_unreadable}"
        )
    out = console()
    print_table(views.to_rich_table(outcome.leaderboard))
    # What the merge did: rows added beside, tasks joined, scores replaced (leaderboard.py)
    merged = outcome.merged
    added = f" ({merged.text()})" if isinstance(merged, MergeSummary) else ""
    out.print(
        f"{outcome.ran} cell(s) run, {len(outcome.cells) - outcome.ran} already finished; "
        f"results in {arguments['output_dir']}/, leaderboard {outcome.leaderboard_path}{added}"
    )
    figures = [Path(o.cell.path.parent, a) for o in outcome.cells for a in o.result.artifacts]
    if figures:
        out.print(f"artifacts: {', '.join(str(f) for f in figures)}")
    if outcome.summaries:
        out.print(f"summaries across modes: {', '.join(str(s) for s in outcome.summaries)}")


def print_listing_table(
    title: str,
    columns: tuple[str, ...],
    rows: list[tuple[str, ...]],
    notes: tuple[tuple[str, str], ...] = (),
) -> None:
    """A ``posharness list`` table whose first column (the names a user types or greps)
    is never wrapped or cut, however narrow the console.

    Rich shrinks every column, ``no_wrap`` ones included, when a table is wider than the
    console; :func:`add_whole_column` keeps names whole. The other columns fold instead
    of ending in an ellipsis, and nothing is cropped at the edge, so a path or id may
    break across lines but never loses characters.
    """
    table = Table(title=title)
    add_whole_column(table, columns[0], [row[0] for row in rows])
    for column in columns[1:]:
        table.add_column(column, overflow="fold", min_width=1)
    for row in rows:
        # Text, not str: a bracket in a description or path is text, not rich markup.
        table.add_row(*(Text(cell) for cell in row))
    print_table(table)
    for group, members in notes:
        console().print(Text.assemble("group ", (group, "bold"), f" → {members}"), crop=False)


def add_whole_column(
    table: Table, header: str, cells: list[str], justify: JustifyMethod = "left"
) -> None:
    """A column whose cells (names, ids, numbers) each stay on one line, whole.

    ``no_wrap`` alone is not enough: rich shrinks even a ``no_wrap`` column below its
    longest cell when the table is wider than the console, and then crops the cell.
    """
    width = max((cell_len(cell) for cell in [header, *cells]), default=0)
    table.add_column(header, justify=justify, no_wrap=True, min_width=width)


def print_table(table: Table) -> None:
    """Print a table on stdout without losing a character of it.

    Rich crops lines at the console's edge and, in a console too narrow to hold every
    column, squeezes some to nothing (header and cells gone). Here a table that cannot
    give every column its ``min_width`` (one character unless set) is widened past the
    console instead: a terminal wraps the long lines, a pipe or file keeps them.
    """
    out = console()
    columns = table.columns
    floor = sum((column.min_width or 1) + 2 for column in columns) + len(columns) + 1
    if out.width < floor:
        table.width = floor
    out.print(table, crop=False)
