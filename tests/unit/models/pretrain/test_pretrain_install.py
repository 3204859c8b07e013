"""`posharness pretrain` runs on the documented install (`pip install -e .`, no extras): every
module the single-process training path imports is a core requirement (issue 39, part 3:
accelerate used to be an optional extra, and pretraining stopped in a raw
ModuleNotFoundError from models/pretrain/parallel.py)."""

from __future__ import annotations

import ast
from importlib.metadata import requires
from pathlib import Path

from packaging.requirements import Requirement

PRETRAIN = Path(__file__).resolve().parents[4] / "models" / "pretrain"
# Imported names that are not distributions of their own, or are ours.
_NOT_DISTRIBUTIONS = {"posharness", "torch", "__future__"}


def core_requirements() -> set[str]:
    names = set()
    for line in requires("posharness") or []:
        requirement = Requirement(line)
        if requirement.marker is None or "extra" not in str(requirement.marker):
            names.add(requirement.name.lower().replace("_", "-"))
    return names


def test_accelerate_is_a_core_requirement() -> None:
    assert "accelerate" in core_requirements()


def test_every_third_party_module_the_training_path_imports_is_required() -> None:
    import sys

    imported = set()
    for path in PRETRAIN.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
            elif isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
    third_party = {
        name for name in imported - _NOT_DISTRIBUTIONS if name not in sys.stdlib_module_names
    }
    aliases = {"yaml": "pyyaml", "sklearn": "scikit-learn"}
    required = core_requirements() | {"torch"}
    missing = {aliases.get(name, name).replace("_", "-") for name in third_party} - required
    assert not missing, f"models/pretrain imports {sorted(missing)}, not core requirements"
