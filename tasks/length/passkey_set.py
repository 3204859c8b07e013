"""The passkey retrieval set: per length, documents of exactly that many tokens, each hiding
one person's 5-digit pass key in filler text, and queries that ask for one person's key.

LongEmbed (Zhu et al. 2024, §3.1) adapts Wang et al.'s personalised passkey retrieval
(intfloat/personalized_passkey_retrieval): each candidate document hides a sentence naming
a person and a key, and the query asks for that person's key, so exactly one document of
the 100 answers it. LongEmbed's generator is not public (only its data set is); the
wording here is the personalised form of the passkey sentence of Mohtashami & Jaggi (2023)
that both follow — "{name}'s pass key is {key}. Remember it. {key} is the pass key for
{name}." — and the query "What is the pass key for {name}?". Filler is the harness's
embedded English reference text (models/decompose/reference_text/english.txt), not
LongEmbed's repeated "The grass is green..." lines, so that the filler is prose.

Everything drawn — which names go to which documents, the keys, the depth of the key
sentence, where the filler starts, which documents are asked about — comes from a
generator seeded by (seed, length) before any tokenizer is involved, so the set is the same
text for every model; only its cutting into exactly L tokens depends on the tokenizer.
L counts what the model sees, its special tokens included (as ``max_length`` does).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from posharness.base.errors import OptionError

GENERATOR_VERSION = 1  # bump when the same seed would give other documents
# One hundred distinct given names: the people whose keys the documents hide.
NAMES = (
    "Alice", "Bob", "Carol", "David", "Emma", "Frank", "Grace", "Henry", "Irene", "Jack",
    "Karen", "Louis", "Maria", "Nathan", "Olivia", "Peter", "Quinn", "Rachel", "Samuel",
    "Teresa", "Victor", "Wendy", "Xavier", "Yvonne", "Zachary", "Adam", "Bella", "Charles",
    "Diana", "Edward", "Fiona", "George", "Hannah", "Isaac", "Julia", "Kevin", "Laura",
    "Martin", "Nora", "Oscar", "Paula", "Robert", "Sarah", "Thomas", "Ursula", "Vincent",
    "Walter", "Anna", "Brian", "Clara", "Daniel", "Elena", "Felix", "Gloria", "Harold",
    "Ivan", "Jessica", "Keith", "Linda", "Michael", "Nancy", "Oliver", "Patricia", "Ralph",
    "Sophia", "Timothy", "Vera", "William", "Amy", "Bruce", "Cynthia", "Dennis", "Eva",
    "Gordon", "Helen", "Jacob", "Kate", "Leonard", "Monica", "Neil", "Paul", "Rose", "Simon",
    "Tina", "Arthur", "Betty", "Carl", "Dorothy", "Eric", "Frances", "Gary", "Hugo", "Joan",
    "Kenneth", "Lucy", "Mark", "Nina", "Philip", "Ruth", "Steven",
)  # fmt: skip
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def passkey_sentence(name: str, key: int) -> str:
    return f"{name}'s pass key is {key}. Remember it. {key} is the pass key for {name}."


def passkey_query(name: str) -> str:
    return f"What is the pass key for {name}?"


@dataclass(frozen=True)
class LengthDraw:
    """What the seed decides for one length, before any tokenizer: documents' names, keys,
    depths (0: key sentence first, 1: last) and filler starts; the documents asked about."""

    length: int
    names: tuple[str, ...]
    keys: tuple[int, ...]
    depths: tuple[float, ...]
    filler_starts: tuple[int, ...]  # index of the first filler sentence
    asked: tuple[int, ...]  # document index of each query

    @property
    def queries(self) -> list[str]:
        return [passkey_query(self.names[d]) for d in self.asked]


def draw(length: int, documents: int, queries: int, sentences: int, seed: int) -> LengthDraw:
    if not 1 <= queries <= documents <= len(NAMES):
        raise OptionError(
            f"passkey: queries={queries}, documents={documents}: need 1 <= queries <= "
            f"documents <= {len(NAMES)} (one named person per document)"
        )
    rng = np.random.default_rng([seed, length, GENERATOR_VERSION])
    names = rng.choice(len(NAMES), size=documents, replace=False)
    keys = rng.choice(90000, size=documents, replace=False) + 10000  # five digits each
    return LengthDraw(
        length=length,
        names=tuple(NAMES[int(i)] for i in names),
        keys=tuple(int(k) for k in keys),
        depths=tuple(float(d) for d in rng.uniform(0.0, 1.0, size=documents)),
        filler_starts=tuple(int(s) for s in rng.integers(0, sentences, size=documents)),
        asked=tuple(int(d) for d in rng.choice(documents, size=queries, replace=False)),
    )


def filler_sentences(path: Path) -> list[str]:
    """The reference text's sentences in order (one paragraph a line in the file)."""
    text = path.read_text(encoding="utf-8")
    return [s for line in text.splitlines() if line.strip() for s in SENTENCE_END.split(line)]


def assemble(
    filler: Sequence[Sequence[int]], needle: Sequence[int], content: int, start: int, depth: float
) -> tuple[list[int], float] | None:
    """``content`` token ids: filler sentences from ``start`` on (wrapping around), cut to
    make room, with the key sentence placed at the sentence boundary nearest to ``depth``
    of the filler (its start and end count: a short document's filler may be one sentence,
    and snapping always downwards would put every key near the start). Returns the ids and
    the depth used; None when the key sentence alone is longer than ``content``."""
    room = content - len(needle)
    if room < 0:
        return None
    ids: list[int] = []
    boundaries = [0]
    index = start
    while len(ids) < room:
        ids.extend(filler[index % len(filler)])
        boundaries.append(len(ids))
        index += 1
    ids = ids[:room]
    ends = [b for b in boundaries if b < room] + [room]  # the cut filler's sentence ends
    cut = min(ends, key=lambda b: (abs(b - depth * room), b))
    return ids[:cut] + list(needle) + ids[cut:], (cut / room if room else 0.0)
