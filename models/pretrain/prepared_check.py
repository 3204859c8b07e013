"""The prepared corpus's files, and the cheap check that they are what its manifest says.

Split from ``prepared.py`` (which writes and opens preparations): the names of the files,
the one-line damage error, reading the manifest, and the sampled content hash checked on
every open (issue 39: a damaged preparation used to end in a raw traceback or a silent
re-tokenisation).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from posharness.base.errors import DataError

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
BLOCKS = "blocks.int32"


def damaged(folder: Path, what: str) -> DataError:
    return DataError(
        f"prepared corpus {folder} is damaged ({what}): delete the folder and prepare it again"
    )


def read_manifest(folder: Path) -> dict[str, Any]:
    """The manifest of ``folder``; damage raises one line."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise damaged(folder, f"{MANIFEST} is missing") from None
    except OSError as exc:
        raise damaged(folder, f"{MANIFEST} cannot be read ({exc.strerror})") from None
    except ValueError:
        raise damaged(folder, f"{MANIFEST} is not valid JSON") from None
    if not isinstance(manifest, dict):
        raise damaged(folder, f"{MANIFEST} is not a JSON object")
    if manifest.get("format") != FORMAT_VERSION:  # the key holds the format: an edited manifest
        raise damaged(
            folder, f"its {MANIFEST} says format {manifest.get('format')!r}, not {FORMAT_VERSION}"
        )
    return manifest


# The content check on open. The file is cut into chunks of SAMPLE_CHUNK bytes and the first
# SAMPLE_BYTES of each are hashed: 1,024 reads of 4 KiB (4 MiB) for a 1 GiB corpus, against
# 1 GiB for a full hash. It catches a truncated, zeroed or overwritten region that touches a
# sample, and a different file of the same size; rows swapped between unsampled places need
# ``verify`` (the full hash).
SAMPLE_CHUNK = 1 << 20
SAMPLE_BYTES = 4096


def content_summary(path: Path, *, full: bool = False) -> dict[str, Any]:
    """The sampled hash, the sampled ids' maximum and (``full``) the whole file's sha256."""
    sampled, full_hash = hashlib.sha256(), hashlib.sha256()
    largest, smallest = -1, 0
    size = Path(path).stat().st_size
    fd = os.open(path, os.O_RDONLY)
    try:
        for offset in range(0, size, SAMPLE_CHUNK):
            data = os.pread(fd, min(SAMPLE_BYTES, size - offset), offset)
            sampled.update(data)
            ids = np.frombuffer(data[: len(data) - len(data) % 4], dtype=np.int32)
            if ids.size:
                largest = max(largest, int(ids.max()))
                smallest = min(smallest, int(ids.min()))
        if full:
            offset = 0
            while chunk := os.pread(fd, 1 << 24, offset):
                full_hash.update(chunk)
                offset += len(chunk)
    finally:
        os.close(fd)
    summary: dict[str, Any] = {
        "sampled_sha256": sampled.hexdigest(),
        "sampled_max_id": largest,
        "sampled_min_id": smallest,
    }
    if full:
        summary["sha256"] = full_hash.hexdigest()
    return summary


def check_content(
    folder: Path, manifest: dict[str, Any], *, vocabulary: int | None = None, verify: bool = False
) -> None:
    """Refuse, in one line, a blocks file whose content is not what the manifest recorded.

    Manifests written before the content hash (no ``content`` entry) are checked for size
    only, as they were; their sampled ids are still checked against ``vocabulary``.
    """
    recorded = manifest.get("content") or {}
    summary = content_summary(folder / BLOCKS, full=verify and "sha256" in recorded)
    if recorded.get("sampled_sha256", summary["sampled_sha256"]) != summary["sampled_sha256"]:
        raise damaged(folder, f"the sampled hash of {BLOCKS} differs from its {MANIFEST}")
    if verify and recorded.get("sha256", summary.get("sha256")) != summary.get("sha256"):
        raise damaged(folder, f"the sha256 of {BLOCKS} differs from its {MANIFEST}")
    if summary["sampled_min_id"] < 0:
        raise damaged(folder, f"it holds the negative token id {summary['sampled_min_id']}")
    if "max_id" in recorded and summary["sampled_max_id"] > int(recorded["max_id"]):
        raise damaged(
            folder,
            f"it holds token id {summary['sampled_max_id']}, above the largest its {MANIFEST} "
            f"recorded ({recorded['max_id']})",
        )
    largest = max(int(recorded.get("max_id", -1)), summary["sampled_max_id"])
    if vocabulary is not None and largest >= vocabulary:
        raise damaged(
            folder,
            f"it holds token id {largest}, beyond the tokenizer's {vocabulary}-token vocabulary",
        )
