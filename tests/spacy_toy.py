"""A real spaCy dependency parser, trained in seconds on toy trees, for tests of raw text.

No mocks: the pipeline is a genuine spaCy parser fitted to a few dozen short sentences
(det/amod/nsubj/dobj/prep/pobj/punct), saved to disk and loaded back like a user's.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from pathlib import Path

from posharness.tasks.dep_heads.tree import ROOT, Sentence

SUBJECTS = [("the", "dog"), ("a", "girl"), ("the", "boy"), ("a", "cat")]
VERBS = ["chased", "saw", "liked"]
OBJECTS = [("a", "ball"), ("the", "bird"), ("the", "man")]
ADJECTIVES = ["big", "small", "old"]
PLACES = ["park", "garden", "street"]


def toy_treebank() -> list[Sentence]:
    """36 gold trees from three templates; heads 1-based, spaCy's ROOT stored as root."""
    trees = []
    combos = list(itertools.product(SUBJECTS, VERBS, OBJECTS))
    for (d1, n1), verb, (d2, n2) in combos[:12]:
        trees.append(
            (
                [d1, n1, verb, d2, n2, "."],
                [2, 3, 0, 5, 3, 3],
                ["det", "nsubj", "root", "det", "dobj", "punct"],
            )
        )
    for index, ((d1, n1), verb, (d2, n2)) in enumerate(combos[12:24]):
        adjective = ADJECTIVES[index % len(ADJECTIVES)]
        trees.append(
            (
                [d1, adjective, n1, verb, d2, n2, "."],
                [3, 3, 4, 0, 6, 4, 4],
                ["det", "amod", "nsubj", "root", "det", "dobj", "punct"],
            )
        )
    for index, ((d1, n1), verb, (d2, n2)) in enumerate(combos[24:36]):
        place = PLACES[index % len(PLACES)]
        trees.append(
            (
                [d1, n1, verb, d2, n2, "in", "the", place, "."],
                [2, 3, 0, 5, 3, 3, 8, 6, 3],
                ["det", "nsubj", "root", "det", "dobj", "prep", "det", "pobj", "punct"],
            )
        )
    return [
        Sentence(f"toy:{k}", tuple(words), tuple(heads), tuple(deps), k)
        for k, (words, heads, deps) in enumerate(trees, start=1)
    ]


def train_parser(sentences: Sequence[Sentence], folder: Path, iterations: int = 25) -> Path:
    """Fit ``spacy.blank("en")`` + parser to the gold trees and save it as a pipeline folder."""
    import spacy
    from spacy.training import Example

    started = time.perf_counter()
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("parser")
    examples = [
        Example.from_dict(
            nlp.make_doc(" ".join(sentence.words)),
            {
                "heads": [i if h == ROOT else h - 1 for i, h in enumerate(sentence.heads)],
                "deps": ["ROOT" if r == "root" else r for r in sentence.relations],
            },
        )
        for sentence in sentences
    ]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(iterations):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    nlp.to_disk(folder)
    print(f"toy parser trained in {time.perf_counter() - started:.2f} s")
    return folder
