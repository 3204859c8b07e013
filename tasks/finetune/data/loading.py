"""Splits from disk (or the hub) to model inputs, memoised across the cells of one run.

A run of three modes reads, validates and hashes each file once: planning validates it
(so a bad row fails before any model loads) and the cells reuse what planning read.
Planning imports this module, so it imports no torch: the engine (and torch with it) is
imported only when a split is encoded for a model.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from posharness.contracts.adapter import ModelAdapter
    from posharness.tasks.finetune.engine import EncodedSplit
    from posharness.tasks.finetune.types import DatasetSpec, LoadedSplit

LIMIT_SEED = 0  # --limit keeps the same examples in every mode and run
_LOADED: dict[tuple[Any, ...], LoadedSplit] = {}


def load_cached(dataset: DatasetSpec, split: str, source: Any) -> LoadedSplit:
    from posharness.tasks.finetune.data.locate import load_split

    if isinstance(source, Path):
        stat = source.stat()
        key: tuple[Any, ...] = (dataset.name, split, str(source), stat.st_mtime_ns, stat.st_size)
    else:
        key = (dataset.name, split, repr(source))
    if key not in _LOADED:
        _LOADED[key] = load_split(dataset, split, source)
    return _LOADED[key]


def limited(split: LoadedSplit, limit: int | None) -> LoadedSplit:
    """At most ``limit`` examples, drawn evenly (a file's first rows may share one label)."""
    from dataclasses import replace

    if limit is None or len(split.examples) <= limit:
        return split
    keep = np.sort(np.random.default_rng(LIMIT_SEED).choice(len(split.examples), limit, False))
    return replace(split, examples=tuple(split.examples[i] for i in keep))


def encode_split(
    model: ModelAdapter, split: LoadedSplit, dataset: DatasetSpec, max_length: int
) -> EncodedSplit:
    from posharness.tasks.finetune.engine import EncodedSplit

    examples = split.examples
    pairs = any(e.text_b is not None for e in examples)
    items = model.tokenize_pairs(
        [e.text_a for e in examples],
        [e.text_b or "" for e in examples] if pairs else None,
        max_length,
    )
    dtype = np.float32 if not dataset.labels else np.int64
    labels = np.array([e.label for e in examples], dtype=dtype)
    return EncodedSplit(split.name, items, labels, [e.id for e in examples])
