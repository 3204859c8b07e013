"""What does the content check cost when a prepared corpus is opened? (issue 39: < 1 s / GB)

Writes a prepared-corpus folder of ``--gib`` GiB of random int32 rows (block size 128) with a
manifest holding its content hashes, then times :func:`load_prepared` (size, manifest,
sampled hash and ids) with the file in the page cache, again after evicting the file from
the cache (``posix_fadvise DONTNEED``, this file only), and once with ``verify=True`` (the
full sha256).

    python benchmarks/prepared_check.py [--gib 1] [--folder DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from posharness.models.pretrain.prepared import BLOCKS, MANIFEST, content_summary, load_prepared

BLOCK = 128
VOCABULARY = 30522


def write_folder(folder: Path, gib: float) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rows = int(gib * (1 << 30)) // (BLOCK * 4)
    rng = np.random.default_rng(0)
    with (folder / BLOCKS).open("wb") as handle:
        for start in range(0, rows, 1 << 16):
            count = min(1 << 16, rows - start)
            rng.integers(0, VOCABULARY, size=(count, BLOCK), dtype=np.int32).tofile(handle)
    summary = content_summary(folder / BLOCKS, full=True)
    manifest = {
        "format": 1,
        "n_blocks": rows,
        "block_size": BLOCK,
        "corpus_sha256": "synthetic",
        "tokenizer_sha256": "synthetic",
        "content": {
            "sha256": summary["sha256"],
            "max_id": VOCABULARY - 1,
            "sampled_sha256": summary["sampled_sha256"],
        },
    }
    (folder / MANIFEST).write_text(json.dumps(manifest))


def evict(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def timed(folder: Path, **options: bool) -> float:
    start = time.perf_counter()
    load_prepared(folder, vocabulary=VOCABULARY, **options)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=1.0)
    parser.add_argument("--folder", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = (args.folder or Path(scratch)) / "blocks128-benchmark"
        write_folder(folder, args.gib)
        warm = [timed(folder) for _ in range(5)]
        cold = []
        for _ in range(3):
            evict(folder / BLOCKS)
            cold.append(timed(folder))
        full = timed(folder, verify=True)
    print(f"{args.gib:g} GiB: open with the sampled check {min(warm) * 1e3:.0f}-"
          f"{max(warm) * 1e3:.0f} ms (page cache), {min(cold) * 1e3:.0f}-{max(cold) * 1e3:.0f} ms "
          f"(evicted); verify=True (full sha256) {full:.2f} s")  # fmt: skip


if __name__ == "__main__":
    main()
