"""Penn-Treebank bracketings read into small immutable trees, and the two tree measures
the syntactic probing tasks are defined on (Conneau et al. 2018, §3 "Syntactic information").

The reader is a bracket scanner rather than ``nltk.Tree.fromstring``: a build reads tens of
thousands of trees and needs only labels, words and shape. It accepts the layouts of SNLI's
``sentence1_parse`` (``(ROOT (S ...))``), of the WSJ ``.mrg`` files (``( (S ...))``, with
``-NONE-`` empty elements and function tags such as ``NP-SBJ-1``) and a bare ``(S ...)``.
Every tree is normalised to the Stanford parser's shape — a ``ROOT`` node above the
sentence node, no empty elements, bare labels — because the official TreeDepth labels were
computed on Stanford parses (see :func:`tree_depth`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from posharness.tasks.ptb import PTB_ESCAPES

ROOT = "ROOT"
_ROOT_LABELS = frozenset({"", "ROOT", "TOP"})
_EMPTY_ELEMENT = "-NONE-"
# The clause labels whose children are a sentence's "top constituents" (TopConst).
CLAUSE_LABELS = frozenset({"S", "SINV", "SQ", "SBARQ"})
_TOKEN = re.compile(r"\(|\)|[^\s()]+")


class BracketError(ValueError):
    """A bracketing that is not a tree; ``offset`` is the character where it went wrong."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True, slots=True)
class Node:
    """A constituent; a pre-terminal (part-of-speech node) has ``word`` and no children."""

    label: str
    children: tuple[Node, ...] = ()
    word: str | None = None

    @property
    def is_preterminal(self) -> bool:
        return self.word is not None

    def preterminals(self) -> Iterator[Node]:
        """The part-of-speech nodes, left to right."""
        if self.word is not None:
            yield self
            return
        for child in self.children:
            yield from child.preterminals()

    def words(self) -> tuple[str, ...]:
        return tuple(node.word for node in self.preterminals() if node.word is not None)

    def tags(self) -> tuple[str, ...]:
        return tuple(node.label for node in self.preterminals())


def bare_label(label: str) -> str:
    """``NP-SBJ-1`` -> ``NP``, ``NP=2`` -> ``NP``; tags such as ``-LRB-`` and ``PRP$`` stay."""
    if label.startswith("-") or not label:
        return label
    return label.split("=", 1)[0].split("-", 1)[0]


def read_tree(text: str) -> Node:
    """One bracketed tree, normalised: ROOT on top, empty elements dropped, labels bare."""
    trees = list(read_trees(text))
    if len(trees) != 1:
        raise BracketError(f"expected one tree, found {len(trees)}", 0)
    return trees[0][1]


def read_trees(text: str) -> Iterator[tuple[int, Node]]:
    """Every tree in ``text`` with the character offset where it starts."""
    tokens = [(m.group(), m.start()) for m in _TOKEN.finditer(text)]
    position = 0
    while position < len(tokens):
        token, offset = tokens[position]
        if token != "(":
            raise BracketError(f"text {token!r} outside any tree", offset)
        raw, position = _read_node(tokens, position)
        tree = _normalise(raw, offset)
        yield offset, tree


def _read_node(tokens: list[tuple[str, int]], position: int) -> tuple[_Raw, int]:
    """Iterative reader (deep trees must not hit Python's recursion limit)."""
    stack: list[_Raw] = []
    while position < len(tokens):
        token, offset = tokens[position]
        position += 1
        if token == "(":
            label = ""
            if position < len(tokens) and tokens[position][0] not in "()":
                label = tokens[position][0]
                position += 1
            stack.append(_Raw(label, [], offset))
        elif token == ")":
            if not stack:
                raise BracketError("unbalanced ')'", offset)
            done = stack.pop()
            if not stack:
                return done, position
            stack[-1].children.append(done)
        else:
            if not stack:
                raise BracketError(f"word {token!r} outside any bracket", offset)
            stack[-1].children.append(token)
    start = stack[0].offset if stack else (tokens[-1][1] if tokens else 0)
    raise BracketError("unbalanced '(' (the tree is not closed)", start)


class _Raw:
    __slots__ = ("children", "label", "offset")

    def __init__(self, label: str, children: list[_Raw | str], offset: int) -> None:
        self.label = label
        self.children = children
        self.offset = offset


def _normalise(raw: _Raw, offset: int) -> Node:
    node = _convert(raw)
    if node is None:
        raise BracketError("the tree has no words (only empty elements)", offset)
    if node.label in _ROOT_LABELS:
        if node.is_preterminal:
            raise BracketError("the tree is a single word without a phrase", offset)
        return Node(ROOT, node.children)
    return Node(ROOT, (node,))


def _convert(raw: _Raw) -> Node | None:
    """A ``Node`` without empty elements; None when nothing but empty elements is below."""
    words = [child for child in raw.children if isinstance(child, str)]
    if words:
        if len(raw.children) != 1:
            raise BracketError(f"word {words[0]!r} is not under a part-of-speech tag", raw.offset)
        if raw.label == _EMPTY_ELEMENT:
            return None
        return Node(raw.label, (), PTB_ESCAPES.get(words[0], words[0]))
    children = tuple(
        node for node in (_convert(c) for c in raw.children if isinstance(c, _Raw)) if node
    )
    if not raw.children:
        raise BracketError(f"empty constituent ({raw.label or 'no label'})", raw.offset)
    if not children:
        return None
    return Node(bare_label(raw.label), children)


def tree_depth(tree: Node) -> int:
    """Nodes on the longest path from ROOT down to a part-of-speech node, both counted —
    equivalently, edges from ROOT to the deepest word (``nltk.Tree.height() - 1``).

    This reproduces the official TreeDepth labels on the examples we could check by hand
    with Stanford-style parses, e.g. "He jumped as a coarse whisper broke his
    concentration ." -> 8: ROOT S VP SBAR S VP NP NN.
    """
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if node.is_preterminal:
            deepest = max(deepest, depth)
        else:
            stack.extend((child, depth + 1) for child in node.children)
    return deepest


def top_clause(tree: Node) -> Node | None:
    """The sentence node below ROOT when it is a clause (S, SINV, SQ, SBARQ), else None."""
    if len(tree.children) == 1 and tree.children[0].label in CLAUSE_LABELS:
        return tree.children[0]
    return None


def top_constituents(tree: Node) -> str | None:
    """The labels of the top clause's children joined with ``_`` (``NP_VP_.``)."""
    clause = top_clause(tree)
    if clause is None:
        return None
    return "_".join(child.label for child in clause.children)
