"""Retrieval by cosine similarity of pooled embeddings, scored with nDCG@1 (LongEmbed's
metric for its synthetic tasks, Zhu et al. 2024 §4).

With one relevant document per query, nDCG@1 is 1 when the top-ranked document is the
relevant one and 0 otherwise: accuracy@1. A random embedder scores 1/documents on average.
Ties in cosine are broken towards the lower document index (numpy's argmax), which a real
embedder never meets and a degenerate one (every document the same vector) turns into a
fixed guess, still at chance.
"""

from __future__ import annotations

import numpy as np

POOLINGS = ("mean", "cls")


def pool(states, attention_mask, pooling: str):
    """``[B, d]`` sentence vectors from one layer's ``[B, T, d]`` states.

    ``mean``: the mean over every real token, special tokens included — sentence-transformers'
    and E5's mean pooling, the one MiniLM and LongEmbed's embedders were trained with;
    ``cls``: the first token's state.
    """
    import torch

    states = states.to(torch.float32)
    if pooling == "cls":
        return states[:, 0]
    weights = attention_mask.to(states.device, torch.float32)
    weights = weights / weights.sum(dim=1, keepdim=True).clamp(min=1.0)
    return torch.einsum("btd,bt->bd", states, weights)


def normalised(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def cosine_scores(queries: np.ndarray, documents: np.ndarray) -> np.ndarray:
    """``[Q, N]`` cosine similarity of every query with every document."""
    return normalised(queries) @ normalised(documents).T


def relevant_ranks(scores: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """1-based rank of each query's relevant document (ties ranked by document index)."""
    relevant = np.asarray(relevant)
    own = scores[np.arange(len(relevant)), relevant]
    above = (scores > own[:, None]).sum(axis=1)
    index = np.arange(scores.shape[1])[None, :]
    tied_before = ((scores == own[:, None]) & (index < relevant[:, None])).sum(axis=1)
    return above + tied_before + 1


def ndcg_at_1(queries: np.ndarray, documents: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """Per query, nDCG@1 with one relevant document: 1.0 if it ranks first, else 0.0."""
    ranks = relevant_ranks(cosine_scores(queries, documents), relevant)
    return (ranks == 1).astype(np.float64)
