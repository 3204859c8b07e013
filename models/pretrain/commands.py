"""``posharness pretrain`` and ``posharness loss-curves``: the pretraining family's
commands, plugged into the CLI through the ``posharness.commands`` entry point group."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from posharness.base.errors import DataError, OptionError
from posharness.cli.click_options import click_options, from_cli, include_option, path_option
from posharness.models.pretrain.recipes import RECIPES
from posharness.run.option_schema import DEVICE_HELP, Option, parse_model_args

if TYPE_CHECKING:  # rich's bars and the console load when a command runs, not for --help
    from rich.progress import Progress

RECIPE_NAMES = tuple(RECIPES)


def _switch(value: str) -> bool:
    """``on`` or ``off`` (click has checked it is one of them) as the setting's bool."""
    return value == "on"


# --corpus of pretrain, prepare-corpus and train-tokenizer: all three read it with
# corpus.read_corpus, so they take the same forms and say so in the same words.
CORPUS_OPTION = Option(
    "corpus",
    None,
    "Plain text, WikiExtractor output or JSON lines (a file or a folder), a saved or local "
    "`datasets` dataset, or hf:NAME[:CONFIG]; @SPLIT and #COLUMN may follow "
    "(docs/pretraining.md).",
    Path,
    required=True,
)

# posharness pretrain's options, declared once (posharness.run.option_schema.Option): the click
# options come from this list, and those named like PretrainSettings fields fill it.
PRETRAIN_OPTIONS: tuple[Option, ...] = (
    Option("name", None, "A zoo scheme, e.g. tupe-r.", flag="--model", metavar="NAME",
           required=True),
    Option("size", "mini", "tiny, narrow, mini, small or base.", show_default=True),
    CORPUS_OPTION,
    Option("recipe", None, "A named recipe: " + ", ".join(RECIPE_NAMES) + " (docs/pretraining.md"
           "); the options below override its settings.", metavar="NAME"),
    Option("steps", None, "Optimizer steps [required without --recipe].", int, cli_default=None),
    Option("plan_only", False, "Print the plan (steps, batch, tokens, estimated time) and stop.",
           bool),
    Option("out", None, "Run folder (resumable) [default: NAME-SIZE in the runs folder, "
           "$POSHARNESS_RUNS or the user data folder, where --model NAME finds it].", Path),
    Option("tokenizer", None, "An existing WordPiece tokenizer [default: train one on the "
           "corpus].", metavar="DIR|HUB_ID"),
    Option("vocab_size", 30522, "Pieces when training one [default: 30522 or the recipe's].",
           int, cli_default=None),
    Option("batch_size", 32, "Sequences per optimizer step: the global batch, over every "
           "process and accumulated micro-batch [default: 32 or the recipe's].", int,
           cli_default=None),
    Option("accumulation", 1, "Micro-batches each process adds up per step (per-device batch "
           "= batch size / (accumulation x processes)) [default: 1 or the recipe's].", int,
           cli_default=None),
    Option("block_size", 128, "Tokens per sequence [default: 128 or the recipe's].", int,
           cli_default=None),
    Option("long_block_size", None, "Tokens per sequence in a last phase, as BERT's 512 "
           "(bert-base recipe).", int, cli_default=None),
    Option("long_fraction", 0.1, "Share of --steps in that phase [default: 0.1].", float,
           cli_default=None),
    Option("learning_rate", 5e-4, "Peak AdamW rate [default: 5e-4 or the recipe's].", float,
           cli_default=None),
    Option("schedule", "linear", "linear (warm-up, then decay) or one-cycle (Cramming) "
           "[default: linear or the recipe's].", choices=("linear", "one-cycle"),
           cli_default=None),
    Option("warmup_ratio", 0.06, "Share of --steps spent warming up [default: 0.06 or the "
           "recipe's].", float, cli_default=None),
    Option("warmup_steps", None, "Warm-up steps, instead of --warmup-ratio: at least 0, "
           "fewer than --steps.", int, cli_default=None),
    Option("mask_probability", 0.15, "Share of tokens masked [default: 0.15 or the recipe's].",
           float, cli_default=None),
    Option("dropout", True, "on: BERT's dropout while pretraining; off: none, the model in "
           "eval mode (Cramming) [default: on or the recipe's].", choices=("on", "off"),
           metavar="on|off", cli_default=None, parse=_switch),
    Option("sparse_prediction", False, "on: the output layer only at masked positions (the "
           "same loss, less compute; Cramming) [default: off or the recipe's].",
           choices=("on", "off"), metavar="on|off", cli_default=None, parse=_switch),
    Option("seed", 0, "Seed of the weights, the block order and the masking.", int,
           show_default=True),
    Option("save_every", 500, "Checkpoint interval.", int, show_default=True),
    Option("log_every", 10, "Steps averaged into each loss-log record.", int, show_default=True),
    Option("device", "auto", DEVICE_HELP, metavar="auto|cpu|cuda[:i]|mps", show_default=True),
    Option("bf16", False, "bfloat16 autocast (CUDA).", bool),
    Option("fp16", False, "float16 autocast with loss scaling (CUDA).", bool),
    Option("compile", False, "torch.compile the model (inductor; a C++ compiler on CPU).", bool),
    Option("verify", False, "Before training, hash every byte of the prepared corpus against its "
           "manifest (opening it always checks a sample).", bool),
    Option("prepared_dir", None, "Where tokenised corpora are kept, shared by every scheme and "
           "seed [default: corpora/ in the runs folder].", Path, metavar="DIR"),
    Option("model_args", None, "A PEConfig option, e.g. relative_buckets=64, tie_cls=true, or "
           "locality=0.3 symmetry=0.8 for bert-a-star; repeatable.", flag="--model-arg",
           metavar="KEY=VALUE", multiple=True, parse=parse_model_args),
)  # fmt: skip


