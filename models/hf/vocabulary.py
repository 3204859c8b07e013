"""Vocabulary items for identical-word probing (Wang et al. 2021; docs/tasks/geometry.md)."""

from __future__ import annotations

from collections.abc import Mapping

# Markers that sub-word vocabularies use for "this piece starts a word".
WORD_START_MARKERS = ("▁", "Ġ")
CONTINUATION_PREFIX = "##"


def whole_word_vocabulary(vocab: Mapping[str, int], special_ids: set[int]) -> list[tuple[str, int]]:
    """Alphabetic whole words of at least two letters, sorted by id for reproducible draws.

    WordPiece vocabularies mark continuations (``##ing``) and leave word starts bare;
    SentencePiece and byte-level BPE mark word starts (``▁the``, ``Ġthe``) and leave
    continuations bare. The style is read off the vocabulary itself.
    """
    tokens = list(vocab)
    start_marker = next(
        (m for m in WORD_START_MARKERS if sum(t.startswith(m) for t in tokens) > len(tokens) // 10),
        None,
    )
    chosen = []
    for token, token_id in vocab.items():
        if token_id in special_ids or token.startswith(CONTINUATION_PREFIX):
            continue
        if start_marker is not None:
            if not token.startswith(start_marker):
                continue
            word = token[len(start_marker) :]
        else:
            word = token
        if len(word) >= 2 and word.isalpha() and word.isascii():
            chosen.append((word, token_id))
    return sorted(chosen, key=lambda pair: pair[1])
