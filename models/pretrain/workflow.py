"""``posharness pretrain``: one zoo scheme, one corpus, the shared masked-LM recipe.

Glue between the command line and the pieces (vocabulary, zoo configuration, training
loop): everything that decides the weights lives in ``PretrainSettings`` and the zoo
configuration, so two schemes trained by this function differ only in their positions.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from posharness.base.errors import OptionError
from posharness.base.process import is_main_process
from posharness.models.pretrain.card import given_model_args

_log = logging.getLogger(__name__)  # shown on stderr by Python's last-resort handler


def pretrain_scheme(
    name: str,
    size: str,
    corpus: Path,
    out_dir: Path,
    settings: Any,
    tokenizer_source: str | None,
    vocab_size: int,
    progress: Callable[[int, float], None] | None = None,
    options: dict[str, Any] | None = None,
    phase: Callable[[str], None] | None = None,
    prepared_root: Path | None = None,
    announce: Callable[[Any], None] | None = None,
    plan_only: bool = False,
    budget_hours: float | None = None,
    verify: bool = False,
    model_args: dict[str, str] | None = None,
) -> Any:
    """Pretrain zoo model ``name`` at ``size``; rerunning the same call resumes it.

    ``options`` are ``PEConfig`` overrides (``models.pe.options.pe_options``); they are
    part of the model's identity, so a resume with other options is refused.
    ``phase(label)`` names the long steps before the first optimizer step (training the
    tokenizer, reading the corpus), which otherwise look like a stalled bar.
    ``prepared_root``: where the tokenised corpus is kept (``prepared.py``).
    ``announce(plan)`` is shown the run's plan (``plan.py``) before training, which then
    stops there if ``plan_only`` (returning None). ``budget_hours``: the step count is
    what fits that time at the measured speed (``settings.steps`` is then ignored), or a
    resumed run's own. ``verify``: hash every byte of the prepared corpora this run reads
    against their manifests before training (:func:`verify_prepared`). ``model_args``: the
    ``--model-arg`` pairs as given, which the checkpoints' cards list (``card.py``).
    """
    from transformers.utils import logging as hf_logging

    from posharness.models.pretrain.loop import pretrain
    from posharness.models.zoo.encoder import NAMED_MODELS, PEForMaskedLM, config_for

    if name not in NAMED_MODELS:
        raise OptionError(f"unknown PE model {name!r}: pick one of {', '.join(NAMED_MODELS)}")
    options = dict(options or {})
    # An unknown size or a bad option fails before the corpus is read.
    longest = max(settings.block_size, settings.long_block_size or 0)
    positions = max(longest, config_for(name, size).max_position_embeddings)
    positions = options.pop("max_position_embeddings", positions)
    config_for(name, size, max_position_embeddings=positions, **options)
    _refuse_untrained_positions(name, options)
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    if phase is not None:
        phase("training a WordPiece tokenizer" if tokenizer_source is None else "loading tokenizer")
    tokenizer = _run_tokenizer(tokenizer_source, corpus, vocab_size, out_dir, settings.device)
    if tokenizer_source is None and len(tokenizer) < vocab_size:
        _log.warning(
            "--vocab-size %d: the corpus yields only %d WordPiece pieces, so the model's "
            "vocabulary has %d (a larger corpus gives more)",
            vocab_size,
            len(tokenizer),
            len(tokenizer),
        )
    if verify and is_main_process():  # one disk: the main process reads it for all
        if phase is not None:
            phase("verifying the prepared corpus")
        verify_prepared(corpus, tokenizer, settings, prepared_root)
    if phase is not None:
        phase("reading and tokenising the corpus")

    def build(vocabulary: int) -> Any:
        config = config_for(
            name,
            size,
            vocab_size=vocabulary,
            max_position_embeddings=positions,
            pad_token_id=tokenizer.pad_token_id,
            **options,
        )
        return PEForMaskedLM(config)

    if announce is not None or budget_hours is not None:
        settings, plan = _plan(build, len(tokenizer), settings, out_dir, budget_hours)
        if announce is not None:
            announce(plan)
        if plan_only:
            return None
    with given_model_args(model_args or {}):
        return pretrain(build, tokenizer, corpus, out_dir, settings, progress, prepared_root)


def _run_tokenizer(
    source: str | None, corpus: Path, vocab_size: int, out_dir: Path, device: str
) -> Any:
    """The run's tokenizer; only the main process writes ``out_dir/tokenizer``.

    Under a launch the main process trains (or loads) it and saves it into the run folder
    first; the others then read what it wrote, or load ``source`` as it did, and write
    nothing (issue 39: every process used to save a ``--tokenizer`` into the run folder).
    """
    from posharness.base.device import resolve_device
    from posharness.models.pretrain.parallel import main_process_first
    from posharness.models.pretrain.vocab import load_tokenizer, tokenizer_for

    with main_process_first(resolve_device(device)):
        if is_main_process():
            return tokenizer_for(source, corpus, vocab_size, out_dir)
        return load_tokenizer(source if source is not None else str(Path(out_dir) / "tokenizer"))


def verify_prepared(
    corpus: Path, tokenizer: Any, settings: Any, prepared_root: Path | None
) -> list[Path]:
    """Hash every byte of each prepared corpus the run would read (one per block size of
    its phases) against its manifest's sha256: ``--verify``. The sampled check on every
    open misses rows swapped between unsampled places; this does not. A damaged
    preparation is one line that says to delete and prepare it again
    (``prepared_check.damaged``); one not prepared yet has nothing to verify. Costs one
    read of the corpus (its identity) and of each preparation. Returns the folders checked.
    """
    from posharness.models.pretrain.checkpoint import vocabulary_identity
    from posharness.models.pretrain.corpus import corpus_identity
    from posharness.models.pretrain.prepared import load_prepared, prepared_key

    if prepared_root is None:
        from posharness.models.zoo.checkpoints import runs_root

        prepared_root = runs_root() / "corpora"
    sizes = {settings.block_size, settings.long_block_size} - {None}
    corpus_sha256, tokenizer_sha256 = corpus_identity(corpus), vocabulary_identity(tokenizer)
    checked = []
    for block_size in sorted(sizes):
        folder = Path(prepared_root) / prepared_key(corpus_sha256, tokenizer_sha256, block_size)
        if load_prepared(folder, vocabulary=len(tokenizer), verify=True) is not None:
            checked.append(folder)
    return checked


def _plan(
    build: Callable[[int], Any],
    vocabulary: int,
    settings: Any,
    out_dir: Path,
    budget_hours: float | None,
) -> tuple[Any, Any]:
    """(settings with the budget's step count, the plan), from a warm-up the main
    process measures on a throwaway copy of the model (``plan.py``)."""
    from dataclasses import replace

    import torch

    from posharness.base.device import resolve_device
    from posharness.base.distributed import main_decides
    from posharness.base.process import process_device
    from posharness.models.pretrain.checkpoint import check_same_recipe, latest_checkpoint
    from posharness.models.pretrain.parallel import layout_for
    from posharness.models.pretrain.phases import phases, tokens_seen
    from posharness.models.pretrain.plan import (
        PretrainPlan,
        measure_step_seconds,
        schedule_words,
        steps_for_budget,
        timing_options,
    )
    from posharness.models.pretrain.recipes import RECIPES

    device = process_device(resolve_device(settings.device))
    layout = layout_for(settings.batch_size, settings.accumulation)

    def measure() -> float:
        with torch.random.fork_rng(devices=[device] if device.startswith("cuda") else []):
            model = build(vocabulary).to(device)
            model.train(settings.dropout)
            return measure_step_seconds(
                model,
                layout,
                settings.block_size,
                vocabulary,
                device,
                settings.mask_probability,
                settings.sparse_prediction,
                *timing_options(settings, device),
            )

    latest = latest_checkpoint(out_dir)
    if latest is not None:  # a resume: its step count, and a refusal before any warm-up
        saved = type(settings).saved_recipe(latest.state["identity"]["recipe"])
        if budget_hours is not None:
            settings = replace(settings, steps=saved["steps"])
        check_same_recipe(out_dir, saved, settings.recipe())
    seconds = main_decides(measure)
    if budget_hours is not None and latest is None:  # device-hours, shared by the launch
        steps = steps_for_budget(budget_hours, seconds, layout.world_size)
        if settings.warmup_steps is not None and settings.warmup_steps >= steps:
            raise OptionError(
                f"--warmup-steps {settings.warmup_steps}: the {budget_hours:g} device-hour "
                f"budget fits only {steps} steps here; give fewer --warmup-steps or --steps"
            )
        settings = replace(settings, steps=steps)
    plan = phases(
        settings.steps, settings.block_size, settings.long_block_size, settings.long_fraction
    )
    preset = RECIPES.get(settings.preset) if settings.preset else None
    return settings, PretrainPlan(
        preset=settings.preset,
        steps=settings.steps,
        layout=layout,
        phases=plan,
        tokens=tokens_seen(plan, settings.steps, settings.batch_size),
        seconds_per_step=seconds,
        device=device,
        out_dir=out_dir,
        save_every=settings.save_every,
        precision=timing_options(settings, device)[0],
        compiled=settings.compile,
        budget_hours=budget_hours,
        vocabulary=vocabulary,
        recipe_vocabulary=preset.vocab_size if preset else None,
        recipe_precision=preset.precision if preset else "",
        schedule=schedule_words(settings),
    )


def _refuse_untrained_positions(name: str, options: dict[str, Any]) -> None:
    """Refuse a scheme that would train without positions, before the corpus is read.

    A scheme whose positional term is zero or row-constant at initialisation gets no
    gradient to leave that state and trains exactly like NoPE (issue 29: a final loss equal
    to NoPE's was the only sign). A tiny seeded build in a forked random state is enough.
    """
    import torch

    from posharness.models.zoo.encoder import PEForMaskedLM, config_for
    from posharness.models.zoo.position_effect import positions_ignored

    with torch.random.fork_rng():
        torch.manual_seed(0)
        probe = PEForMaskedLM(config_for(name, "tiny", vocab_size=64, **options))
    reason = positions_ignored(probe)
    if reason:
        raise OptionError(f"{reason}: pretraining it would train a model without positions")
