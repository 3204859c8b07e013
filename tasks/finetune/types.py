"""The typed stages of fine-tuning data: a dataset's description, its examples, a loaded split.

Kept in a module of their own, with no imports beyond the standard library, so that the
readers, the hub loader and the catalogue can all build them without importing each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Example:
    """One labelled sentence or sentence pair, as the fine-tuning engine consumes it."""

    id: str  # stable and unique within its split: the dataset's own id, or "<file>:<line>"
    text_a: str
    text_b: str | None  # None for single-sentence tasks
    label: int | float  # class index into DatasetSpec.labels, or the score (regression)


@dataclass(frozen=True)
class LoadedSplit:
    """A validated split plus the identity of the data behind it, for results and caches."""

    name: str  # "train", "dev", "dev_matched", "test", "all", ...
    examples: tuple[Example, ...]
    source: str  # a file path, a folder's files as "DIR/{a,b}", or "hub:<id>/<config>@<fp>"
    content_hash: str  # sha256 of the file bytes, or the hub dataset's fingerprint
    dropped: dict[str, int] = field(default_factory=dict)  # rows skipped on purpose, by reason


@dataclass(frozen=True)
class HubSource:
    """Where a dataset lives on the hub and which of its columns hold text and label."""

    path: str  # hub dataset id, e.g. "nyu-mll/glue"
    config: str | None  # e.g. "rte"; None for single-config datasets
    splits: Mapping[str, str]  # our split -> hub split (any `datasets` split expression)
    text_a: str
    text_b: str | None
    label: str
    # hub label value -> our label name; None: the hub's class index is ours
    label_map: Mapping[Any, str] | None = None

    def __hash__(self) -> int:  # the mappings are unhashable; hash their items instead
        label_items = tuple(sorted((self.label_map or {}).items(), key=repr))
        return hash(
            (self.path, self.config, tuple(sorted(self.splits.items())), self.text_a)
            + (self.text_b, self.label, label_items)
        )

    @property
    def display(self) -> str:
        return f"{self.path}/{self.config}" if self.config else self.path


@dataclass(frozen=True)
class DatasetSpec:
    """What a fine-tuning dataset is and where it conventionally lives; no file access."""

    name: str  # task name, e.g. "rte", "sickr"
    title: str  # "GLUE RTE", "SentEval MR", ...
    labels: tuple[str, ...]  # label names in index order; () for regression
    splits: tuple[str, ...]  # the splits this dataset has locally, in order
    folder: str  # conventional location under --data-dir, e.g. "glue_data/RTE"
    download_hint: str  # one short clause: where to get the files
    hub: HubSource | None  # how to load it through `datasets` when online
    range: tuple[float, float] | None = None  # regression score range; readers reject others

    @property
    def is_regression(self) -> bool:
        return not self.labels
