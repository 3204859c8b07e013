"""Pretraining text from a Hugging Face ``datasets`` dataset: saved, local files, or the hub.

``--corpus`` names one of (docs/pretraining.md, "Reading the corpus"):

* a folder written by ``Dataset.save_to_disk`` / ``DatasetDict.save_to_disk`` (it holds
  ``state.json`` or ``dataset_dict.json``), read with ``datasets.load_from_disk``;
* a ``.parquet`` / ``.arrow`` file, or a folder of them, read with ``datasets.load_dataset``;
* ``hf:NAME[:CONFIG]`` — a hub dataset (``hf:wikimedia/wikipedia:20231101.en``), downloaded
  and converted to Arrow in the Hugging Face cache by ``load_dataset`` (not streamed: the
  split must fit on disk, and later runs read the cache); with a local folder or file as
  NAME, anything ``load_dataset`` reads (CSV, JSON lines).

``@SPLIT`` (default ``train``) and ``#COLUMN`` (default ``text``) may follow any of them:
``hf:bookcorpus@train#text``, ``corpora/wiki@validation``. A path that exists as given is
a path, so ``@`` and ``#`` inside a real file name still work. Each row of the column is a
document, cleaned like a WikiExtractor ``--json`` line (lines stripped, blank ones dropped),
and rows stream from the memory-mapped Arrow table a batch at a time, so reading a corpus
never holds it in memory.

Identity (``dataset_identity``): a sha256 over what the rows are read from — the split's
Arrow files for a saved or hub dataset (a hub dataset's ``_fingerprint`` depends on the
cache it was built in; its Arrow files are its content), the source files for local
parquet/CSV/JSON — together with the split and the column.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from posharness.base.errors import DataError

PREFIX = "hf:"
DEFAULT_SPLIT, DEFAULT_COLUMN = "train", "text"
_DATA_SUFFIXES = (".parquet", ".arrow")
_FILE_BUILDERS = {".parquet": "parquet", ".arrow": "arrow", ".csv": "csv", ".json": "json"}
_FILE_BUILDERS |= {".jsonl": "json"}
_ROWS_PER_BATCH = 1024
_PROBE_SECONDS = 3.0
LOCAL_COPY_FIX = (
    "save a copy where the hub is reachable (load_dataset(...).save_to_disk(FOLDER)) and "
    "pass --corpus FOLDER"
)


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset corpus: where it comes from (``kind``), which split and which column."""

    given: str  # the --corpus value as written
    kind: str  # "saved" (save_to_disk), "files" (load_dataset on a local path), "hub"
    source: str  # the folder, file or hub name
    config: str | None
    split: str
    column: str
    split_given: bool = False


def dataset_spec(corpus: str | os.PathLike[str]) -> DatasetSpec | None:
    """The dataset ``corpus`` names, or None when it is plain text (or names nothing)."""
    given = os.fspath(corpus)
    hub = given.startswith(PREFIX)
    body = given[len(PREFIX) :] if hub else given
    if not hub and Path(body).exists():
        kind = _local_kind(Path(body))
        return DatasetSpec(given, kind, body, None, DEFAULT_SPLIT, DEFAULT_COLUMN) if kind else None
    rest, column = _suffix(body, "#")
    rest, split = _suffix(rest, "@")
    local = bool(rest) and Path(rest).exists()
    if hub and not local:
        name, _, config = rest.partition(":")
        if not name:
            raise DataError(f"--corpus {given}: no dataset name after hf: (hf:NAME[:CONFIG])")
        kind: str | None = "hub"
    else:
        name, config = rest, None
        kind = _local_kind(Path(rest)) if local else None
        if hub and kind != "saved":
            kind = "files"  # hf:FOLDER: whatever load_dataset reads (CSV, JSON, ...)
    if kind is None:
        return None
    return DatasetSpec(
        given, kind, name, config or None, split or DEFAULT_SPLIT, column or DEFAULT_COLUMN,
        split is not None,
    )  # fmt: skip


