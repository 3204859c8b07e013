"""Reading a SentEval probing file and refusing a bad one before any model loads.

The format is SentEval's own (``data/probing/*.txt``): ``split<TAB>label<TAB>sentence``,
split ∈ tr/va/te (Conneau et al. 2018, §3). Official files and the folders written by
``posharness build-probes senteval`` share it, so one reader serves both. Every line is
checked, because a probe trained on a file with a stray label or a split holding one class
gives a number that looks fine and means nothing.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from posharness.base.errors import DataError
from posharness.tasks.senteval.catalog import SPLITS, TOPCONST_OTHER, ProbingTask

OFFICIAL_FOLDER = ("senteval", "probing")  # under --data-dir, as SentEval's data/probing/
_TOPCONST_LABEL = re.compile(r"^[^\s_]+(?:_[^\s_]+)*$")


@dataclass(frozen=True)
class ProbingData:
    """One task's examples, in file order; ``ids`` are the file's 1-based line numbers."""

    task: str
    path: Path
    sha256: str
    splits: np.ndarray  # str, one of SPLITS per example
    labels: np.ndarray  # str
    sentences: tuple[str, ...]
    ids: np.ndarray  # int, the line number of each example

    def split(self, code: str) -> np.ndarray:
        """Positions (into the arrays above) of one split's examples."""
        return np.flatnonzero(self.splits == code)

    @property
    def classes(self) -> list[str]:
        """The label set, in a stable order: the catalogue's where fixed, else sorted."""
        return sorted(set(self.labels.tolist()))


def probing_path(task: ProbingTask, probes: str, data_dir: Path | None) -> Path:
    """Where a task's file is: ``probes`` (a folder or the file itself) or the official
    layout under ``--data-dir``; a one-line error naming both ways when neither is given."""
    if probes:
        folder = Path(probes).expanduser()
        return folder if folder.is_file() else folder / task.file
    if data_dir is None:
        raise DataError(
            f"{task.name} needs SentEval probing data: pass --data-dir DIR (with "
            f"DIR/{'/'.join(OFFICIAL_FOLDER)}/{task.file}) or --task-arg "
            f"{task.name}.probes=FOLDER from `posharness build-probes senteval --out FOLDER`"
        )
    return data_dir.joinpath(*OFFICIAL_FOLDER, task.file)


def read_probing_file(task: ProbingTask, path: Path) -> ProbingData:
    """All examples of ``path``, validated line by line; raises one ``DataError`` line."""
    from posharness.storage.hashing import hash_file

    if not path.is_file():
        hint = "build one with `posharness build-probes senteval --out FOLDER`"
        raise DataError(f"{task.name}: probing file {path} does not exist ({hint})")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 (byte {exc.start}); SentEval files are UTF-8") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({exc.strerror})") from None
    splits, labels, sentences, ids = [], [], [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        split, label, sentence = _fields(task, path, number, line)
        splits.append(split)
        labels.append(label)
        sentences.append(sentence)
        ids.append(number)
    data = ProbingData(
        task.name,
        path,
        hash_file(path),
        np.array(splits),
        np.array(labels),
        tuple(sentences),
        np.array(ids, dtype=np.int64),
    )
    _check_splits(task, data)
    return data


def _fields(task: ProbingTask, path: Path, number: int, line: str) -> tuple[str, str, str]:
    where = f"{path}:{number}"
    fields = line.rstrip("\r").split("\t")
    if len(fields) != 3:
        raise DataError(
            f"{where}: {len(fields)} tab-separated fields, expected 3 (split, label, sentence)"
        )
    split, label, sentence = (f.strip() for f in fields)
    if split not in SPLITS:
        raise DataError(f"{where}: unknown split {split!r}, expected one of {', '.join(SPLITS)}")
    if not sentence:
        raise DataError(f"{where}: empty sentence")
    if not label:
        raise DataError(f"{where}: empty label")
    _check_label(task, where, label, sentence)
    return split, label, sentence


def _check_label(task: ProbingTask, where: str, label: str, sentence: str) -> None:
    """Closed label sets by membership; WC and TopConst by what their labels must be."""
    if task.labels is not None:
        if label not in task.labels:
            raise DataError(
                f"{where}: label {label!r} is not one of {task.name}'s labels "
                f"({', '.join(task.labels)}); is this the {task.file} file?"
            )
    elif task.name == "wc":
        if label.lower() not in sentence.lower().split():  # official labels are lowercased
            raise DataError(
                f"{where}: word-content label {label!r} does not occur in the sentence; "
                "WC labels are the one target word each sentence contains"
            )
    elif task.name == "topconst" and label != TOPCONST_OTHER and not _TOPCONST_LABEL.match(label):
        raise DataError(
            f"{where}: top-constituent label {label!r} is not a '_'-joined constituent "
            f"sequence (e.g. NP_VP_.) or {TOPCONST_OTHER}"
        )


def _check_splits(task: ProbingTask, data: ProbingData) -> None:
    """Every split present with at least two classes; no more classes than the paper's."""
    for code in SPLITS:
        if not (data.splits == code).any():
            raise DataError(
                f"{data.path}: split {code!r} is missing; a probing file needs train (tr), "
                "dev (va) and test (te) lines"
            )
    for code in SPLITS:
        labels = sorted(set(data.labels[data.split(code)].tolist()))
        if len(labels) < 2:
            raise DataError(
                f"{data.path}: split {code!r} has one class only ({labels[0]!r}); "
                "a probe cannot be trained or scored on it"
            )
    classes = Counter(data.labels.tolist())
    if len(classes) > task.max_classes:
        raise DataError(
            f"{data.path}: {len(classes)} distinct labels, but {task.name} has at most "
            f"{task.max_classes}; is this the {task.file} file?"
        )