@click.command()
@click_options(PRETRAIN_OPTIONS)
@include_option
def pretrain(**values: Any) -> None:
    """Masked-LM pretraining of a native PE scheme (15 %, 80/10/10, no NSP); resumes."""
    from posharness.models.pretrain.launch_output import quiet_unless_main

    quiet_unless_main()  # under a launch, warnings once: from the main process
    from posharness.base.device import resolve_device
    from posharness.cli.console import console, err_console
    from posharness.models.pretrain.workflow import pretrain_scheme
    from posharness.models.zoo.encoder.options import pe_options

    given = {k for k, v in values.items() if v is not None and v != () and v is not False}
    values = from_cli(PRETRAIN_OPTIONS, values)
    name, size, out = values["name"], values["size"], values["out"]
    options = pe_options(name, values["model_args"] or {})
    values["device"] = device = resolve_device(values["device"])
    for flag, dtype in (("bf16", "bfloat16"), ("fp16", "float16")):
        if values[flag] and not device.startswith("cuda"):
            raise OptionError(
                f"--{flag} is {dtype} autocast on CUDA; the device here is {device}: drop --{flag}"
            )
    settings, budget = _settings(values, given)
    values["vocab_size"] = _vocab_size(values, given)

    from posharness.base.process import is_main_process

    main = is_main_process()  # under torchrun / accelerate launch, the one that reports
    threads = None
    if device == "cpu":  # its share of the cores, beside the other runs (threads.py)
        from posharness.models.pretrain.threads import set_pretraining_threads

        threads = set_pretraining_threads()
        if main and threads.oversubscribed:  # advice before any work
            err_console().print(threads.line(), highlight=False)
    if out is None:
        from posharness.models.zoo.checkpoints import default_run_folder

        out = default_run_folder(name, size)
        if main:
            err_console().print(f"run folder: {out}")
    bar, report, phase = pretraining_bar(f"{name} ({size})", settings.steps)
    if main and threads is not None and not threads.oversubscribed:
        report = _saying_once(report, threads.line())  # at the first step: after refusals
    plan_only = values["plan_only"]

    def announce(plan: Any) -> None:
        if not main:
            return
        bar.update(bar.task_ids[0], total=plan.steps)
        show = console() if plan_only else err_console()
        for line in plan.lines():
            show.print(line, highlight=False)

    arguments = (name, size, values["corpus"], out, settings, values["tokenizer"])
    arguments += (values["vocab_size"],)
    # The plan (and its measured warm-up) comes with a recipe or when asked for.
    planned = plan_only or values["recipe"] is not None
    planning = {"announce": announce if planned else None, "plan_only": plan_only}
    planning["budget_hours"] = budget
    planning["verify"] = values["verify"]
    planning["model_args"] = values["model_args"] or {}
    if not main:
        pretrain_scheme(*arguments, None, options, None, values["prepared_dir"], **planning)
        return
    with bar:
        outcome = pretrain_scheme(
            *arguments, report, options, phase, values["prepared_dir"], **planning
        )
    if outcome is None:  # --plan-only
        return
    resumed = f", resumed from step {outcome.resumed_from}" if outcome.resumed_from else ""
    console().print(
        f"{name} ({size}): {outcome.steps_done} steps, final loss {outcome.final_loss:.4f}, "
        f"{outcome.seconds:.0f} s{resumed}; use --model {name}@{outcome.checkpoint}; "
        f"loss curve {outcome.curve_path}"
    )


def _saying_once(report: Callable[[int, float], None], line: str) -> Callable[[int, float], None]:
    """``report`` that first prints ``line`` on stderr, at the first step it is given."""
    from posharness.cli.console import err_console

    said = []

    def update(step: int, loss: float) -> None:
        if not said:
            said.append(True)
            err_console().print(line, highlight=False)
        report(step, loss)

    return update


