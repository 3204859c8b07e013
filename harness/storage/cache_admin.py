"""What the feature cache holds, and removing whole entries of it (``posharness cache``).

The cache root holds one folder per *kind*. Most kinds shard their entries into folders
named by the key's first two hex characters: ``FeatureCache`` writes
``<kind>/ab/abcd….safetensors``, the report's figure cache ``report-figures/ab/….svg``,
SentEval a folder of chunk files per store, ``sentence-features/ab/abcd…/``. A few keep
their entries directly under the kind (:data:`UNSHARDED_KINDS`). An entry is one file or
one folder of either layout, and it goes whole: a folder is first renamed to a temporary
name (atomic, so no reader ever finds half a feature store at the entry's path) and then
deleted; a prune killed in between leaves a tagged temporary that the next run sweeps.

Concurrent writers are left alone. A temporary a live process is writing (its name carries
host and pid, :func:`posharness.storage.io.temporary_tag`), a folder entry that holds one, and a
staging folder without a tag (``pe-init/<name>.tmp``) written in the last
:data:`STAGING_GRACE_S` seconds are counted but never removed; lock files and other
hidden files are neither counted nor removed. The kind and shard folders stay too: a
writer creates its folder and then its temporary in it, and must not find it gone between.
Symlinks are never followed, so nothing outside the root is measured or removed.

Age is the last write (the newest file of a folder entry). Reading an entry does not
refresh it, so ``--older-than`` removes what was computed long ago, used since or not;
for a content-addressed cache that only costs a recomputation.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from posharness.base.errors import OptionError, OutputError
from posharness.storage.io import in_use_by_live_process, temporary_tag

# Kinds whose entries sit directly in the kind folder (every other kind shards by key):
# random initialisations of zoo models, spaCy parses of dep_heads, the file-hash memo, the
# word-swap probe sets (``<inputs digest>/``, tasks/shuffle/probe_sets.py).
UNSHARDED_KINDS = frozenset({"pe-init", "spacy-parses", "file-hashes", "shuffle-probes"})
# An untagged staging name (``<name>.tmp``) written this recently may be a live write.
STAGING_GRACE_S = 3600.0

_SHARD = re.compile(r"[0-9a-f]{2}")
_DURATION = re.compile(r"(?P<amount>\d+(?:\.\d+)?)(?P<unit>[smhdw])")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


@dataclass(frozen=True)
class Entry:
    kind: str
    path: Path
    bytes: int
    modified: float  # seconds since the epoch: the newest file of the entry
    in_use: bool = False  # a live process writes it or in it: never removed


@dataclass(frozen=True)
class KindSummary:
    kind: str
    entries: int
    bytes: int
    oldest: float | None  # None: the kind holds no entry
    newest: float | None
    in_use: int = 0


@dataclass(frozen=True)
class CacheScan:
    """Every kind folder of a cache (empty ones too) and every entry in them."""

    root: Path
    kinds: tuple[str, ...]
    entries: tuple[Entry, ...]

    @property
    def bytes(self) -> int:
        return sum(e.bytes for e in self.entries)

    def by_kind(self) -> list[KindSummary]:
        return summarize_entries(self.entries, self.kinds)


@dataclass(frozen=True)
class Selection:
    chosen: tuple[Entry, ...]  # what a prune removes
    in_use: tuple[Entry, ...]  # matched too, but a live process is writing them


def parse_duration(text: str) -> float:
    """``90m``, ``12h``, ``30d``, ``2w`` → seconds; one line naming the form otherwise."""
    match = _DURATION.fullmatch(text.strip().lower())
    if match is None:
        raise OptionError(
            f"--older-than {text!r}: give a number and a unit, e.g. 90m, 12h, 30d or 2w"
        )
    return float(match["amount"]) * _SECONDS[match["unit"]]


def check_cache_folder(root: Path) -> None:
    """Refuse a folder that is missing or holds anything but kind folders at its top, so
    ``prune --all`` on a mistyped ``--cache-dir`` (a home or project folder) removes nothing."""
    if not root.is_dir():
        what = "is not a folder" if root.exists() else "does not exist"
        raise OptionError(
            f"cache folder {root} {what}: pass the --cache-dir a run used, or set "
            "POSHARNESS_CACHE (see docs/cache.md)"
        )
    for item in _children(root):
        if not item.is_dir():
            stray = f"holds the file {item.name} beside its kind folders"
        elif not _looks_like_kind(item):
            stray = f"holds the folder {item.name}, which is not a cache kind"
        else:
            continue
        raise OptionError(
            f"{root} does not look like a posharness cache (it {stray}): check --cache-dir"
        )


def scan(root: Path, now: float | None = None) -> CacheScan:
    """Check ``root`` is a cache and list its kinds and entries; ``now`` dates staging."""
    check_cache_folder(root)
    now = time.time() if now is None else now
    folders = [p for p in _children(root) if p.is_dir()]
    found = [e for folder in folders for e in _entries_of(folder, now)]
    return CacheScan(root, tuple(f.name for f in folders), tuple(found))


def summarize_entries(found: Iterable[Entry], kinds: Iterable[str] = ()) -> list[KindSummary]:
    """Count, size, oldest and newest write per kind; ``kinds`` adds empty ones."""
    by_kind: dict[str, list[Entry]] = {kind: [] for kind in kinds}
    for entry in found:
        by_kind.setdefault(entry.kind, []).append(entry)
    return [
        KindSummary(
            kind,
            len(items),
            sum(e.bytes for e in items),
            min((e.modified for e in items), default=None),
            max((e.modified for e in items), default=None),
            sum(e.in_use for e in items),
        )
        for kind, items in sorted(by_kind.items())
    ]


def select(
    cache: CacheScan,
    kinds: Iterable[str] = (),
    older_than_s: float | None = None,
    everything: bool = False,
    now: float | None = None,
) -> Selection:
    """The entries a prune removes: of the ``kinds`` (all when empty) and last written more
    than ``older_than_s`` before ``now``; ``everything`` for all. A selector is required."""
    kinds = tuple(dict.fromkeys(kinds))
    if everything and (kinds or older_than_s is not None):
        raise OptionError("--all selects every entry: leave out --kind and --older-than, or --all")
    if not kinds and older_than_s is None and not everything:
        raise OptionError(
            "cache prune needs a selector: --kind KIND, --older-than AGE (e.g. 30d) or --all"
        )
    for kind in kinds:
        if kind not in cache.kinds:
            close = difflib.get_close_matches(kind, cache.kinds, n=1)
            guess = f" (did you mean {close[0]}?)" if close else ""
            listed = ", ".join(cache.kinds) or "none"
            raise OptionError(f"--kind {kind}: not in this cache{guess}; its kinds: {listed}")
    cutoff = None
    if older_than_s is not None:
        cutoff = (time.time() if now is None else now) - older_than_s
    matched = [
        e
        for e in cache.entries
        if (not kinds or e.kind in kinds) and (cutoff is None or e.modified < cutoff)
    ]
    return Selection(
        tuple(e for e in matched if not e.in_use), tuple(e for e in matched if e.in_use)
    )


def remove(chosen: Iterable[Entry]) -> list[Entry]:
    """Remove each entry whole and return those removed; one already gone (another prune,
    a writer replacing it) is skipped, and one that is in use is never touched."""
    removed: list[Entry] = []
    for entry in chosen:
        if entry.in_use or entry.path.is_symlink():
            continue  # a symlink swapped in since the scan is never followed
        try:
            if entry.path.is_dir():
                trash = entry.path.with_name(f".{entry.path.name}.{temporary_tag()}trash")
                entry.path.rename(trash)  # the entry leaves its path in one step
                shutil.rmtree(trash)
            else:
                entry.path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise OutputError(
                f"cannot remove {entry.path} ({exc.strerror}) after removing {len(removed)} "
                "entries: fix its permissions and rerun the prune"
            ) from exc
        removed.append(entry)
    return removed


def _children(folder: Path) -> list[Path]:
    """Visible items of ``folder``, symlinks left out (never followed out of the cache)."""
    try:
        items = sorted(folder.iterdir())
    except FileNotFoundError:
        return []  # removed by another prune since it was listed
    return [p for p in items if not p.name.startswith(".") and not p.is_symlink()]


def _looks_like_kind(folder: Path) -> bool:
    if folder.name in UNSHARDED_KINDS:
        return True
    return all(p.is_dir() and _SHARD.fullmatch(p.name) for p in _children(folder))


def _entries_of(kind_folder: Path, now: float) -> Iterator[Entry]:
    sharded = kind_folder.name not in UNSHARDED_KINDS
    for child in _items(kind_folder):
        if sharded and child.is_dir() and _SHARD.fullmatch(child.name):
            candidates = _items(child)
        else:
            candidates = [child]
        for item in candidates:
            entry = _entry(kind_folder.name, item, now)
            if entry is not None:
                yield entry


def _items(folder: Path) -> list[Path]:
    """Every item of a kind or shard folder: visible ones, and the hidden temporaries
    that writers leave (a killed run's are entries, a live run's in use). Other hidden
    files, lock files among them, are never counted or removed."""
    try:
        items = sorted(folder.iterdir())
    except FileNotFoundError:
        return []
    return [
        p for p in items if not p.is_symlink() and (not p.name.startswith(".") or ".ph-" in p.name)
    ]


def _entry(kind: str, item: Path, now: float) -> Entry | None:
    measured = _measure(item)
    if measured is None:
        return None  # renamed or removed by a writer while the cache was scanned
    size, modified, holds_live_temporary = measured
    staging = item.name.endswith(".tmp") and not item.name.startswith(".")
    in_use = (
        holds_live_temporary
        or in_use_by_live_process(item)
        or (staging and now - modified < STAGING_GRACE_S)
    )
    return Entry(kind, item, size, modified, in_use)


def _measure(item: Path) -> tuple[int, float, bool] | None:
    """(bytes, newest write, holds a live process's temporary) of a file or folder."""
    try:
        stat = item.lstat()
    except FileNotFoundError:
        return None
    if not item.is_dir():
        return stat.st_size, stat.st_mtime, False
    size, newest, live = 0, stat.st_mtime, False
    for folder, _, files in os.walk(item, followlinks=False):
        for name in files:
            path = Path(folder, name)
            try:
                file_stat = path.lstat()
            except FileNotFoundError:
                continue
            size += file_stat.st_size
            newest = max(newest, file_stat.st_mtime)
            live = live or in_use_by_live_process(path)
    return size, newest, live