def dataset_documents(spec: DatasetSpec) -> Iterator[str]:
    """Each row's text, in order, a batch of rows at a time (never the whole column)."""
    table = _text_table(spec)
    rows = found = 0
    rows_of = table.select_columns([spec.column]).with_format(None)  # plain str, whatever format
    for batch in rows_of.iter(batch_size=_ROWS_PER_BATCH):
        for value in batch[spec.column]:
            rows += 1
            text = "\n".join(s.strip() for s in (value or "").splitlines() if s.strip())
            if text:
                found += 1
                yield text
    if not found:
        raise DataError(
            f"dataset {spec.given} has no text: {rows} rows of column {spec.column!r} in split "
            f"{spec.split!r}, every one empty: name the column that holds the text with "
            f"#COLUMN (columns: {', '.join(table.column_names)}) or another @SPLIT"
        )


def dataset_identity(spec: DatasetSpec) -> str:
    """sha256 over the split, the column and the bytes the rows are read from."""
    digest = hashlib.sha256(json.dumps([spec.kind, spec.split, spec.column]).encode() + b"\0")
    if spec.kind == "files":
        root = Path(spec.source)
        update_with_files(digest, root, _local_files(root))
        return digest.hexdigest()
    table = _text_table(spec)
    files = [Path(entry["filename"]) for entry in table.cache_files]
    if not files:
        raise DataError(
            f"dataset {spec.given} has no files to fingerprint (held in memory): save it with "
            "save_to_disk and pass the folder"
        )
    update_with_files(digest, None, files)
    return digest.hexdigest()


def dataset_description(spec: DatasetSpec) -> dict[str, Any]:
    """What the corpus identity of a dataset hashes, for a prepared corpus's manifest."""
    hashed = {
        "saved": "sha256 over split, column and the split's Arrow files (names, sizes, bytes)",
        "files": "sha256 over split, column and the source files (relative names, sizes, bytes)",
        "hub": "sha256 over split, column and the split's Arrow cache files (names, sizes, bytes)",
    }[spec.kind]
    kind = {
        "saved": "datasets save_to_disk folder",
        "files": "datasets local files",
        "hub": "datasets hub dataset",
    }[spec.kind]
    # A local source by its name only: the identity hash says which bytes, and a path of the
    # machine that prepared it would follow the manifest into every copied study (issue 39).
    source = spec.given if spec.kind == "hub" else Path(spec.source).name
    described = {"kind": kind, "source": source, "split": spec.split, "column": spec.column}
    return described | {"hashed": hashed}


def update_with_files(digest: Any, root: Path | None, files: Iterable[Path]) -> None:
    """Feed each file's name (relative to ``root``, else its base name), size and bytes."""
    for file in files:
        if root is None:
            name = file.name
        else:
            name = file.relative_to(root).as_posix() if root.is_dir() else ""
        digest.update(name.encode() + b"\0" + str(file.stat().st_size).encode() + b"\0")
        with file.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)


def _suffix(text: str, mark: str) -> tuple[str, str | None]:
    head, found, tail = text.rpartition(mark)
    return (head, tail) if found and head and tail and "/" not in tail else (text, None)


def _local_kind(path: Path) -> str | None:
    """ "saved" for a save_to_disk folder, "files" for parquet/arrow data, else None."""
    if path.is_dir() and (
        (path / "dataset_dict.json").is_file() or (path / "state.json").is_file()
    ):
        return "saved"
    if path.is_file():
        return "files" if path.suffix.lower() in _DATA_SUFFIXES else None
    if path.is_dir() and any(p.suffix.lower() in _DATA_SUFFIXES for p in _local_files(path)):
        return "files"
    return None


def _local_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    files = [
        p
        for p in path.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
    ]
    return sorted(files, key=lambda p: p.relative_to(path).as_posix())


def _text_table(spec: DatasetSpec) -> Any:
    """The split, checked to have a text column (one line naming the columns otherwise)."""
    table = _load_hub(spec) if spec.kind == "hub" else _load_local(spec)
    if spec.column not in table.column_names:
        columns = ", ".join(table.column_names) or "none"
        texts = [c for c in table.column_names if _is_text(table.features[c])]
        raise DataError(
            f"dataset {spec.given} has no column {spec.column!r} (columns: {columns}): name the "
            f"text column with #COLUMN, e.g. --corpus {_with_column(spec, texts[0])}"
            if texts
            else f"dataset {spec.given} has no column {spec.column!r} and no text column "
            f"(columns: {columns}): point --corpus at a dataset with text"
        )
    dtype = getattr(table.features[spec.column], "dtype", None)
    if dtype not in ("string", "large_string"):
        raise DataError(
            f"dataset {spec.given}: column {spec.column!r} holds {dtype or 'nested values'}, "
            "not text: name the text column with #COLUMN"
        )
    return table


