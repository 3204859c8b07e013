"""CoordInv (Conneau et al. §3): two coordinated main clauses in their order (O) or
swapped (I), e.g. "He deserved no answer , and he knew it ." -> "He knew it , and he
deserved no answer ." The coordinator (and its comma) stays between the clauses, the
final punctuation at the end, and the capital moves to the new first word (a proper noun
or "I" keeps its own)."""

from __future__ import annotations

from collections import Counter

from posharness.tasks.senteval.building.balance import Candidate, rng_for
from posharness.tasks.senteval.building.clause_records import Coordination
from posharness.tasks.senteval.building.clauses import clause_coordination, invert_clauses
from posharness.tasks.senteval.building.corpus import Sentence
from posharness.tasks.senteval.building.task import TaskContext, TaskResult, transformed

INVERTED, ORIGINAL = "I", "O"


def coordination_inversion(context: TaskContext) -> TaskResult:
    excluded: Counter[str] = Counter()
    eligible: list[tuple[Sentence, Coordination]] = []
    for sentence in context.pool.sentences:
        found = clause_coordination(sentence)
        if isinstance(found, str):
            excluded[found] += 1
        elif _ends_inside(sentence.tokens, found):
            excluded["sentence_end_inside_a_clause"] += 1
        elif invert_clauses(sentence.tokens, found) == sentence.tokens:
            excluded["inversion_unchanged"] += 1
        else:
            eligible.append((sentence, found))
    rng = rng_for(context.seed, "coordinv")
    rng.shuffle(eligible)

    def make(item: tuple[Sentence, Coordination], label: str) -> Candidate:
        sentence, coordination = item
        spans = {
            "first": list(coordination.first),
            "connector": list(coordination.connector),
            "second": list(coordination.second),
        }
        if label == ORIGINAL:
            return Candidate(label, sentence, sentence.tokens, basis=spans)
        inverted = invert_clauses(sentence.tokens, coordination)
        return Candidate(label, sentence, inverted, change={"inverted": spans}, basis=spans)

    return transformed(
        "coordinv",
        eligible,
        (INVERTED, ORIGINAL),
        context,
        rng,
        make,
        excluded,
        parameters={
            "pattern": "constituency: S -> S (,) CC S (punct) below ROOT; CoNLL-U: a root "
            "with a subject and exactly one clausal conj (own subject) opened by cc, both "
            "clauses contiguous",
        },
    )


_SENTENCE_ENDS = frozenset({".", "!", "?"})


def _ends_inside(tokens: tuple[str, ...], coordination: Coordination) -> bool:
    """ "... good . at all ." (two sentences run together): inverting would garble it."""
    return any(
        token in _SENTENCE_ENDS
        for start, end in (coordination.first, coordination.second)
        for token in tokens[start:end]
    )
