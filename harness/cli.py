"""The ``posharness`` command line: a thin shell over the runner, leaderboards and compare.

Every user-facing failure is a :class:`PosharnessError`; it is caught here once and printed
as one line on stderr with exit code 2. Heavy libraries are imported inside commands, so
``--help`` and bad-input errors answer at once.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from posharness import __version__
from posharness.errors import OptionError, PosharnessError

PROG = "posharness"


def _split(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def include_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--include PATH`` on every command: import a .py file or folder of plugins first."""

    def load(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
        if value:
            from posharness.plugins import include_paths

            include_paths(value)
        return value

    return click.option(
        "--include",
        "include",
        multiple=True,
        metavar="PATH",
        expose_value=False,
        is_eager=True,
        callback=load,
        help="A .py file or folder whose @register_model/@register_task entries to load.",
    )(command)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name=PROG)
def cli() -> None:
    """Evaluate positional encodings of BERT-style encoders."""


# -- run ---------------------------------------------------------------------------------
@cli.command()
@click.option(
    "--model",
    "models",
    multiple=True,
    required=True,
    metavar="SPEC",
    help="minilm, hf:HUB_ID, hf:/local/dir, NAME@CHECKPOINT; repeat or comma-separate.",
)
@click.option(
    "--tasks",
    "tasks",
    multiple=True,
    required=True,
    metavar="NAMES",
    help="Task or group names, comma-separated (see `posharness list tasks`).",
)
@click.option(
    "--mode",
    "modes",
    multiple=True,
    default=("both",),
    show_default=True,
    metavar="MODES",
    help="both, contextual, positional; comma-separated.",
)
@click.option(
    "--seed",
    "seeds",
    default="0",
    show_default=True,
    metavar="N[,N]",
    help="One or more seeds; each is its own cell.",
)
@click.option(
    "--output-dir",
    type=click.Path(path_type=Path),
    default=Path("results"),
    show_default=True,
    help="Where the JSON result files go.",
)
@click.option(
    "--leaderboard",
    "leaderboard_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Leaderboard file to write [default: leaderboards/<model>.json].",
)
@click.option(
    "--cache-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Feature cache [default: $POSHARNESS_CACHE or the user cache dir].",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the feature cache.")
@click.option(
    "--batch-size",
    default="auto",
    show_default=True,
    metavar="auto|N",
    help="Sequences per batch; auto halves on out-of-memory.",
)
@click.option("--device", default="auto", show_default=True, metavar="auto|cpu|cuda[:i]|mps")
@click.option(
    "--dtype",
    default="auto",
    show_default=True,
    type=click.Choice(["auto", "float32", "bfloat16", "float16"]),
    help="auto = bfloat16 on CUDA, float32 elsewhere.",
)
@click.option(
    "--limit",
    type=int,
    default=None,
    metavar="N",
    help="Use at most N examples per task (quick checks).",
)
@click.option(
    "--task-arg",
    "task_args",
    multiple=True,
    metavar="TASK.KEY=VALUE",
    help="A task option, e.g. locality_symmetry.words=50; repeatable.",
)
@click.option(
    "--model-arg",
    "model_args",
    multiple=True,
    metavar="KEY=VALUE",
    help="A model option, e.g. absolute=positional-stream or reference_corpus=FILE; repeatable.",
)
@click.option(
    "--data-dir",
    type=click.Path(path_type=Path),
    default=None,
    envvar="POSHARNESS_DATA_DIR",
    help="Datasets and reference corpora in their usual layouts [env: POSHARNESS_DATA_DIR].",
)
@click.option("--overwrite", is_flag=True, help="Recompute cells that already have results.")
@include_option
def run(
    models,
    tasks,
    modes,
    seeds,
    output_dir,
    leaderboard_path,
    cache_dir,
    no_cache,
    batch_size,
    device,
    dtype,
    limit,
    task_args,
    model_args,
    data_dir,
    overwrite,
) -> None:
    """Run tasks on models and write results, a leaderboard and figures."""
    from posharness.cache import default_cache_dir
    from posharness.runner import RunConfig, parse_batch_size

    config = RunConfig(
        models=_split(models),
        tasks=_split(tasks),
        modes=_split(modes),
        seeds=_parse_seeds(seeds),
        output_dir=output_dir,
        cache_dir=None if no_cache else (cache_dir or default_cache_dir()),
        batch_size=parse_batch_size(batch_size),
        device=device,
        dtype=dtype,
        limit=limit,
        overwrite=overwrite,
        task_args=_parse_task_args(task_args),
        model_args=_parse_model_args(model_args),
        data_dir=data_dir,
    )
    from posharness.console import run_with_progress

    run_with_progress(config, leaderboard_path)


def _parse_seeds(text: str) -> list[int]:
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise OptionError(f"--seed {text!r}: give integers, e.g. 0 or 0,1,2") from None
    if not seeds:
        raise OptionError("--seed is empty: give at least one integer")
    return list(dict.fromkeys(seeds))


def _parse_task_args(items: tuple[str, ...]) -> dict[str, dict[str, str]]:
    parsed: dict[str, dict[str, str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        task, dot, option = key.partition(".")
        if not sep or not dot or not task or not option:
            raise OptionError(
                f"--task-arg {item!r}: write TASK.KEY=VALUE, e.g. toeplitz.controls=50"
            )
        parsed.setdefault(task.strip(), {})[option.strip()] = value.strip()
    return parsed


def _parse_model_args(items: tuple[str, ...]) -> dict[str, str]:
    parsed: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise OptionError(
                f"--model-arg {item!r}: write KEY=VALUE, e.g. absolute=positional-stream"
            )
        parsed[key.strip()] = value.strip()
    return parsed


# -- list --------------------------------------------------------------------------------
@cli.command(name="list")
@click.argument("what", type=click.Choice(["models", "tasks"]))
@include_option
def list_command(what: str) -> None:
    """Show registered models or tasks with their origin (built-in, plugin, include)."""
    from posharness.console import print_registry

    print_registry(what)


# -- leaderboard -------------------------------------------------------------------------
@cli.group()
def leaderboard() -> None:
    """Build and show leaderboards from result files."""


@leaderboard.command(name="build")
@click.argument("results_dir", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help="Leaderboard JSON to write, e.g. leaderboards/NAME.json.",
)
@click.option("--name", default=None, help="Display name [default: the file's stem].")
@include_option
def leaderboard_build(results_dir: Path, output: Path, name: str | None) -> None:
    """Aggregate every result file under RESULTS_DIR into one leaderboard."""
    from posharness import leaderboard as lb
    from posharness.console import console

    board = lb.build(lb.collect_results(results_dir), name or output.stem, output)
    lb.save(board, output)
    console().print(lb.to_rich_table(board))
    console().print(f"wrote {output} ({len(board.rows)} rows, {len(board.columns)} columns)")


@leaderboard.command(name="show")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "md", "csv", "json"]),
    default="table",
    show_default=True,
)
@click.option(
    "--all-metrics", is_flag=True, help="Every metric, not only each task's headline ones."
)
@include_option
def leaderboard_show(file: Path, fmt: str, all_metrics: bool) -> None:
    """Print a leaderboard as a table, Markdown, CSV or JSON."""
    from posharness import leaderboard as lb
    from posharness.console import console

    board = lb.load(file)
    if fmt == "table":
        console().print(lb.to_rich_table(board, all_metrics))
    else:
        text = {"md": lb.to_markdown, "csv": lb.to_csv}.get(fmt)
        click.echo(text(board, all_metrics) if text else lb.to_json(board), nl=False)


