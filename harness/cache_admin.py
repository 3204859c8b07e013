"""What the feature cache holds, and removing whole entries of it (``posharness cache``).

The cache is a folder of *kinds* (``identical-word-attention``, ``reference-attention-inputs``,
``sentence-features``, ``pe-init``, ``report-figures``, a family's own…). A kind shards its
entries into two-character folders named by the key's first characters
(``<kind>/ab/abcd….safetensors``, or a folder per entry such as a SentEval feature store),
or keeps them directly under it (``pe-init/<name>/``, ``file-hashes/<digest>.txt``). An
entry is one file or one folder of either layout, and it is removed whole: never half of
a feature store or a random initialisation. A temporary that a live process is writing is
neither counted nor removed, so pruning beside a running job is safe. Its age is its last
write (the newest file in it): an entry that is read but never rewritten ages like one
nobody uses, which is what an age-based prune of a content-addressed cache wants.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from posharness.errors import OptionError
from posharness.io import in_use_by_live_process

_SHARD = re.compile(r"[0-9a-f]{2}")
_DURATION = re.compile(r"(?P<amount>\d+(?:\.\d+)?)(?P<unit>[smhdw])")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


@dataclass(frozen=True)
class Entry:
    kind: str
    path: Path
    bytes: int
    modified: float  # seconds since the epoch, newest file in the entry


@dataclass(frozen=True)
class KindSummary:
    kind: str
    entries: int
    bytes: int
    oldest: float | None
    newest: float | None


def parse_duration(text: str) -> float:
    """``90m``, ``12h``, ``30d``, ``2w`` → seconds; one line naming the form otherwise."""
    match = _DURATION.fullmatch(text.strip().lower())
    if match is None:
        raise OptionError(
            f"--older-than {text!r}: give a number and a unit, e.g. 90m, 12h, 30d or 2w"
        )
    return float(match["amount"]) * _SECONDS[match["unit"]]


def check_cache_folder(root: Path) -> None:
    """Refuse a folder that is missing or holds anything but kind folders at its top:
    ``prune --all`` on a mistyped ``--cache-dir`` must not empty someone's home."""
    if not root.is_dir():
        what = "is not a folder" if root.exists() else "does not exist"
        raise OptionError(
            f"cache folder {root} {what}: pass the --cache-dir a run used, or set "
            "POSHARNESS_CACHE (see `posharness cache info`)"
        )
    strays = [p.name for p in root.iterdir() if not p.is_dir() and not p.name.startswith(".")]
    if strays:
        raise OptionError(
            f"{root} does not look like a posharness cache (it holds the file {strays[0]} "
            "beside its kind folders): check --cache-dir"
        )


def entries(root: Path) -> Iterator[Entry]:
    """Every entry of every kind, symlinks not followed out of the cache."""
    for kind_folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()):
        for item in _items(kind_folder):
            if in_use_by_live_process(item):
                continue
            size, modified = _measure(item)
            yield Entry(kind_folder.name, item, size, modified)


def _items(kind_folder: Path) -> Iterator[Path]:
    for child in sorted(kind_folder.iterdir()):
        if child.is_symlink():
            continue
        if child.is_dir() and _SHARD.fullmatch(child.name):
            yield from (p for p in sorted(child.iterdir()) if not p.is_symlink())
        else:
            yield child


def _measure(item: Path) -> tuple[int, float]:
    if item.is_file():
        stat = item.stat()
        return stat.st_size, stat.st_mtime
    size, newest = 0, item.stat().st_mtime
    for folder, _, files in os.walk(item, followlinks=False):
        for name in files:
            stat = (Path(folder) / name).lstat()
            size += stat.st_size
            newest = max(newest, stat.st_mtime)
    return size, newest


def summarize(found: Iterable[Entry]) -> list[KindSummary]:
    by_kind: dict[str, list[Entry]] = {}
    for entry in found:
        by_kind.setdefault(entry.kind, []).append(entry)
    return [
        KindSummary(
            kind,
            len(items),
            sum(e.bytes for e in items),
            min(e.modified for e in items),
            max(e.modified for e in items),
        )
        for kind, items in sorted(by_kind.items())
    ]


def select(
    root: Path,
    kinds: Iterable[str] = (),
    older_than_s: float | None = None,
    everything: bool = False,
    now: float | None = None,
) -> list[Entry]:
    """The entries a prune would remove; at least one selector is required."""
    kinds = tuple(kinds)
    if not kinds and older_than_s is None and not everything:
        raise OptionError(
            "cache prune needs a selector: --kind KIND, --older-than AGE (e.g. 30d) or --all"
        )
    found = list(entries(root))
    present = sorted({e.kind for e in found} | {p.name for p in root.iterdir() if p.is_dir()})
    unknown = [k for k in kinds if k not in present]
    if unknown:
        listed = ", ".join(present) or "none"
        raise OptionError(f"--kind {unknown[0]}: this cache holds the kinds {listed}")
    cutoff = None if older_than_s is None else (now or time.time()) - older_than_s
    return [
        e
        for e in found
        if (not kinds or e.kind in kinds) and (cutoff is None or e.modified < cutoff)
    ]


def remove(selected: Iterable[Entry]) -> list[Entry]:
    """Remove each entry whole; one that vanished meanwhile (another prune) is skipped."""
    removed = []
    for entry in selected:
        try:
            if entry.path.is_dir():
                shutil.rmtree(entry.path)
            else:
                entry.path.unlink()
        except FileNotFoundError:
            continue
        removed.append(entry)
        _drop_empty_shard(entry.path.parent)
    return removed


def _drop_empty_shard(folder: Path) -> None:
    if _SHARD.fullmatch(folder.name):
        with contextlib.suppress(OSError):  # still holds other entries
            folder.rmdir()


def human_bytes(count: int) -> str:
    value = float(count)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TB"
