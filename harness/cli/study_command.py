"""``posharness study run|plan|status|report FILE``: a whole study from one TOML file
(docs/studies.md); a shell over :mod:`posharness.study.workflow`."""

from __future__ import annotations

from pathlib import Path

import click

from posharness.cli.click_options import include_option

FILE = click.argument("file", type=click.Path(path_type=Path))
ALLOW_MISSING = click.option(
    "--allow-missing",
    is_flag=True,
    default=None,
    help="Leave out tasks whose data is missing; their columns read 'data missing'.",
)


@click.group()
def study() -> None:
    """Declare a study once (PEs, pretraining, tasks, tables) and run it to paper tables."""


@study.command()
@FILE
@ALLOW_MISSING
@click.option(
    "--discard-changed",
    is_flag=True,
    help="Redo the stages whose settings the file changed (their outputs are removed).",
)
@include_option
def run(file: Path, allow_missing: bool | None, discard_changed: bool) -> None:
    """Run every stage not finished yet: corpus, pretraining, evaluation, tables, report.
    Rerun to resume after a kill or a failure."""
    from posharness.cli.console import console
    from posharness.study.workflow import run_study

    outcome = run_study(file, _say, allow_missing, discard_changed)
    console().print(
        f"{len(outcome.done)} stage(s) run, {len(outcome.skipped)} finished before"
        + (f", {len(outcome.blocked)} waiting on a failed stage" if outcome.blocked else "")
    )


@study.command()
@FILE
@ALLOW_MISSING
@include_option
def plan(file: Path, allow_missing: bool | None) -> None:
    """Check the study and print its plan and cost; run nothing."""
    from posharness.study.plan_text import plan_lines
    from posharness.study.workflow import plan_study

    for line in plan_lines(plan_study(file, allow_missing)):
        _say(line)


@study.command()
@FILE
@include_option
def status(file: Path) -> None:
    """Each stage: done, running, failed (with its error) or pending."""
    from rich.table import Table

    from posharness.cli.console import print_table
    from posharness.study.workflow import study_status

    table = Table(title=f"study {file}")
    for column in ("stage", "state", "detail"):
        table.add_column(column, overflow="fold")
    for row in study_status(file):
        table.add_row(*row)
    print_table(table)


@study.command()
@click.argument("target", type=click.Path(path_type=Path))
@include_option
def report(target: Path) -> None:
    """Rebuild the tables, report and manifest of a study folder (or a study file's
    folder) from its boards alone: nothing is recomputed."""
    from posharness.study.workflow import rebuild_report

    for path in rebuild_report(target):
        _say(f"wrote {path}")


def _say(line: str) -> None:
    from posharness.cli.console import console

    console().print(line, highlight=False, markup=False)