def _settings(values: dict[str, Any], given: set[str]) -> tuple[Any, float | None]:
    """(settings, time budget in hours): the command's defaults, under the recipe's
    values, under what the command line gave. A budget stands only while --steps is
    not given; the step count then comes from the plan (``workflow._plan``)."""
    from dataclasses import fields

    from posharness.models.pretrain.loop import PretrainSettings
    from posharness.models.pretrain.recipes import recipe

    if {"warmup_steps", "warmup_ratio"} <= given:
        raise OptionError(
            f"--warmup-steps {values['warmup_steps']} and --warmup-ratio "
            f"{values['warmup_ratio']} both given: keep one"
        )
    known = {f.name for f in fields(PretrainSettings)}
    chosen = {k: v for k, v in values.items() if k in known}
    budget = None
    if values["recipe"] is not None:
        preset = recipe(values["recipe"])
        chosen |= preset.settings | {"preset": preset.name}
        chosen |= {k: values[k] for k in given if k in known}
        if "warmup_ratio" in given:  # the ratio asked for, not a recipe's warm-up steps
            chosen["warmup_steps"] = None
        if "steps" not in given and preset.budget_hours is not None:
            budget = preset.budget_hours
            # A placeholder until the plan measures what fits (the warm-up is checked
            # against the budget's steps then).
            chosen["steps"] = (chosen.get("warmup_steps") or 0) + 1
    if chosen.get("steps") is None:
        raise OptionError(
            "--steps is required without --recipe: give --steps N or --recipe "
            + "|".join(RECIPE_NAMES)
        )
    return PretrainSettings(**chosen), budget


def _vocab_size(values: dict[str, Any], given: set[str]) -> int:
    """--vocab-size, else the recipe's vocabulary (Cramming's 32,768), else 30,522."""
    from posharness.models.pretrain.recipes import recipe

    if "vocab_size" not in given and values["recipe"] is not None:
        return recipe(values["recipe"]).vocab_size or values["vocab_size"]
    return values["vocab_size"]


@click.command(name="prepare-corpus")
@click_options((CORPUS_OPTION,))
@click.option(
    "--tokenizer",
    required=True,
    metavar="DIR|HUB_ID",
    help="The WordPiece tokenizer pretraining will use (e.g. a run's tokenizer/ folder).",
)
@click.option("--block-size", default=128, show_default=True, help="Tokens per sequence.")
@path_option(
    "--out",
    default=None,
    help="Folder of prepared corpora [default: corpora/ in the runs folder, where pretrain looks].",
)
@click.option(
    "--verify",
    is_flag=True,
    help="If already prepared, hash every byte against its manifest (opening it always "
    "checks a sample).",
)
@include_option
def prepare_corpus(
    corpus: Path, tokenizer: str, block_size: int, out: Path | None, verify: bool
) -> None:
    """Tokenise and pack a corpus once, on disk, for every scheme and seed that pretrains on
    it (pretrain does this on demand; ahead of time it can run on another machine)."""
    from posharness.cli.console import console
    from posharness.models.pretrain.prepared import prepare_corpus as prepare
    from posharness.models.pretrain.vocab import load_tokenizer

    if out is None:
        from posharness.models.zoo.checkpoints import runs_root

        out = runs_root() / "corpora"
    prepared = prepare(corpus, load_tokenizer(tokenizer), block_size, out, verify=verify)
    tokens = prepared.n_blocks * prepared.block_size
    console().print(
        f"{prepared.n_blocks} blocks of {prepared.block_size} tokens ({tokens} tokens) in "
        f"{prepared.folder}; posharness pretrain --corpus {corpus} --block-size {block_size} "
        "with this tokenizer reads it without tokenising"
    )


@click.command(name="loss-curves")
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@path_option(
    "--out",
    required=True,
    help="PNG to write, e.g. leaderboards/pe-zoo-mini-loss.png.",
)
@click.option("--label", "labels", multiple=True, help="One per run, in order [default: folder].")
@include_option
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
    """A bar on stderr for ``posharness pretrain`` (and, where stderr is no terminal, a line
    every ``$POSHARNESS_PROGRESS_SECONDS``: ``progress_lines.py``); the callbacks move it to
    (step, loss) and name the phase before the first step (tokenizer, corpus)."""
    from posharness.cli.console import err_console, progress_bar
    from posharness.models.pretrain.progress_lines import ProgressLines, interval_from_environment

    progress = progress_bar()
    task = progress.add_task(name, total=steps)
    stderr = err_console()
    lines = None
    if not stderr.is_terminal:  # rich draws no bar here: say the progress in lines
        lines = ProgressLines(
            name,
            steps,
            lambda text: stderr.print(text, highlight=False, soft_wrap=True),
            interval_from_environment(),
        )

    def update(step: int, loss: float) -> None:
        progress.update(task, completed=step, description=f"{name} loss {loss:.3f}")
        if lines is not None:
            lines.update(step, loss)

    def phase(label: str) -> None:
        progress.update(task, description=f"{name}: {label}")

    return progress, update, phase
