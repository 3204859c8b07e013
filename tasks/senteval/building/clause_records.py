"""The records both clause readers return: a label on a word, or a coordination's spans.

The constituency and dependency readers (``tree_clauses``, ``ud_clauses``) and the
dispatcher over them (``clauses``) all build these; they live below the three so the
dispatcher can import its readers without the readers importing it back.
"""

from __future__ import annotations

from dataclasses import dataclass

PAST, PRESENT = "PAST", "PRES"
SINGULAR, PLURAL = "NN", "NNS"
TENSE_CLASSES = (PAST, PRESENT)  # Tense's two classes
NUMBER_CLASSES = (SINGULAR, PLURAL)  # SubjNum's and ObjNum's, the head noun's PTB tag
# The finite verb's PTB tag gives its tense (Conneau et al. §3); both readers go by it.
TAG_TENSE = {"VBD": PAST, "VBZ": PRESENT, "VBP": PRESENT}
NO_PARSE = "no_parse"


@dataclass(frozen=True, slots=True)
class Labelled:
    """A label and the word it rests on (the target kept out of other splits)."""

    label: str
    target: str  # lower-cased word form
    position: int  # its token index
    cue: str = ""  # the word whose tag gives the label (finite verb, head noun)
    cue_tag: str = ""  # its part-of-speech tag in this sentence


@dataclass(frozen=True, slots=True)
class Coordination:
    """``first connector second tail`` as half-open token ranges, e.g. for
    "He knew it , and he deserved no answer ." first=[0,3), connector=[3,5) (", and"),
    second=[5,9), tail=[9,10) (".")."""

    first: tuple[int, int]
    connector: tuple[int, int]
    second: tuple[int, int]
    tail: tuple[int, int]
    proper: frozenset[int]  # token indices whose capital is lexical (proper nouns, "I")


Finding = Labelled | str  # a result, or the reason there is none
