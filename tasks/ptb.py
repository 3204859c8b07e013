"""Penn Treebank conventions that more than one task family reads parses with.

The Stanford parser and the WSJ ``.mrg`` files write round, square and curly brackets in
leaves as ``-LRB-``/``-RRB-`` and so on (the Penn Treebank's convention), so that a leaf
never reads as a bracket of the tree. SentEval's syntactic probes
(``senteval.building.trees``) and the word-swap probes (``shuffle.trees``) both undo them
in the leaves they read: one table, so the two families cannot drift apart. Quotes are not
in it and stay as the parser wrote them (`````` and ``''``): the word-swap probes'
detokenizer reads them.
"""

from __future__ import annotations

__all__ = ["PTB_ESCAPES"]

PTB_ESCAPES: dict[str, str] = {
    "-LRB-": "(",
    "-RRB-": ")",
    "-LSB-": "[",
    "-RSB-": "]",
    "-LCB-": "{",
    "-RCB-": "}",
}
