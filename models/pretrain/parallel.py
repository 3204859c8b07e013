"""How one optimizer step's global batch is shared out in a data-parallel launch.

The recipe states the *global* batch (BERT: 256 sequences per step, Devlin et al. 2019,
§A.2; Cramming reaches its large batch by accumulation, Geiping & Goldstein 2022, §4.3).
A launch (``torchrun`` / ``accelerate launch``, ``WORLD_SIZE`` processes) and gradient
accumulation only decide how that batch is computed:

    global batch = per-device batch × accumulation × world size

Every process draws the same global batch for a step (the block order and the masking
are functions of the seed and the global step alone, ``corpus.BlockOrder`` and
``masking.step_seed``), masks all of it, and keeps its own ``accumulation`` micro-batches.
Each micro-batch's mean loss is weighted by its share of the global batch's masked
tokens, so the gradient DDP averages is exactly the gradient of the global batch's mean
masked-LM loss, whatever the split (:meth:`Layout.weight`). Hence a run resumes on
another world size with the same samples, masks and loss per global step (to float
summation order); what is *not* kept across world sizes is dropout: each process draws
masks for its own rows (docs/pretraining.md, "Data-parallel").

Processes are joined and gradients reduced by ``accelerate`` (DDP over gloo on CPU, NCCL on
CUDA); nothing here talks to ``torch.distributed`` directly.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from posharness.base.errors import OptionError
from posharness.base.process import is_main_process, launched, rank, world_size


@dataclass(frozen=True)
class Layout:
    """This process's share of each optimizer step."""

    global_batch: int
    accumulation: int
    world_size: int
    rank: int

    @property
    def per_device_batch(self) -> int:
        return self.global_batch // (self.accumulation * self.world_size)

    def my_micro_batches(self) -> list[slice]:
        """Slices of the global batch's rows this process computes, in order: the
        ``accumulation`` consecutive micro-batches after those of lower ranks."""
        size = self.per_device_batch
        first = self.rank * self.accumulation
        return [slice((first + i) * size, (first + i + 1) * size) for i in range(self.accumulation)]

    def weight(self, masked_here: int, masked_in_step: int) -> float:
        """What a micro-batch's mean loss is multiplied by before ``backward``.

        DDP averages gradients over processes (÷ world size) and accumulation adds them,
        so ``mean_m × n_m / N × world`` makes the reduced gradient that of
        ``Σ_m mean_m × n_m / N``: the mean over all ``N`` masked tokens of the global batch.
        One process without accumulation gets exactly 1.0 (the loss is used untouched).
        """
        return masked_here * self.world_size / masked_in_step

    def record(self) -> dict[str, int]:
        return {
            "world_size": self.world_size,
            "per_device_batch": self.per_device_batch,
            "accumulation": self.accumulation,
            "global_batch": self.global_batch,
        }


def layout_for(global_batch: int, accumulation: int) -> Layout:
    """The layout of this process, or a one-line error saying which accumulation fits."""
    if accumulation < 1:
        raise OptionError(f"--accumulation {accumulation}: must be a positive integer")
    world = world_size()
    if global_batch % (world * accumulation):
        raise OptionError(
            f"--batch-size {global_batch} (the global batch) is not divisible by "
            f"{world} process(es) × --accumulation {accumulation}: "
            + _divisible_hint(global_batch, world)
        )
    return Layout(global_batch, accumulation, world, rank())


def _divisible_hint(global_batch: int, world: int) -> str:
    fitting = [a for a in range(1, global_batch + 1) if global_batch % (world * a) == 0]
    if not fitting:
        return (
            f"no accumulation fits {world} processes; use a --batch-size that is a multiple "
            f"of {world} or launch a number of processes that divides {global_batch}"
        )
    options = ", ".join(
        f"{a} (per-device batch {global_batch // (world * a)})" for a in fitting[:4]
    )
    return f"use --accumulation {options}"


def accelerator(device: str, mixed_precision: str, compile_model: bool) -> Any:
    """accelerate's ``Accelerator`` for this process: it joins the launch's process group
    (gloo unless ``device`` is CUDA), wraps the model in DDP under a launch, and owns
    autocast and fp16 loss scaling. Placement stays ours (``device_placement=False``):
    the loop moves the model to the device the run resolved, as a single process did."""
    import os

    from accelerate import Accelerator

    from posharness.base.distributed import state

    if os.environ.get("ACCELERATE_USE_FSDP", "").lower() in ("1", "true"):
        raise OptionError(
            "posharness pretrain does not run under FSDP yet (its checkpoints are written "
            "from the whole model): launch without --use_fsdp; DDP fits the zoo's sizes"
        )
    if launched():
        state(device)  # the process group, on the backend the run's device needs
    return Accelerator(
        cpu=not device.startswith("cuda"),
        mixed_precision=mixed_precision,
        device_placement=False,
        dynamo_backend="inductor" if compile_model else "no",
    )


@contextmanager
def main_process_first(device: str) -> Iterator[None]:
    """The main process runs the block first (train a tokenizer, prepare the corpus,
    sweep temporaries); the others enter once it is done and find its result on disk."""
    if not launched():
        yield
        return
    from posharness.base.distributed import state

    with state(device).main_process_first():
        yield


@contextmanager
def gradients_wait(accelerator: Any, model: nn.Module, last: bool) -> Iterator[None]:
    """Accumulation: gradients of all but a step's last micro-batch stay local (DDP's
    ``no_sync``); the last backward all-reduces the sum."""
    if last:
        yield
    else:
        with accelerator.no_sync(model):
            yield


@contextmanager
def out_of_memory_hint(layout: Layout, step: int) -> Iterator[None]:
    try:
        yield
    except torch.OutOfMemoryError:
        raise OptionError(
            f"out of device memory at step {step} with a per-device batch of "
            f"{layout.per_device_batch}: keep --batch-size {layout.global_batch} and raise "
            f"--accumulation to {layout.accumulation * 2} (per-device batch "
            f"{max(1, layout.per_device_batch // 2)}, the same global batch)"
        ) from None


def writes_files() -> bool:
    """Only the main process writes checkpoints, logs, curves and the final model."""
    return is_main_process()
