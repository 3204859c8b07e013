"""The executor boundary of a data-parallel launch (``accelerate launch``, ``torchrun``):
every decision the processes must take together is made here, and nowhere below.

Under a launch each process plans the same grid and computes every pending cell with the
others, sharing its batches. Where processes could see the disk differently — is this
cell finished, is its lock free, would the board refuse it, is this cache entry there —
the main process looks and every process follows its answer (``main_decides``), so they
never take different branches around a collective call and hang. Storage code
(``posharness.storage``) is single-process and cannot import the collectives (an
import-linter contract), so a new disk check cannot hang a launch by being made below
this line. Outside a launch every function here is its single-process counterpart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from posharness.base.distributed import is_main_process, join, launched, main_decides
from posharness.base.errors import PosharnessError
from posharness.contracts.results import CellResult
from posharness.run.cell import lock_name, read_finished
from posharness.run.plan import Cell
from posharness.storage.cache import FeatureCache
from posharness.storage.io import claimed, exclusive, sweep_stale_temporaries

__all__ = [
    "SharedCache",
    "agreed_finished",
    "agreed_lock",
    "agreed_refusal",
    "cache_for",
    "join",
    "sweep_on_main",
]


class SharedCache(FeatureCache):
    """The feature cache as the processes of one launch see it: the main process alone
    says whether an entry is there and alone removes one (writes from the others are
    discarded by ``io.atomic_target``)."""

    def exists(self, path: Path) -> bool:
        return main_decides(path.exists)

    def remove(self, key: str, kind: str) -> None:
        if is_main_process():
            super().remove(key, kind)


def cache_for(root: Path | None) -> FeatureCache:
    """The cache a run hands its tasks: shared under a launch, plain otherwise."""
    return SharedCache(root) if launched() else FeatureCache(root)


def agreed_finished(cell: Cell) -> CellResult | None:
    """The cell's finished result, read by the main process and given to every one, so
    all agree on what is pending."""
    return main_decides(lambda: read_finished(cell))


@contextmanager
def agreed_lock(cell: Cell, *, wait: bool) -> Iterator[bool]:
    """The cell's lock, taken now if free (``wait=False``, yields whether it is held) or
    waited for. The main process alone takes it and every process follows its answer:
    the processes of one launch compute a cell together."""
    if not is_main_process():
        yield main_decides(lambda: False)
        return
    if wait:
        with exclusive(cell.path, timeout=None, what=lock_name(cell)):
            yield main_decides(lambda: True)
        return
    with claimed(cell.path, what=lock_name(cell)) as held:
        yield main_decides(lambda: held)


def agreed_refusal(
    admit: Callable[[list[Cell]], None], cells: list[Cell]
) -> PosharnessError | None:
    """``admit``'s refusal as a value, decided by the main process and handed to all."""

    def refusal() -> PosharnessError | None:
        try:
            admit(cells)
        except PosharnessError as refused:
            return refused
        return None

    return main_decides(refusal)


def sweep_on_main(folders: Iterable[Path | None]) -> None:
    """Remove the temporaries a killed run left behind (the main process only: the
    others' writes never reach these folders)."""
    if not is_main_process():
        return
    for folder in folders:
        if folder is not None:
            sweep_stale_temporaries(folder)
