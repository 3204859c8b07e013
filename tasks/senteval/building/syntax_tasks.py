"""TreeDepth, TopConst and BShift: the syntactic tasks (Conneau et al. §3 "Syntactic
information")."""

from __future__ import annotations

import re
from collections import Counter

from posharness.tasks.senteval.building.balance import (
    Candidate,
    allocate,
    length_matched,
    per_class_wanted,
    pick,
    rng_for,
)
from posharness.tasks.senteval.building.corpus import Sentence
from posharness.tasks.senteval.building.task import (
    TaskContext,
    TaskResult,
    allocated,
    transformed,
)
from posharness.tasks.senteval.catalog import BY_NAME, TOPCONST_OTHER

DEPTHS = tuple(int(label) for label in BY_NAME["treedepth"].labels or ())  # 5..12
TOPCONST_SEQUENCES = 19
SWAPPED, ORIGINAL = "I", "O"


def tree_depth(context: TaskContext) -> TaskResult:
    """Depth 5-12 of the constituency tree (:func:`~.trees.tree_depth`), with depth and
    length decorrelated by :func:`~.balance.length_matched`."""
    from posharness.tasks.senteval.building.trees import tree_depth as depth_of

    excluded: Counter[str] = Counter()
    by_class: dict[str, list[Candidate]] = {str(d): [] for d in DEPTHS}
    for sentence in context.pool.sentences:
        if sentence.tree is None:
            excluded["no_constituency_parse"] += 1
            continue
        depth = depth_of(sentence.tree)
        if depth < DEPTHS[0]:
            excluded[f"depth_below_{DEPTHS[0]}"] += 1
        elif depth > DEPTHS[-1]:
            excluded[f"depth_above_{DEPTHS[-1]}"] += 1
        else:
            by_class[str(depth)].append(
                Candidate(str(depth), sentence, sentence.tokens, basis={"depth": depth})
            )
    classes = tuple(by_class)
    rng = rng_for(context.seed, "treedepth")
    per_class = min(
        sum(per_class_wanted(context.requested, len(classes)).values()),
        min(len(members) for members in by_class.values()),
    )
    selected, figures = length_matched(by_class, per_class, lambda c: len(c.tokens), rng)
    chosen = [candidate for label in classes for candidate in selected[label]]
    allocation = allocate(chosen, classes, context.requested, rng)
    allocation.unused = sum(len(members) for members in by_class.values()) - sum(
        len(members) for members in allocation.examples.values()
    )
    return TaskResult(
        "treedepth",
        allocation,
        classes,
        sum(len(members) for members in by_class.values()),
        excluded,
        parameters={
            "depth": "nodes on the longest path from ROOT to a part-of-speech node, both "
            "counted (= edges from ROOT to the deepest word)",
            "decorrelation": "length-matched sampling over exact token counts",
            "length_only_accuracy": figures,
            "available_per_depth": {label: len(by_class[label]) for label in classes},
        },
    )


def top_constituents(context: TaskContext) -> TaskResult:
    """The 19 most frequent top-constituent sequences among the candidates, and OTHER."""
    from posharness.tasks.senteval.building.trees import top_constituents as sequence_of

    excluded: Counter[str] = Counter()
    found: list[tuple[str, Sentence]] = []
    for sentence in context.pool.sentences:
        if sentence.tree is None:
            excluded["no_constituency_parse"] += 1
            continue
        sequence = sequence_of(sentence.tree)
        if sequence is None:
            excluded["top_not_clause"] += 1
            continue
        found.append((sequence, sentence))
    frequency = Counter(sequence for sequence, _ in found)
    top = sorted(frequency, key=lambda seq: (-frequency[seq], seq))[:TOPCONST_SEQUENCES]
    kept = set(top)
    candidates = [
        Candidate(
            sequence if sequence in kept else TOPCONST_OTHER,
            sentence,
            sentence.tokens,
            basis={"sequence": sequence},
        )
        for sequence, sentence in found
    ]
    classes = (*top, TOPCONST_OTHER)
    return allocated(
        "topconst",
        candidates,
        classes,
        context,
        excluded,
        parameters={
            "sequences": {seq: frequency[seq] for seq in top},
            "other_sequences": len(frequency) - len(top),
            "other_sentences": sum(frequency.values()) - sum(frequency[s] for s in top),
            "top_node": "children of the S (or SINV/SQ/SBARQ) directly below ROOT",
        },
    )


def bigram_shift(context: TaskContext) -> TaskResult:
    """Two adjacent words swapped (I) or not (O); the pair is drawn uniformly among the
    adjacent pairs of two different words, punctuation excluded."""
    excluded: Counter[str] = Counter()
    eligible: list[tuple[Sentence, int]] = []
    for sentence in context.pool.sentences:
        tokens = sentence.tokens
        words = [_HAS_LETTER_OR_DIGIT(token) is not None for token in tokens]
        pairs = [
            i
            for i in range(len(tokens) - 1)
            if words[i] and words[i + 1] and tokens[i].lower() != tokens[i + 1].lower()
        ]
        if not pairs:
            excluded["no_swappable_pair"] += 1
            continue
        eligible.append(
            (sentence, pairs[pick(context.seed, "bshift", sentence.origin.key, len(pairs))])
        )
    rng = rng_for(context.seed, "bshift")
    rng.shuffle(eligible)

    def make(item: tuple[Sentence, int], label: str) -> Candidate:
        sentence, i = item
        tokens = sentence.tokens
        if label == ORIGINAL:
            return Candidate(label, sentence, tokens)
        swapped = (*tokens[:i], tokens[i + 1], tokens[i], *tokens[i + 2 :])
        return Candidate(
            label,
            sentence,
            swapped,
            change={"swapped": [i, i + 1], "words": [tokens[i], tokens[i + 1]]},
        )

    return transformed(
        "bshift",
        eligible,
        (SWAPPED, ORIGINAL),
        context,
        rng,
        make,
        excluded,
        parameters={"swap": "one adjacent pair of two different non-punctuation tokens"},
    )


_HAS_LETTER_OR_DIGIT = re.compile(r"[^\W_]").search
