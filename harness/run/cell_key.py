"""A cell's identity: the hash of everything its result depends on, and the file-name
suffix that keeps cells of other settings apart.

A finished cell is skipped on a rerun only when its id matches, so an input missing here
is a result that silently stays stale (issue 17): tests/unit/core/test_cell_identity.py
varies every input in turn and checks that the id changes or the result is byte-identical.
Keys are added only when they differ from a plain CPU float32 run, so ids written before
a key existed stay valid.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posharness.contracts.adapter import POSITIONAL_TERM, Mode, ModelAdapter, mode_identity
from posharness.contracts.task import Task
from posharness.storage.hashing import hash_obj


def cell_identity(
    fingerprint: str,
    mode: str,
    task: Task,
    options: Mapping[str, Any],
    seed: int,
    limit: int | None,
    data: Any = None,
    positional_term: str | None = None,
    train_limit: int | None = None,
    device: str = "cpu",
) -> str:
    """The hash of everything a cell's result depends on (tests/unit/core/
    test_cell_identity.py varies each input in turn)."""
    identity = {
        "fingerprint": fingerprint,
        "mode": str(mode),
        "task": task.spec.name,
        "version": task.spec.version,
        "options": dict(options),
        "seed": seed,
        "limit": limit,
    }
    if data is not None:  # only tasks that read files have it; older cell ids stay valid
        identity["data"] = data
    if positional_term is not None:  # only tasks that read the positional term have it
        identity["positional_term"] = positional_term
    if limit is not None:  # --limit once cut training too; now evaluation examples only
        identity["limit_scope"] = "evaluation"
    if train_limit is not None:
        identity["train_limit"] = train_limit
    if device_class(device) != "cpu":  # kernels differ: a GPU's numbers are not the CPU's
        identity["device"] = device_class(device)
    return hash_obj(identity)[:16]


def device_class(device: str) -> str:
    """``cuda`` for ``cuda:1``: the kind of device, whose kernels decide the numbers (two
    GPUs of one kind give the same ones, so the index is left out)."""
    return device.split(":")[0]


def result_suffix(
    limit: int | None,
    dtype: str,
    train_limit: int | None = None,
    device: str = "cpu",
    corpus: str | None = None,
) -> str:
    """What keeps a limited, half-precision or GPU cell's file apart from the full float32
    CPU one, so neither overwrites the other's result (``__limit10``, ``__train500``,
    ``__bfloat16``, ``__cuda``); ``corpus``, a reference corpus's label that the caller
    keeps apart from its default one, adds ``__corpus<8 hex>`` (a run with ``--data-dir``
    and one without use two corpora, but one results folder)."""
    parts = [f"limit{limit}"] if limit is not None else []
    if train_limit is not None:
        parts.append(f"train{train_limit}")
    if dtype != "float32":
        parts.append(dtype)
    if device_class(device) != "cpu":
        parts.append(device_class(device))
    if corpus is not None:
        parts.append(f"corpus{hash_obj(corpus)[:8]}")
    return "".join(f"__{part}" for part in parts)


def positional_term_identity(model: ModelAdapter, task: Task) -> str | None:
    """For a task that reads the positional term: the definition and reference corpus it
    is computed under, whatever mode the cell runs in (None for other tasks)."""
    if POSITIONAL_TERM not in task.spec.needs:
        return None
    return mode_identity(model, Mode.POSITIONAL) if Mode.POSITIONAL in model.modes else "none"
