"""Names a package exports but imports only when first asked for (PEP 562).

``posharness`` and ``posharness.pe`` both keep their import fast (``posharness --help``,
registering a scheme without torch) by loading the contract types and the torch-backed
base classes on first use. The module-level ``__getattr__`` that does it is the same for
both, so it is made here once: a name asked for is imported from the module the table
names, cached in the package's namespace (the next lookup never reaches ``__getattr__``),
and any other name fails as a plain module attribute would.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(
    package: str, lazy: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: ``lazy`` maps each exported name to the module
    that defines it; ``namespace`` is the package's ``globals()``, where a loaded name is
    kept."""

    def __getattr__(name: str) -> Any:
        if name in lazy:
            value = getattr(import_module(lazy[name]), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
