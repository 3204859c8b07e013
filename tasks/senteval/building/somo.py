"""SOMO, semantic odd man out (Conneau et al. §3): one noun or verb replaced by another
noun or verb (C) or the sentence unchanged (O).

The replacement ``r`` of word ``o`` between ``left`` and ``right`` has ``o``'s PTB tag
(NN, NNS, VB, VBD, VBG, VBN, VBP or VBZ, so inflection stays grammatical), a corpus
frequency within a factor of 2 of ``o``'s, and both new bigrams ``left r`` and ``r right``
occur in the corpus with counts within a factor of 3 of the original bigrams' — Conneau et
al.'s "comparable (on a log-scale)" bigram frequencies. Counts are over every sentence of
every source, lower-cased; ``r`` is drawn uniformly among the words that qualify.

Part-of-speech tags: a parsed sentence (SNLI, PTB, CoNLL-U) has its own tags in context. A
raw-text sentence is tagged with a tag dictionary built from every parsed sentence: a word
gets a tag when it was seen tagged at least 3 times and 90 % of them with that tag, so
only words that are nearly always a noun (or always the same verb form) are touched.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from dataclasses import dataclass

from posharness.tasks.senteval.building.balance import (
    Candidate,
    per_class_wanted,
    rng_for,
)
from posharness.tasks.senteval.building.corpus import CorpusCounts, Sentence
from posharness.tasks.senteval.building.task import TaskContext, TaskResult, transformed

NOUN_VERB_TAGS = frozenset({"NN", "NNS", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ"})
MIN_COUNT = 5  # rarer words are neither replaced nor used as replacements
MIN_TAGGED, TAG_AGREEMENT = 3, 0.9  # the tag dictionary's bar
WORD_RATIO = 2.0  # replacement frequency within this factor of the original's
BIGRAM_RATIO = 3.0  # each new bigram's count within this factor of the original bigram's
CHANGED, ORIGINAL = "C", "O"


_WORD_BAND = math.log(WORD_RATIO)
_BIGRAM_BAND = math.log(BIGRAM_RATIO)
Neighbours = dict[tuple[str, str], list[tuple[float, str, float]]]


@dataclass(frozen=True)
class Replacements:
    """Per (neighbour, tag): the words seen next to it with that tag, sorted by log
    frequency, each with the log count of its bigram with the neighbour."""

    counts: CorpusCounts
    lexicon: dict[str, str]  # word -> its one tag (the tag dictionary)
    after: Neighbours  # (left, tag) -> (log f(w), w, log c(left, w)) for words w after left
    before: Neighbours  # (right, tag) -> (log f(w), w, log c(w, right)) for words before right

    def options(self, left: str, word: str, tag: str, right: str) -> list[str]:
        """Every word that may replace ``word`` between ``left`` and ``right`` (module doc)."""
        bigrams = self.counts.bigrams
        original_left, original_right = bigrams[(left, word)], bigrams[(word, right)]
        if not original_left or not original_right:
            return []
        frequency = math.log(self.counts.unigrams[word])
        after = _band(self.after.get((left, tag), []), frequency)
        before = _band(self.before.get((right, tag), []), frequency)
        # Walk the shorter list; its own bigram is stored, the other one is looked up.
        if len(after) <= len(before):
            walk, near, far, pair = after, math.log(original_left), math.log(original_right), 1
        else:
            walk, near, far, pair = before, math.log(original_right), math.log(original_left), 0
        found = []
        for _, other, count in walk:
            if other == word or abs(count - near) > _BIGRAM_BAND:
                continue
            other_count = bigrams.get((other, right) if pair else (left, other), 0)
            if other_count and abs(math.log(other_count) - far) <= _BIGRAM_BAND:
                found.append(other)
        return sorted(found)


def odd_man_out(context: TaskContext) -> TaskResult:
    replacements = build_replacements(context.pool.counts)
    need = 2 * sum(per_class_wanted(context.requested, 2).values())
    order = list(context.pool.sentences)
    rng = rng_for(context.seed, "somo")
    rng.shuffle(order)
    excluded: Counter[str] = Counter()
    eligible: list[tuple[Sentence, dict]] = []
    examined = 0
    for sentence in order:
        if len(eligible) >= need:
            break
        examined += 1
        found = replacement_for(sentence, replacements, context.seed)
        if isinstance(found, str):
            excluded[found] += 1
        else:
            eligible.append((sentence, found))

    def make(item: tuple[Sentence, dict], label: str) -> Candidate:
        sentence, change = item
        if label == ORIGINAL:
            return Candidate(label, sentence, sentence.tokens)
        tokens = list(sentence.tokens)
        tokens[change["position"]] = change["replacement"]
        return Candidate(label, sentence, tuple(tokens), change=change)

    return transformed(
        "somo",
        eligible,
        (CHANGED, ORIGINAL),
        context,
        rng,
        make,
        excluded,
        parameters={
            "tags": sorted(NOUN_VERB_TAGS),
            "min_word_count": MIN_COUNT,
            "word_frequency_ratio": WORD_RATIO,
            "bigram_count_ratio": BIGRAM_RATIO,
            "tag_dictionary": f">= {MIN_TAGGED} tagged occurrences, >= {TAG_AGREEMENT:.0%} "
            "one tag (raw-text sentences only)",
            "tag_dictionary_words": len(replacements.lexicon),
            "sentences_examined": examined,
        },
    )


def build_replacements(counts: CorpusCounts) -> Replacements:
    lexicon = tag_dictionary(counts)
    frequency = {word: math.log(counts.unigrams[word]) for word in lexicon}
    after: Neighbours = {}
    before: Neighbours = {}
    for (left, right), count in counts.bigrams.items():
        tag = lexicon.get(right)
        if tag is not None:
            after.setdefault((left, tag), []).append((frequency[right], right, math.log(count)))
        tag = lexicon.get(left)
        if tag is not None:
            before.setdefault((right, tag), []).append((frequency[left], left, math.log(count)))
    for table in (after, before):
        for words in table.values():
            words.sort()
    return Replacements(counts, lexicon, after, before)


def tag_dictionary(counts: CorpusCounts) -> dict[str, str]:
    """Words (lower-case, alphabetic, seen >= MIN_COUNT times) that nearly always carry
    one noun or verb tag, with that tag."""
    lexicon = {}
    for word, tags in counts.tag_counts.items():
        if not word.isalpha() or counts.unigrams[word] < MIN_COUNT:
            continue
        total = sum(tags.values())
        tag, top = max(tags.items(), key=lambda item: (item[1], item[0]))
        if total >= MIN_TAGGED and top >= TAG_AGREEMENT * total and tag in NOUN_VERB_TAGS:
            lexicon[word] = tag
    return lexicon


def replacement_for(sentence: Sentence, table: Replacements, seed: int) -> dict | str:
    """The change SOMO would make to ``sentence`` (position, word, replacement and the
    bigram counts), or why it has none. Positions are tried in a seeded order."""
    tokens = sentence.tokens
    positions = []
    for i in range(1, len(tokens) - 1):
        word = tokens[i]
        if not (word.isalpha() and word.islower()) or table.counts.unigrams[word] < MIN_COUNT:
            continue
        tag = sentence.tags[i] if sentence.tags is not None else table.lexicon.get(word)
        if tag in NOUN_VERB_TAGS:
            positions.append((i, tag))
    if not positions:
        return "no_noun_or_verb"
    rng = rng_for(seed, "somo", sentence.origin.key)
    rng.shuffle(positions)
    bigrams = table.counts.bigrams
    for i, tag in positions:
        left, word, right = tokens[i - 1].lower(), tokens[i], tokens[i + 1].lower()
        options = table.options(left, word, tag, right)
        if options:
            other = rng.choice(options)
            return {
                "position": i,
                "word": word,
                "replacement": other,
                "tag": tag,
                "bigram_counts": {
                    "before": [bigrams[(left, word)], bigrams[(word, right)]],
                    "after": [bigrams[(left, other)], bigrams[(other, right)]],
                },
            }
    return "no_valid_replacement"


def _band(
    words: list[tuple[float, str, float]], frequency: float
) -> list[tuple[float, str, float]]:
    """The entries whose word frequency is within WORD_RATIO of ``frequency``."""
    low = bisect.bisect_left(words, (frequency - _WORD_BAND,))
    high = bisect.bisect_right(words, (frequency + _WORD_BAND, "\U0010ffff"))
    return words[low:high]
