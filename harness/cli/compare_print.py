"""``posharness compare``'s output: one family computed, the same family printed.

The tests are computed only for the metrics printed (``compare.family_keys``) and Holm
adjusts over exactly those, so the table, ``--format md|csv|json`` and the report's
comparison page of the same two boards carry the same adjusted p-values. The heading says
the family's size.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import JustifyMethod
from rich.table import Table
from rich.text import Text

from posharness.boards.cell_outputs import ResultFinder
from posharness.boards.compare import RowComparison, RowFilter, family_size
from posharness.boards.leaderboard import Row
from posharness.contracts.results import CellResult


def family_line(comparisons: list[RowComparison]) -> str:
    """The heading's account of the family: how many tests Holm adjusted over."""
    m = family_size([metric for row in comparisons for metric in row.metrics])
    return f"p (Holm) adjusted over the {m} tests printed (the family)"


def result_finder(folders: tuple[Path, ...]) -> ResultFinder | None:
    """The report's ``--results`` search (``report.locate.ResultLocator``), for compare:
    a file is matched by the longest tail of the path the board names and checked
    against its row, so both commands find the same outputs; None without folders."""
    if not folders:
        return None
    from posharness.report.locate import ResultLocator

    locator = ResultLocator(list(folders))

    def find(board: Path, relative: str, row: Row) -> tuple[Path, CellResult] | None:
        found = locator.locate(board, relative, row)
        return None if found is None else (found.path, found.result)

    return find


def print_comparison(
    path_a: Path,
    path_b: Path,
    all_metrics: bool,
    keep: RowFilter,
    form: str = "table",
    results: tuple[Path, ...] = (),
) -> None:
    """Rich tables (the notes of untested rows below each), or Markdown, CSV or JSON."""
    from posharness.boards import compare_output
    from posharness.boards.compare import compare_files
    from posharness.cli.console import console

    find = result_finder(results)
    comparisons = compare_files(path_a, path_b, keep, all_metrics=all_metrics, find=find)
    if form != "table":
        render = {
            "json": compare_output.as_json,
            "csv": compare_output.as_csv,
            "md": compare_output.as_markdown,
        }[form]
        click.echo(render(comparisons), nl=False)
        return
    if not comparisons:
        console().print(
            "no rows to compare: the boards share no (model, mode, limit) after the filters, "
            "and do not hold one model each; narrow both to one model with --model"
        )
        return
    console().print(
        "Δ = B − A, tested on the statistic shown (the test its metric declares); 95 % "
        f"BCa bootstrap interval (not adjusted); {family_line(comparisons)}; "
        "d_z = mean paired difference / its sd"
    )
    for comparison in comparisons:
        _print_row_comparison(comparison)


def _print_row_comparison(comparison: RowComparison) -> None:
    from posharness.boards.compare_output import HEADERS, LEFT, table_cells
    from posharness.cli.console import add_whole_column, console, print_table

    a, b = comparison.a, comparison.b
    limit = f", limit {a.key.limit}" if a.key.limit is not None else ""
    table = Table(title=f"A = {a.model} ({a.mode}{limit})   B = {b.model} ({b.mode}{limit})")
    notes: dict[str, str] = {}
    rows = []
    for m in comparison.metrics:
        cells = list(table_cells(m))
        if m.test is None:  # the reason goes below the table, numbered, not in a column
            mark = notes.setdefault(m.note, f"({len(notes) + 1})")
            cells[-1] = f"{m.exact or 'no test'} {mark}"
        rows.append(cells)
    for index, header in enumerate(HEADERS):
        justify: JustifyMethod = "left" if index in LEFT else "right"
        add_whole_column(table, header, [row[index] for row in rows], justify=justify)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    print_table(table)
    for note, mark in notes.items():
        console().print(f"  {mark} {note}", highlight=False)
    for m in comparison.metrics:
        if m.flags:
            console().print(
                f"  ! {m.key}: {'; '.join(m.flags)} — not a finding on its own", highlight=False
            )
    unbundled = [p for p in comparison.missing if p not in comparison.not_bundled]
    if unbundled:
        console().print(
            f"[yellow]no paired test where the per-example outputs are not at hand:[/] "
            f"{len(unbundled)} result file(s) missing, e.g. {unbundled[0]}, and no "
            "examples bundle beside the board: pass the folder that holds them with "
            "--results DIR, rerun those cells, or rebuild the board from its results with "
            "`posharness leaderboard build RESULTS_DIR -o BOARD --keep-examples` so the "
            "outputs travel with it"
        )
    if comparison.not_bundled:
        console().print(
            f"[yellow]no paired test for {len(comparison.not_bundled)} result file(s) "
            f"neither at hand nor in the board's examples bundle[/], e.g. "
            f"{comparison.not_bundled[0]}: their cells kept no per-example outputs, or "
            "joined the board after its bundle was written"
        )