# -- compare -----------------------------------------------------------------------------
@cli.command()
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@click.option("--all-metrics", is_flag=True, help="Every metric, not only the headline ones.")
@include_option
def compare(a: Path, b: Path, all_metrics: bool) -> None:
    """Per-task deltas B − A between two leaderboards, with paired tests."""
    from posharness.console import print_comparison

    print_comparison(a, b, all_metrics)


# Commands that make artifacts (pretrained checkpoints, probe sets) live in their own
# module; importing it registers them on `cli`.
from posharness import cli_make  # noqa: E402, F401


# -- entry point -------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> None:
    """Run the CLI; turn user errors into one line on stderr and exit code 2."""
    try:
        cli.main(args=argv, prog_name=PROG, standalone_mode=False)
    except PosharnessError as exc:
        _fail(str(exc), exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        _fail("interrupted: rerun the same command to resume where it stopped", 130)
    except click.ClickException as exc:
        hint = ""
        if isinstance(exc, click.UsageError) and exc.ctx is not None:
            hint = f" (see `{exc.ctx.command_path} --help`)"
        _fail(exc.format_message().replace("\n", " ") + hint, exc.exit_code or 2)
    except KeyboardInterrupt:
        _fail("interrupted: rerun the same command to resume where it stopped", 130)
    sys.exit(0)


def _fail(message: str, code: int) -> None:
    click.echo(f"{PROG}: error: {message}", err=True)
    sys.exit(code)
