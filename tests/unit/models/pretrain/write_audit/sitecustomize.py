"""A write audit for the processes of a launch that are not its main process.

Put this folder on ``PYTHONPATH`` and list folders in ``POSHARNESS_WRITE_AUDIT`` (joined by
``os.pathsep``): every Python process started then imports this module, and one whose
``RANK`` is set and not 0 (a ``torchrun`` worker other than the main one) reports on
stderr, as ``write-audit rank R: EVENT PATH``, each file or folder under the watched
folders that it

- opens for writing, creates, renames, removes, copies or changes from Python code, whichever
  library does it: the interpreter raises an audit event (``sys.addaudithook``) for
  ``open``, ``os.open``, ``os.mkdir``, ``os.rename``/``replace``, ``os.remove``, the
  ``shutil`` copies and the rest, before the call acts;
- writes with the native writers a checkpoint uses, which raise no such event:
  ``torch.save`` and safetensors' ``save_file`` are wrapped when their modules load.

A Rust tokenizer's ``save`` is native too, but ``save_pretrained`` writes the tokenizer's
other files from Python beside it, so a tokenizer saved by another process is seen. What
stays unseen is a native library the pretraining code does not call writing on its own;
the test also compares the run's files with those of a one-process run.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from typing import Any

_WATCHED = [
    os.path.abspath(p) for p in os.environ.get("POSHARNESS_WRITE_AUDIT", "").split(os.pathsep) if p
]
_RANK = os.environ.get("RANK")

# Events whose path arguments name what is changed (positions in the event's arguments).
_CHANGES = {
    "os.mkdir": (0,),
    "os.rename": (0, 1),  # also os.replace
    "os.remove": (0,),  # also os.unlink
    "os.rmdir": (0,),
    "os.truncate": (0,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.utime": (0,),
    "os.link": (1,),
    "os.symlink": (1,),
    "os.mkfifo": (0,),
    "os.mknod": (0,),
    "shutil.copyfile": (1,),
    "shutil.copymode": (1,),
    "shutil.copystat": (1,),
    "shutil.copytree": (1,),
    "shutil.move": (0, 1),
    "shutil.rmtree": (0,),
    "tempfile.mkstemp": (0,),
    "tempfile.mkdtemp": (0,),
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _watched(path: object) -> str | None:
    if isinstance(path, int) or path is None:  # a file descriptor: its open was seen
        return None
    try:
        full = os.path.abspath(os.fsdecode(path))
    except (TypeError, ValueError):
        return None
    inside = any(full == root or full.startswith(root + os.sep) for root in _WATCHED)
    return full if inside else None


def _report(event: str, path: str) -> None:
    os.write(2, f"write-audit rank {_RANK}: {event} {path}\n".encode())


def _hook(event: str, args: tuple) -> None:
    try:
        if event == "open":
            path, mode, flags = args
            # open() gives its mode string; os.open a permission number and the flags.
            text = mode if isinstance(mode, str) else ""
            writes = any(c in text for c in "wax+") or bool((flags or 0) & _WRITE_FLAGS)
            if writes and (full := _watched(path)):
                _report(event, full)
        elif event in _CHANGES:
            for index in _CHANGES[event]:
                if index < len(args) and (full := _watched(args[index])):
                    _report(event, full)
    except Exception:  # noqa: BLE001 - an audit hook must never break the process it watches
        pass


# Native writers: module -> (function, index of its path argument).
_NATIVE = {"torch.serialization": ("save", 1), "safetensors.torch": ("save_file", 1)}


def _wrapped(module_name: str, function: Any, index: int) -> Any:
    def audited(*args: Any, **kwargs: Any) -> Any:
        target = args[index] if index < len(args) else kwargs.get("f", kwargs.get("filename"))
        if full := _watched(target):
            _report(f"{module_name}.{function.__name__}", full)
        return function(*args, **kwargs)

    return audited


class _NativeWriters(importlib.abc.MetaPathFinder):
    """Wraps the native writers once their module has run (torch.save is looked up on
    ``torch`` after ``torch.serialization`` set it, so both names are replaced)."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name not in _NATIVE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            attribute, index = _NATIVE[name]
            setattr(module, attribute, _wrapped(name, getattr(module, attribute), index))

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if _WATCHED and _RANK not in (None, "0"):
    sys.addaudithook(_hook)
    sys.meta_path.insert(0, _NativeWriters())
