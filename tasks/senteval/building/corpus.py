"""What the builders share: where a sentence came from, the sentence with whatever
annotation its source had, and the corpus counts the surface tasks need.

A sentence from SNLI or a ``.mrg`` file carries its constituency tree, one from CoNLL-U its
dependency words, one from raw text neither; each task takes the sentences whose
annotation it needs and counts the others under a stated reason.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from posharness.tasks.senteval.building.conllu import UdWord
    from posharness.tasks.senteval.building.trees import Node

SOURCE_KINDS = ("snli", "ptb", "conllu", "text")
# Conneau et al. §3: "sentences ... of 5 to 28 words" (tokens, punctuation included: the
# official sentence_length.txt puts "What were you thinking ?" in the 5-8 bin).
MIN_TOKENS, MAX_TOKENS = 5, 28


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One ``--snli/--ptb/--conllu/--text`` file."""

    kind: str  # one of SOURCE_KINDS
    path: Path
    name: str  # as given on the command line; what manifest and provenance show
    sha256: str

    @property
    def short_sha(self) -> str:
        return self.sha256[:16]


@dataclass(frozen=True, slots=True)
class Origin:
    """Where one sentence is in its source file."""

    source: int  # index into the build's list of SourceFile
    line: int  # 1-based line where the sentence (record, tree, block) starts
    index: int  # which sentence of that line: SNLI 1 or 2, raw text 1..n, else 1
    ident: str = ""  # SNLI pairID, CoNLL-U sent_id, when the source has one

    @property
    def key(self) -> str:
        """Stable text naming the sentence: the seed of every per-sentence choice."""
        return f"{self.source}:{self.line}:{self.index}"


@dataclass(frozen=True, slots=True)
class Sentence:
    """Whitespace tokens (PTB-style) plus the annotation the source provided."""

    tokens: tuple[str, ...]
    origin: Origin
    tags: tuple[str, ...] | None = None  # PTB part-of-speech per token, from a parse
    tree: Node | None = None  # constituency tree (SNLI parses, --ptb)
    words: tuple[UdWord, ...] | None = None  # dependency words (--conllu)


@dataclass
class CorpusCounts:
    """Lower-cased unigram and bigram counts over every sentence read (any length), and a
    tag dictionary (word -> PTB tag counts) from every parsed sentence."""

    unigrams: Counter[str] = field(default_factory=Counter)
    bigrams: Counter[tuple[str, str]] = field(default_factory=Counter)
    tag_counts: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, tokens: tuple[str, ...], tags: tuple[str, ...] | None = None) -> None:
        lowered = [token.lower() for token in tokens]
        self.unigrams.update(lowered)
        self.bigrams.update(zip(lowered, lowered[1:], strict=False))
        if tags is not None:
            for word, tag in zip(lowered, tags, strict=True):
                counts = self.tag_counts.get(word)
                if counts is None:
                    counts = self.tag_counts[word] = Counter()
                counts[tag] += 1

    def merge(self, other: CorpusCounts) -> None:
        self.unigrams.update(other.unigrams)
        self.bigrams.update(other.bigrams)
        for word, counts in other.tag_counts.items():
            mine = self.tag_counts.get(word)
            if mine is None:
                self.tag_counts[word] = Counter(counts)
            else:
                mine.update(counts)
