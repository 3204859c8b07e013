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
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from posharness.adapter import TokenizedText
from posharness.batching import length_sorted_order, pad_batch
from posharness.faults import kill_point

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
    """Class ids (or scores) for every example, longest batches first, in file order."""
    model.eval()
    order = length_sorted_order([len(item) for item in split.items])
    out = np.zeros(len(split), dtype=np.float32 if regression else np.int64)
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            indices = order[start : start + batch_size]
            logits = _forward(
                model, [split.items[i] for i in indices], pad_token_id, device, autocast
            )
            values = logits[:, 0].float() if regression else logits.argmax(dim=-1)
            out[indices] = values.cpu().numpy()
    return out


def _forward(
    model: nn.Module,
    items: Sequence[TokenizedText],
    pad_token_id: int,
    device: str,
    autocast: bool,
) -> torch.Tensor:
    batch = pad_batch(items, pad_token_id).to(device)
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
    epochs: list[dict[str, float]] = []
    best: tuple[float, int, dict[str, torch.Tensor], np.ndarray] | None = None
    seconds, seen = 0.0, 0
    for epoch in range(1, settings.epochs + 1):
        model.train()
        clock = time.perf_counter()
        loss_sum, batches = 0.0, 0
        for indices in epoch_batches(lengths, settings.batch_size, settings.seed, epoch):
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
            scheduler.step()
            kill_point("train-step")
            loss_sum += float(loss.detach())
            batches += 1
            seen += len(indices)
            if progress is not None:
                progress(len(indices))
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
    return RunOutcome(epochs, best_epoch, predictions, seconds, seen, state)
