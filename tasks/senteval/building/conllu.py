"""CoNLL-U sentences (Universal Dependencies, e.g. UD English EWT) as the builders need them.

Only syntactic words count: multiword-token ranges (``1-2 don't``) and empty nodes
(``8.1``) are skipped, so ``don't`` is the two PTB tokens ``do n't``, as in the treebank's
own tokenisation. A line that is not ten tab-separated fields, or whose ID or HEAD is not a
number, is refused with its file and line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from posharness.base.errors import DataError


@dataclass(frozen=True, slots=True)
class UdWord:
    """One syntactic word: the CoNLL-U columns the probing tasks read."""

    index: int  # 1-based ID
    form: str
    lemma: str
    upos: str
    xpos: str  # PTB tag in the English treebanks, "_" when absent
    feats: str  # "Number=Sing|Tense=Past" or "_"
    head: int  # 0 for the root
    deprel: str

    def feature(self, name: str) -> str | None:
        """The value of a morphological feature (``Tense`` -> ``Past``), None if absent."""
        if self.feats == "_":
            return None
        for pair in self.feats.split("|"):
            key, _, value = pair.partition("=")
            if key == name:
                return value
        return None

    @property
    def relation(self) -> str:
        """The universal relation without subtype: ``nsubj:pass`` -> ``nsubj``."""
        return self.deprel.split(":", 1)[0]


@dataclass(frozen=True, slots=True)
class UdSentence:
    line: int  # line of the sentence's first line (comment or word)
    sent_id: str
    words: tuple[UdWord, ...]


def read_conllu(path: Path, text: str) -> Iterator[UdSentence]:
    """Every sentence of a CoNLL-U file; ``text`` is the file's content."""
    words: list[UdWord] = []
    start, sent_id = 0, ""
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            if words:
                yield UdSentence(start, sent_id, tuple(words))
            words, start, sent_id = [], 0, ""
            continue
        if not start:
            start = number
        if line.startswith("#"):
            key, _, value = line[1:].partition("=")
            if key.strip() == "sent_id":
                sent_id = value.strip()
            continue
        word = _word(path, number, line)
        if word is not None:
            words.append(word)
    if words:
        yield UdSentence(start, sent_id, tuple(words))


def _word(path: Path, number: int, line: str) -> UdWord | None:
    fields = line.split("\t")
    if len(fields) != 10:
        raise DataError(
            f"{path}:{number}: {len(fields)} tab-separated fields, CoNLL-U needs 10 "
            "(ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC)"
        )
    ident = fields[0]
    if "-" in ident or "." in ident:
        return None  # a multiword token's surface form, or an empty node
    if not ident.isdigit() or not fields[6].isdigit():
        raise DataError(
            f"{path}:{number}: ID {ident!r} / HEAD {fields[6]!r} is not a number: "
            "is this a CoNLL-U file?"
        )
    return UdWord(
        index=int(ident),
        form=fields[1],
        lemma=fields[2],
        upos=fields[3],
        xpos=fields[4],
        feats=fields[5],
        head=int(fields[6]),
        deprel=fields[7],
    )
