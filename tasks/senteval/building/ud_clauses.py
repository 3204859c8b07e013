"""Main-clause facts from a Universal Dependencies tree (CoNLL-U with features).

The main clause is headed by the root. Tense is the ``Tense`` feature of the root when it
is a finite verb, else of its first finite ``aux``/``cop`` ("has | eaten", "is | happy");
the PTB tag must agree (VBD with Past, VBZ/VBP with Pres). Subject and direct object are
the root's ``nsubj`` (``nsubj:pass`` included) and ``obj`` (``dobj`` in UD v1) dependents;
their number is the tag NN/NNS, checked against the ``Number`` feature. Coordinated main
clauses are a root with one clausal ``conj`` that has its own subject and a ``cc``.
"""

from __future__ import annotations

from posharness.tasks.senteval.building.clause_records import (
    PAST,
    PLURAL,
    PRESENT,
    SINGULAR,
    TAG_TENSE,
    Coordination,
    Finding,
    Labelled,
)
from posharness.tasks.senteval.building.conllu import UdWord

_TENSES = {"Past": PAST, "Pres": PRESENT}
_NUMBERS = {SINGULAR: "Sing", PLURAL: "Plur"}
_SUBJECTS = ("nsubj",)
_OBJECTS = ("obj", "dobj")
_PUNCT = "PUNCT"


def tense(words: tuple[UdWord, ...]) -> Finding:
    root = _root(words)
    if root is None:
        return "no_root"
    finite = root if _is_finite(root) else None
    if finite is None:
        finite = next(
            (w for w in _children(words, root) if w.relation in ("aux", "cop") and _is_finite(w)),
            None,
        )
    if finite is None:
        return "no_finite_verb"
    if finite.xpos == "MD":
        return "modal"
    label = _TENSES.get(finite.feature("Tense") or "")
    if label is None:
        return "no_tense_feature"
    if finite.xpos in TAG_TENSE and TAG_TENSE[finite.xpos] != label:
        return "tense_tag_conflict"
    return Labelled(label, root.form.lower(), root.index - 1)


def subject_number(words: tuple[UdWord, ...]) -> Finding:
    return _dependent_number(words, _SUBJECTS, "no_subject")


def object_number(words: tuple[UdWord, ...]) -> Finding:
    return _dependent_number(words, _OBJECTS, "no_object")


def coordination(words: tuple[UdWord, ...]) -> Coordination | str:
    root = _root(words)
    if root is None:
        return "no_root"
    conjuncts = [w for w in _children(words, root) if w.relation == "conj" and _is_clause(words, w)]
    if len(conjuncts) != 1 or not _has_subject(words, root):
        return "not_two_clauses"
    head = conjuncts[0]
    span = sorted(index - 1 for index in _subtree(words, head))  # 0-based positions
    if span != list(range(span[0], span[-1] + 1)):
        return "clause_not_contiguous"
    # The second conjunct opens with its coordinator (and a comma attached to it).
    second_start = span[0]
    while (
        second_start <= span[-1]
        and words[second_start].head == head.index
        and (words[second_start].relation in ("cc", "punct"))
    ):
        second_start += 1
    if not any(words[p].relation == "cc" for p in range(span[0], second_start)):
        return "no_coordinator"
    second_end = span[-1] + 1
    while second_end > second_start and words[second_end - 1].upos == _PUNCT:
        second_end -= 1
    if any(w.upos != _PUNCT for w in words[second_end:]):
        return "clause_not_final"
    first_end = span[0]
    while first_end > 0 and words[first_end - 1].form in (",", ";"):
        first_end -= 1
    if first_end == 0 or second_end == second_start:
        return "clause_not_contiguous"
    if words[0].upos == _PUNCT:
        return "starts_with_punctuation"
    proper = frozenset(w.index - 1 for w in words if w.xpos in ("NNP", "NNPS") or w.form == "I")
    return Coordination(
        first=(0, first_end),
        connector=(first_end, second_start),
        second=(second_start, second_end),
        tail=(second_end, len(words)),
        proper=proper,
    )


def _dependent_number(words: tuple[UdWord, ...], relations: tuple[str, ...], none: str) -> Finding:
    root = _root(words)
    if root is None:
        return "no_root"
    dependent = next((w for w in _children(words, root) if w.relation in relations), None)
    if dependent is None:
        return none
    if any(w.relation == "conj" for w in _children(words, dependent)):
        return "coordinated_noun_phrase"
    if dependent.xpos in ("NNP", "NNPS"):
        return "proper_noun"
    if dependent.xpos not in _NUMBERS:
        return "head_not_noun"
    number = dependent.feature("Number")
    if number is not None and number != _NUMBERS[dependent.xpos]:
        return "number_tag_conflict"
    return Labelled(dependent.xpos, dependent.form.lower(), dependent.index - 1)


def _root(words: tuple[UdWord, ...]) -> UdWord | None:
    roots = [w for w in words if w.head == 0]
    return roots[0] if len(roots) == 1 else None


def _children(words: tuple[UdWord, ...], head: UdWord) -> list[UdWord]:
    return [w for w in words if w.head == head.index]


def _subtree(words: tuple[UdWord, ...], head: UdWord) -> set[int]:
    """1-based IDs of ``head`` and everything below it."""
    below: dict[int, list[int]] = {}
    for w in words:
        below.setdefault(w.head, []).append(w.index)
    found, stack = set(), [head.index]
    while stack:
        index = stack.pop()
        if index not in found:
            found.add(index)
            stack.extend(below.get(index, ()))
    return found


def _is_finite(word: UdWord) -> bool:
    return word.feature("VerbForm") == "Fin" or word.xpos in ("VBD", "VBZ", "VBP", "MD")


def _is_clause(words: tuple[UdWord, ...], word: UdWord) -> bool:
    return _has_subject(words, word) and (
        word.upos in ("VERB", "AUX") or any(w.relation == "cop" for w in _children(words, word))
    )


def _has_subject(words: tuple[UdWord, ...], word: UdWord) -> bool:
    return any(w.relation in ("nsubj", "csubj", "expl") for w in _children(words, word))
