"""The registries of the harness and the decorators outside code uses to extend them.

    from posharness.plugins import register_model, register_task

Built-in models and tasks arrive as lazy entries through this package's own entry points
(``pyproject.toml``), exactly like third-party plugins, so the core imports none of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from posharness.plugins.registry import Registry, include

models: Registry[Any] = Registry("model", "posharness.models")
tasks: Registry[Any] = Registry("task", "posharness.tasks")
# Positional schemes (classes or functions declared with posharness.pe.register_pe) and the
# model names made from them (posharness.pe.register_variant); both filled lazily.
positional_encodings: Registry[Any] = Registry("positional encoding", "posharness.pe")
pe_variants: Registry[Any] = Registry("PE model", "posharness.pe_variants")

register_model = models.register
register_task = tasks.register


# Every --include of this process, resolved: a distributed executor replays them on its
# workers, which must know the same plugin names as the process that planned the grid.
INCLUDED: list[str] = []


def include_paths(paths: Iterable[str | Path]) -> None:
    """Import user files so that their ``@register_*`` decorators run (``--include``)."""
    for path in paths:
        include(path, (models, tasks, positional_encodings, pe_variants))
        resolved = str(Path(path).resolve())
        if resolved not in INCLUDED:
            INCLUDED.append(resolved)
