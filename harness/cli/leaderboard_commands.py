"""``posharness leaderboard build|show``: leaderboards from result files, and their views."""

from __future__ import annotations

from pathlib import Path

import click

from posharness.cli.click_options import format_option, include_option, path_option


@click.group()
def leaderboard() -> None:
    """Build and show leaderboards from result files."""


@leaderboard.command(name="build")
@click.argument("results_dir", type=click.Path(path_type=Path))
@path_option(
    "-o",
    "--output",
    required=True,
    help="Leaderboard JSON to write, e.g. leaderboards/NAME.json.",
)
@click.option("--name", default=None, help="Display name [default: the file's stem].")
@click.option(
    "--keep-examples",
    is_flag=True,
    help="Also write NAME.examples.json.gz: the per-example outputs compare needs, "
    "for a board committed without its results.",
)
@include_option
def leaderboard_build(
    results_dir: Path, output: Path, name: str | None, keep_examples: bool
) -> None:
    """Aggregate every result file under RESULTS_DIR into one leaderboard."""
    from posharness.boards import leaderboard as lb
    from posharness.boards import views as views
    from posharness.boards.example_bundle import write_bundle
    from posharness.cli.console import console, print_table

    results = lb.collect_results(results_dir)
    board = lb.build(results, name or output.stem, output)
    lb.save(board, output)
    if keep_examples:
        bundle = write_bundle(output, results)
        console().print(f"per-example outputs: {bundle or 'none of the results kept any'}")
    print_table(views.to_rich_table(board))
    console().print(f"wrote {output} ({len(board.rows)} rows, {len(board.columns)} columns)")


@leaderboard.command(name="show")
@click.argument("file", type=click.Path(path_type=Path))
@format_option(("table", "md", "csv", "json"), dest="fmt")
@click.option(
    "--all-metrics", is_flag=True, help="Every metric, not only each task's headline ones."
)
@include_option
def leaderboard_show(file: Path, fmt: str, all_metrics: bool) -> None:
    """Print a leaderboard as a table, Markdown, CSV or JSON."""
    from posharness.boards import leaderboard as lb
    from posharness.boards import views as views
    from posharness.cli.console import print_table

    board = lb.load(file)
    if fmt == "table":
        print_table(views.to_rich_table(board, all_metrics))
    else:
        text = {"md": views.to_markdown, "csv": views.to_csv}.get(fmt)
        click.echo(text(board, all_metrics) if text else views.to_json(board), nl=False)


@leaderboard.command(name="portable")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--name", default=None, help="A new display name (one board only).")
@include_option
def leaderboard_portable(files: tuple[Path, ...], name: str | None) -> None:
    """Rewrite boards, and their per-example bundles, to hold no machine path.

    Result names stay relative to the board for files beneath its folder; others become
    the key results/<output folder>/<model folder>/<file> (and the board says those are
    not shipped); model specs and data-file options get portable names (with a sha256). No
    number changes. Rerunnable: run it on a board regenerated elsewhere before committing.
    """
    from posharness.base.errors import DataError, OptionError
    from posharness.boards.portable import rewrite
    from posharness.cli.console import console

    if name is not None and len(files) > 1:
        raise OptionError("--name renames one board: give one FILE with it")
    left = []
    for file in files:
        done = rewrite(file, name)
        bundle = f", {done.bundle_entries} bundle entries kept" if done.bundle_entries else ""
        console().print(f"{file}: {done.renamed} result names rewritten{bundle}")
        left += [f"{file}{where}" for where in done.left]
    if left:
        raise DataError(
            f"{len(left)} strings are still machine paths, e.g. {left[0]}: "
            "rebuild the board from its results with `posharness leaderboard build`"
        )
