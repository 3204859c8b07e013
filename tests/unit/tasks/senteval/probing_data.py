"""Small probing files in SentEval's format, written by the tests (no download)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from posharness.tasks.senteval.catalog import BY_NAME, TASKS
from tests.conftest import WORDS

PLAIN = WORDS[:40]
SIZES = {"tr": 48, "va": 16, "te": 16}


def _label(task: str, words: list[str], rng: np.random.Generator, k: int) -> str:
    labels = BY_NAME[task].labels
    if task == "sentlen":
        return str(min(5, max(0, (len(words) - 5) // 4)))
    if task == "wc":
        return words[0]
    if task == "topconst":
        return ("NP_VP_.", "S_NP_VP_.", "OTHER")[k % 3]
    assert labels is not None
    return labels[k % len(labels)]


def probing_lines(task: str, seed: int = 0, sizes: dict[str, int] | None = None) -> list[str]:
    """``split<TAB>label<TAB>sentence`` lines, every class in every split."""
    rng = np.random.default_rng(seed)
    lines = []
    for split, n in (sizes or SIZES).items():
        for k in range(n):
            length = 5 + (k * 7) % 24 if task == "sentlen" else int(rng.integers(5, 12))
            words = [str(w) for w in rng.choice(PLAIN, size=length)]
            if task == "wc":
                words[0] = ("dog", "cat", "tree")[k % 3]
                words[1:] = [w for w in words[1:] if w not in ("dog", "cat", "tree")] or ["the"]
            lines.append(f"{split}\t{_label(task, words, rng, k)}\t{' '.join(words)} .")
    return lines


def write_probing_folder(folder: Path, tasks: list[str] | None = None, seed: int = 0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for task in tasks or [t.name for t in TASKS]:
        (folder / BY_NAME[task].file).write_text("\n".join(probing_lines(task, seed)) + "\n")
    return folder
