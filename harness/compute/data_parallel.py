"""Encoding one cell's inputs with every process of a data-parallel launch.

The batches are the single-process run's: the inputs sorted longest first and cut at the
batch size. They are dealt out in rounds of one batch per process — batch ``k`` goes to
process ``k mod W`` — so the longest batches still come first and no process waits long
for another. After each round the outputs are gathered with accelerate's
``gather_object`` (pickled, because per-token outputs differ in width from batch to
batch) and every process yields every batch of the round, in the single-process order.
A task therefore sees exactly the batches of a plain run, in the same order, and
aggregates them the same way; only the forward passes are shared. Gathering every batch
to every process (rather than to the main one) keeps the tasks unaware of the launch and
lets every process take the same decisions afterwards; the cost is the transfer of the
outputs, which is what limits the speed-up when attention maps are asked for.

Memory holds one round (W batches) of outputs at a time, as a plain run holds one batch.
With ``batch_size="auto"``, an out-of-memory error on any process halves the batch on
all of them and the round is done again; any other error on one process is raised on
every process, so none is left waiting in a collective call.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

import torch

from posharness.base.distributed import gather_from_every_process, rank, state, world_size
from posharness.base.faults import kill_point
from posharness.compute.padding import is_out_of_memory, pad_batch
from posharness.contracts.adapter import EncoderOutput, Mode, ModelAdapter, TokenizedText

_T = TypeVar("_T")


def share_of_this_process(count: int) -> range:
    """The positions (of ``count`` batches) this process handles: every W-th, from its
    rank on."""
    return range(rank(), count, world_size())


def split_among_processes(indices: Sequence[int]) -> list[int]:
    """This process's part of one batch (every W-th example), for data-parallel training
    of a batch whose size the single-process run fixes."""
    return list(indices[rank() :: world_size()])


def gathered_in_order(pieces: list[_T]) -> list[_T]:
    """Every process's ``pieces`` as one list, process 0's first."""
    return [piece for part in gather_from_every_process(pieces) for piece in part]


@dataclass(frozen=True)
class _Share:
    """What one process did with its batch of a round."""

    indices: list[int]
    output: EncoderOutput | None = None  # on the CPU, so it pickles anywhere
    seconds: float = 0.0
    out_of_memory: bool = False
    error: str | None = None  # a failure other than out-of-memory, as one line


def outputs_moved(output: EncoderOutput, device: torch.device | str) -> EncoderOutput:
    """The same output with every tensor on ``device``."""

    def move(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return value.to(device)
        if isinstance(value, tuple):
            return tuple(move(v) for v in value)
        return value

    return replace(
        output,
        hidden_states=move(output.hidden_states),
        attentions=move(output.attentions),
        attention_mask=move(output.attention_mask),
        special_tokens_mask=move(output.special_tokens_mask),
        extras={name: move(v) for name, v in output.extras.items()},
    )


class _BatchLogFields(Protocol):
    sizes_used: list[int]
    halvings: int
    sequences: int
    tokens: int
    padded_tokens: int
    seconds: float


class SharedEncoder(Protocol):
    """What a round needs of ``batching.BatchedEncoder`` (which passes itself), named here
    so this module does not import the one that calls it."""

    model: ModelAdapter
    mode: Mode
    want: frozenset[str]
    batch_size: int
    auto: bool
    pad_to: int | None
    log: _BatchLogFields


def encode_across_processes(
    encoder: SharedEncoder,
    items: Sequence[TokenizedText],
    order: list[int],
    on_progress: Callable[[int], None] | None = None,
) -> Iterator[tuple[list[int], EncoderOutput]]:
    """``BatchedEncoder.batches`` under a launch: the same (indices, output) pairs in the
    same order, each process encoding one batch per round."""
    here = state().device
    processes, me = world_size(), rank()
    start = 0
    while start < len(order):
        size = encoder.batch_size
        bounds = [
            (start + p * size, min(start + (p + 1) * size, len(order))) for p in range(processes)
        ]
        low, high = bounds[me]
        mine = order[low:high] if low < high else []
        share, local, failure = _Share(mine), None, None
        if mine:
            batch = pad_batch([items[i] for i in mine], encoder.model.pad_token_id, encoder.pad_to)
            clock = time.perf_counter()
            try:
                local = encoder.model.encode(batch, encoder.mode, encoder.want)
            except (RuntimeError, torch.OutOfMemoryError) as exc:
                memory = is_out_of_memory(exc)
                share = _Share(mine, out_of_memory=memory, error=None if memory else repr(exc))
                failure = exc
            else:
                cpu = outputs_moved(local, "cpu")
                share = _Share(mine, cpu, time.perf_counter() - clock)
        shares: list[_Share] = gather_from_every_process(share)
        errors = [(p, s.error) for p, s in enumerate(shares) if s.error is not None]
        if errors:
            if share.error is not None and failure is not None:
                raise failure
            process, message = errors[0]
            raise RuntimeError(f"encoding failed on process {process}: {message}")
        if any(s.out_of_memory for s in shares):
            if not (encoder.auto and encoder.batch_size > 1):
                raise torch.OutOfMemoryError(
                    f"out of memory at batch size {encoder.batch_size} on process "
                    f"{next(p for p, s in enumerate(shares) if s.out_of_memory)}"
                )
            encoder.batch_size //= 2
            encoder.log.halvings += 1
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            continue
        encoder.log.seconds += share.seconds  # this process's forward passes only
        for process, received in enumerate(shares):
            if not received.indices:
                continue
            lengths = [len(items[i]) for i in received.indices]
            width = max(max(lengths), encoder.pad_to or 0)
            encoder.log.sizes_used.append(len(received.indices))
            encoder.log.sequences += len(received.indices)
            encoder.log.tokens += sum(lengths)
            encoder.log.padded_tokens += width * len(received.indices)
            assert received.output is not None
            output = local if process == me else outputs_moved(received.output, here)
            assert output is not None
            kill_point("encode-batch")
            yield received.indices, output
            if on_progress is not None:
                on_progress(len(received.indices))
        start = bounds[-1][1]
