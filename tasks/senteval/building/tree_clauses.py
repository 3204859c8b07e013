"""Main-clause facts from a constituency tree (SNLI's Stanford parses, PTB ``.mrg`` files).

The main clause is the S directly below ROOT. Its predicate is its first VP; that VP's
first verb is the finite verb (Tense: VBD -> PAST, VBZ/VBP -> PRES, as Conneau et al.
§3), and following the chain of VPs below it (auxiliaries: "is | playing") reaches the
lexical verb, the target kept out of other splits. The subject is the last NP before the
VP, the direct object the NP complement of the lexical verb; their head noun is the
right-most noun among the NP's own children (the Collins head rule for NPs), entering
``NP -> NP PP`` on the left.
"""

from __future__ import annotations

from posharness.tasks.senteval.building.clause_records import (
    NUMBER_CLASSES,
    TAG_TENSE,
    Coordination,
    Finding,
    Labelled,
)
from posharness.tasks.senteval.building.trees import Node

VERB_TAGS = frozenset({"VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "MD"})
NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
FINAL_PUNCTUATION = frozenset({".", ":", "''", "``", ","})
COPULAS = frozenset({"be", "is", "are", "was", "were", "been", "being", "am", "'s", "'re", "'m"})
_COORDINATORS = frozenset({"CC", "CONJP"})


def tense(tree: Node) -> Finding:
    found = _verbs(tree)
    if isinstance(found, str):
        return found
    finite, _, lexical = found
    label = TAG_TENSE.get(finite.label)
    if label is None:
        return "modal" if finite.label == "MD" else "no_finite_verb"
    target = (lexical.word or "").lower()
    return Labelled(label, target, _starts(tree)[id(lexical)], finite.word or "", finite.label)


def subject_number(tree: Node) -> Finding:
    clause = _main_clause(tree)
    if isinstance(clause, str):
        return clause
    before_vp: list[Node] = []
    for child in clause.children:
        if child.label == "VP":
            break
        if child.label == "NP":
            before_vp.append(child)
    else:
        return "no_main_vp"
    if not before_vp:
        return "no_subject"
    return _noun_number(tree, before_vp[-1])


def object_number(tree: Node) -> Finding:
    found = _verbs(tree)
    if isinstance(found, str):
        return found
    _, vp, lexical = found
    if (lexical.word or "").lower() in COPULAS:
        return "copula"
    objects = [child for child in vp.children if child.label == "NP"]
    if not objects:
        return "no_object"
    # "gave [him] [a book]": with two NP complements the second is the direct object.
    return _noun_number(tree, objects[min(1, len(objects) - 1)])


def coordination(tree: Node) -> Coordination | str:
    """``S -> S (,) CC S (punctuation)`` at the top: two coordinated main clauses."""
    clause = _main_clause(tree)
    if isinstance(clause, str):
        return clause
    children = list(clause.children)
    tail: list[Node] = []
    while children and children[-1].label in FINAL_PUNCTUATION:
        tail.insert(0, children.pop())
    labels = [child.label for child in children]
    if labels not in (["S", "CC", "S"], ["S", ",", "CC", "S"]):
        return "not_s_cc_s"
    widths = [_width(child) for child in children]
    first_end = widths[0]
    second_start = sum(widths[:-1])
    second_end = second_start + widths[-1]
    proper = frozenset(
        index
        for index, node in enumerate(tree.preterminals())
        if node.label in ("NNP", "NNPS") or node.word == "I"
    )
    return Coordination(
        first=(0, first_end),
        connector=(first_end, second_start),
        second=(second_start, second_end),
        tail=(second_end, second_end + sum(_width(node) for node in tail)),
        proper=proper,
    )


def _main_clause(tree: Node) -> Node | str:
    if len(tree.children) != 1 or tree.children[0].label != "S":
        return "top_not_s"
    return tree.children[0]


def _verbs(tree: Node) -> tuple[Node, Node, Node] | str:
    """(finite verb, VP of the lexical verb, lexical verb) of the main clause."""
    clause = _main_clause(tree)
    if isinstance(clause, str):
        return clause
    vp = next((child for child in clause.children if child.label == "VP"), None)
    if vp is None:
        return "no_main_vp"
    # Coordinated VPs ("VP -> VP CC VP") hold no verb themselves: enter the first.
    while not any(child.label in VERB_TAGS for child in vp.children):
        inner = next((child for child in vp.children if child.label == "VP"), None)
        if inner is None:
            return "no_verb"
        vp = inner
    finite = next(child for child in vp.children if child.label in VERB_TAGS)
    lexical, lexical_vp = finite, vp
    while True:
        inner = next((child for child in lexical_vp.children if child.label == "VP"), None)
        verb = (
            None
            if inner is None
            else next((child for child in inner.children if child.label in VERB_TAGS), None)
        )
        if inner is None or verb is None:
            return finite, lexical_vp, lexical
        lexical, lexical_vp = verb, inner


def _noun_number(tree: Node, np: Node) -> Finding:
    while True:
        if any(child.label in _COORDINATORS for child in np.children):
            return "coordinated_noun_phrase"
        nouns = [child for child in np.children if child.label in NOUN_TAGS]
        if nouns:
            head = nouns[-1]
            break
        first = np.children[0]
        if first.label != "NP":
            return "head_not_noun"
        np = first
    if head.label not in NUMBER_CLASSES:
        return "proper_noun"
    word = head.word or ""
    return Labelled(head.label, word.lower(), _starts(tree)[id(head)], word, head.label)


def _width(node: Node) -> int:
    return 1 if node.is_preterminal else sum(_width(child) for child in node.children)


def _starts(tree: Node) -> dict[int, int]:
    """Token index where each node (by identity) starts."""
    starts: dict[int, int] = {}
    position = 0

    def visit(node: Node) -> None:
        nonlocal position
        starts[id(node)] = position
        if node.is_preterminal:
            position += 1
        for child in node.children:
            visit(child)

    visit(tree)
    return starts
