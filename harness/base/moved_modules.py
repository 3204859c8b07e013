"""Old import paths of modules that moved into the layered sub-packages.

Plugins written against the flat core (``from posharness.adapter import ModelAdapter``)
keep working for one release: importing an old path returns the module at its new path
and warns once with ``DeprecationWarning``. Remove this table in the release after 0.1.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

MOVED = {
    f"posharness.{old}": f"posharness.{new}"
    for old, new in {
        "errors": "base.errors",
        "distributed": "base.distributed",
        "device": "base.device",
        "faults": "base.faults",
        "environment": "base.environment",
        "io": "storage.io",
        "hashing": "storage.hashing",
        "cache": "storage.cache",
        "cache_admin": "storage.cache_admin",
        "registry": "plugins.registry",
        "auto_classes": "plugins.auto_classes",
        "adapter": "contracts.adapter",
        "task": "contracts.task",
        "model_spec": "contracts.model_spec",
        "results": "contracts.results",
        "metric_types": "contracts.metric_types",
        "batching": "compute.batching",
        "data_parallel": "compute.data_parallel",
        "metrics": "stats.geometry",
        "scoring": "stats.classification",
        "paired_tests": "stats.paired_tests",
        "paired_resampling": "stats.paired_resampling",
        "plotting": "stats.plotting",
        "planning": "run.plan",
        "identity": "run.identity",
        "runner": "run.runner",
        "flags": "run.flags",
        "summaries": "run.summaries",
        "executors": "run.executors",
        "executors.ray_cluster": "run.executors.ray",
        "leaderboard": "boards.leaderboard",
        "row_settings": "boards.row_settings",
        "board_views": "boards.views",
        "compare": "boards.compare",
        "compare_output": "boards.compare_output",
        "example_bundle": "boards.example_bundle",
        "portable_boards": "boards.portable",
        # renamed so that no two core modules share a name (a command module is
        # <name>_command(s), the click option helpers click_options)
        "cli.options": "cli.click_options",
    }.items()
}


class _Alias(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec):
        warnings.warn(
            f"{spec.name} moved to {self.new}; import it from there "
            "(the old path is removed in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(self.new)

    def exec_module(self, module) -> None:
        pass  # the module at the new path is already executed


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        new = MOVED.get(fullname)
        return None if new is None else importlib.util.spec_from_loader(fullname, _Alias(new))


def install_old_paths() -> None:
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
