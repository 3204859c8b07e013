"""The code version of each mode split, and the source its recorded hash covers.

Why (issue 29, part 4): a Hugging Face model's fingerprint covers its weights, config,
tokenizer, dtype and attention implementation, not the code that splits its attention
into modes, so a fix in ``models/decompose/`` reused every finished contextual and
positional cell. Each split class now declares ``version`` (1 is the code that made the
committed boards, and adds nothing to the fingerprint, so their ids stay); the adapter's
fingerprint includes any later version (``models/hf/checkpoint.py``).
tests/unit/core/test_split_versions.py keeps a hash of each split's source — its module
and the shared machinery it runs on (``core.py``, ``fused.py``, the controller and
reference statistics ...) — and fails when that source changes while the version does
not. After a deliberate change: bump ``version`` on every split the test names and run
``python tests/unit/core/code_versions/record.py splits``.
"""

from __future__ import annotations

import inspect
from importlib import import_module
from pathlib import Path
from typing import Any

from posharness.models.decompose.split_table import SPLIT_BY_MODEL_TYPE
from posharness.plugins.code_identity import module_closure, source_digest

PACKAGE = "posharness.models.decompose"
FOLDER = Path(__file__).resolve().parent
# Every split runs under the controller (definitions, reference statistics, paths).
SHARED = (FOLDER / "controller.py",)
# Not the numbers' code: which model type uses which split (a new model type is a new
# config, already in its fingerprint), and this file.
NOT_SPLIT_CODE = ("split_table.py", "versions.py")


def split_classes() -> dict[str, type]:
    """Every split class the table names, by class name."""
    found = {}
    for target in SPLIT_BY_MODEL_TYPE.values():
        module_name, _, class_name = target.partition(":")
        found[class_name] = getattr(import_module(f"{PACKAGE}.{module_name}"), class_name)
    return dict(sorted(found.items()))


def split_files(split: Any) -> list[Path]:
    """The split's module, the controller, and every decompose module they import."""
    cls = split if isinstance(split, type) else type(split)
    start = [Path(inspect.getfile(cls)).resolve(), *SHARED]
    return module_closure(start, PACKAGE, FOLDER, exclude=NOT_SPLIT_CODE)


def current_versions() -> dict[str, tuple[int, str]]:
    """Split class name -> (declared version, digest of :func:`split_files`)."""
    return {
        name: (int(cls.__dict__["version"]), source_digest(split_files(cls)))
        for name, cls in split_classes().items()
    }


def split_identity(split: Any) -> str | None:
    """What a split adds to its models' fingerprints: ``<Class>/v<version>`` above
    version 1, None at 1 (the code of the committed boards)."""
    version = int(getattr(split, "version", 1))
    return None if version == 1 else f"{type(split).__name__}/v{version}"
