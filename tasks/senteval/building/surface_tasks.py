"""SentLen and WC: the surface tasks (Conneau et al. §3 "Surface information")."""

from __future__ import annotations

from collections import Counter

from posharness.tasks.senteval.building.balance import (
    Candidate,
    per_class_wanted,
)
from posharness.tasks.senteval.building.task import TaskContext, TaskResult, allocated

# SentLen's six bins of token counts (Conneau et al. §3; catalog.TASKS).
LENGTH_BINS = ((5, 8), (9, 12), (13, 16), (17, 20), (21, 25), (26, 28))
WC_WORDS = 1000
# Conneau et al. take 1,000 words of frequency ranks 2k-3k. In a corpus much smaller than
# BookCorpus some of those words are in too few sentences to fill their class, and with
# strict balance the rarest word would set every class's size; such words are skipped and
# the window extends past rank 3,000 (at most to WC_RANK_SPAN words in all) instead.
WC_FIRST_RANK = 2001
WC_RANK_SPAN = 3000


def length_bin(tokens: int) -> str:
    for label, (low, high) in enumerate(LENGTH_BINS):
        if low <= tokens <= high:
            return str(label)
    raise ValueError(f"{tokens} tokens: outside 5-28")


def sentence_length(context: TaskContext) -> TaskResult:
    candidates = [
        Candidate(length_bin(len(s.tokens)), s, s.tokens, basis={"tokens": len(s.tokens)})
        for s in context.pool.sentences
    ]
    classes = tuple(str(label) for label in range(len(LENGTH_BINS)))
    return allocated(
        "sentlen",
        candidates,
        classes,
        context,
        parameters={"bins": {str(i): list(b) for i, b in enumerate(LENGTH_BINS)}},
    )


def word_content(context: TaskContext) -> TaskResult:
    """1,000 mid-frequency words; sentences holding exactly one of them (repeats of that
    one word allowed), labelled with it in lower case, as the official file does.

    The words are the first 1,000 from rank 2,001 on that each have at least ``q``
    sentences (see WC_FIRST_RANK and :func:`_largest_feasible` for ``q``).
    """
    words = int(context.options.get("wc_words", WC_WORDS))
    first = int(context.options.get("wc_first_rank", WC_FIRST_RANK))
    span = int(context.options.get("wc_rank_span", WC_RANK_SPAN))
    ranked = _frequency_ranks(context.pool.counts.unigrams)
    last = min(first + span - 1, len(ranked))
    if last - first + 1 < words:
        _too_few_words(len(ranked), first, first + words - 1)
    word_of_rank = {rank: word for word, rank in ranked.items() if first <= rank <= last}
    holding = []  # (sentence index, its distinct ranks within [first, last])
    for index, sentence in enumerate(context.pool.sentences):
        ranks = {ranked.get(token.lower(), 0) for token in sentence.tokens}
        inside = sorted(rank for rank in ranks if first <= rank <= last)
        if inside:
            holding.append((index, inside))
    need = sum(per_class_wanted(context.requested, words).values())
    plain = _single_holders(holding, set(range(first, first + words)))
    counts = sorted(len(plain.get(rank, ())) for rank in range(first, first + words))
    least, chosen, tried = _largest_feasible(holding, first, last, words, need, counts)
    if chosen is None:
        chosen = (list(range(first, first + words)), plain)
    targets, holders = chosen
    candidates = []
    for rank in targets:
        word = word_of_rank[rank]
        for index in holders.get(rank, []):
            sentence = context.pool.sentences[index]
            position = next(i for i, t in enumerate(sentence.tokens) if t.lower() == word)
            candidates.append(
                Candidate(
                    word, sentence, sentence.tokens, basis={"word": word, "position": position}
                )
            )
    classes = tuple(word_of_rank[rank] for rank in targets)
    return allocated(
        "wc",
        candidates,
        classes,
        context,
        excluded=Counter(
            {"no_target_word_or_several": len(context.pool.sentences) - len(candidates)}
        ),
        parameters={
            "words": words,
            "conneau_rank_window": [2001, 3000],
            "rank_window": [targets[0], targets[-1]],
            "ranks_skipped_in_window": targets[-1] - targets[0] + 1 - len(targets),
            "sentences_per_word_required": least,
            "required_tried": tried,
            "plain_window_sentences_per_word": {
                "least": counts[0],
                "p10": counts[len(counts) // 10],
                "median": counts[len(counts) // 2],
            },
            "vocabulary": "lower-cased alphabetic tokens of every sentence read, ranked by "
            "count (ties alphabetical)",
        },
    )


def _largest_feasible(
    holding: list[tuple[int, list[int]]],
    first: int,
    last: int,
    words: int,
    need: int,
    counts: list[int],
) -> tuple[int, tuple[list[int], dict[int, list[int]]] | None, list[int]]:
    """The per-word count ``q`` and the words: ``need`` when the corpus allows it, else
    the plain window's 10th percentile (so about a tenth of its words are skipped), else
    lower by a fifth at a time until 1,000 words qualify within the span."""
    tried = [need]
    found = _words_with_enough(holding, first, last, words, need)
    least = min(need - 1, max(counts[len(counts) // 10], 1))
    while found is None and least >= 1:
        tried.append(least)
        found = _words_with_enough(holding, first, last, words, least)
        if found is None:
            least = int(least * 0.8)
    return (need if len(tried) == 1 else least), found, tried


def _words_with_enough(
    holding: list[tuple[int, list[int]]], first: int, last: int, words: int, least: int
) -> tuple[list[int], dict[int, list[int]]] | None:
    """The first ``words`` ranks from ``first`` whose word is the only target in at least
    ``least`` sentences, the targets being those words themselves (skipping a word can
    free sentences for the others, so this repeats until nothing changes)."""
    skipped: set[int] = set()
    while True:
        targets = [rank for rank in range(first, last + 1) if rank not in skipped][:words]
        if len(targets) < words:
            return None
        holders = _single_holders(holding, set(targets))
        short = [rank for rank in targets if len(holders.get(rank, ())) < least]
        if not short:
            return targets, holders
        skipped.update(short)


def _frequency_ranks(unigrams: Counter[str]) -> dict[str, int]:
    """Rank 1 = most frequent lower-cased alphabetic word; ties in alphabetical order."""
    words = sorted((w for w in unigrams if w.isalpha()), key=lambda w: (-unigrams[w], w))
    return {word: rank for rank, word in enumerate(words, start=1)}


def _single_holders(
    holding: list[tuple[int, list[int]]], targets: set[int]
) -> dict[int, list[int]]:
    """Rank -> indices of the sentences whose only target word has that rank."""
    holders: dict[int, list[int]] = {}
    for index, ranks in holding:
        hits = [rank for rank in ranks if rank in targets]
        if len(hits) == 1:
            holders.setdefault(hits[0], []).append(index)
    return holders


def _too_few_words(distinct: int, first: int, deepest: int) -> None:
    from posharness.base.errors import DataError

    raise DataError(
        f"wc needs at least {deepest:,} distinct words (its targets start at a frequency "
        f"rank of {first:,}); the sources have {distinct:,}: pass more text (--text FILE)"
    )
