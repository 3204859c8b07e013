"""MR and SUBJ (Pang and Lee 2005, 2004) from SentEval's downstream folder, split once.

Chen et al. (2023, §3.3.1) select "the best model on validation sets to evaluate on the
test set" but neither dataset has an official split (SentEval cross-validates). Our
reading (docs/fidelity.md, "Chen et al.'s controlled experiment"): one seeded shuffle,
80 % train / 10 % dev / 10 % test, the same for every setting and repeat, so that the
settings are compared on the same sentences. The files are already tokenised and lower
cased; tokens are split on white space.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from posharness.base.errors import OptionError

# dataset -> (folder, (file of label 0, file of label 1))
FILES = {
    "mr": ("MR", ("rt-polarity.neg", "rt-polarity.pos")),
    "subj": ("SUBJ", ("subj.objective", "subj.subjective")),
}
SPLIT_SEED = 20230901
FRACTIONS = (0.8, 0.1, 0.1)


@dataclass(frozen=True)
class Dataset:
    name: str
    sentences: list[list[str]]
    labels: np.ndarray  # int64 [N]
    split: np.ndarray  # 0 train, 1 dev, 2 test  [N]
    sha256: str


def downstream_dir(data_dir: Path | None, folder: str = "") -> Path:
    """SentEval's downstream folder: ``folder`` if given, else under ``--data-dir``."""
    if folder:
        return Path(folder).expanduser()
    if data_dir is None:
        raise OptionError(
            "MR/SUBJ not found: pass --data-dir (with senteval/downstream/) or data=FOLDER"
        )
    return Path(data_dir) / "senteval" / "downstream"


def read_dataset(name: str, root: Path, sentences_limit: int | None = None) -> Dataset:
    """Both classes of ``name`` (mr | subj), split once with a fixed seed."""
    if name not in FILES:
        raise OptionError(f"dataset {name!r}: expected one of {', '.join(FILES)}")
    folder, files = FILES[name]
    sentences: list[list[str]] = []
    labels: list[int] = []
    digest = hashlib.sha256()
    for label, filename in enumerate(files):
        path = root / folder / filename
        if not path.is_file():
            raise OptionError(f"{path} not found: SentEval's {folder} files are needed")
        raw = path.read_bytes()
        digest.update(raw)
        for line in raw.decode("latin-1").splitlines():
            tokens = line.split()
            if tokens:
                sentences.append(tokens)
                labels.append(label)
    order = np.random.default_rng(SPLIT_SEED).permutation(len(sentences))
    if sentences_limit is not None:
        order = order[:sentences_limit]
    n = len(order)
    cut_train, cut_dev = int(FRACTIONS[0] * n), int((FRACTIONS[0] + FRACTIONS[1]) * n)
    split = np.zeros(n, dtype=np.int64)
    split[cut_train:cut_dev] = 1
    split[cut_dev:] = 2
    return Dataset(
        name=name,
        sentences=[sentences[i] for i in order],
        labels=np.asarray(labels, dtype=np.int64)[order],
        split=split,
        sha256=digest.hexdigest(),
    )
