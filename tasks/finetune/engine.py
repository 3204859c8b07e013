"""The one fine-tuning loop every fine-tune task shares.

Written as a compact loop rather than on ``transformers.Trainer`` because the model is
not a stock transformers model (an attention mode is installed on it, and the native PE
zoo is not a transformers class at all); because the cache key of a run is ours (model
fingerprint, mode, data hashes, hyper-parameters) and Trainer's output folders and
checkpoint rotation would duplicate it; and because the loop is short enough to read in
one sitting. It keeps what matters from Trainer: AdamW without decay on biases and
LayerNorm, linear warmup and decay (``get_linear_schedule_with_warmup``), gradient
clipping, dynamic padding with Trainer's own ``LengthGroupedSampler``, bf16 autocast on
CUDA, and a fixed seed for the head, dropout and batch order.

After every epoch the model is scored on the selection split; the best epoch's weights
are kept (copied to CPU) and restored at the end, which is what "best dev checkpoint"
means in Chen et al. App. A.3 and in GLUE fine-tuning generally.

Under a data-parallel launch (``accelerate launch``, ``torchrun``) the model trains as
DDP through accelerate. Each process takes every W-th example of each batch of the
single-process run, padded to that batch's width, and its loss is its examples' summed
loss times W / B: DDP's average of the processes' gradients is then the gradient of the
batch's mean loss, as in one process, up to the order of the float sums. Evaluation
batches are shared and gathered back in file order on every process, so every process
scores, keeps and restores the same epoch (docs/data_parallel.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from posharness.base.distributed import launched, process_device, world_size
from posharness.base.faults import kill_point
from posharness.compute.batching import length_sorted_order, pad_batch
from posharness.compute.data_parallel import (
    gathered_in_order,
    share_of_this_process,
    split_among_processes,
)
from posharness.contracts.adapter import TokenizedText

NO_DECAY = ("bias", "LayerNorm.weight", "layer_norm.weight", "norm.weight")


@dataclass(frozen=True)
class TrainingSettings:
    """Everything that changes the trained weights; all of it joins the run's cache key."""

    learning_rate: float
    epochs: int
    batch_size: int = 32
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    adam_epsilon: float = 1e-8
    clip_norm: float = 1.0
    max_length: int = 128
    seed: int = 0


@dataclass(frozen=True)
class EncodedSplit:
    """One split, tokenized: model inputs, gold labels and example ids in file order."""

    name: str
    items: Sequence[TokenizedText]
    labels: np.ndarray  # int64 class ids, or float32 scores for regression
    ids: Sequence[str]

    def __len__(self) -> int:
        return len(self.items)


@dataclass
class RunOutcome:
    """What one fine-tuning run produced, with the best epoch's weights restored."""

    epochs: list[dict[str, float]]  # per epoch: train_loss and the selection split's metrics
    best_epoch: int  # 1-based
    predictions: dict[str, np.ndarray]  # split name -> class ids or scores, in file order
    train_seconds: float
    train_examples: int  # examples seen over all epochs
    state: dict[str, torch.Tensor] = field(default_factory=dict)  # best weights, on CPU

    @property
    def examples_per_second(self) -> float:
        return self.train_examples / self.train_seconds if self.train_seconds else 0.0


Scorer = Callable[[np.ndarray, np.ndarray], dict[str, float]]  # (gold, predicted) -> metrics


def predict(
    model: nn.Module,
    split: EncodedSplit,
    pad_token_id: int,
    device: str,
    batch_size: int,
    regression: bool,
    autocast: bool = False,
) -> np.ndarray:
    """Class ids (or scores) for every example, longest batches first, in file order.

    Under a data-parallel launch each process predicts every W-th batch and every
    process gets all of them back."""
    model.eval()
    order = length_sorted_order([len(item) for item in split.items])
    out = np.zeros(len(split), dtype=np.float32 if regression else np.int64)
    batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    predicted = []
    with torch.no_grad():
        for k in share_of_this_process(len(batches)):
            indices = batches[k]
            logits = _forward(
                model, [split.items[i] for i in indices], pad_token_id, device, autocast
            )
            values = logits[:, 0].float() if regression else logits.argmax(dim=-1)
            predicted.append((indices, values.cpu().numpy()))
    for indices, values in gathered_in_order(predicted):
        out[indices] = values
    return out


