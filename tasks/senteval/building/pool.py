"""The sentence pool every task draws from: all sources' 5-28-token sentences, each token
sequence once (the first occurrence, in source order), and the corpus counts of all of them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from posharness.tasks.senteval.building.corpus import CorpusCounts, Sentence, SourceFile
from posharness.tasks.senteval.building.sources import SourceRead


@dataclass
class SentencePool:
    sources: list[SourceFile]
    sentences: list[Sentence]
    counts: CorpusCounts
    excluded: Counter[str]  # before any task: length, duplicates, markup, <unk>, ...
    per_source: list[dict] = field(default_factory=list)  # what the manifest says of each


def build_pool(reads: list[SourceRead], text_counts: CorpusCounts | None = None) -> SentencePool:
    """Merge the sources in the order given; a repeated token sequence is kept once.
    ``text_counts`` are the raw-text files' counts, tallied together while reading."""
    seen: set[tuple[str, ...]] = set()
    sentences: list[Sentence] = []
    excluded: Counter[str] = Counter()
    counts = text_counts or CorpusCounts()
    per_source = []
    for read in reads:
        kept = 0
        for sentence in read.sentences:
            if sentence.tokens in seen:
                excluded["duplicate"] += 1
                continue
            seen.add(sentence.tokens)
            sentences.append(sentence)
            kept += 1
        excluded.update(read.excluded)
        counts.merge(read.counts)
        per_source.append(
            {
                "kind": read.source.kind,
                "path": read.source.name,
                "sha256": read.source.sha256,
                **({"layout": read.layout} if read.layout else {}),
                "sentences_read": read.read,
                "sentences_kept": kept,
                "parsed": read.parsed,
                "excluded": dict(sorted(read.excluded.items())),
            }
        )
    return SentencePool([r.source for r in reads], sentences, counts, excluded, per_source)
