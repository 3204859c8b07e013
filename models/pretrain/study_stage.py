"""Pretraining as a study stage (``posharness.study.stages.TrainingStage``): the study
layer drives ``posharness pretrain`` through the options it declares, prepares the corpus
once for every PE and seed, and reads a run folder to tell finished, started or new.

Declared through the entry point group ``posharness.study_stages``, so the core, which
imports no family, finds it the way it finds tasks.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from posharness.models.pretrain.commands import PRETRAIN_OPTIONS
from posharness.study.stages import Estimate, TrainingStage

# What the study sets for every run: the model and seed come from its [[model]] entries,
# the run folder from the study folder, the tokenizer and prepared corpus from its corpus
# stage; a plan-only run would never finish.
RESERVED = frozenset({"name", "seed", "out", "plan_only", "prepared_dir"})


def _can_pretrain(name: str) -> bool:
    # the variant registry itself: the encoder package imports transformers (about 15 s
    # of `study status` on 2 cores) for a membership test
    from posharness.pe import registry

    return name in registry.pe_variants


def _settings(values: Mapping[str, Any]) -> dict[str, Any]:
    """The run's settings as ``pretrain`` resolves them: command defaults, then the
    recipe's, then the given values."""
    from posharness.models.pretrain.recipes import recipe

    chosen = {option.name: option.default for option in PRETRAIN_OPTIONS}
    if values.get("recipe"):
        preset = recipe(values["recipe"])
        chosen |= preset.settings
        if preset.vocab_size is not None:  # the tokenizer the recipe trains (Cramming's)
            chosen["vocab_size"] = preset.vocab_size
    return chosen | {k: v for k, v in values.items() if v is not None}


def _corpus_commands(
    values: Mapping[str, Any], folder: Path
) -> tuple[list[list[str]], dict[str, Any]]:
    """Train the tokenizer once and pack the corpus once per block length, for every run."""
    settings = _settings(values)
    corpus = str(values["corpus"])
    commands: list[list[str]] = []
    tokenizer = values.get("tokenizer")
    if tokenizer is None:
        tokenizer = str(folder / "tokenizer")
        vocab = str(settings["vocab_size"])
        commands.append(
            ["train-tokenizer", "--corpus", corpus, "--vocab-size", vocab, "--out", tokenizer]
        )
    prepared = str(folder / "prepared")
    lengths = [settings["block_size"]] + [settings.get("long_block_size") or 0]
    for length in dict.fromkeys(length for length in lengths if length):
        commands.append(
            ["prepare-corpus", "--corpus", corpus, "--tokenizer", str(tokenizer),
             "--block-size", str(length), "--out", prepared]
        )  # fmt: skip
    return commands, {"tokenizer": str(tokenizer), "prepared_dir": prepared}


def _finished(run_folder: Path) -> Path | None:
    from posharness.models.zoo.checkpoints import FINAL

    final = run_folder / FINAL
    return final if (final / "config.json").is_file() else None


def _progress(run_folder: Path) -> int | None:
    from posharness.models.pretrain.checkpoint import latest_checkpoint

    saved = latest_checkpoint(run_folder) if run_folder.is_dir() else None
    return saved.step if saved is not None else None


def _estimate(values: Mapping[str, Any]) -> Estimate:
    settings = _settings(values)
    steps = settings.get("steps")
    budget = None
    if values.get("recipe") and "steps" not in values:
        from posharness.models.pretrain.recipes import recipe

        budget = recipe(values["recipe"]).budget_hours
    if budget is not None:
        return Estimate(None, None, f"{budget:g} device-hour budget: steps measured at the start")
    if not steps:
        return Estimate(None, None, "no step count")
    long_length = settings.get("long_block_size") or settings["block_size"]
    long_steps = round(steps * settings["long_fraction"]) if settings.get("long_block_size") else 0
    tokens = (steps - long_steps) * settings["batch_size"] * settings["block_size"]
    tokens += long_steps * settings["batch_size"] * long_length
    return Estimate(steps, tokens)


def _measured(run_folder: Path) -> tuple[int, float] | None:
    """Tokens trained and the seconds they took, from the run's loss log."""
    import json

    from posharness.models.pretrain.log import LOG_NAME

    try:
        log = json.loads((run_folder / LOG_NAME).read_text())
        last = log["records"][-1]
        settings = log["settings"]
        tokens = last["step"] * settings["batch_size"] * settings["block_size"]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None
    return (tokens, float(last["seconds"])) if last["seconds"] > 0 else None


def _checkpoint_steps(values: Mapping[str, Any]) -> tuple[int, ...]:
    """The steps a run saves ``checkpoint-<step>`` at (every ``save_every`` and the last,
    loop.py), or () while its step count is unknown (a time budget)."""
    settings = _settings(values)
    steps, every = settings.get("steps"), settings.get("save_every")
    if not steps or not every:
        return ()
    return (*range(every, steps, every), steps)


def _trajectory(run_folder: Path) -> dict[int, tuple[int, float | None]]:
    """{step: (tokens seen, training loss logged at that step)} from the run's loss log,
    for every logged step and every checkpoint step (``phases.tokens_seen``)."""
    import json

    from posharness.models.pretrain.log import LOG_NAME
    from posharness.models.pretrain.phases import phases, tokens_seen

    try:
        log = json.loads((run_folder / LOG_NAME).read_text())
        settings = log["settings"]
        batch = int(log.get("sessions", [{}])[-1].get("global_batch") or settings["batch_size"])
        plan = phases(
            settings["steps"],
            settings["block_size"],
            settings.get("long_block_size"),
            settings.get("long_fraction", 0.1),
        )
        losses = {int(r["step"]): float(r["loss"]) for r in log["records"]}
        every = int(settings.get("save_every") or 0)
        saved = range(every, settings["steps"] + 1, every) if every else ()
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return {}
    steps = sorted({*losses, *saved, settings["steps"]})
    return {step: (tokens_seen(plan, step, batch), losses.get(step)) for step in steps}


def _spec(name: str, checkpoint: Path) -> str:
    return f"{name}@{checkpoint}"


STAGE = TrainingStage(
    command="pretrain",
    options=PRETRAIN_OPTIONS,
    reserved=RESERVED,
    can_pretrain=_can_pretrain,
    corpus_commands=_corpus_commands,
    finished=_finished,
    progress=_progress,
    estimate=_estimate,
    spec=_spec,
    measured=_measured,
    checkpoint_steps=_checkpoint_steps,
    trajectory=_trajectory,
)
