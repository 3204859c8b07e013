"""What sets a leaderboard row apart from a plain run of the same model and mode.

Two cells belong in one row only when their numbers are comparable: the same evaluation
and training cuts (``--limit``, ``--train-limit``), the same attention path (a forced
``attention=eager|sdpa`` agrees with the default only to float tolerance) and the same
kind of device (a GPU's kernels are not the CPU's), the same reference corpus (its name
and content hash: the corpus-based split definitions, e.g. ``tisa-mean-word``, subtract
means taken over it, and the positional term every mode reports is computed under it) and
the same split definition (``split``). Task options that differ from the defaults are
recorded beside these, per task. One function derives these settings, and one key matches
rows, for results being built into a board, rows being merged and cells being admitted
before any compute alike.

Every input of a cell's identity (``identity.cell_identity``) that can change a row's
numbers is one of these, part of the row's model fingerprint or mode, or a per-task
option; the seed is averaged over within a row, and a task's version and data replace
its earlier scores (the run says so: ``leaderboard.MergeSummary``).

Rows written before ``reference`` was recorded have none: their corpus is unknown (before
the embedded corpus, 2026-11-24, the split definitions read WikiText-2 under --data-dir or
a named file), so a rerun adds its row beside them rather than replacing them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posharness.contracts.results import CellResult
from posharness.run.cell_key import device_class

# The settings besides task options, in the order tables name them.
# "limit" and "train_limit" stay first: compare pairs rows by the key's mode and limits.
ROW_SETTINGS = ("limit", "train_limit", "attention", "device", "split", "reference")


def distinguishing(
    limit: int | None,
    train_limit: int | None,
    details: Mapping[str, Any],
    device: str,
    reference: str | None = None,
    mode: str | None = None,
) -> dict[str, Any]:
    """The ROW_SETTINGS a cell has, left out where it is a plain run's. ``split`` and
    ``reference`` are kept whenever the model has them: which corpus is "plain" depends
    on ``--data-dir`` (WikiText-2 there, else the embedded one), so none is assumed."""
    # The split changes only the contextual and positional modes; a `both` cell that never
    # prepared the corpus (a fine-tune) must share its row with one that did (geometry).
    split = {} if mode == "both" else _decomposition(details)
    found = {
        "limit": limit,
        "train_limit": train_limit,
        "attention": forced_attention(details),
        "device": accelerator(device),
        "split": split.get("definition"),
        "reference": None if mode == "both" else reference or split.get("reference"),
    }
    return {key: value for key, value in found.items() if value is not None}


def of_result(result: CellResult) -> dict[str, Any]:
    return distinguishing(
        result.limit,
        result.train_limit,
        result.model.details,
        result.environment.device,
        result.mode.reference_corpus,
        result.mode.name,
    )


def row_key(fingerprint: str, mode: str, settings: Mapping[str, Any]) -> tuple[Any, ...]:
    """Rows are the same row when model, mode and every ROW_SETTINGS value agree."""
    return (fingerprint, mode, *(settings.get(key) for key in ROW_SETTINGS))


def _decomposition(details: Mapping[str, Any]) -> Mapping[str, Any]:
    """The split a model was loaded with (``--model-arg absolute=…``) and the reference
    corpus it was prepared over (``name (sha256 …)``), for every mode: one checkpoint
    under two of them has one fingerprint, and the positional term that mode ``both``
    reports is computed under them too. Empty for models with no configurable split."""
    found = details.get("decomposition")
    return found if isinstance(found, Mapping) else {}


def forced_attention(details: Mapping[str, Any]) -> str | None:
    """``--model-arg attention=eager|sdpa`` when the cell was run with it; None under the
    default ``auto`` (and for models without the choice)."""
    choice = details.get("attention")
    return str(choice) if choice not in (None, "auto") else None


def accelerator(device: str) -> str | None:
    """The kind of device (``cuda``, ``mps``) when it is not a CPU."""
    kind = device_class(device)
    return kind if kind != "cpu" else None


def non_default_options(task: str, options: dict[str, Any]) -> dict[str, Any]:
    """Options that differ from the task's defaults; all of them for a task not registered
    here (a plugin that is not installed), so nothing is hidden."""
    from posharness.base.errors import PosharnessError
    from posharness.plugins import tasks

    try:
        defaults = tasks.get(task)().spec.defaults
    except PosharnessError:
        return dict(options)
    return {k: v for k, v in options.items() if defaults.get(k, object()) != v}


def settings_of(results: list[CellResult]) -> dict[str, Any]:
    """A row's settings: its cells' ROW_SETTINGS (shared by construction) and, per task,
    the options that differ from the defaults."""
    settings = of_result(results[0])
    options = {}
    for result in results:
        changed = non_default_options(result.task.name, result.task.options)
        if changed:
            options[result.task.name] = changed
    if options:
        settings["options"] = options
    return settings
