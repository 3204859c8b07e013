"""One word-swap probe set, built only when planned and only once per inputs.

A probe set is a pure function of (the SNLI file's bytes and name, the shuffle seed, the
builder's version, the probe): ``probes.build_probes`` says so and its provenance records
it. So a set is kept on disk under the hash of exactly those inputs, in the run's cache
folder (``--cache-dir``, by default ``$POSHARNESS_CACHE`` or the user's; nowhere under
``--no-cache``), and a later plan reads its size from the kept summary
instead of parsing ten thousand SNLI trees again (issue 40, part 4: a plan of
``shuffle_sr`` alone rebuilt all six sets, about a minute, every time). Planning reads
only the summary; the records are read when a cell runs.

Within one process the SNLI file is read once and each sentence parsed once, shared by
every probe planned from it. The cache only saves time: a folder that cannot be written
costs a rebuild next time, never an error.
"""

from __future__ import annotations

import json
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from posharness.base.errors import DataError, OutputError
from posharness.tasks.shuffle.probes import BUILDER, SUMMARY, build_probes, read_probe

FOLDER = "shuffle-probes"
_SOURCES: dict[tuple[str, int, int], Any] = {}  # (path, size, mtime) -> SnliSource
_PARSED: dict[str, dict[Any, Any]] = {}  # source sha256 -> parse memo shared by probes
_SETS: dict[tuple[Any, ...], ProbeSet] = {}


@dataclass
class ProbeSet:
    """One probe's set: its summary (``build_probes``'s, for this probe) and its records,
    read from ``path`` on first use when it came from the cache."""

    probe: str
    summary: dict[str, Any]
    path: Path | None = None
    _records: list[dict[str, Any]] | None = field(default=None, repr=False)

    @property
    def size(self) -> int:
        return int(self.summary["probes"][self.probe]["size"])

    @property
    def excluded(self) -> dict[str, int]:
        return dict(self.summary["probes"][self.probe]["excluded"])

    @property
    def identity(self) -> dict[str, Any]:
        """What a cell's data identity records of the set (as before the cache)."""
        return {key: self.summary[key] for key in ("source_sha256", "seed", "builder")}

    def records(self) -> list[dict[str, Any]]:
        if self._records is None:
            assert self.path is not None
            self._records = read_probe(self.path, self.probe)
        return self._records


def probe_set(source: Path, seed: int, probe: str, cache_root: Path | None) -> ProbeSet:
    """``probe``'s set built from ``source`` with ``seed``: from memory, then from
    ``cache_root/shuffle-probes`` (None: no disk cache), else built and kept there."""
    from posharness.storage.hashing import hash_file, hash_obj

    if not source.is_file():
        _read(source)  # raises read_snli's one-line error for a missing file
    sha = hash_file(source)
    inputs = {"source_sha256": sha, "name": source.name, "seed": seed, "builder": BUILDER}
    key = (hash_obj({**inputs, "probe": probe}), str(cache_root))
    if key in _SETS:
        return _SETS[key]
    folder = cache_root / FOLDER / key[0][:32] if cache_root is not None else None
    kept = _from_cache(folder, probe)
    if kept is None:
        build = build_probes(_read(source), seed, [probe], parsed=_PARSED.setdefault(sha, {}))
        kept = ProbeSet(probe, build.summary, None, build.records[probe])
        if folder is not None and kept.size:
            _keep(build, folder)
    _SETS[key] = kept
    return kept


def _read(source: Path) -> Any:
    from posharness.tasks.shuffle.snli import read_snli

    if not source.is_file():
        return read_snli(source)
    stat = source.stat()
    key = (str(source.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _SOURCES:
        _SOURCES[key] = read_snli(source)
    return _SOURCES[key]


def _from_cache(folder: Path | None, probe: str) -> ProbeSet | None:
    """The kept set, or None when absent or unreadable (then it is rebuilt)."""
    if folder is None:
        return None
    path = folder / f"{probe}.jsonl"
    try:
        summary = json.loads((folder / SUMMARY).read_text(encoding="utf-8"))
        int(summary["probes"][probe]["size"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return ProbeSet(probe, summary, path) if path.is_file() else None


def _keep(build: Any, folder: Path) -> None:
    from posharness.tasks.shuffle.probes import write_probes

    # the cache only saves time: a folder that cannot be written means a rebuild next time
    with suppress(OutputError, DataError, OSError):
        write_probes(build, folder)
