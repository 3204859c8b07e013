"""``posharness`` commands that make things rather than measure them.

``pretrain`` trains a native PE zoo scheme into a checkpoint and ``loss-curves`` sets
runs side by side; ``build-probes`` writes probe datasets the papers describe but never
released. They register on the one ``cli`` group of ``posharness.cli``, which imports
this module, so errors, ``--include`` and exit codes behave as for every other command.
"""

from __future__ import annotations

from pathlib import Path

import click

from posharness.cli import _parse_model_args, _split, cli, include_option
from posharness.errors import DataError, OptionError


# -- pretrain ----------------------------------------------------------------------------
@cli.command()
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
    "--out", type=click.Path(path_type=Path), required=True, help="Run folder (resumable)."
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
@click.option("--device", default="auto", show_default=True, metavar="auto|cpu|cuda[:i]|mps")
@click.option("--bf16", is_flag=True, help="bfloat16 autocast (CUDA).")
@click.option(
    "--model-arg",
    "model_args",
    multiple=True,
    metavar="KEY=VALUE",
    help="A PEConfig option, e.g. relative_buckets=64, tie_cls=true, or locality=0.3 "
    "symmetry=0.8 for bert-a-star; repeatable.",
)
@include_option
def pretrain(
    name: str,
    size: str,
    corpus: Path,
    steps: int,
    out: Path,
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
    from posharness.console import console, pretraining_bar
    from posharness.device import resolve_device
    from posharness.models.pe.options import pe_options
    from posharness.models.pretrain_loop import PretrainSettings
    from posharness.models.pretraining import pretrain_scheme

    options = pe_options(name, _parse_model_args(model_args))
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

    bar, report = pretraining_bar(f"{name} ({size})", steps)
    with bar:
        outcome = pretrain_scheme(
            name, size, corpus, out, settings, tokenizer, vocab_size, report, options
        )
    resumed = f", resumed from step {outcome.resumed_from}" if outcome.resumed_from else ""
    console().print(
        f"{name} ({size}): {outcome.steps_done} steps, final loss {outcome.final_loss:.4f}, "
        f"{outcome.seconds:.0f} s{resumed}; use --model {name}@{outcome.checkpoint}; "
        f"loss curve {outcome.curve_path}"
    )


@cli.command(name="loss-curves")
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

    from posharness.console import console
    from posharness.models.pretrain_log import draw_curves, read_log, recipe_differences

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
    for column in ("run", "steps", "loss, last 10 records", "first record", "seconds"):
        table.add_column(column, justify="left" if column == "run" else "right")
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


# -- build-probes ------------------------------------------------------------------------
@cli.group(name="build-probes")
def build_probes() -> None:
    """Build probe datasets that the papers describe but never released."""


@build_probes.command(name="shuffle")
@click.option(
    "--snli",
    "snli",
    type=click.Path(path_type=Path),
    required=True,
    help="SNLI jsonl with constituency parses, e.g. snli_1.0_test.jsonl.",
)
@click.option(
    "--out", type=click.Path(path_type=Path), required=True, help="Folder for the jsonl files."
)
@click.option("--seed", default=0, show_default=True, help="Seed of every shuffle.")
@click.option(
    "--probes",
    "probe_names",
    multiple=True,
    metavar="NAMES",
    help="Subset, comma-separated [default: all six].",
)
def build_probes_shuffle(snli: Path, out: Path, seed: int, probe_names: tuple[str, ...]) -> None:
    """Shuffle-3..6, Random and Shuffle-SR (Chen et al. 2023 §3.5) from SNLI pairs."""
    from posharness.console import print_probe_summary
    from posharness.tasks.shuffle_probes import PROBES, build_probes, write_probes
    from posharness.tasks.shuffle_snli import read_snli

    if seed < 0:
        raise OptionError(f"--seed {seed}: must not be negative")
    build = build_probes(read_snli(snli), seed, _split(probe_names) or PROBES)
    written = write_probes(build, out)
    print_probe_summary(build.summary, out, len(written))
