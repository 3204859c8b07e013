"""Fine-tuning datasets from the Hugging Face hub, used only when no local file is found.

Local files in their original layout are the primary source (they are what the papers
used, and they work offline); the hub is a convenience when a user is online and has not
downloaded a dataset. Whether the hub can be reached is decided in at most one short
connection attempt, and never when ``HF_HUB_OFFLINE``/``HF_DATASETS_OFFLINE`` is set, so an
offline run learns at once that a split is missing instead of waiting on library retries.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Any

from posharness.base.errors import DataError
from posharness.tasks.finetune.data.labels import score
from posharness.tasks.finetune.types import DatasetSpec, Example, HubSource, LoadedSplit

HUB_HOST = "huggingface.co"
_OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
_reachable: dict[str, bool] = {}


@dataclass(frozen=True)
class HubSplit:
    """One split to fetch: ``split`` is the hub's split name, e.g. "validation_matched"."""

    source: HubSource
    split: str


def hub_offline() -> bool:
    return any(
        os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}
        for name in _OFFLINE_VARIABLES
    )


def hub_reachable(timeout: float = 3.0) -> bool:
    """False at once when offline mode is set; else one TCP connect, remembered per process."""
    if hub_offline():
        return False
    if HUB_HOST not in _reachable:
        try:
            with socket.create_connection((HUB_HOST, 443), timeout=timeout):
                _reachable[HUB_HOST] = True
        except OSError:
            _reachable[HUB_HOST] = False
    return _reachable[HUB_HOST]


def load_hub_split(
    spec: DatasetSpec, split: str, hub_split: HubSplit, limit: int | None = None
) -> LoadedSplit:
    """Fetch one split through ``datasets`` and validate it like a local file.

    Rows with label -1 (no gold label: SNLI's "-", GLUE's unlabelled test) are dropped.
    The content hash is the dataset's fingerprint, which changes with the hub revision.
    """
    source = hub_split.source
    table = _load_table(spec, split, hub_split)
    where = f"hub:{source.display} split {hub_split.split}"
    columns = set(table.column_names)
    needed = [source.text_a, source.label] + ([source.text_b] if source.text_b else [])
    missing = [name for name in needed if name not in columns]
    if missing:
        raise DataError(
            f"{where}: no column {missing[0]!r} (columns: {', '.join(sorted(columns))}): "
            f"the hub dataset changed; download {spec.title} from {spec.download_hint} instead"
        )
    examples: list[Example] = []
    dropped: dict[str, int] = {}
    for row_number, row in enumerate(table):
        if limit is not None and len(examples) >= limit:
            break
        raw = row[source.label]
        if raw is None or raw == -1:
            dropped["no gold label"] = dropped.get("no gold label", 0) + 1
            continue
        row_where = f"{where} row {row_number}"
        example_id = str(row["idx"]) if "idx" in columns else f"{hub_split.split}:{row_number}"
        examples.append(
            Example(
                id=example_id,
                text_a=_text(row[source.text_a]),
                text_b=_text(row[source.text_b]) if source.text_b else None,
                label=_hub_label(spec, source, raw, row_where),
            )
        )
    if not examples:
        raise DataError(
            f"{where}: no labelled examples: download {spec.title} from "
            f"{spec.download_hint} and point at the files instead"
        )
    fingerprint = str(getattr(table, "_fingerprint", "") or "unknown")
    return LoadedSplit(
        name=split,
        examples=tuple(examples),
        source=f"hub:{source.display}@{fingerprint}",
        content_hash=fingerprint,
        dropped=dropped,
    )


def _load_table(spec: DatasetSpec, split: str, hub_split: HubSplit) -> Any:
    source = hub_split.source
    try:
        import datasets

        return datasets.load_dataset(source.path, source.config, split=hub_split.split)
    except Exception as error:  # noqa: BLE001 - any library failure becomes one line
        reason = (str(error).strip().splitlines() or [""])[0][:200]
        raise DataError(
            f"{spec.name}: cannot load split {split!r} from the hub ({source.display}, split "
            f"{hub_split.split}: {type(error).__name__}: {reason}): get {spec.title} from "
            f"{spec.download_hint} and put it under --data-dir DIR as {spec.folder}/"
        ) from None


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _hub_label(spec: DatasetSpec, source: HubSource, raw: Any, where: str) -> int | float:
    if spec.is_regression:
        return score(raw, spec.range, where, f"column {source.label!r}")
    if source.label_map is not None:
        name = source.label_map.get(raw)
        if name not in spec.labels:
            raise DataError(
                f"{where}: unknown label {raw!r} in column {source.label!r}: expected one of "
                f"{', '.join(repr(key) for key in source.label_map)}: the hub dataset changed"
            )
        return spec.labels.index(name)
    if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw < len(spec.labels):
        raise DataError(
            f"{where}: label {raw!r} in column {source.label!r} is not a class index "
            f"0..{len(spec.labels) - 1}: the hub dataset changed"
        )
    return raw
