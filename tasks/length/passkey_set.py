"""The passkey retrieval set: per length, documents of exactly that many tokens, each hiding
one person's 5-digit pass key in filler text, and queries that ask for one person's key.

LongEmbed (Zhu et al. 2024, §3.2 and Fig. 3) adapts Wang et al.'s personalised passkey
retrieval (intfloat/personalized_passkey_retrieval): each candidate document hides a
sentence naming a person and a key, and the query asks for that person's key, so exactly
one document of the 100 answers it. LongEmbed's own documents put a full name and a 4- or
5-digit key into repeats of "The grass is green. The sky is blue. ..." and ask "what is the
passkey for {Full Name}?" (their released data set; its generator, intfloat's
``generate_passkey_data.py``, is public). This module is our own generator of the same
protocol, not a copy of theirs: the personalised passkey sentence of Mohtashami & Jaggi
(2023) — "{name}'s pass key is {key}. Remember it. {key} is the pass key for {name}." — the
query "What is the pass key for {name}?", and as filler the harness's embedded English
reference text (models/decompose/reference_text/english.txt), so that the filler is prose.

**The key sentence is the only tie.** No listed name occurs in the filler: a filler
sentence with a word that starts with any listed name (case-insensitive, so uncased
tokenizers and word pieces such as "Peter" in "Petersen" count) is dropped, and the names
are chosen so that none is dropped from the embedded text. Otherwise a query would also
match a document whose filler happened to mention its person.

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
from typing import NamedTuple

import numpy as np

from posharness.base.errors import OptionError

# bump when the same seed would give other documents (2: names that occur in the filler
# replaced, filler sentences naming a listed person dropped)
GENERATOR_VERSION = 2
# One hundred distinct given names: the people whose keys the documents hide. None starts
# a word of the embedded filler (tests/unit/tasks/length/test_passkey.py checks it), and
# none starts another name.
NAMES = (
    "Alice", "Bob", "Carol", "David", "Emma", "Frank", "Grace", "Henry", "Irene", "Jack",
    "Karen", "Louis", "Maria", "Nathan", "Olivia", "Agnes", "Quinn", "Rachel", "Bernard",
    "Teresa", "Victor", "Wendy", "Xavier", "Yvonne", "Zachary", "Adam", "Bella", "Charles",
    "Diana", "Edward", "Fiona", "George", "Hannah", "Isaac", "Cecilia", "Dominic", "Laura",
    "Martin", "Nora", "Oscar", "Stella", "Matilda", "Sarah", "Gilbert", "Ursula", "Vincent",
    "Harriet", "Jasper", "Lionel", "Mabel", "Nigel", "Elena", "Felix", "Gloria", "Harold",
    "Ivan", "Jessica", "Keith", "Linda", "Michael", "Nancy", "Oliver", "Patricia", "Ralph",
    "Sophia", "Timothy", "Vera", "William", "Amy", "Bruce", "Cynthia", "Dennis", "Rupert",
    "Gordon", "Helen", "Jacob", "Kate", "Leonard", "Monica", "Neil", "Paul", "Sylvia", "Simon",
    "Tina", "Arthur", "Betty", "Theodore", "Dorothy", "Eric", "Frances", "Gary", "Hugo",
    "Joan", "Kenneth", "Lucy", "Quentin", "Nina", "Philip", "Ruth", "Steven",
)  # fmt: skip
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def name_pattern(names: Sequence[str] = NAMES) -> re.Pattern[str]:
    """A word that starts with any of ``names``, in any case: "Peter", "peter", "Petersen"
    (an uncased WordPiece vocabulary splits an unknown "Petersen" into "peter" "##sen")."""
    return re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + ")", re.IGNORECASE)


def names_in(text: str, names: Sequence[str] = NAMES) -> set[str]:
    """The listed names that start a word of ``text`` (as written in ``names``)."""
    spelled = {name.lower(): name for name in names}
    return {spelled[match.group(0).lower()] for match in name_pattern(names).finditer(text)}


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
            f"--task-arg passkey.queries={queries}, passkey.documents={documents}: need "
            f"1 <= queries <= documents <= {len(NAMES)} (each document names one of "
            f"{len(NAMES)} people, each query asks about one document); lower queries or "
            "raise documents"
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


def filler_sentences(path: Path, names: Sequence[str] = NAMES) -> list[str]:
    """The reference text's sentences in order (one paragraph a line in the file), less
    any sentence with a word that starts with one of ``names``: the key sentence must be
    the only place a document names a person (none is dropped from the embedded text)."""
    text = path.read_text(encoding="utf-8")
    sentences = [s for line in text.splitlines() if line.strip() for s in SENTENCE_END.split(line)]
    if not names:
        return sentences
    naming = name_pattern(names)
    return [s for s in sentences if not naming.search(s)]


class Document(NamedTuple):
    """One document's content token ids, where its key sentence starts, and the depth
    used (the key's start as a share of the filler: 0 first, 1 last)."""

    ids: list[int]
    key_start: int
    depth: float


def assemble(
    filler: Sequence[Sequence[int]], needle: Sequence[int], content: int, start: int, depth: float
) -> Document | None:
    """``content`` token ids: filler sentences from ``start`` on (wrapping around), cut to
    make room, with the key sentence placed at the sentence boundary nearest to ``depth``
    of the filler (its start and end count: a short document's filler may be one sentence,
    and snapping always downwards would put every key near the start). None when the key
    sentence alone is longer than ``content``."""
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
    return Document(ids[:cut] + list(needle) + ids[cut:], cut, cut / room if room else 0.0)
