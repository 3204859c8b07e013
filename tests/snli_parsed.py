"""Small SNLI files with Penn-Treebank parses, made from templates over the tiny vocabulary.

Every premise template holds phrases of several lengths (3..6 words) and a transitive
verb, so each probe gets items; the words come from ``WORDS`` so the tiny BERT knows them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

NOUNS = ("man", "woman", "dog", "cat", "child", "boat", "car", "tree", "house", "ball")
ADJECTIVES = ("red", "blue", "big", "small", "old", "young")
PLACES = ("park", "street", "city", "river", "road", "stage", "water")
VERBS = ("plays", "looks", "walks", "sits", "stands", "runs")
LABELS = ("entailment", "neutral", "contradiction")


def _np(words: list[str], tags: list[str]) -> str:
    return "(NP " + " ".join(f"({t} {w})" for w, t in zip(words, tags, strict=True)) + ")"


def premise(rng: random.Random) -> tuple[str, str]:
    """(text, parse) of "the ADJ NOUN VERB a ADJ ADJ NOUN in the ADJ ADJ PLACE." and kin."""
    subject = ["the", rng.choice(ADJECTIVES), rng.choice(NOUNS)]
    obj = ["a", *rng.sample(ADJECTIVES, 2), rng.choice(NOUNS)]
    place = ["the", *rng.sample(ADJECTIVES, 2), rng.choice(PLACES)]
    verb = rng.choice(VERBS)
    subject_np = _np(subject, ["DT", "JJ", "NN"])
    object_np = _np(obj, ["DT", "JJ", "JJ", "NN"])
    place_pp = f"(PP (IN in) {_np(place, ['DT', 'JJ', 'JJ', 'NN'])})"
    if rng.random() < 0.5:
        # a 6-word NP instead: "a ADJ NOUN with the PLACE"
        obj, extra = ["a", rng.choice(ADJECTIVES), rng.choice(NOUNS)], ["the", rng.choice(PLACES)]
        inner = _np(obj, ["DT", "JJ", "NN"])
        object_np = f"(NP {inner} (PP (IN with) {_np(extra, ['DT', 'NN'])}))"
        obj = [*obj, "with", *extra]
    parse = f"(ROOT (S {subject_np} (VP (VBZ {verb}) {object_np} {place_pp}) (. .)))"
    text = " ".join([*subject, verb, *obj, "in", *place]) + "."
    return text, parse


def hypothesis(rng: random.Random) -> tuple[str, str]:
    subject = ["a", rng.choice(NOUNS)]
    verb = rng.choice(VERBS)
    place = ["the", rng.choice(PLACES)]
    parse = (
        f"(ROOT (S {_np(subject, ['DT', 'NN'])} (VP (VBZ {verb}) (PP (IN at) "
        f"{_np(place, ['DT', 'NN'])})) (. .)))"
    )
    return " ".join([*subject, verb, "at", *place]) + ".", parse


def snli_records(size: int, seed: int, prefix: str) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(size):
        p_text, p_parse = premise(rng)
        h_text, h_parse = hypothesis(rng)
        rows.append(
            {
                "pairID": f"{prefix}{i}",
                "gold_label": LABELS[i % 3],
                "sentence1": p_text,
                "sentence1_parse": p_parse,
                "sentence2": h_text,
                "sentence2_parse": h_parse,
            }
        )
    return rows


def write_jsonl(path: Path, rows: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_parsed_snli(root: Path, train: int = 30, dev: int = 12, test: int = 24) -> Path:
    """An SNLI folder (``snli/snli_1.0``) under ``root`` with parsed train, dev and test."""
    folder = root / "snli" / "snli_1.0"
    for seed, (name, size) in enumerate((("train", train), ("dev", dev), ("test", test))):
        write_jsonl(folder / f"snli_1.0_{name}.jsonl", snli_records(size, seed, name))
    return root
