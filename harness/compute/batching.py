"""Batched inference: length-sorted, padded per batch, original order given back.

Sorting by length means each batch pads only to its own longest member, which is where
most of the speed over fixed-length padding comes from. Longest batches go first so that
an out-of-memory error shows at once; with ``batch_size="auto"`` the batch is halved and
retried instead of failing.

Under a data-parallel launch the same batches are shared among the processes and every
process still yields every batch, in this order (``data_parallel.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import torch

from posharness.base.distributed import launched
from posharness.base.faults import kill_point
from posharness.compute.data_parallel import encode_across_processes
from posharness.compute.padding import is_out_of_memory, pad_batch
from posharness.contracts.adapter import EncoderOutput, Mode, ModelAdapter, TokenizedText

__all__ = ["AUTO", "BatchLog", "BatchedEncoder", "length_sorted_order", "pad_batch"]

AUTO = "auto"  # batch size chosen by the encoder: halves on out-of-memory
AUTO_START = {"cpu": 32, "cuda": 128, "mps": 64}


def length_sorted_order(lengths: Sequence[int]) -> list[int]:
    """Indices longest first; ties keep input order so batches are reproducible."""
    return sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))


@dataclass
class BatchLog:
    """What batching actually did, recorded with the results."""

    requested: int | str
    sizes_used: list[int] = field(default_factory=list)
    halvings: int = 0
    sequences: int = 0
    tokens: int = 0
    padded_tokens: int = 0
    seconds: float = 0.0  # inside the model's forward passes


class BatchedEncoder:
    """Runs an adapter over many inputs in one mode, yielding per-batch outputs."""

    def __init__(
        self,
        model: ModelAdapter,
        mode: Mode,
        want: frozenset[str],
        batch_size: int | str = AUTO,
        device_type: str = "cpu",
        pad_to: int | None = None,
        sort_by_length: bool = True,
    ) -> None:
        self.model, self.mode, self.want = model, mode, want
        self.auto = batch_size == AUTO
        self.batch_size = AUTO_START.get(device_type, 32) if self.auto else int(batch_size)
        self.pad_to = pad_to
        self.sort_by_length = sort_by_length
        self.log = BatchLog(requested=batch_size)

    def batches(
        self, items: Sequence[TokenizedText], on_progress: Callable[[int], None] | None = None
    ) -> Iterator[tuple[list[int], EncoderOutput]]:
        """Yield (original indices, output) per batch; outputs stay on the model's device."""
        order = (
            length_sorted_order([len(i) for i in items])
            if self.sort_by_length
            else list(range(len(items)))
        )
        if launched():  # the same batches, shared among the launch's processes
            yield from encode_across_processes(self, items, order, on_progress)
            return
        start = 0
        while start < len(order):
            indices = order[start : start + self.batch_size]
            chunk = [items[i] for i in indices]
            batch = pad_batch(chunk, self.model.pad_token_id, self.pad_to)
            clock = time.perf_counter()
            try:
                output = self.model.encode(batch, self.mode, self.want)
            except (RuntimeError, torch.OutOfMemoryError) as exc:
                if not (self.auto and is_out_of_memory(exc) and self.batch_size > 1):
                    raise
                self.batch_size //= 2
                self.log.halvings += 1
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                continue
            self.log.seconds += time.perf_counter() - clock
            self.log.sizes_used.append(len(indices))
            self.log.sequences += len(indices)
            self.log.tokens += sum(len(c) for c in chunk)
            self.log.padded_tokens += int(batch.input_ids.numel())
            start += len(indices)
            kill_point("encode-batch")
            yield indices, output
            if on_progress is not None:
                on_progress(len(indices))
