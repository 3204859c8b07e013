"""Fine-tuning data: find each split of a dataset, then read and validate it.

Usage::

    spec = dataset("rte")
    sources = locate_splits(spec, data_dir=Path("/data"), folder=None, files={})
    train = load_split(spec, "train", sources["train"], limit=1000)

A split is looked for, in order, in a file named for it explicitly, in the user's folder
for the dataset, under ``data_dir`` in the conventional layout (``glue_data/RTE``, ...),
and last on the Hugging Face hub when it can be reached. Finding the splits touches no file
contents, so a missing split is reported before any model is loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from posharness.base.errors import DataError, OptionError
from posharness.storage.hashing import hash_file, hash_files
from posharness.tasks.finetune.data.catalogue import DATASETS, READERS
from posharness.tasks.finetune.data.hub import (
    HubSource,
    HubSplit,
    hub_offline,
    hub_reachable,
    load_hub_split,
)
from posharness.tasks.finetune.data.readers import SplitReader
from posharness.tasks.finetune.types import DatasetSpec, Example, LoadedSplit

__all__ = [
    "DATASETS",
    "DatasetSpec",
    "Example",
    "HubSource",
    "HubSplit",
    "LoadedSplit",
    "dataset",
    "load_split",
    "locate_splits",
]


def dataset(name: str) -> DatasetSpec:
    """The catalogue entry of a task name; KeyError for names it does not hold."""
    return DATASETS[name]


def locate_splits(
    spec: DatasetSpec, data_dir: Path | None, folder: str | None, files: Mapping[str, str]
) -> dict[str, Path | HubSplit]:
    """Where each split of ``spec.splits`` comes from: a local path, or a hub split.

    Priority per split: ``files[split]`` (a file; a folder for SentEval's two-file
    datasets) > ``folder`` (the dataset's files in their original names) > ``data_dir``
    under ``spec.folder`` (or a shorter tail of it, e.g. ``DIR/RTE`` when DIR is
    ``glue_data``) > the hub. An explicit file or folder that does not exist is an error
    at once rather than a silent fall-back, since it is most likely a typo.
    """
    reader = _reader(spec)
    unknown = sorted(set(files) - set(spec.splits))
    if unknown:
        raise OptionError(
            f"{spec.name} has no split {unknown[0]!r}: its splits are "
            f"{', '.join(spec.splits)} (--task-arg {spec.name}.<split>=FILE)"
        )
    user_folder = Path(folder).expanduser() if folder is not None else None
    if user_folder is not None and not user_folder.is_dir():
        raise DataError(
            f"{user_folder}: no such folder: --task-arg {spec.name}.path must name the folder "
            f"holding the {spec.title} files"
        )
    bases = _candidate_folders(spec, data_dir, user_folder)
    found = {
        split: _locate_split(spec, reader, split, bases, files.get(split)) for split in spec.splits
    }
    missing = [split for split, source in found.items() if source is None]
    if missing:  # every missing split in one line, so one fix covers them all
        raise _missing_split_error(spec, reader, missing, bases)
    return {split: source for split, source in found.items() if source is not None}


def load_split(
    spec: DatasetSpec, split: str, source: Path | HubSplit, limit: int | None = None
) -> LoadedSplit:
    """Read and validate one split; ``limit`` keeps the first N examples after dropping.

    Rows dropped on purpose are counted in ``LoadedSplit.dropped``; with a limit, only the
    rows read before it was reached are counted (the rest of the file is not read).
    """
    if split not in spec.splits:
        raise OptionError(
            f"{spec.name} has no split {split!r}: its splits are {', '.join(spec.splits)}"
        )
    if limit is not None and limit < 1:
        raise OptionError(f"limit {limit} for {spec.name}: give a positive number of examples")
    if isinstance(source, HubSplit):
        return load_hub_split(spec, split, source, limit)
    reader = _reader(spec)
    path = Path(source)
    examples: list[Example] = []
    dropped: dict[str, int] = {}
    for row in reader.read(path, spec):
        if isinstance(row, str):
            dropped[row] = dropped.get(row, 0) + 1
            continue
        examples.append(row)
        if limit is not None and len(examples) >= limit:
            break
    names = reader.files_for(split)
    if not examples:
        skipped = ", ".join(f"{count} {reason}" for reason, count in dropped.items())
        raise DataError(
            f"{_shown(path, names)}: no examples in the {split} split of {spec.title}"
            f"{f' (skipped: {skipped})' if skipped else ''}: check that this is the right file"
        )
    if len(names) > 1:
        content_hash = hash_files([path / name for name in names], root=path)
    else:
        content_hash = hash_file(path)
    return LoadedSplit(split, tuple(examples), _shown(path, names), content_hash, dropped)


def _reader(spec: DatasetSpec) -> SplitReader:
    if spec.name not in READERS:
        raise DataError(
            f"{spec.name}: no reader for local files of this dataset: load it from the hub, "
            "or add a reader to posharness.tasks.finetune.data.catalogue.READERS"
        )
    return READERS[spec.name]


def _candidate_folders(
    spec: DatasetSpec, data_dir: Path | None, user_folder: Path | None
) -> list[Path]:
    bases = [user_folder] if user_folder is not None else []
    if data_dir is not None:
        root = Path(data_dir).expanduser()
        parts = PurePosixPath(spec.folder).parts
        bases += [root.joinpath(*parts[start:]) for start in range(len(parts))]
    unique: list[Path] = []
    for base in bases:
        if base not in unique:
            unique.append(base)
    return unique


def _locate_split(
    spec: DatasetSpec, reader: SplitReader, split: str, bases: list[Path], explicit: str | None
) -> Path | HubSplit | None:
    """Where ``split`` is, or None when nowhere (an explicit path that is wrong raises)."""
    names = reader.files_for(split)
    if explicit is not None:
        return _explicit_path(spec, split, Path(explicit).expanduser(), names)
    for base in bases:
        if all((base / name).is_file() for name in names):
            return base / names[0] if len(names) == 1 else base
    hub = spec.hub
    if hub is not None and split in hub.splits and hub_reachable():
        return HubSplit(hub, hub.splits[split])
    return None


def _missing_split_error(
    spec: DatasetSpec, reader: SplitReader, missing: list[str], bases: list[Path]
) -> DataError:
    """One line for the missing splits: where the first was looked for and how to fix it;
    the others are named (``nor dev, test``) so the user does not learn of them one run
    at a time."""
    split = missing[0]
    names = reader.files_for(split)
    also = f" (nor {', '.join(missing[1:])})" if len(missing) > 1 else ""
    hub = spec.hub
    shown = ", ".join(_shown(base / names[0] if len(names) == 1 else base, names) for base in bases)
    looked = f"looked for {shown}" if shown else "no --data-dir given"
    hub_note = ""
    if hub is not None and split in hub.splits:
        why = "is not tried in offline mode" if hub_offline() else "cannot be reached"
        hub_note = f" and the hub copy ({hub.display}) {why}"
    wanted = names[0] if len(names) == 1 else "{" + ",".join(names) + "}"
    argument = "FILE" if len(names) == 1 else "DIR"
    return DataError(
        f"{spec.name}: no {split} split found{also}: {looked}{hub_note}: get "
        f"{spec.title} from {spec.download_hint}, then pass --data-dir DIR holding "
        f"{spec.folder}/{wanted}, or --task-arg {spec.name}.{split}={argument}, or "
        f"--task-arg {spec.name}.path=DIR"
    )


def _explicit_path(spec: DatasetSpec, split: str, path: Path, names: tuple[str, ...]) -> Path:
    if len(names) == 1 and path.is_file():
        return path
    if len(names) > 1 and path.is_dir() and all((path / name).is_file() for name in names):
        return path
    if len(names) == 1:
        reason = "is a directory" if path.is_dir() else "no such file"
        expected = f"the {spec.title} {split} file (originally {names[0]})"
    else:
        reason = "is not a folder holding " + ", ".join(names)
        expected = f"the folder holding {', '.join(names)}"
    raise DataError(f"{path}: {reason}: --task-arg {spec.name}.{split} must name {expected}")


def _shown(path: Path, names: tuple[str, ...]) -> str:
    """A split's location as text: the file, or a folder's files as ``DIR/{a,b}``."""
    return str(path) if len(names) == 1 else f"{path}/{{{','.join(names)}}}"
