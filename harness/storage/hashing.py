"""Stable content hashes: the identities behind cache keys, fingerprints and data hashes."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_CHUNK = 1 << 20
_file_memo: dict[tuple[str, int, int], str] = {}
_memo_dir: Path | None = None


def remember_file_hashes_in(folder: Path | None) -> None:
    """Keep file hashes on disk between processes, so a rerun does not re-read weights.

    The memo is keyed by (path, size, mtime): a file that changes gets hashed again.
    """
    global _memo_dir
    _memo_dir = folder


def stable_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: equal values give equal text."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def hash_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def hash_obj(obj: Any) -> str:
    return hash_text(stable_json(obj))


def hash_file(path: str | Path) -> str:
    """sha256 of a file's bytes, remembered per (path, size, mtime) within a process."""
    path = Path(path).resolve()
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key in _file_memo:
        return _file_memo[key]
    memo = _memo_dir / f"{hash_obj(key)}.txt" if _memo_dir is not None else None
    if memo is not None and memo.exists():
        value = memo.read_text().strip()
        if len(value) == 64:
            _file_memo[key] = value
            return value
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    _file_memo[key] = digest.hexdigest()
    if memo is not None:
        _write_memo(memo, _file_memo[key])
    return _file_memo[key]


def _write_memo(memo: Path, value: str) -> None:
    from posharness.base.errors import OutputError
    from posharness.storage.io import atomic_write_text

    # The memo is an optimisation: when it cannot be written, hashing again next time is correct.
    with contextlib.suppress(OSError, OutputError):
        atomic_write_text(memo, value)


def hash_files(paths: Iterable[str | Path], root: str | Path | None = None) -> str:
    """One hash over several files, named relative to ``root`` so moving a folder keeps it."""
    entries = []
    for path in sorted(Path(p) for p in paths):
        name = str(path.relative_to(root)) if root is not None else path.name
        entries.append((name, hash_file(path)))
    return hash_obj(entries)
