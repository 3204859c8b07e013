"""Main-clause facts for the semantic tasks, read from whichever parse a sentence has.

Tense, SubjNum and ObjNum label a sentence by its main clause (Conneau et al. §3
"Semantic information"); CoordInv needs two coordinated main clauses. A constituency tree
(SNLI, PTB) and a dependency tree (CoNLL-U) express these differently, so each has its own
reader (:mod:`.tree_clauses`, :mod:`.ud_clauses`) returning the same small records
(:mod:`.clause_records`, below all three); a
sentence neither reader can use gets a stable reason string, counted in the manifest.
"""

from __future__ import annotations

from collections.abc import Callable

from posharness.tasks.senteval.building import tree_clauses, ud_clauses
from posharness.tasks.senteval.building.clause_records import NO_PARSE, Coordination, Finding
from posharness.tasks.senteval.building.corpus import Sentence


def main_clause_tense(sentence: Sentence) -> Finding:
    return _dispatch(sentence, "tense")


def subject_number(sentence: Sentence) -> Finding:
    return _dispatch(sentence, "subject")


def object_number(sentence: Sentence) -> Finding:
    return _dispatch(sentence, "object")


def clause_coordination(sentence: Sentence) -> Coordination | str:
    if sentence.words is not None:
        return ud_clauses.coordination(sentence.words)
    if sentence.tree is not None:
        return tree_clauses.coordination(sentence.tree)
    return NO_PARSE


def _dispatch(sentence: Sentence, fact: str) -> Finding:
    readers: dict[str, tuple[Callable, Callable]] = {
        "tense": (ud_clauses.tense, tree_clauses.tense),
        "subject": (ud_clauses.subject_number, tree_clauses.subject_number),
        "object": (ud_clauses.object_number, tree_clauses.object_number),
    }
    from_ud, from_tree = readers[fact]
    if sentence.words is not None:
        return from_ud(sentence.words)
    if sentence.tree is not None:
        return from_tree(sentence.tree)
    return NO_PARSE


def invert_clauses(tokens: tuple[str, ...], coordination: Coordination) -> tuple[str, ...]:
    """CoordInv's "I" form: the two clauses swapped around the connector, the sentence-final
    punctuation kept at the end, and the capital moved to the new first word."""
    a, b = coordination.first
    c, d = coordination.connector
    e, f = coordination.second
    g, h = coordination.tail
    first = list(tokens[a:b])
    second = list(tokens[e:f])
    if a not in coordination.proper:
        first[0] = _lower_initial(first[0])
    second[0] = _upper_initial(second[0])
    return (*second, *tokens[c:d], *first, *tokens[g:h])


def _lower_initial(word: str) -> str:
    """``The`` -> ``the``; acronyms (``NASA``) and mixed case (``iPhone``) are left alone."""
    capitalised = word[:1].isupper() and (len(word) == 1 or word[1:].islower())
    return word[0].lower() + word[1:] if capitalised else word


def _upper_initial(word: str) -> str:
    return word[0].upper() + word[1:] if word[:1].isalpha() else word
