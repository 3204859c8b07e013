"""``posharness run``: a grid of (model, mode, task, seed) cells, its results, leaderboard
and summaries; a shell over :func:`posharness.evaluate`."""

from __future__ import annotations

from pathlib import Path

import click

from posharness.cli.options import (
    device_option,
    include_option,
    model_arg_option,
    parse_model_args,
    parse_seeds,
    parse_task_args,
    path_option,
    split_commas,
)


@click.command()
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
@path_option(
    "--output-dir",
    default=Path("results"),
    show_default=True,
    help="Where the JSON result files go.",
)
@path_option(
    "--leaderboard",
    "leaderboard_path",
    default=None,
    help="Leaderboard file to write [default: <output-dir>/<model>.json].",
)
@path_option(
    "--cache-dir",
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
@device_option
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
    help="Evaluate on at most N examples per task (quick checks); training data is kept.",
)
@click.option(
    "--train-limit",
    type=int,
    default=None,
    metavar="N",
    help="Fine-tune on at most N training examples (quick checks; rows are marked).",
)
@click.option(
    "--task-arg",
    "task_args",
    multiple=True,
    metavar="TASK.KEY=VALUE",
    help="A task option, e.g. locality_symmetry.words=50; repeatable.",
)
@model_arg_option(
    "A model option, e.g. absolute=positional-stream or reference_corpus=FILE; repeatable."
)
@path_option(
    "--data-dir",
    default=None,
    envvar="POSHARNESS_DATA_DIR",
    help="Datasets and reference corpora in their usual layouts [env: POSHARNESS_DATA_DIR].",
)
@click.option("--overwrite", is_flag=True, help="Recompute cells that already have results.")
@click.option(
    "--executor",
    type=click.Choice(["serial", "ray"]),
    default="serial",
    show_default=True,
    help="Run pending cells one after another here, or as Ray tasks (pip install "
    "'posharness[ray]').",
)
@click.option(
    "--ray-address",
    default=None,
    metavar="auto|HOST:PORT",
    help="With --executor ray: join this cluster [default: start a local one].",
)
@click.option(
    "--cpus-per-cell", type=float, default=1.0, show_default=True, help="Ray CPUs per cell."
)
@click.option(
    "--gpus-per-cell", type=float, default=0.0, show_default=True, help="Ray GPUs per cell."
)
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
    train_limit,
    task_args,
    model_args,
    data_dir,
    overwrite,
    executor,
    ray_address,
    cpus_per_cell,
    gpus_per_cell,
) -> None:
    """Run tasks on models and write results, a leaderboard and figures."""
    from posharness.cli.console import evaluate_with_progress

    evaluate_with_progress(
        models=split_commas(models),
        tasks=split_commas(tasks),
        modes=split_commas(modes),
        seeds=parse_seeds(seeds),
        output_dir=output_dir,
        leaderboard=leaderboard_path,
        cache_dir=None if no_cache else (cache_dir or "default"),
        batch_size=batch_size,
        device=device,
        dtype=dtype,
        limit=limit,
        train_limit=train_limit,
        overwrite=overwrite,
        task_args=parse_task_args(task_args),
        model_args=parse_model_args(model_args),
        data_dir=data_dir,
        executor=executor,
        ray_address=ray_address,
        cpus_per_cell=cpus_per_cell,
        gpus_per_cell=gpus_per_cell,
    )
