"""Who this process is in a data-parallel launch (``accelerate launch``, ``torchrun``).

A launch is recognised by the environment its launcher sets (``WORLD_SIZE`` above 1), so
a plain run imports nothing here beyond ``os`` and behaves exactly as before: it is one
process, the main one, and :func:`main_decides` simply calls its argument. Under a
launch every process plans the same grid and runs every cell, sharing the batches of
each cell (``data_parallel.py``, the fine-tuning engine); the main process alone writes
files (:func:`is_main_process`, a role read from the environment in ``process.py`` and
checked by ``io.atomic_target`` and the leaderboard merge). Where processes could see the
disk differently — is this cell finished, is this cache entry there — the main process
looks and the others are told (:func:`main_decides`), so they never take different
branches around a collective call and hang. Those collective decisions are made at the
executor boundary only (``run/launch.py``): storage code never imports this module (an
import-linter contract), so a disk check added there cannot hang a launch.

``accelerate`` is imported only once a launch is detected; without it the launch fails
in one line naming ``pip install 'posharness[accelerate]'`` (docs/data_parallel.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from posharness.base.errors import DistributedLaunchError
from posharness.base.process import (  # noqa: F401  (the role, re-exported for callers)
    is_main_process,
    launched,
    local_rank,
    process_device,
    rank,
    world_size,
)

if TYPE_CHECKING:
    from accelerate import PartialState

_T = TypeVar("_T")

INSTALL_HINT = (
    "this run was started by a data-parallel launcher (WORLD_SIZE={size}), which needs "
    "accelerate: pip install 'posharness[accelerate]'"
)


def state(device: str | None = None) -> PartialState:
    """accelerate's process state, joining the launch's process group on first use:
    gloo when ``device`` is not CUDA, NCCL otherwise (``None``: CUDA if there is one).
    The first call decides; the runner makes it with the run's device (:func:`join`)."""
    try:
        from accelerate import PartialState
    except ImportError:
        raise DistributedLaunchError(INSTALL_HINT.format(size=world_size())) from None
    if device is None:
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    # Without cpu=True accelerate sees no launch under a bare torchrun on a CPU machine.
    return PartialState(cpu=not device.startswith("cuda"))


def join(device: str) -> None:
    """Join the launch before any work, so a missing accelerate fails at once (and a
    plain run does nothing)."""
    if launched():
        state(device)


def main_decides(decide: Callable[[], _T]) -> _T:
    """``decide()`` run on the main process, its answer given to every process.

    Every process must call this at the same point; the others wait for the main one.
    Outside a launch it is ``decide()``.
    """
    if not launched():
        return decide()
    from accelerate.utils import broadcast_object_list

    state()
    box: list[Any] = [decide() if is_main_process() else None]
    broadcast_object_list(box, from_process=0)
    return box[0]


def gather_from_every_process(payload: _T) -> list[_T]:
    """Every process's ``payload``, in rank order, on every process (accelerate's
    ``gather_object``: pickled, so sizes may differ between processes)."""
    if not launched():
        return [payload]
    from accelerate.utils import gather_object

    state()
    return gather_object([payload])


def wait_for_everyone() -> None:
    """A barrier: e.g. after the main process wrote a file the others will read."""
    if launched():
        state().wait_for_everyone()


def leave(finished: bool) -> None:
    """Leave the launch's process group before the interpreter exits.

    Left to interpreter shutdown, gloo's threads were torn down in whatever order the
    finalisers ran, and a process that had finished cleanly died of SIGABRT
    ("terminate called without an active exception") about one run in three, failing
    the whole launch. A ``finished`` process first waits for the others, so none tears
    its group down while another still talks to it; after an error there is no
    barrier, since the others may never arrive. A plain run does nothing.
    """
    if not launched():
        return
    import torch.distributed

    if not torch.distributed.is_initialized():
        return
    if finished:
        torch.distributed.barrier()
    torch.distributed.destroy_process_group()
