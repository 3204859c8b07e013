"""What a pretraining run will do, printed before it starts: steps, batch, tokens, time.

The time is an estimate from a measured warm-up on the device the run sees: a few
forward and backward passes of one per-device micro-batch at the first phase's length,
the last ones timed, times the micro-batches of a step and the steps of the run. The
warm-up runs in a forked random state and leaves no gradient behind, so announcing a
plan never changes the weights a run ends with. A recipe with a time budget (Cramming's
day, ``recipes.py``) takes its step count from the same measurement.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from posharness.models.pretrain.parallel import Layout
from posharness.models.pretrain.phases import Phase

WARMUP_PASSES = 3  # the first pass pays for allocation and kernel selection; not timed


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
            f"estimated time on {self.device}: {_duration(self.estimated_seconds)} "
            f"({self.seconds_per_step:.3g} s per step, measured)",
            f"checkpoints every {self.save_every} steps in {self.out_dir}/checkpoint-<step>, "
            f"the model in {self.out_dir}/final",
        ]


def measure_step_seconds(
    model: nn.Module,
    layout: Layout,
    block_size: int,
    vocabulary: int,
    device: str,
    mask_probability: float,
    sparse_prediction: bool,
) -> float:
    """Seconds of one optimizer step's forward and backward passes on this process."""
    rows = layout.per_device_batch
    ids = torch.randint(5, vocabulary, (rows, block_size), device=device)
    chosen = torch.rand(ids.shape, device=device) < mask_probability
    labels = torch.where(chosen, ids, torch.full_like(ids, -100))
    batch: dict[str, Any] = {"input_ids": ids, "labels": labels}  # as the loop: no mask
    if sparse_prediction:
        from posharness.models.pretrain.loop import SPARSE_ARGUMENT

        batch[SPARSE_ARGUMENT] = True
    devices = [torch.device(device)] if device.startswith("cuda") else []
    seconds = []
    with torch.random.fork_rng(devices=devices):
        for _ in range(WARMUP_PASSES):
            clock = _synchronised_clock(device)
            model(**batch).loss.backward()
            seconds.append(_synchronised_clock(device) - clock)
    model.zero_grad(set_to_none=True)
    return min(seconds[1:]) * layout.accumulation


def _synchronised_clock(device: str) -> float:
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)
    return time.perf_counter()


def steps_for_budget(hours: float, seconds_per_step: float) -> int:
    return max(1, int(hours * 3600 / seconds_per_step))


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
