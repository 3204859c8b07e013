"""Sub-word attention → word attention → each head's predicted word (Clark et al. 2019 §4).

A dependency tree links words, a model attends between pieces. Clark et al. turn a
piece-level map into a word-level one by *summing* the attention a word receives over
its pieces (attention is a distribution over keys, so the parts add up) and by
*averaging* the rows of the pieces a word sends from (the paper) — their released code
takes the first piece's row instead; both are offered. Special tokens and padding have
no word id, so they drop out by mask wherever they sit (XLNet puts its ``<sep> <cls>``
last), and the word-level rows are not renormalised: only the argmax is used.

A head is read as a parser in two directions (Clark et al.'s released
``Syntax_Analysis.ipynb``, ``attn_head_predictor`` in modes ``normal`` and
``transpose``): a word's prediction is the word *it* attends to most (row argmax,
:func:`predicted_words`), or the word that attends most *to it* (column argmax,
:func:`attending_words`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

FROM_WORD_RULES = ("mean", "first")  # the paper's rule first: it is the default


@dataclass(frozen=True)
class WordAlignment:
    """How the pieces of each padded row map onto that row's words."""

    to_word: torch.Tensor  # [B, W, T]: 1 where piece t belongs to word w
    from_word: torch.Tensor  # [B, W, T]: weights that turn piece rows into a word's row
    has_pieces: torch.Tensor  # [B, W] bool: False for words the tokenizer dropped, padding

    @property
    def words(self) -> int:
        return int(self.to_word.shape[1])


def align_words(
    word_ids: Sequence[Sequence[int | None]],
    word_counts: Sequence[int],
    width: int,
    from_word: str = "mean",
) -> WordAlignment:
    """Build the piece → word maps of a padded batch from the adapter's word ids.

    ``word_counts`` says how many words each row was made from, so a word that the
    tokenizer turned into no piece (a lone control character) is known to exist and is
    marked ``has_pieces=False`` rather than silently shifting the others.
    """
    if from_word not in FROM_WORD_RULES:
        raise ValueError(f"from_word must be one of {FROM_WORD_RULES}, not {from_word!r}")
    rows = len(word_ids)
    ids = torch.full((rows, width), -1, dtype=torch.long)
    for row, row_ids in enumerate(word_ids):
        known = [-1 if w is None else w for w in row_ids]
        if any(w >= word_counts[row] for w in known):
            raise ValueError(f"row {row}: a word id is not below its {word_counts[row]} words")
        ids[row, : len(known)] = torch.tensor(known, dtype=torch.long)
    words = torch.arange(max(max(word_counts, default=0), 1))
    to_word = (ids[:, None, :] == words[None, :, None]).float()
    pieces = to_word.sum(dim=-1)
    has_pieces = pieces > 0
    if from_word == "mean":
        from_weights = to_word / pieces.clamp(min=1).unsqueeze(-1)
    else:
        from_weights = to_word * (to_word.cumsum(dim=-1) == 1)
    return WordAlignment(to_word, from_weights, has_pieces)


def word_attention(attention: torch.Tensor, alignment: WordAlignment) -> torch.Tensor:
    """[B, H, T, T] piece attention → [B, H, W, W] word attention (rows: from, cols: to)."""
    from_word = alignment.from_word.to(attention.device, attention.dtype)
    to_word = alignment.to_word.to(attention.device, attention.dtype)
    return torch.einsum("bwt,bhts,bvs->bhwv", from_word, attention, to_word)


def predicted_words(words_attention: torch.Tensor, alignment: WordAlignment) -> torch.Tensor:
    """Each word's most-attended other word, per head: [B, H, W] word indices.

    The diagonal is excluded (a word is never its own head) and so are words without
    pieces; ties go to the leftmost word, as ``argmax`` does.
    """
    return _argmax_other_word(words_attention.float().clone(), alignment)


def attending_words(words_attention: torch.Tensor, alignment: WordAlignment) -> torch.Tensor:
    """For each word, the other word that attends to it most, per head: [B, H, W].

    The argmax runs over the word's *column* — Clark et al.'s ``head<-dep`` predictor
    (their ``transpose`` mode), which counts an arc right when the word attending most to
    the dependent is its head. Exclusions and ties as in :func:`predicted_words`.
    """
    return _argmax_other_word(words_attention.float().transpose(-1, -2).clone(), alignment)


def attends_to_itself(
    words_attention: torch.Tensor, alignment: WordAlignment, rows: torch.Tensor, words: torch.Tensor
) -> torch.Tensor:
    """Whether each head predicts a word as its own head: [R, H, 2] booleans.

    The root relation of Chen et al.'s Table A3 (distance 0.0: spaCy makes the root its
    own head) is found by a head whose argmax at the root word is the root word itself,
    so for these words the diagonal competes like any other word. ``rows`` and ``words``
    name the R words (batch row, word index). Column 0 reads the word's row (the word it
    attends to most is itself: ``dependent_to_head``), column 1 its column (the word
    attending most to it is itself: ``head_to_dependent``), the two readings of
    :func:`predicted_words` and :func:`attending_words`. Words without pieces are
    excluded and ties go to the leftmost word, exactly as for every other relation.
    """
    scores = words_attention.float()
    index = rows.to(scores.device), words.to(scores.device)
    sent = scores[index[0], :, index[1], :]  # [R, H, W]: what each word attends to
    received = scores[index[0], :, :, index[1]]  # [R, H, W]: who attends to each word
    valid = alignment.has_pieces.to(scores.device)[index[0]][:, None, :]  # [R, 1, W]
    target = index[1][:, None]
    return torch.stack(
        [
            sent.masked_fill(~valid, float("-inf")).argmax(dim=-1) == target,
            received.masked_fill(~valid, float("-inf")).argmax(dim=-1) == target,
        ],
        dim=-1,
    )


def _argmax_other_word(scores: torch.Tensor, alignment: WordAlignment) -> torch.Tensor:
    """Argmax over the last axis, never the word itself nor a word without pieces."""
    valid = alignment.has_pieces.to(scores.device)
    scores.masked_fill_(~valid[:, None, None, :], float("-inf"))
    words = scores.shape[-1]
    eye = torch.eye(words, dtype=torch.bool, device=scores.device)
    scores.masked_fill_(eye, float("-inf"))
    return scores.argmax(dim=-1)
