"""Everything the CLI shows a person: progress bars, result tables, registry listings.

Kept apart from the runner so the runner stays usable (and silent) from Python.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from posharness.results import CellResult


@functools.cache
def console() -> Console:
    return Console()


@functools.cache
def err_console() -> Console:
    return Console(stderr=True)


class RichReporter:
    """Bars on stderr (one for the cells, one for the work inside a cell); a line per cell
    on stdout, so stderr carries nothing but bars and, on failure, the one error line."""

    def __init__(self, progress: Progress) -> None:
        self.bar = progress
        self.cells = progress.add_task("cells", total=None)

    def set_total(self, total: int) -> None:
        self.bar.update(self.cells, total=total)

    def cell_skipped(self, cell) -> None:
        console().print(f"[dim]skip[/] {cell.label} (finished: {cell.path})")

    def cell_started(self, cell, index: int, total: int) -> None:
        self.bar.update(
            self.cells, total=total, completed=index - 1, description=f"cell {index}/{total}"
        )
        console().print(f"[bold]run[/]  {cell.label}")

    def cell_finished(self, cell, result: CellResult) -> None:
        self.bar.advance(self.cells)
        main = result.metrics.get(result.task.main_metric)
        value = f"{result.task.main_metric}={main.value:.4f}" if main else ""
        console().print(f"[green]done[/] {cell.label} {value} ({result.timings.total_s:.1f} s)")
        for flag in result.flags:
            console().print(f"  [yellow]warning:[/] {flag}")

    def progress(self, label: str, total: int) -> Callable[[int], None]:
        task = self.bar.add_task(label, total=total)
        done = [0]

        def advance(n: int) -> None:
            self.bar.advance(task, n)
            done[0] += n
            if done[0] >= total:
                self.bar.remove_task(task)

        return advance


def evaluate_with_progress(**arguments) -> None:
    """:func:`posharness.evaluate` with bars on stderr and the outcome on stdout."""
    from posharness import board_views as views
    from posharness.api import evaluate

    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console(),
        transient=True,
    )
    with progress:
        outcome = evaluate(**arguments, reporter=RichReporter(progress))
    if outcome.leaderboard is None:
        return
    if outcome.replaced_unreadable:
        err_console().print(
            f"[yellow]replaced unreadable leaderboard {outcome.leaderboard_path}:[/] "
            f"{outcome.replaced_unreadable}"
        )
    out = console()
    out.print(views.to_rich_table(outcome.leaderboard))
    added = " (added to the rows already there)" if outcome.merged else ""
    out.print(
        f"{outcome.ran} cell(s) run, {len(outcome.cells) - outcome.ran} already finished; "
        f"results in {arguments['output_dir']}/, leaderboard {outcome.leaderboard_path}{added}"
    )
    figures = [Path(o.cell.path.parent, a) for o in outcome.cells for a in o.result.artifacts]
    if figures:
        out.print(f"artifacts: {', '.join(str(f) for f in figures)}")
    if outcome.summaries:
        out.print(f"summaries across modes: {', '.join(str(s) for s in outcome.summaries)}")


def print_registry(what: str) -> None:
    from posharness.model_spec import ModelEntry
    from posharness.plugins import models, tasks

    registry = models if what == "models" else tasks
    table = Table(title=f"registered {what}")
    columns = ("name", "family", "description", "origin")
    if what == "models":
        columns = ("name", "family", "modes", "description", "origin")
    for column in columns:
        # Names are what a user types or greps: never cut them to fit a narrow terminal.
        table.add_column(column, no_wrap=column == "name", overflow="fold")
    for entry in registry.entries():
        obj = entry.obj
        origin = entry.origin if entry.origin == "built-in" else f"{entry.origin}: {entry.source}"
        if what == "tasks":
            spec = obj().spec
            table.add_row(entry.name, spec.family, spec.description, origin)
        elif isinstance(obj, ModelEntry):
            table.add_row(entry.name, obj.family, obj.modes, obj.description, origin)
        else:  # a plugin's plain factory function: its docstring's first line
            description = (obj.__doc__ or "").strip().splitlines()[0] if obj.__doc__ else ""
            table.add_row(entry.name, "model", "both", description, origin)
    console().print(table)
    if what == "tasks":
        for group, members in sorted(registry.groups().items()):
            console().print(f"group [bold]{group}[/] → {', '.join(members)}")


def print_comparison(path_a: Path, path_b: Path, all_metrics: bool, keep) -> None:
    from posharness.compare import compare_files
    from posharness.leaderboard import load

    headline = {c.key for c in load(path_a).columns if c.headline or all_metrics}
    comparisons = compare_files(path_a, path_b, keep)
    if not comparisons:
        console().print(
            "no rows to compare: the boards share no (model, mode, limit) after the filters, "
            "and do not hold one model each; narrow both to one model with --model"
        )
        return
    for comparison in comparisons:
        a, b = comparison.a, comparison.b
        limit = f", limit {a.settings['limit']}" if "limit" in a.settings else ""
        table = Table(title=f"A = {a.model} ({a.mode}{limit})   B = {b.model} ({b.mode}{limit})")
        for column in ("task/metric", "A", "B", "B − A", "paired test", "p", "95% CI of Δ", "n"):
            table.add_column(
                column, justify="left" if column in {"task/metric", "paired test"} else "right"
            )
        for m in comparison.metrics:
            if m.key not in headline:
                continue
            test = m.test
            table.add_row(
                m.key,
                _fmt(m.a),
                _fmt(m.b),
                _fmt(m.delta, signed=True),
                test.name if test else m.note,
                f"{test.p_value:.4g}" if test else "–",
                f"[{test.ci_low:+.4f}, {test.ci_high:+.4f}]"
                if test and test.ci_low is not None
                else "–",
                str(test.n) if test else "–",
            )
        console().print(table)
        if comparison.missing:
            console().print(
                f"[yellow]no paired test where the per-example outputs are not at hand:[/] "
                f"{len(comparison.missing)} result file(s) missing, e.g. {comparison.missing[0]}"
            )


def _fmt(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:+.4f}" if signed else f"{value:.4f}"