def _forward(
    model: nn.Module,
    items: Sequence[TokenizedText],
    pad_token_id: int,
    device: str,
    autocast: bool,
    pad_to: int | None = None,
) -> torch.Tensor:
    batch = pad_batch(items, pad_token_id, pad_to).to(device)
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
        return model(batch.input_ids, batch.attention_mask, batch.token_type_ids)


def _optimizer(model: nn.Module, settings: TrainingSettings) -> torch.optim.Optimizer:
    decay, no_decay = [], []
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            continue
        (no_decay if name.endswith(NO_DECAY) else decay).append(parameter)
    groups = [
        {"params": decay, "weight_decay": settings.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    # The fused kernel (one pass over all parameters, CPU and CUDA) is what Trainer uses
    # by default; the per-tensor loop costs about a fifth of a MiniLM step on CPU.
    try:
        return torch.optim.AdamW(
            groups, lr=settings.learning_rate, eps=settings.adam_epsilon, fused=True
        )
    except (RuntimeError, ValueError):
        return torch.optim.AdamW(groups, lr=settings.learning_rate, eps=settings.adam_epsilon)


def epoch_batches(
    lengths: Sequence[int], batch_size: int, seed: int, epoch: int
) -> list[list[int]]:
    """Shuffled batches of similar length (Trainer's ``group_by_length``), seeded per epoch."""
    from transformers.trainer_pt_utils import LengthGroupedSampler

    generator = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
    order = list(LengthGroupedSampler(batch_size, lengths=list(lengths), generator=generator))
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def fine_tune(
    build: Callable[[], nn.Module],
    train: EncodedSplit,
    select: EncodedSplit,
    others: Sequence[EncodedSplit],
    settings: TrainingSettings,
    *,
    regression: bool,
    scorer: Scorer,
    selection_metric: str,
    pad_token_id: int,
    device: str = "cpu",
    bf16: bool = False,
    eval_batch_size: int = 64,
    progress: Callable[[int], None] | None = None,
) -> RunOutcome:
    """Train on ``train``, keep the epoch that scores best on ``select``, predict ``others``."""
    from transformers import get_linear_schedule_with_warmup

    device = process_device(device)  # plain "cuda" is this process's GPU under a launch
    torch.manual_seed(settings.seed)
    model = build().to(device)
    autocast = bf16 and device.startswith("cuda")
    optimizer = _optimizer(model, settings)
    steps_per_epoch = -(-len(train) // settings.batch_size)
    total = steps_per_epoch * settings.epochs
    scheduler = get_linear_schedule_with_warmup(
        optimizer, int(round(settings.warmup_ratio * total)), total
    )
    loss_fn: nn.Module = nn.MSELoss() if regression else nn.CrossEntropyLoss()
    labels = torch.as_tensor(train.labels)
    lengths = [len(item) for item in train.items]
    parallel = _DataParallelTraining(model, optimizer, device) if launched() else None
    epochs: list[dict[str, float]] = []
    best: tuple[float, int, dict[str, torch.Tensor], np.ndarray] | None = None
    seconds, seen = 0.0, 0
    for epoch in range(1, settings.epochs + 1):
        model.train()
        clock = time.perf_counter()
        loss_sum, batches = 0.0, 0
        for indices in epoch_batches(lengths, settings.batch_size, settings.seed, epoch):
            if parallel is None:
                logits = _forward(
                    model, [train.items[i] for i in indices], pad_token_id, device, autocast
                )
                target = labels[indices].to(device)
                if regression:
                    loss = loss_fn(logits[:, 0].float(), target.float())
                else:
                    loss = loss_fn(logits.float(), target)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), settings.clip_norm)
                optimizer.step()
            else:
                loss = parallel.step(train, labels, indices, regression, pad_token_id, autocast)
                parallel.accelerator.clip_grad_norm_(model.parameters(), settings.clip_norm)
                parallel.optimizer.step()
            scheduler.step()
            kill_point("train-step")
            loss_sum += float(loss.detach())
            batches += 1
            seen += len(indices)
            if progress is not None:
                progress(len(indices))
        if parallel is not None:  # each process holds its parts of the batch means
            loss_sum = parallel.mean_over_processes(loss_sum)
        seconds += time.perf_counter() - clock
        predicted = predict(
            model, select, pad_token_id, device, eval_batch_size, regression, autocast
        )
        scores = scorer(select.labels, predicted)
        epochs.append({"epoch": epoch, "train_loss": loss_sum / max(batches, 1), **scores})
        if best is None or scores[selection_metric] > best[0]:
            state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
            best = (scores[selection_metric], epoch, state, predicted)
    assert best is not None, "epochs must be at least 1"
    _, best_epoch, state, select_predictions = best
    model.load_state_dict(state)
    predictions = {select.name: select_predictions}
    for split in others:
        predictions[split.name] = predict(
            model, split, pad_token_id, device, eval_batch_size, regression, autocast
        )
    if parallel is not None:
        parallel.accelerator.free_memory()  # drops its references to the DDP wrapper
    return RunOutcome(epochs, best_epoch, predictions, seconds, seen, state)


class _DataParallelTraining:
    """The model as DDP and the optimizer, prepared by accelerate for this launch.

    Batches are ours, not a prepared DataLoader's: a prepared loader either gives each
    process whole batches, so the global batch becomes W times the single-process one,
    or (``split_batches``) needs a batch size divisible by W and completes an uneven last
    batch with examples from the start (``even_batches``); both change the gradients.
    The scheduler is not prepared either: it steps once per global batch, as in one
    process, where a prepared one steps W times per step unless batches are split.
    """

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, device: str) -> None:
        from accelerate import Accelerator, DistributedDataParallelKwargs

        self.accelerator = Accelerator(
            cpu=not device.startswith("cuda"),
            mixed_precision="no",  # bf16 stays our own autocast, as in one process
            gradient_accumulation_steps=1,
            # A positional-mode classifier leaves the query/key projections without
            # gradient; DDP must be told some parameters may get none.
            kwargs_handlers=[DistributedDataParallelKwargs(find_unused_parameters=True)],
        )
        self.model, self.optimizer = self.accelerator.prepare(model, optimizer)
        self.device = device

    def step(
        self,
        train: EncodedSplit,
        labels: torch.Tensor,
        indices: list[int],
        regression: bool,
        pad_token_id: int,
        autocast: bool,
    ) -> torch.Tensor:
        """Forward and backward of this process's part of one batch; its loss returned.

        The loss is the part's summed loss times W / B, so that DDP's mean over the
        processes is the batch's mean loss. A process left without an example (a batch
        smaller than the launch) runs one with weight zero: DDP needs every process in
        the gradient average.
        """
        mine, scale = split_among_processes(indices), world_size() / len(indices)
        if not mine:
            mine, scale = list(indices[:1]), 0.0
        width = max(len(train.items[i]) for i in indices)  # the single-process padding
        items = [train.items[i] for i in mine]
        logits = _forward(self.model, items, pad_token_id, self.device, autocast, width)
        target = labels[mine].to(self.device)
        if regression:
            summed = nn.functional.mse_loss(logits[:, 0].float(), target.float(), reduction="sum")
        else:
            summed = nn.functional.cross_entropy(logits.float(), target, reduction="sum")
        loss = summed * scale
        self.optimizer.zero_grad(set_to_none=True)
        self.accelerator.backward(loss)
        return loss

    def mean_over_processes(self, value: float) -> float:
        """The mean of the processes' ``value``: for an epoch's summed losses, whose
        parts are scaled by W, the sum of the batches' mean losses."""
        local = torch.tensor(value, dtype=torch.float64, device=self.accelerator.device)
        return float(self.accelerator.reduce(local, reduction="mean"))
