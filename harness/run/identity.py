"""A cell's identity and key built from a plan's inputs: the one place a ``CellKey`` is made.

The key's type and everything it produces (file name, row key, label, pairing key) are in
``posharness.contracts.cell_key``; here its id is computed: the hash of everything the
cell's result depends on. A finished cell is skipped on a rerun only when its id
matches, so an input missing here is a result that silently stays stale (issue 17):
tests/unit/core/test_cell_identity.py varies every input in turn and checks that the id
changes or the result is byte-identical, and tests/unit/core/test_cell_key.py checks
which of id, file name, row key and pairing key each input moves. Keys are added to the
hash only when they differ from a plain CPU float32 run, so ids written before a key
existed stay valid.

A plugin task's code is an input too (issue 29, part 4): its declared ``TaskSpec.version``
is whatever its author remembered to bump, so a task that is not built in adds the hash
of its source (``posharness.plugins.code_identity``) unless its class declares
``code_version = "..."`` (docs/contributing/add-a-task.md). Built-in tasks add nothing:
their versions are bumped by review, and committed boards keep their ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from posharness.base.errors import PosharnessError
from posharness.contracts.adapter import POSITIONAL_TERM, Mode, ModelAdapter, mode_identity
from posharness.contracts.cell_key import (
    CellKey,
    accelerator,
    device_class,
    forced_attention,
    named_corpus,
    split_and_reference,
)
from posharness.contracts.model_spec import ModelSpec
from posharness.contracts.results import portable_values
from posharness.contracts.task import Task
from posharness.plugins.code_identity import code_identity
from posharness.plugins.registry import BUILTIN
from posharness.storage.hashing import hash_obj

__all__ = [
    "cell_identity",
    "device_class",
    "key_of",
    "positional_term_identity",
    "result_suffix",
    "RunSettings",
    "task_code_identity",
]


@dataclass(frozen=True)
class RunSettings:
    """What every cell of one run shares that enters its key."""

    limit: int | None = None  # --limit: evaluation examples
    train_limit: int | None = None  # --train-limit: training examples
    dtype: str = "float32"  # resolved (``auto`` is decided before planning)
    device: str = "cpu"  # resolved; only its kind enters the key
    model_args: Mapping[str, str] = field(default_factory=dict)  # --model-arg values


def key_of(
    spec: ModelSpec,
    model: ModelAdapter,
    task: Task,
    mode: Mode,
    seed: int,
    options: Mapping[str, Any],
    data: Any,
    run: RunSettings,
) -> CellKey:
    """The key of one planned cell (``plan.plan`` builds every cell's key here);
    ``options`` are the task's resolved options, ``data`` its data identity (None for a
    task that reads no files)."""
    limit, train_limit, device = run.limit, run.train_limit, run.device
    # As the result file records them (portable), so a key read back matches a fresh one.
    details = portable_values(model.describe())
    split, reference = split_and_reference(str(mode), details, model.modes[mode].reference_corpus)
    corpora = {s.reference_corpus for s in model.modes.values() if s.reference_corpus}
    return CellKey(
        fingerprint=model.fingerprint(),
        mode=str(mode),
        task=task.spec.name,
        seed=seed,
        limit=limit,
        train_limit=train_limit,
        dtype=run.dtype,
        device=accelerator(device),
        attention=forced_attention(details),
        split=split,
        reference=reference,
        corpus=named_corpus(corpora),
        folder=spec.results_slug(run.model_args),
        cell_id=cell_identity(
            fingerprint=model.fingerprint(),
            mode=mode_identity(model, mode, task.spec.needs),
            task=task,
            options=options,
            seed=seed,
            limit=limit,
            data=data,
            positional_term=positional_term_identity(model, task),
            train_limit=train_limit,
            device=device,
            code=task_code_identity(task),
        ),
    )


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
    code: str | None = None,
) -> str:
    """The hash of everything a cell's result depends on; ``mode`` is the mode with its
    split definition (``adapter.mode_identity``), ``code`` a plugin task's code identity
    (:func:`task_code_identity`; None for a built-in task)."""
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
    if code is not None:  # plugin tasks only: built-in ids stay what they were
        identity["task_code"] = code
    return hash_obj(identity)[:16]


def task_code_identity(task: Task) -> str | None:
    """None for a built-in task; for any other, ``v<code_version>`` when its class
    declares ``code_version``, else ``src:<hash>`` of the files that define it.

    Built-in means registered as built-in *and* defined in posharness: a task registered
    through the Python API from a user's module is registered with origin ``built-in``
    too, but its code is the user's.
    """
    from posharness.plugins import tasks

    maker = type(task)
    try:
        origin = tasks.entry(task.spec.name).origin
    except PosharnessError:  # a task object made without the registry: judged by its module
        origin = BUILTIN
    module = maker.__module__ or ""
    if origin == BUILTIN and (module == "posharness" or module.startswith("posharness.")):
        return None
    version = getattr(task, "code_version", None)
    return code_identity(maker, version=None if version is None else str(version))


def positional_term_identity(model: ModelAdapter, task: Task) -> str | None:
    """For a task that reads the positional term: the definition and reference corpus it
    is computed under, whatever mode the cell runs in (None for other tasks)."""
    if POSITIONAL_TERM not in task.spec.needs:
        return None
    return mode_identity(model, Mode.POSITIONAL) if Mode.POSITIONAL in model.modes else "none"


def result_suffix(
    limit: int | None,
    dtype: str,
    train_limit: int | None = None,
    device: str = "cpu",
    corpus: str | None = None,
) -> str:
    """``CellKey.suffix`` of a key with these inputs: kept for plugins that import it from
    the old path ``posharness.identity`` (one release); the core names files by the key."""
    key = CellKey("", "", "", 0, limit, train_limit, dtype, accelerator(device), corpus=corpus)
    return key.suffix
