"""Masked-LM pretraining of any ``transformers`` masked-LM model under one recipe.

Positional encodings are compared after pretraining each under the same recipe and budget
(docs/pretraining.md: the protocol, not the size, must match the papers). The recipe is BERT's
without next-sentence prediction: 15 % of tokens masked, 80/10/10 ([MASK]/random/kept;
``DataCollatorForLanguageModeling``), AdamW without decay on biases and LayerNorm, linear
warmup and decay, gradient clipping, and bf16 autocast on CUDA when asked for; no decay
either on what a positional encoding learns on the logits' scale (``optimizer.py``). A named
recipe (``recipes.py``) changes the values, not the shape; a data-parallel launch
(``parallel.py``) changes how a step is computed, not what it computes.

A run is a pure function of its settings, corpus, tokenizer and model: the block order comes from
a generator seeded per epoch and the masking from one seeded per step, so neither depends
on how the run was split into sessions. Checkpoints carry the weights, the optimizer,
scheduler and dropout RNG, so a resumed run matches an uninterrupted one (on CPU, where
kernels are deterministic). Each is written under a temporary name and renamed.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from posharness.base.errors import OptionError
from posharness.base.faults import kill_point
from posharness.models.pretrain.card import card_facts
from posharness.models.pretrain.checkpoint import (
    FINAL_NAME,
    check_same_run,
    latest_checkpoint,
    load_training_state,
    model_config,
    publish_final,
    save_checkpoint,
    vocabulary_identity,
)
from posharness.models.pretrain.corpus import check_block_size, corpus_identity
from posharness.models.pretrain.log import (
    CURVE_NAME,
    LOG_NAME,
    NOT_RECIPE,
    LossLog,
    LossRecord,
    earlier_sessions,
)
from posharness.models.pretrain.masking import mask_tokens, masked_lm_masker, step_seed
from posharness.models.pretrain.optimizer import NO_DECAY_RULES, build_optimizer, build_schedule
from posharness.models.pretrain.parallel import accelerator as parallel_accelerator
from posharness.models.pretrain.parallel import (
    gradients_wait,
    layout_for,
    main_process_first,
    out_of_memory_hint,
    writes_files,
)
from posharness.models.pretrain.phases import PhasedBlocks, phases, tokens_seen, training_blocks

SCHEDULES = ("linear", "one-cycle")
SPARSE_ARGUMENT = "predict_only_masked"  # PEForMaskedLM.forward's sparse-prediction switch


@dataclass(frozen=True)
class PretrainSettings:
    """The recipe (everything that changes the weights) and where and how often to report."""

    steps: int
    batch_size: int = 32
    block_size: int = 128
    long_block_size: int | None = None  # a last phase at this length (phases.py; BERT: 512)
    long_fraction: float = 0.1  # the share of steps in that phase
    learning_rate: float = 5e-4
    warmup_ratio: float = 0.06
    warmup_steps: int | None = None  # overrides warmup_ratio when given
    weight_decay: float = 0.01
    adam_epsilon: float = 1e-6
    adam_beta2: float = 0.999
    clip: float = 1.0
    mask_probability: float = 0.15
    schedule: str = "linear"  # or "one-cycle" (recipes.py: Cramming's triangle)
    dropout: bool = True  # False: pretrain with the model in eval mode (Cramming §4.3)
    sparse_prediction: bool = False  # the MLM head only at masked positions (same loss)
    seed: int = 0
    save_every: int = 500
    log_every: int = 10
    device: str = "cpu"
    bf16: bool = False
    fp16: bool = False  # float16 autocast with loss scaling (CUDA)
    keep_checkpoints: int | None = None  # None keeps every checkpoint-<step> folder
    accumulation: int = 1  # micro-batches per process per step; batch_size stays global
    preset: str | None = None  # the named recipe these settings started from (recipes.py)
    compile: bool = False  # torch.compile (inductor) through accelerate
    # Which parameters AdamW leaves undecayed (optimizer.decay_exempt): "positional" adds
    # positional bias tables and scalars to biases and norms; "names", the rule before
    # issue 39, is what a run recorded without this setting trained with.
    no_decay: str = "positional"

    def __post_init__(self) -> None:
        positive = {
            "steps": self.steps,
            "batch_size": self.batch_size,
            "save_every": self.save_every,
            "log_every": self.log_every,
        }
        for name, value in positive.items():
            if value <= 0:
                raise OptionError(f"--{name.replace('_', '-')} {value}: must be a positive integer")
        check_block_size(self.block_size)
        if self.long_block_size is not None:
            check_block_size(self.long_block_size)
            if not 0 < self.long_fraction <= 1:
                raise OptionError(f"--long-fraction {self.long_fraction}: must lie in (0, 1]")
        if not 0 < self.mask_probability < 1:
            raise OptionError(
                f"--mask-probability {self.mask_probability}: must lie strictly between 0 and 1"
            )
        if self.learning_rate <= 0:
            raise OptionError(f"--learning-rate {self.learning_rate}: must be positive")
        if not 0 <= self.warmup_ratio < 1:
            raise OptionError(f"--warmup-ratio {self.warmup_ratio}: must lie in [0, 1)")
        if self.warmup_steps is not None and not 0 <= self.warmup_steps < self.steps:
            raise OptionError(
                f"--warmup-steps {self.warmup_steps}: must be at least 0 and less than "
                f"--steps ({self.steps}); give a smaller --warmup-steps or more --steps"
            )
        if self.schedule not in SCHEDULES:
            raise OptionError(f"--schedule {self.schedule!r}: choose {' or '.join(SCHEDULES)}")
        if self.bf16 and self.fp16:
            raise OptionError("--bf16 and --fp16 both given: choose one mixed precision")
        if self.no_decay not in NO_DECAY_RULES:
            raise OptionError(f"no_decay {self.no_decay!r}: choose {' or '.join(NO_DECAY_RULES)}")
        if self.keep_checkpoints is not None and self.keep_checkpoints < 1:
            raise OptionError(f"--keep-checkpoints {self.keep_checkpoints}: must be at least 1")

    @property
    def warmup(self) -> int:
        if self.warmup_steps is not None:
            return self.warmup_steps
        return int(round(self.warmup_ratio * self.steps))

    def recipe(self) -> dict[str, Any]:
        """The settings a resumed run must share with its checkpoints."""
        return {k: v for k, v in asdict(self).items() if k not in NOT_RECIPE}

    @classmethod
    def recipe_defaults(cls) -> dict[str, Any]:
        return {f.name: f.default for f in fields(cls) if f.name not in NOT_RECIPE}

    @classmethod
    def saved_recipe(cls, saved: dict[str, Any]) -> dict[str, Any]:
        """A checkpoint's recipe in today's terms: a setting added since it was written
        counts at its default, except ``no_decay``, which before it existed was the
        rule by names (a resume under today's rule is refused, naming it)."""
        return cls.recipe_defaults() | {"no_decay": "names"} | saved

    def mixed_precision(self, device: str) -> str:
        """accelerate's ``mixed_precision`` for this device: autocast on CUDA only, as
        ``--bf16`` always was (the command refuses it elsewhere)."""
        if not device.startswith("cuda"):
            return "no"
        return "bf16" if self.bf16 else "fp16" if self.fp16 else "no"


@dataclass
class PretrainOutcome:
    steps_done: int
    final_loss: float  # the last record's loss: mean over its logging window
    log_path: Path
    curve_path: Path
    checkpoint: Path  # out_dir/final, loadable with AutoModelForMaskedLM.from_pretrained
    resumed_from: int | None  # the checkpoint step this call started from
    seconds: float  # training time spent in this call


def pretrain(
    build_model: Callable[[int], nn.Module],
    tokenizer: Any,
    corpus: Path,
    out_dir: Path,
    settings: PretrainSettings,
    progress: Callable[[int, float], None] | None = None,
    prepared_root: Path | None = None,
) -> PretrainOutcome:
    """Pretrain ``build_model(len(tokenizer))`` on the corpus, resuming from ``out_dir``.

    Run as one process, or as each process of a ``torchrun`` / ``accelerate launch``
    data-parallel launch (``parallel.py``): every process calls this with the same
    arguments, computes its share of each global batch, and only the main process writes.
    The corpus is read from its prepared form under ``prepared_root`` (default: the
    ``corpora`` folder of the runs root), tokenised there first if no run has yet.

    ``progress(step, loss)`` is called at every log record on the main process (not every
    step: reading the loss waits for the GPU and, under a launch, for every process).
    """
    from posharness.base.device import resolve_device
    from posharness.base.process import process_device
    from posharness.storage.io import sweep_stale_temporaries

    corpus, out_dir = Path(corpus), Path(out_dir)
    device = process_device(resolve_device(settings.device))
    layout = layout_for(settings.batch_size, settings.accumulation)
    accelerator = parallel_accelerator(device, settings.mixed_precision(device), settings.compile)
    writes = writes_files()
    with main_process_first(device):
        if writes:
            sweep_stale_temporaries(out_dir)  # a log or block file a killed run was writing
    _seed_everything(settings.seed)
    model = build_model(len(tokenizer))
    config = model_config(model)
    longest = config.get("max_position_embeddings")
    plan = phases(
        settings.steps, settings.block_size, settings.long_block_size, settings.long_fraction
    )
    for flag, length in (
        ("--block-size", settings.block_size),
        ("--long-block-size", settings.long_block_size),
    ):
        if isinstance(longest, int) and length is not None and length > longest:
            raise OptionError(
                f"{flag} {length} exceeds the model's max_position_embeddings "
                f"{longest}: use a smaller {flag} or a model with more positions"
            )
    identity = {
        "recipe": settings.recipe(),
        "corpus_sha256": corpus_identity(corpus),
        "tokenizer_sha256": vocabulary_identity(tokenizer),
        "model_sha256": hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest(),
        # Not compared (the hashes are): they name what differs when a resume is refused.
        "scheme": config.get("scheme") or config.get("model_type"),
        "corpus_name": Path(str(corpus)).name,
    }
    latest = latest_checkpoint(out_dir)
    if latest is not None:
        saved = latest.state["identity"]
        saved = saved | {"recipe": PretrainSettings.saved_recipe(saved["recipe"])}
        check_same_run(out_dir, saved, identity)
    with main_process_first(device):
        blocks = PhasedBlocks(
            plan,
            {
                p.block_size: training_blocks(
                    corpus, tokenizer, p.block_size, prepared_root, identity["corpus_sha256"]
                )
                for p in plan
            },
            settings.seed,
        )
    model.to(device)
    optimizer = build_optimizer(model, settings)
    scheduler = build_schedule(optimizer, settings)
    start, seconds_before = 0, 0.0
    if latest is not None:
        load_training_state(latest.path, model, optimizer, scheduler, device)
        start, seconds_before = latest.step, latest.state["seconds"]
    # The scheduler stays outside accelerate, which would step it once per process.
    model, optimizer = accelerator.prepare(model, optimizer)

    log_path = out_dir / LOG_NAME
    sessions = earlier_sessions(log_path, start) + [
        {"from_step": start, **layout.record(), "device": device.split(":")[0]}
    ]
    header = {
        "settings": asdict(settings),
        "corpus": {"path": str(corpus), "sha256": identity["corpus_sha256"]},
        "tokenizer_sha256": identity["tokenizer_sha256"],
        "model": config,
        "sessions": sessions,  # how each part of the run was launched (world size, batch)
    }
    log = LossLog.resume(log_path, header)
    if writes:
        log.keep_until(start)

    masker = masked_lm_masker(tokenizer, settings.mask_probability)
    specials = torch.tensor(sorted(set(tokenizer.all_special_ids)), dtype=torch.long)
    accepted = inspect.signature(accelerator.unwrap_model(model).forward).parameters
    takes_types = "token_type_ids" in accepted
    if settings.sparse_prediction and SPARSE_ARGUMENT not in accepted:
        raise OptionError(
            f"--sparse-prediction: {type(accelerator.unwrap_model(model)).__name__} cannot "
            "predict masked positions only (a zoo PEForMaskedLM can): drop the option"
        )
    state = {"identity": identity, "launch": layout.record()}

    def card(step: int, seconds: float) -> dict[str, Any]:  # what a checkpoint's card says
        tokens = tokens_seen(plan, step, settings.batch_size)
        corpus_sha = identity["corpus_sha256"]
        return card_facts(
            settings, config, corpus, corpus_sha, sessions, step, tokens, seconds, log.records
        )

    model.train(settings.dropout)  # eval mode: no dropout (the only train/eval difference)
    clock = time.perf_counter()
    window_loss = torch.zeros((), device=device)
    window_steps = 0
    for step in range(start + 1, settings.steps + 1):
        ids = torch.from_numpy(blocks.batch(step, settings.batch_size)).long()
        inputs, labels = mask_tokens(ids, masker, specials, step_seed(settings.seed, step))
        masked_in_step = int((labels != -100).sum())
        micro_batches = layout.my_micro_batches()
        for index, rows in enumerate(micro_batches):
            # No attention mask: blocks are always full, and an all-ones mask would become
            # an additive zero mask, which keeps a GPU's flash kernel out
            # (docs/pretraining_speed.md).
            batch = {"input_ids": inputs[rows], "labels": labels[rows]}
            if takes_types:
                batch["token_type_ids"] = torch.zeros_like(inputs[rows])
            if settings.sparse_prediction:
                batch[SPARSE_ARGUMENT] = True
            last = index == len(micro_batches) - 1
            with out_of_memory_hint(layout, step), gradients_wait(accelerator, model, last):
                out = model(**{k: _to(v, device) for k, v in batch.items()})
                masked_here = int((batch["labels"] != -100).sum())
                if masked_here:
                    loss = out.loss * layout.weight(masked_here, masked_in_step)
                else:  # no target here: a zero that still reaches every parameter for DDP
                    loss = out.logits.sum() * 0.0
                accelerator.backward(loss)
            window_loss += loss.detach().float() / layout.world_size
        accelerator.clip_grad_norm_(model.parameters(), settings.clip)
        learning_rate = optimizer.param_groups[0]["lr"]
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        kill_point("pretrain-step")
        window_steps += 1

        saving = step % settings.save_every == 0 or step == settings.steps
        if step % settings.log_every == 0 or saving:  # a checkpoint always closes a window
            total = (
                accelerator.reduce(window_loss, reduction="sum")
                if layout.world_size > 1
                else window_loss
            )
            mean = float(total) / window_steps
            if not np.isfinite(mean):
                raise OptionError(
                    f"the masked-LM loss is {mean} at step {step}: lower --learning-rate "
                    "(or turn off --bf16) and start again with a new --out"
                )
            seconds = seconds_before + time.perf_counter() - clock
            if writes:
                log.append(LossRecord(step, mean, learning_rate, seconds))
            else:
                log.records.append(LossRecord(step, mean, learning_rate, seconds))
            window_loss.zero_()
            window_steps = 0
            if progress is not None and writes:
                progress(step, mean)
        if saving and writes:
            tokens = tokens_seen(plan, step, settings.batch_size)
            save_checkpoint(
                out_dir,
                step,
                accelerator.unwrap_model(model),
                tokenizer,
                optimizer,
                scheduler,
                state | {"step": step, "seconds": seconds, "tokens_seen": tokens},
                keep=settings.keep_checkpoints,
                card=card(step, seconds),
            )
    elapsed = time.perf_counter() - clock

    final, curve = out_dir / FINAL_NAME, out_dir / CURVE_NAME
    if writes:
        from posharness.models.pretrain.log import plot_loss

        curve = plot_loss(log.path, curve)
        facts = card(settings.steps, log.records[-1].seconds if log.records else 0.0)
        final = publish_final(out_dir, accelerator.unwrap_model(model), tokenizer, facts, curve)
    accelerator.wait_for_everyone()  # the others return once the final model is in place
    return PretrainOutcome(
        steps_done=settings.steps,
        final_loss=log.records[-1].loss if log.records else float("nan"),
        log_path=log.path,
        curve_path=curve,
        checkpoint=final,
        resumed_from=start if latest is not None else None,
        seconds=elapsed,
    )


def _to(value: Any, device: str) -> Any:
    return value.to(device) if isinstance(value, torch.Tensor) else value


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also every CUDA device: initial weights and dropout
