"""``posharness compare A B``: per-task deltas between two leaderboards, paired tests."""

from __future__ import annotations

from pathlib import Path

import click

from posharness.cli.click_options import format_option, include_option, results_option, split_commas


@click.command()
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@click.option("--all-metrics", is_flag=True, help="Every metric, not only the headline ones.")
@click.option(
    "--model", "models", multiple=True, metavar="NAME", help="Only this model (spec or name)."
)
@click.option("--mode", "modes", multiple=True, metavar="MODES", help="Only these modes.")
@click.option("--task", "tasks", multiple=True, metavar="TASKS", help="Only these tasks.")
@results_option(
    "Where the boards' result files are now (a run's --output-dir), when not where "
    "the boards name them (as report --results); a board in a study folder finds the "
    "study's results/ by itself; repeatable."
)
@format_option(
    ("table", "md", "csv", "json"),
    "table: rich tables; md: Markdown for a paper; csv or json: every field, for scripts.",
    dest="form",
)
@include_option
def compare(
    a: Path,
    b: Path,
    all_metrics: bool,
    models: tuple[str, ...],
    modes: tuple[str, ...],
    tasks: tuple[str, ...],
    results: tuple[Path, ...],
    form: str,
) -> None:
    """Per-task deltas B − A between two leaderboards, with paired tests.

    Rows pair by model and mode (a model matches by spec, else by registered name, so
    `tupe-r` before training meets `tupe-r@CHECKPOINT` after); one table per pair. Each
    metric is tested on exactly the statistic shown, by the test its type declares
    (McNemar, sign-flip permutation, or a paired bootstrap of the aggregate), with a 95 %
    BCa bootstrap interval and Holm-adjusted p-values over the tests printed (the
    family: the headline metrics, or every metric with --all-metrics; its size is said).
    Per-example outputs are read where the report reads them: beside the board, in its
    study folder's results/, under --results, else the board's examples bundle.
    """
    from posharness.boards.compare import RowFilter
    from posharness.cli.compare_print import print_comparison

    keep = RowFilter(
        tuple(split_commas(models)), tuple(split_commas(modes)), tuple(split_commas(tasks))
    )
    print_comparison(a, b, all_metrics, keep, form, results)
