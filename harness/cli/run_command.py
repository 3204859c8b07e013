"""``posharness run``: a grid of (model, mode, task, seed) cells, its results, leaderboard
and summaries; a shell over :func:`posharness.evaluate`, its options derived from
:data:`posharness.run.option_schema.RUN_OPTIONS`."""

from __future__ import annotations

from typing import Any

import click

from posharness.cli.click_options import click_options, from_cli, include_option
from posharness.run.option_schema import RUN, RUN_OPTIONS


@click.command()
@click_options(RUN_OPTIONS, RUN)
@include_option
def run(**values: Any) -> None:
    """Run tasks on models and write results, a leaderboard and figures."""
    from posharness.cli.console import evaluate_with_progress

    arguments = from_cli(RUN_OPTIONS, values)
    if arguments.pop("no_cache"):
        arguments["cache_dir"] = None
    evaluate_with_progress(**arguments)