def _is_text(feature: Any) -> bool:
    return getattr(feature, "dtype", None) in ("string", "large_string")


def _with_column(spec: DatasetSpec, column: str) -> str:
    """``spec`` spelled as a --corpus value again, naming ``column`` instead of its own.

    Built from the parts, not by appending to ``spec.given``: that already ends in the
    missing column, which the suggestion would otherwise repeat (``ds#nope#text``).
    """
    source = f"{PREFIX}{spec.source}" if spec.given.startswith(PREFIX) else spec.source
    if spec.config:
        source += f":{spec.config}"
    if spec.split_given:
        source += f"@{spec.split}"
    return f"{source}#{column}"


def _load_local(spec: DatasetSpec) -> Any:
    import datasets

    try:
        if spec.kind == "saved":
            loaded = datasets.load_from_disk(spec.source)
        elif Path(spec.source).is_file():  # load_dataset takes a folder or a builder name
            builder = _FILE_BUILDERS.get(Path(spec.source).suffix.lower(), "text")
            loaded = datasets.load_dataset(builder, data_files={"train": spec.source})
        else:
            loaded = datasets.load_dataset(spec.source, spec.config)
    except Exception as exc:  # a damaged file, an unknown format: datasets' own errors
        raise DataError(
            f"cannot read dataset {spec.given} ({type(exc).__name__}: {_first_line(exc)}): "
            "point --corpus at a save_to_disk folder or a folder of parquet files"
        ) from None
    return _split(spec, loaded)


def _split(spec: DatasetSpec, loaded: Any) -> Any:
    if not hasattr(loaded, "keys"):  # one Dataset, saved without splits
        if spec.split_given and spec.split != DEFAULT_SPLIT:
            raise DataError(
                f"dataset {spec.given} is one Dataset without splits: drop @{spec.split}"
            )
        return loaded
    if spec.split not in loaded:
        raise DataError(
            f"dataset {spec.given} has no split {spec.split!r} (splits: "
            f"{', '.join(loaded.keys())}): choose one with @SPLIT"
        )
    return loaded[spec.split]


@lru_cache(maxsize=4)
def _load_hub_cached(name: str, config: str | None, split: str) -> Any:
    import datasets

    return datasets.load_dataset(name, config, split=split)


def _load_hub(spec: DatasetSpec) -> Any:
    """The split from the hub or the Hugging Face cache; never a long retry when offline."""
    offline = _offline()
    if not offline:
        _probe_hub(spec)
    try:
        return _load_hub_cached(spec.source, spec.config, spec.split)
    except ConnectionError as exc:
        raise DataError(
            f"cannot load dataset {spec.source} from the Hugging Face hub "
            f"({'offline mode is on' if offline else _first_line(exc)}) and it is not in the "
            f"Hugging Face cache: {LOCAL_COPY_FIX}"
        ) from None
    except ValueError as exc:  # an unknown split or config names the ones there are
        raise DataError(f"dataset {spec.given}: {_first_line(exc)}") from None
    except Exception as exc:  # DatasetNotFoundError and kin: the hub answered no
        raise DataError(
            f"cannot load dataset {spec.given} ({type(exc).__name__}: {_first_line(exc)}): "
            "check the name, or pass a local copy with --corpus FOLDER"
        ) from None


def _offline() -> bool:
    from huggingface_hub import constants

    flags = (os.environ.get(v, "") for v in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))
    return bool(constants.HF_HUB_OFFLINE) or any(
        f.strip().upper() in {"1", "ON", "YES", "TRUE"} for f in flags
    )


def _hub_endpoint() -> str:
    from huggingface_hub import constants

    return constants.ENDPOINT


def _probe_hub(spec: DatasetSpec) -> None:
    """One TCP connection with a short timeout: without it an unreachable hub costs ~25 s of
    retries before ``load_dataset`` gives up. Skipped behind a proxy, which knows the way."""
    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return
    url = urlsplit(_hub_endpoint())
    host, port = url.hostname or "", url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((host, port), timeout=_PROBE_SECONDS).close()
    except OSError as exc:
        raise DataError(
            f"the Hugging Face hub ({host}) is unreachable ({exc.strerror or exc}), so dataset "
            f"{spec.source} cannot be loaded: {LOCAL_COPY_FIX}, or set HF_HUB_OFFLINE=1 to "
            "use a copy in the Hugging Face cache"
        ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
