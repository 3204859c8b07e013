"""What sets a leaderboard row apart from a plain run of the same model and mode.

Two cells belong in one row only when their numbers are comparable: the same evaluation
and training cuts (``--limit``, ``--train-limit``), the same attention path (a forced
``attention=eager|sdpa`` agrees with the default only to float tolerance) and the same
kind of device (a GPU's kernels are not the CPU's), the same reference corpus (its name
and content hash: the corpus-based split definitions, e.g. ``tisa-mean-word``, subtract
means taken over it, and the positional term every mode reports is computed under it) and
the same split definition (``split``). Task options that differ from the defaults are
recorded beside these, per task. The settings are the fields of a cell's key's row key
(``contracts.cell_key.RowKey``), so one type matches rows for results being built into a
board, rows being merged and cells being admitted before any compute alike.

Every input of a cell's identity (``run.identity.cell_identity``) that can change a row's
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

from posharness.contracts.cell_key import ROW_SETTINGS, RowKey
from posharness.contracts.results import CellResult, key_of_result

__all__ = ["ROW_SETTINGS", "non_default_options", "of_result", "settings_of"]


def row_key(fingerprint: str, mode: str, settings: Mapping[str, Any]) -> RowKey:
    """``RowKey.of``: kept for plugins that import it from the old path
    ``posharness.row_settings`` (one release); the core matches rows by ``Row.key``."""
    return RowKey.of(fingerprint, mode, settings)


def of_result(result: CellResult) -> dict[str, Any]:
    """A result's row settings, from its key (recorded, or derived for older files)."""
    return key_of_result(result).row.settings()


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
