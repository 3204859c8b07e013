"""One sentence with its basic dependency tree: the unit every dependency-head input yields.

Gold treebanks (CoNLL-U) and spaCy-parsed raw text both become :class:`Sentence`, so the
scoring never knows where a tree came from. Words are syntactic words (a CoNLL-U
multi-word token such as "don't" appears as "do" + "n't"), because heads point at them.
"""

from __future__ import annotations

from dataclasses import dataclass

ROOT = 0  # the head index of the root word; heads are 1-based like CoNLL-U's HEAD column
# The relation of a root word when it is scored (Chen et al. 2023 Table A3's "Root"):
# UD's label, and the one spacy_parse gives spaCy's ROOT.
ROOT_RELATION = "root"


@dataclass(frozen=True)
class Sentence:
    sent_id: str  # the treebank's ``# sent_id`` (or a generated ``<file>:<line>``)
    words: tuple[str, ...]
    heads: tuple[int, ...]  # 1-based index of each word's head; ROOT for the root
    relations: tuple[str, ...]  # full labels, subtypes kept ("nmod:poss", "obl:tmod")
    line: int  # 1-based line of the first word in its source file, for error messages

    def __len__(self) -> int:
        return len(self.words)


def base_relation(label: str) -> str:
    """The UD relation without its subtype: ``nmod:poss`` → ``nmod``.

    Chen et al. and Clark et al. report relations without subtypes, so the collapsed
    label set is the one comparable to their tables; the full set stays available.
    """
    return label.split(":", 1)[0]


def conllu_lines(sentence: Sentence) -> list[str]:
    """The sentence as CoNLL-U lines (``sent_id`` comment, ten columns, blank line).

    Only what the probe reads is filled (FORM, HEAD, DEPREL); other columns are ``_``.
    """
    lines = [f"# sent_id = {sentence.sent_id}"]
    for index, (word, head, relation) in enumerate(
        zip(sentence.words, sentence.heads, sentence.relations, strict=True), start=1
    ):
        lines.append(f"{index}\t{word}\t_\t_\t_\t_\t{head}\t{relation}\t_\t_")
    lines.append("")
    return lines
