"""The identity of the code a zoo model runs, for its fingerprint (issue 29, part 4).

A fingerprint of weights, config, tokenizer and dtype says nothing of the code that turns
them into numbers: editing a plugin's bias, or fixing the zoo's attention, reused every
finished cell. So the code enters the fingerprint too:

* the shared encoder (attention, layers, the mode split, the PE API's arithmetic) carries
  ``ENCODER_VERSION``; each built-in scheme its ``register_pe(version=...)``. A test keeps a
  recorded hash of each one's source and fails when the source changes without a bump
  (tests/unit/models/zoo/test_code_versions.py, records in tests/unit/core/code_versions/).
* a plugin scheme is identified by its declared version, else by the hash of its source
  files (``posharness.plugins.code_identity``), so any edit of its code makes new cells.

Version 1 of every built-in is the code that made the committed boards, and adds nothing
to the fingerprint: their ids are unchanged. A bump (or any plugin) adds the code's
identity to the hash.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from posharness.pe import registry
from posharness.plugins.registry import BUILTIN

ENCODER_VERSION = 1
_ZOO = Path(__file__).resolve().parent
_CORE_PE = Path(registry.__file__).resolve().parent
# What every zoo model's numbers depend on besides its scheme: the encoder, and the PE
# API's base classes, arithmetic and mode split. Two groups, each hashed relative to its
# own folder, so the digest is the same in a checkout and in an installed package.
ENCODER_FILES = tuple(
    _ZOO / "encoder" / name
    for name in (
        "attention.py",
        "attenuation.py",
        "config.py",
        "heads.py",
        "layers.py",
        "modeling.py",
        "modes.py",
        "schemes.py",
    )
)
PE_API_FILES = tuple(_CORE_PE / name for name in ("kinds.py", "positions.py", "split.py"))
BASELINE = "v1"


def encoder_digest() -> str:
    """The source hash the recorded-versions test compares with ``ENCODER_VERSION``'s."""
    from posharness.plugins.code_identity import source_digest

    return f"{source_digest(ENCODER_FILES)}+{source_digest(PE_API_FILES)}"


def scheme_files(scheme: Any) -> list[Path]:
    """A built-in scheme's module and the zoo modules it imports (TUPE-R uses the T5 bias)."""
    from posharness.plugins.code_identity import module_closure

    module = Path(inspect.getsourcefile(scheme)).resolve()
    return module_closure([module], "posharness.models.zoo", _ZOO)


def scheme_identity(scheme: Any) -> str:
    """``v<version>`` when declared, else ``src:<hash of its source>`` (plugins only)."""
    declared = registry.declaration(scheme)
    if declared.version is not None:
        return f"v{declared.version}"
    from posharness.plugins.code_identity import code_identity

    return code_identity(scheme)


def current_versions() -> dict[str, tuple[str, str]]:
    """{name: (version, source digest)} of the encoder and every built-in scheme, for the
    recorded-hash test."""
    from posharness.plugins import positional_encodings
    from posharness.plugins.code_identity import source_digest

    found = {"encoder": (str(ENCODER_VERSION), encoder_digest())}
    for entry in positional_encodings.entries():
        declared = registry.declaration(entry.obj)
        if declared.origin == BUILTIN:
            found[declared.name] = (str(declared.version), source_digest(scheme_files(entry.obj)))
    return found
