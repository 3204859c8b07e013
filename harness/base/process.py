"""Which process this is in a data-parallel launch, read from the launcher's environment
(``WORLD_SIZE``, ``RANK``, ``LOCAL_RANK``).

Every answer here is a local read that every process of a launch makes alike, with no
communication: safe in any code, storage included, and it can never hang. Decisions that
need the processes to talk (is this cell finished, is this cache entry there) are
collective and live in :mod:`posharness.base.distributed`, called only at the executor
boundary (:mod:`posharness.run.launch`) and by the compute layer's batch sharing.
"""

from __future__ import annotations

import os


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def world_size() -> int:
    """Processes in this launch; 1 when none is active."""
    return max(1, _env_int("WORLD_SIZE", 1))


def launched() -> bool:
    """True under ``accelerate launch``/``torchrun`` with more than one process."""
    return world_size() > 1


def rank() -> int:
    """This process's global rank (0 outside a launch)."""
    return _env_int("RANK", 0) if launched() else 0


def local_rank() -> int:
    """This process's rank on its node: the index of the GPU it uses."""
    return _env_int("LOCAL_RANK", 0) if launched() else 0


def is_main_process() -> bool:
    """The process that writes results, cache entries and leaderboards: always True
    outside a launch, global rank 0 inside one."""
    return rank() == 0


def process_device(device: str) -> str:
    """One GPU per process: plain ``cuda`` means ``cuda:LOCAL_RANK`` under a launch."""
    if launched() and device == "cuda":
        return f"cuda:{local_rank()}"
    return device
