"""Penn-Treebank constituency parses as the word-swap probes need them (Chen et al. App. A.3).

SNLI ships a Stanford-parser tree for every sentence (``sentence1_parse``). The probes need
three things from it: the words (with PTB escapes such as ``-LRB-`` undone), the phrasal
constituents as leaf spans (Shuffle-x picks one NP/VP/PP/ADVP/ADJP of x words) and the tree
shape with part-of-speech tags (Shuffle-SR finds subject, verb and object). A parse the probes
cannot use raises :class:`ParseProblem` with a stable ``reason`` that the build summary counts,
so one broken record never stops a build.

Leaves-versus-sentence rule (measured on the SNLI 1.0 files): with escapes undone, the leaves
joined without whitespace equal the sentence without whitespace once double quotes
(`````` ``''`` ``"``) and single quotes (`````, ``'``) are each folded to one character.
All 20,000 test sentences pass; on dev one sentence only passes thanks to the single-quote
fold (the parser wrote ````` for an opening ``'``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import nltk
from nltk.tokenize.treebank import TreebankWordDetokenizer

from posharness.base.errors import DataError
from posharness.tasks.ptb import PTB_ESCAPES

# Labels that wrap the whole sentence rather than name a phrase.
_TOP_LABELS = frozenset({"ROOT", "TOP", ""})


class ParseProblem(DataError):
    """A parse the probes cannot use; ``reason`` is a stable code counted in the build summary.

    ``"malformed_parse"``: nltk cannot read it, the brackets are unbalanced, or it is not a
    tree whose every leaf sits under a part-of-speech tag. ``"leaves_mismatch"``: the leaves
    do not spell the sentence the record claims it parses.
    """

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Span:
    """A phrasal constituent as a half-open range of leaf indices."""

    label: str  # phrase label without function tags/indices (NP-SBJ-1 -> NP)
    start: int  # leaf index, inclusive
    end: int  # exclusive


@dataclass(frozen=True)
class Parsed:
    """A readable parse: the nltk tree and its leaves with PTB escapes undone."""

    tree: nltk.Tree
    tokens: tuple[str, ...]  # "(" for -LRB- etc.; quotes kept as `` and ''


@dataclass(frozen=True)
class Constituent:
    """One tree node with its leaf span; a preterminal (POS tag) has no children."""

    label: str  # function tags stripped, as in Span
    start: int
    end: int
    children: tuple[Constituent, ...]

    @property
    def is_preterminal(self) -> bool:
        return not self.children


def bare_label(label: str) -> str:
    """``NP-SBJ-1`` -> ``NP``, ``NP=2`` -> ``NP``; escaped tags such as ``-LRB-`` stay whole."""
    if label.startswith("-"):
        return label
    return label.split("=", 1)[0].split("-", 1)[0]


def read_parse(parse: str, sentence: str | None = None) -> Parsed:
    """Read a PTB bracketing; with ``sentence``, check that the leaves spell it (module doc)."""
    try:
        tree = nltk.Tree.fromstring(parse)
    except (ValueError, IndexError, TypeError) as err:
        raise ParseProblem("malformed_parse", _first_line(err)) from None
    if not isinstance(tree, nltk.Tree):
        raise ParseProblem("malformed_parse", f"not a bracketed tree: {parse[:60]!r}")
    _check_shape(tree)
    tokens = tuple(PTB_ESCAPES.get(leaf, leaf) for leaf in tree.leaves())
    if sentence is not None and _comparable("".join(tokens)) != _comparable(sentence):
        raise ParseProblem(
            "leaves_mismatch", f"leaves {' '.join(tokens)!r} do not spell {sentence!r}"
        )
    return Parsed(tree=tree, tokens=tokens)


def constituents(parsed: Parsed) -> Constituent:
    """The whole tree as :class:`Constituent` nodes with leaf spans (root first)."""
    node, _ = _annotate(parsed.tree, 0)
    return node


def pos_tags(parsed: Parsed) -> tuple[str, ...]:
    """The part-of-speech tag of every leaf, aligned with ``parsed.tokens``."""
    return tuple(tag for _, tag in parsed.tree.pos())


def phrases(parsed: Parsed) -> list[Span]:
    """Every phrasal constituent (not POS tags, not ROOT) in preorder, each (label, span) once."""
    seen: set[Span] = set()
    found: list[Span] = []
    for node in _preorder(constituents(parsed)):
        if node.is_preterminal or node.label in _TOP_LABELS:
            continue
        span = Span(node.label, node.start, node.end)
        if span not in seen:
            seen.add(span)
            found.append(span)
    return found


_DETOKENIZER = TreebankWordDetokenizer()


def render(tokens: Sequence[str]) -> str:
    """Natural text from PTB tokens ("ca n't" -> "can't", no space before "."), used for
    originals and shuffles alike so that the two differ only in word order."""
    return _DETOKENIZER.detokenize(list(tokens))


def _preorder(node: Constituent) -> Iterator[Constituent]:
    yield node
    for child in node.children:
        yield from _preorder(child)


def _annotate(tree: nltk.Tree, start: int) -> tuple[Constituent, int]:
    label = bare_label(tree.label())
    if len(tree) == 1 and isinstance(tree[0], str):
        return Constituent(label, start, start + 1, ()), start + 1
    children = []
    end = start
    for child in tree:
        node, end = _annotate(child, end)
        children.append(node)
    return Constituent(label, start, end, tuple(children)), end


def _check_shape(tree: nltk.Tree) -> None:
    """Every node has children; a leaf is the only child of its POS tag (no bare leaves)."""
    for node in tree.subtrees():
        if len(node) == 0:
            raise ParseProblem("malformed_parse", f"empty constituent ({node.label()})")
        words = [child for child in node if isinstance(child, str)]
        if words and len(node) != 1:
            raise ParseProblem(
                "malformed_parse", f"leaf {words[0]!r} is not under a part-of-speech tag"
            )
    if not tree.leaves():
        raise ParseProblem("malformed_parse", "tree has no leaves")


def _comparable(text: str) -> str:
    """Whitespace dropped and PTB quote conventions folded (``/''/" and `/')."""
    folded = "".join(text.split())
    for quote in ("``", "''"):
        folded = folded.replace(quote, '"')
    return folded.replace("`", "'")


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
