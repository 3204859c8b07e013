"""Content-addressed cache of encoder outputs that tasks reuse.

A key is the hash of (model fingerprint, mode, input hash, output kind, extra), so two
models can never share an entry (lm-eval #2715) and the same inputs in another mode or
another task's format are separate. Entries are single safetensors files (never pickle):
written to a temporary name in the same folder and renamed, which is atomic, so a
killed run leaves no half-written entry and two processes writing the same key at once
both end with a complete file (one writer's, whole). No lock is needed: a
reader has the old file or the new one open, never a mix, and an entry removed between
the existence check and the read is a miss, not an error.

This is single-process code. Under a data-parallel launch the runner hands tasks a
:class:`posharness.run.launch.SharedCache` instead, whose main process alone answers
whether an entry is there, so every process takes the same branch — read, or compute
together — even while the main process is writing the entry the others are about to ask
for; writes from the other processes are discarded by ``io.atomic_target``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from posharness.base.errors import CacheError, OutputError
from posharness.storage.hashing import hash_obj
from posharness.storage.io import atomic_target

if TYPE_CHECKING:
    import torch

_R = TypeVar("_R")

ENV_VAR = "POSHARNESS_CACHE"
FORMAT = "posharness-cache/1"


def default_cache_dir() -> Path:
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR]).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("posharness"))


# The cache folders of the runs this process is planning, innermost last (``--cache-dir``;
# None: --no-cache). A task's ``data_identity(options, data_dir)`` is not handed the cache,
# yet some tasks keep what planning derives from their data (the word-swap probe sets):
# they keep it in ``run_cache_dir()``, which follows the run's --cache-dir and --no-cache.
_RUN_CACHES: list[Path | None] = []


@contextmanager
def run_cache_dir_set(root: Path | None) -> Iterator[None]:
    """Within the block, ``run_cache_dir()`` is ``root``: the runner wraps its planning in
    it with the run's cache folder (None under ``--no-cache``)."""
    _RUN_CACHES.append(root)
    try:
        yield
    finally:
        _RUN_CACHES.pop()


def run_cache_dir() -> Path | None:
    """The cache folder of the run being planned (None: caching is off); outside a run (a
    task used on its own), ``default_cache_dir()``."""
    return _RUN_CACHES[-1] if _RUN_CACHES else default_cache_dir()


class FeatureCache:
    """Get-or-compute store for dicts of tensors; ``root=None`` disables it (--no-cache)."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self.hits = 0
        self.misses = 0

    @property
    def enabled(self) -> bool:
        return self.root is not None

    @staticmethod
    def key(fingerprint: str, mode: str, input_hash: str, kind: str, extra: Any = None) -> str:
        return hash_obj(
            {
                "fingerprint": fingerprint,
                "mode": mode,
                "input": input_hash,
                "kind": kind,
                "extra": extra,
            }
        )

    def path(self, key: str, kind: str) -> Path:
        assert self.root is not None
        return self.root / kind / key[:2] / f"{key}.safetensors"

    def exists(self, path: Path) -> bool:
        """Whether an entry's file is there; a launch's shared cache asks the main process."""
        return path.exists()

    def load(self, key: str, kind: str) -> dict[str, torch.Tensor] | None:
        from safetensors.torch import load_file

        return self._read(key, kind, lambda path: load_file(path))

    def load_meta(self, key: str, kind: str) -> dict[str, Any] | None:
        """The JSON metadata saved with an entry (None when absent or caching is off)."""
        from safetensors import safe_open

        def meta(path: Path) -> dict[str, Any]:
            with safe_open(str(path), framework="pt") as handle:
                metadata = handle.metadata() or {}
            return json.loads(metadata.get("meta", "{}"))

        return self._read(key, kind, meta)

    def _read(self, key: str, kind: str, read: Callable[[Path], _R]) -> _R | None:
        if self.root is None:
            return None
        path = self.path(key, kind)
        if not self.exists(path):
            return None
        from safetensors import SafetensorError

        try:
            return read(path)
        except FileNotFoundError:
            return None  # another process removed it since the check
        except (SafetensorError, OSError, ValueError) as exc:
            raise CacheError(
                f"cache file {path} is corrupt ({type(exc).__name__}): delete it (or the whole "
                f"cache folder {self.root}) or rerun with --no-cache"
            ) from exc

    def remove(self, key: str, kind: str) -> None:
        """Drop one entry, e.g. a checkpoint no result refers to any more."""
        if self.root is not None:
            self.path(key, kind).unlink(missing_ok=True)

    def save(
        self, key: str, kind: str, tensors: dict[str, torch.Tensor], meta: dict[str, Any]
    ) -> None:
        if self.root is None:
            return
        from safetensors.torch import save_file

        path = self.path(key, kind)
        hint = f"pass a writable --cache-dir, set {ENV_VAR}, or use --no-cache"
        try:
            with atomic_target(path, hint=hint) as tmp:
                contiguous = {name: t.detach().cpu().contiguous() for name, t in tensors.items()}
                meta_text = json.dumps(meta, default=str)
                save_file(contiguous, tmp, metadata={"format": FORMAT, "meta": meta_text})
        except OutputError as exc:
            cause = exc.__cause__
            reason = cause.strerror if isinstance(cause, OSError) else "not writable"
            raise CacheError(
                f"cannot write to the cache folder {self.root} ({reason}): {hint}"
            ) from exc

    def get_or_compute(
        self,
        key: str,
        kind: str,
        compute: Callable[[], dict[str, torch.Tensor]],
        meta: dict[str, Any] | None = None,
    ) -> dict[str, torch.Tensor]:
        cached = self.load(key, kind)
        if cached is not None:
            self.hits += 1
            return cached
        self.misses += 1
        tensors = compute()
        self.save(key, kind, tensors, meta or {})
        return tensors
