"""What a pretraining run will do, printed before it starts: steps, batch, tokens, time.

The time is an estimate from a measured warm-up on the device the run sees: a few
forward and backward passes of one per-device micro-batch at the first phase's length,
the last ones timed, times the micro-batches of a step and the steps of the run. The
warm-up computes as the run will: under the run's autocast (``--bf16``/``--fp16`` on
CUDA) and compiled when the run is (``--compile``; the untimed first pass pays for the
compilation), so a plan for a bf16 or compiled run is not an fp32 eager figure. It runs
in a forked random state and leaves no gradient behind, so announcing a plan never
changes the weights a run ends with. A recipe with a time budget (Cramming's day,
``recipes.py``) takes its step count from the same measurement: the budget is
device-hours in total, so a launch of N processes gets 1/N of it as wall time.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from posharness.models.pretrain.parallel import Layout
from posharness.models.pretrain.phases import Phase

WARMUP_PASSES = 3  # the first pass pays for allocation and kernel selection; not timed
AUTOCAST = {"bf16": "bfloat16", "fp16": "float16"}  # accelerate's mixed_precision -> dtype


@dataclass(frozen=True)
class PretrainPlan:
    preset: str | None
    steps: int
    layout: Layout
    phases: list[Phase]
    tokens: int
    seconds_per_step: float  # measured at the first phase's length
    device: str
    out_dir: Path
    save_every: int
    precision: str = "no"  # accelerate's mixed_precision the warm-up (and the run) use
    compiled: bool = False
    budget_hours: float | None = None  # device-hours in total, when steps came from it
    vocabulary: int | None = None  # the model's vocabulary (the tokenizer's size)
    recipe_vocabulary: int | None = None  # the recipe's, when it names one
    recipe_precision: str = ""  # the recipe's source precision, when it does not set it
    schedule: str = ""  # the learning rate's course, in words (schedule_words)

    @property
    def estimated_seconds(self) -> float:
        first = self.phases[0].block_size
        # Later, longer phases cost more per step: scale by length (attention grows
        # faster, so this is a lower bound for them).
        return sum(self.seconds_per_step * p.steps * p.block_size / first for p in self.phases)

    def lines(self) -> list[str]:
        layout = self.layout
        phases = " then ".join(f"{p.steps} steps x {p.block_size} tokens" for p in self.phases)
        return [
            f"recipe: {self.preset or 'custom'}; {self.steps} steps ({phases})",
            f"global batch {layout.global_batch} = {layout.per_device_batch} per device x "
            f"{layout.accumulation} accumulated x {layout.world_size} process(es)",
            f"tokens: {self.tokens:,}",
            *([f"learning rate: {self.schedule}"] if self.schedule else []),
            f"estimated time on {self.device}: {_duration(self.estimated_seconds)} "
            f"({self.seconds_per_step:.3g} s per step, measured at {self._computed()})",
            *self._budget_lines(),
            *self._recipe_lines(),
            f"checkpoints every {self.save_every} steps in {self.out_dir}/checkpoint-<step>, "
            f"the model in {self.out_dir}/final",
        ]

    def _computed(self) -> str:
        precision = "fp32" if self.precision == "no" else f"{self.precision} autocast"
        return precision + (", compiled" if self.compiled else ", eager")

    def _budget_lines(self) -> list[str]:
        if self.budget_hours is None:
            return []
        world = self.layout.world_size
        return [
            f"budget: {self.budget_hours:g} device-hours in total (one device's, as the "
            f"recipe's source), shared by {world} process(es): "
            f"{_duration(self.budget_hours * 3600 / world)} of wall time"
        ]

    def _recipe_lines(self) -> list[str]:
        lines = []
        if self.vocabulary is not None:
            wanted = self.recipe_vocabulary
            named = ""
            if wanted and wanted != self.vocabulary:
                named = f" ({self.preset}'s: {wanted:,})"
            lines.append(f"vocabulary: {self.vocabulary:,} pieces{named}")
        if self.recipe_precision and self.precision == "no":
            lines.append(f"precision: fp32; {self.preset}'s source: {self.recipe_precision}")
        return lines


def measure_step_seconds(
    model: nn.Module,
    layout: Layout,
    block_size: int,
    vocabulary: int,
    device: str,
    mask_probability: float,
    sparse_prediction: bool,
    precision: str = "no",
    compile_model: bool = False,
) -> float:
    """Seconds of one optimizer step's forward and backward passes on this process,
    computed as the run computes them: ``precision`` is accelerate's ``mixed_precision``
    for the run (``PretrainSettings.mixed_precision``: ``bf16``/``fp16`` autocast of the
    forward pass, ``no``) and ``compile_model`` its ``--compile`` (inductor, as
    ``parallel.accelerator``)."""
    rows = layout.per_device_batch
    ids = torch.randint(5, vocabulary, (rows, block_size), device=device)
    chosen = torch.rand(ids.shape, device=device) < mask_probability
    labels = torch.where(chosen, ids, torch.full_like(ids, -100))
    batch: dict[str, Any] = {"input_ids": ids, "labels": labels}  # as the loop: no mask
    if sparse_prediction:
        from posharness.models.pretrain.loop import SPARSE_ARGUMENT

        batch[SPARSE_ARGUMENT] = True
    devices = [torch.device(device)] if device.startswith("cuda") else []
    forward = torch.compile(model, backend="inductor") if compile_model else model
    seconds = []
    with torch.random.fork_rng(devices=devices):
        for _ in range(WARMUP_PASSES):
            clock = _synchronised_clock(device)
            with autocast(device, precision):
                loss = forward(**batch).loss
            loss.backward()
            seconds.append(_synchronised_clock(device) - clock)
    model.zero_grad(set_to_none=True)
    return min(seconds[1:]) * layout.accumulation


def autocast(device: str, precision: str) -> contextlib.AbstractContextManager[Any]:
    """The autocast the run's forward pass is under (accelerate autocasts the forward
    only; the backward follows the forward's dtypes)."""
    if precision not in AUTOCAST:
        return contextlib.nullcontext()
    return torch.autocast(device.split(":")[0], dtype=getattr(torch, AUTOCAST[precision]))


def schedule_words(settings: Any) -> str:
    """The rate's course as the plan prints it (``optimizer.build_schedule``)."""
    peak = f"{settings.learning_rate:g}"
    if settings.schedule == "one-cycle":
        top = round(0.75 * settings.steps)
        return f"one-cycle, from {peak}/4 up to {peak} at step {top}, then down to 0"
    return f"{settings.warmup} warm-up step(s) up to {peak}, then linear decay to 0"


def timing_options(settings: Any, device: str) -> tuple[str, bool]:
    """(precision, compile) of the run on ``device``: what ``loop.pretrain`` hands
    accelerate (``settings.mixed_precision(device)``, ``settings.compile``)."""
    return settings.mixed_precision(device), bool(settings.compile)


def _synchronised_clock(device: str) -> float:
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)
    return time.perf_counter()


def steps_for_budget(hours: float, seconds_per_step: float, world_size: int = 1) -> int:
    """Steps that fit ``hours`` device-hours in total: each step takes
    ``seconds_per_step`` of wall time on each of ``world_size`` devices. One device
    computing the same global batch alone takes about ``world_size`` times as long per
    step, so the count is (to communication) the same however many processes share it."""
    return max(1, int(hours * 3600 / (seconds_per_step * world_size)))


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
