"""``posharness compare A B``: per-task deltas between two leaderboards, paired tests."""

from __future__ import annotations

from pathlib import Path

import click

from posharness.cli.options import include_option


@click.command()
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@click.option("--all-metrics", is_flag=True, help="Every metric, not only the headline ones.")
@include_option
def compare(a: Path, b: Path, all_metrics: bool) -> None:
    """Per-task deltas B − A between two leaderboards, with paired tests."""
    from posharness.cli.console import print_comparison

    print_comparison(a, b, all_metrics)
