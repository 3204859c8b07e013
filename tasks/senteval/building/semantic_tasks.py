"""Tense, SubjNum and ObjNum: a label from the main clause, with the target words (verbs,
nouns) kept apart between train, dev and test (Conneau et al. §3 "Semantic information")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from posharness.tasks.senteval.building.balance import Candidate, allocate_grouped, rng_for
from posharness.tasks.senteval.building.clause_records import (
    NUMBER_CLASSES,
    TENSE_CLASSES,
    Finding,
)
from posharness.tasks.senteval.building.clauses import main_clause_tense
from posharness.tasks.senteval.building.clauses import object_number as object_number_of
from posharness.tasks.senteval.building.clauses import subject_number as subject_number_of
from posharness.tasks.senteval.building.corpus import Sentence
from posharness.tasks.senteval.building.task import TaskContext, TaskResult


def past_present(context: TaskContext) -> TaskResult:
    return _main_clause_task(
        context,
        "tense",
        TENSE_CLASSES,
        main_clause_tense,
        "tense of the main clause's finite verb (VBD -> PAST, VBZ/VBP -> PRES; UD Tense "
        "feature checked against the tag); target = the clause's lexical head (verb, or "
        "the predicate of a copula)",
    )


def subject_number(context: TaskContext) -> TaskResult:
    return _main_clause_task(
        context,
        "subjnum",
        NUMBER_CLASSES,
        subject_number_of,
        "number (NN/NNS) of the head noun of the main clause's subject (UD nsubj of the "
        "root; in a tree the last NP before the main VP); proper nouns and pronouns left out",
    )


def object_number(context: TaskContext) -> TaskResult:
    return _main_clause_task(
        context,
        "objnum",
        NUMBER_CLASSES,
        object_number_of,
        "number (NN/NNS) of the head noun of the main verb's direct object (UD obj of the "
        "root; in a tree the NP complement of the lexical verb, not after a copula)",
    )


def _main_clause_task(
    context: TaskContext,
    name: str,
    classes: tuple[str, str],
    finding: Callable[[Sentence], Finding],
    rule: str,
) -> TaskResult:
    excluded: Counter[str] = Counter()
    candidates = []
    tag_counts = context.pool.counts.tag_counts
    for sentence in context.pool.sentences:
        found = finding(sentence)
        if isinstance(found, str):
            excluded[found] += 1
            continue
        if sentence.words is None and not _usual_tag(tag_counts, found.cue, found.cue_tag):
            excluded["tag_unusual_for_word"] += 1
            continue
        candidates.append(
            Candidate(
                found.label,
                sentence,
                sentence.tokens,
                group=found.target,
                basis={"target": found.target, "position": found.position},
            )
        )
    allocation = allocate_grouped(
        candidates, classes, context.requested, rng_for(context.seed, name)
    )
    targets = {
        split: {c.group for c in allocation.examples[split]} for split in allocation.examples
    }
    return TaskResult(
        name,
        allocation,
        classes,
        len(candidates),
        excluded,
        parameters={
            "rule": rule,
            "parser_check": "constituency parses only (automatic): the word the label rests "
            "on must carry its most frequent tag in all parsed sentences ('rides' tagged "
            "VBD is left out)",
            "targets_disjoint_across_splits": True,
            "distinct_targets": {split: len(words) for split, words in targets.items()},
        },
    )


def _usual_tag(tag_counts: dict[str, Counter[str]], word: str, tag: str) -> bool:
    """Is ``tag`` the word's most frequent tag (ties: any of the most frequent)?"""
    counts = tag_counts.get(word.lower())
    return counts is not None and counts[tag] == max(counts.values())
