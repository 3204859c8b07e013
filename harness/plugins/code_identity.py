"""The identity of the code that defines a plugin's object: a declared version, or a hash
of its normalised source.

Why (issue 29, part 4): a cell's id covered the model's weights, config, tokenizer and
dtype and the task's declared version, but not the code that turns them into numbers.
Multiplying a plugin PE's bias by -100 and rerunning said "0 cell(s) run, 6 already
finished", and a fresh folder over the same cache mixed old attention metrics with a
recomputed positional term. So whatever code a cell's numbers depend on enters its
identity: built-ins through explicit versions guarded by a recorded-hash test, plugins
(whose authors cannot be trusted to bump a version) through a hash of their source.

The hash is over a *normalised* source: each file's syntax tree, with module, class and
function docstrings removed. Comments, docstrings, blank lines and formatting do not
count (positions are left out), so reformatting or documenting a plugin keeps its
finished cells; any edit of its code makes new ones. The tree is written by our own
walker rather than ``ast.dump``, whose text changed between Python versions (3.13 stopped
printing empty fields) and would otherwise give one file two digests; empty fields and
the fields newer Pythons add empty for old code (``type_params``) are left out. Files
are named by their path relative to their common folder, so the digest holds no machine
path and is the same on every computer (and in a board moved between them).
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from posharness.base.errors import OptionError

__all__ = [
    "code_identity",
    "module_closure",
    "normalised_source",
    "source_digest",
    "source_files",
]

_DOC_HOLDERS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
# sha256 of a file's bytes -> sha256 of its normalised text: key_of asks once per cell, and
# reading a small file is cheap where parsing it is not. (Keyed by content, not mtime: two
# edits within one clock tick of the file system must not share a digest.)
_memo: dict[str, str] = {}


def _module_of(obj: Any) -> ModuleType | None:
    if isinstance(obj, ModuleType):
        return obj
    return sys.modules.get(getattr(obj, "__module__", None) or "")


def _file_of(obj: Any) -> Path:
    module = _module_of(obj)
    found = getattr(module, "__file__", None)
    if found is None:
        try:
            found = inspect.getsourcefile(obj)
        except TypeError:
            found = None
    if not found or not str(found).endswith(".py") or not Path(found).is_file():
        name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", repr(obj))
        raise OptionError(
            f"cannot find the source file of {name} to identify its code: define it in a "
            ".py file, or declare its code version"
        )
    return Path(found).resolve()


def source_files(obj: Any) -> list[Path]:
    """The ``.py`` files that define ``obj`` (a class, function or module), sorted.

    When its module belongs to a package, every ``.py`` file of that package's top-level
    folder (a scheme may use a helper module beside it); the top-level package is found
    by import name, so ``posharness.models.hf.adapter`` gives the ``models/`` folder even
    though ``posharness`` itself lives elsewhere. A module outside any package (an
    ``--include`` file) is its single file.
    """
    file = _file_of(obj)
    module = _module_of(obj)
    name = getattr(module, "__name__", "") or ""
    parts = name.split(".")
    for depth in range(1, len(parts) + 1):
        package = sys.modules.get(".".join(parts[:depth]))
        for folder in getattr(package, "__path__", None) or ():
            root = Path(folder).resolve()
            if root in file.parents:
                return sorted(path for path in root.rglob("*.py") if path.is_file())
    return [file]


def _dump(node: Any) -> str:
    """A syntax tree as text, the same on every Python >= 3.11: node names and non-empty
    fields, no positions, no ``kind`` (``u""``) or type comments."""
    if isinstance(node, ast.AST):
        fields = (
            f"{name}={_dump(value)}"
            for name, value in ast.iter_fields(node)
            if value is not None and value != [] and name not in ("kind", "type_comment")
        )
        return f"{type(node).__name__}({','.join(fields)})"
    if isinstance(node, list):
        return f"[{','.join(_dump(item) for item in node)}]"
    return repr(node)


def normalised_source(text: str) -> str:
    """The syntax tree of ``text`` as text, without docstrings (the raw text if it does
    not parse)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    for node in ast.walk(tree):
        if not isinstance(node, _DOC_HOLDERS) or not node.body:
            continue
        first = node.body[0]
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            node.body = node.body[1:] or [ast.Pass()]
    return _dump(tree)


def _file_digest(path: Path) -> str:
    data = path.read_bytes()
    key = hashlib.sha256(data).hexdigest()
    if key not in _memo:
        text = data.decode("utf-8", errors="replace")
        _memo[key] = hashlib.sha256(normalised_source(text).encode("utf-8")).hexdigest()
    return _memo[key]


def source_digest(files: Iterable[str | Path]) -> str:
    """sha256 (16 hex) of the normalised source of ``files``, each named by its path
    relative to their common folder (no machine path enters)."""
    paths = sorted({Path(file).resolve() for file in files})
    if not paths:
        raise OptionError("no source files to identify: give at least one .py file")
    root = Path(os.path.commonpath([str(path.parent) for path in paths]))
    digest = hashlib.sha256()
    for relative, path in sorted((path.relative_to(root).as_posix(), path) for path in paths):
        digest.update(f"{relative}\0{_file_digest(path)}\n".encode())
    return digest.hexdigest()[:16]


def module_closure(
    start: Iterable[str | Path], package: str, folder: str | Path, exclude: Iterable[str] = ()
) -> list[Path]:
    """``start`` and every module of ``package`` (found in ``folder``) they import,
    transitively, imports inside functions included; ``exclude``: file names left out.

    For a built-in's recorded hash: the split ``rope`` is ``rope.py`` plus the shared
    machinery (``core.py``, ``fused.py`` ...) it runs on, so an edit there counts too.
    """
    folder = Path(folder).resolve()
    skip = set(exclude)
    found: list[Path] = []
    todo = [Path(path).resolve() for path in start]
    while todo:
        path = todo.pop()
        if path in found or path.name in skip or not path.is_file():
            continue
        found.append(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                if name == package or not name.startswith(package + "."):
                    continue
                relative = Path(*name[len(package) + 1 :].split("."))
                for candidate in (folder / f"{relative}.py", folder / relative / "__init__.py"):
                    if candidate.is_file():
                        todo.append(candidate)
    return sorted(found)


def code_identity(obj: Any, version: str | int | None = None) -> str:
    """``v<version>`` when the code declares a version, else ``src:<digest>`` of the files
    that define ``obj`` (:func:`source_files`)."""
    if version is not None:
        return f"v{version}"
    return f"src:{source_digest(source_files(obj))}"
