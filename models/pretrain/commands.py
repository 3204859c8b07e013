"""``posharness pretrain`` and ``posharness loss-curves``: the pretraining family's
commands, plugged into the CLI through the ``posharness.commands`` entry point group."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from posharness.base.errors import DataError, OptionError
from posharness.cli.console import err_console
from posharness.cli.options import device_option, include_option, model_arg_option, parse_model_args


@click.command()
@click.option("--model", "name", required=True, metavar="NAME", help="A zoo scheme, e.g. tupe-r.")
@click.option("--size", default="mini", show_default=True, help="tiny, mini, small or base.")
@click.option(
    "--corpus",
    type=click.Path(path_type=Path),
    required=True,
    help="Plain text or WikiExtractor output (a file or a folder).",
)
@click.option("--steps", type=int, required=True, help="Optimizer steps.")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Run folder (resumable) [default: NAME-SIZE in the runs folder, $POSHARNESS_RUNS or "
    "the user data folder, where --model NAME finds it].",
)
@click.option(
    "--tokenizer",
    default=None,
    metavar="DIR|HUB_ID",
    help="An existing WordPiece tokenizer [default: train one on the corpus].",
)
@click.option("--vocab-size", default=30522, show_default=True, help="Pieces when training one.")
@click.option("--batch-size", default=32, show_default=True)
@click.option("--block-size", default=128, show_default=True, help="Tokens per sequence.")
@click.option("--learning-rate", default=5e-4, show_default=True)
@click.option("--warmup-ratio", default=0.06, show_default=True)
@click.option("--seed", default=0, show_default=True)
@click.option("--save-every", default=500, show_default=True, help="Checkpoint interval.")
@device_option
@click.option("--bf16", is_flag=True, help="bfloat16 autocast (CUDA).")
@model_arg_option(
    "A PEConfig option, e.g. relative_buckets=64, tie_cls=true, or locality=0.3 "
    "symmetry=0.8 for bert-a-star; repeatable."
)
@include_option
def pretrain(
    name: str,
    size: str,
    corpus: Path,
    steps: int,
    out: Path | None,
    tokenizer: str | None,
    vocab_size: int,
    batch_size: int,
    block_size: int,
    learning_rate: float,
    warmup_ratio: float,
    seed: int,
    save_every: int,
    device: str,
    bf16: bool,
    model_args: tuple[str, ...],
) -> None:
    """Masked-LM pretraining of a native PE scheme (15 %, 80/10/10, no NSP); resumes."""
    from posharness.base.device import resolve_device
    from posharness.cli.console import console
    from posharness.models.pretrain.loop import PretrainSettings
    from posharness.models.pretrain.workflow import pretrain_scheme
    from posharness.models.zoo.encoder.options import pe_options

    options = pe_options(name, parse_model_args(model_args))
    device = resolve_device(device)
    if bf16 and not device.startswith("cuda"):
        raise OptionError(
            f"--bf16 is bfloat16 autocast on CUDA; the device here is {device}: drop --bf16"
        )
    settings = PretrainSettings(
        steps=steps,
        batch_size=batch_size,
        block_size=block_size,
        learning_rate=learning_rate,
        warmup_ratio=warmup_ratio,
        seed=seed,
        save_every=save_every,
        device=device,
        bf16=bf16,
    )

    if out is None:
        from posharness.models.zoo.checkpoints import default_run_folder

        out = default_run_folder(name, size)
        err_console().print(f"run folder: {out}")
    bar, report, phase = pretraining_bar(f"{name} ({size})", steps)
    with bar:
        outcome = pretrain_scheme(
            name, size, corpus, out, settings, tokenizer, vocab_size, report, options, phase
        )
    resumed = f", resumed from step {outcome.resumed_from}" if outcome.resumed_from else ""
    console().print(
        f"{name} ({size}): {outcome.steps_done} steps, final loss {outcome.final_loss:.4f}, "
        f"{outcome.seconds:.0f} s{resumed}; use --model {name}@{outcome.checkpoint}; "
        f"loss curve {outcome.curve_path}"
    )


@click.command(name="loss-curves")
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="PNG to write, e.g. leaderboards/pe-zoo-mini-loss.png.",
)
@click.option("--label", "labels", multiple=True, help="One per run, in order [default: folder].")
def loss_curves(runs: tuple[Path, ...], out: Path, labels: tuple[str, ...]) -> None:
    """Compare pretraining runs: their loss curves on one axis and a table of final losses.

    RUNS are `posharness pretrain --out` folders or their loss_log.json files. Settings
    that differ between the runs are named in the figure's title and below the table, so
    a comparison across recipes is never mistaken for one across positions.
    """
    from rich.table import Table

    from posharness.cli.console import console
    from posharness.models.pretrain.log import draw_curves, read_log, recipe_differences

    missing = [run for run in runs if not run.exists()]
    if missing:
        raise DataError(
            f"{missing[0]} does not exist: give `posharness pretrain --out` folders or "
            "their loss_log.json files"
        )
    logs = [run / "loss_log.json" if run.is_dir() else run for run in runs]
    names = list(labels) or [log.parent.name for log in logs]
    if len(names) != len(logs):
        raise OptionError(f"{len(labels)} --label for {len(logs)} runs: give one per run")
    documents = [read_log(log) for log in logs]
    draw_curves(documents, names, out)
    table = Table(title="masked-LM pretraining")
    # Each log record already averages the loss over its --log-every window of steps.
    width = max(len(name) for name in [*names, "run"])
    table.add_column("run", no_wrap=True, min_width=width)  # a name is never cut
    for column in ("steps", "loss, last 10 records", "first record", "seconds"):
        table.add_column(column, justify="right", no_wrap=True)
    for name, document in zip(names, documents, strict=True):
        records = document["records"]
        if not records:
            table.add_row(name, "0", "–", "–", "–")
            continue
        tail = [r["loss"] for r in records[-10:]]
        table.add_row(
            name,
            str(records[-1]["step"]),
            f"{sum(tail) / len(tail):.4f}",
            f"{records[0]['loss']:.4f}",
            f"{records[-1]['seconds']:.0f}",
        )
    console().print(table)
    differing = recipe_differences(documents)
    if differing:
        console().print(f"recipes differ in: {', '.join(differing)}")
    console().print(f"loss curves: {out}")


def pretraining_bar(
    name: str, steps: int
) -> tuple[Progress, Callable[[int, float], None], Callable[[str], None]]:
    """A bar on stderr for ``posharness pretrain``; the callbacks move it to (step, loss)
    and name the phase before the first step (tokenizer, corpus)."""
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console(),
        transient=True,
    )
    task = progress.add_task(name, total=steps)

    def update(step: int, loss: float) -> None:
        progress.update(task, completed=step, description=f"{name} loss {loss:.3f}")

    def phase(label: str) -> None:
        progress.update(task, description=f"{name}: {label}")

    return progress, update, phase
