"""``passkey``: LongEmbed's passkey retrieval (Zhu et al. 2024) for any encoder used as an
embedder — per length L, 50 queries against 100 documents of exactly L tokens, retrieval
by cosine of pooled embeddings, nDCG@1 per length and its mean over lengths.

A length the model cannot take (above its ``max_length``, special tokens included) is not
applicable: no number for it, the reason in ``details["not_applicable"]`` — never a zero,
which would read as a model that failed. With ``truncate=true`` such a length is scored the
way LongEmbed's default run scores it instead: each document cut to the model's first
``max_length`` tokens (Zhu et al. 2024, footnote 1: "Inputs exceeding the supported context
length are truncated"), reported under its own name, ``ndcg_at_1_truncated_len{L}``, with
the share of key sentences the cut left in sight. The main metric is the mean over the
lengths that were scored (``settings["lengths_scored"]``, truncated ones included); with
equal queries per length it is also the mean of every query's nDCG@1, so ``compare`` tests
it on the examples. See docs/tasks/length.md.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from posharness.base.errors import OptionError
from posharness.contracts.adapter import HIDDEN, mode_identity
from posharness.contracts.examples import Example
from posharness.contracts.metric_types import MEAN_BINARY
from posharness.contracts.task import Metric, TaskContext, TaskResult, TaskSpec
from posharness.contracts.task_options import TaskOption
from posharness.storage.hashing import hash_file, hash_obj
from posharness.tasks.length.lengths import beyond_model, no_length_applies, parse_lengths
from posharness.tasks.length.passkey_set import (
    GENERATOR_VERSION,
    LengthDraw,
    assemble,
    draw,
    filler_sentences,
    passkey_sentence,
)
from posharness.tasks.length.retrieval import POOLINGS, cosine_scores, pool, relevant_ranks

if TYPE_CHECKING:
    from posharness.contracts.adapter import ModelAdapter

SET_KIND = "passkey-set"
EMBEDDING_KIND = "passkey-embeddings"
DEFAULT_LENGTHS = "64,128,256,512"
MAIN = "ndcg_at_1"


def length_metric(length: int) -> str:
    return f"{MAIN}_len{length}"


def truncated_metric(length: int) -> str:
    """A length scored on documents cut to the model's positions (``truncate=true``): never
    under ``length_metric``'s name, which means whole documents."""
    return f"{MAIN}_truncated_len{length}"


def reference_text():
    """The embedded reference corpus the filler comes from (the modes' default corpus)."""
    from posharness.models.decompose.reference import EMBEDDED_CORPUS

    return EMBEDDED_CORPUS


class Passkey:
    spec = TaskSpec(
        name="passkey",
        version="2",  # 2: no listed name in any filler (generator 2); truncate option
        kind="length-retrieval",
        description="Passkey retrieval by embedding at several lengths (LongEmbed, Zhu 2024)",
        main_metric=MAIN,
        headline_metrics=(MAIN,),
        needs=frozenset({HIDDEN}),
        data_source="synthetic: passkey sentences in the embedded reference text",
        options=(
            TaskOption("lengths", DEFAULT_LENGTHS, "Document lengths in tokens, specials in."),
            TaskOption("documents", 100, "Candidate documents per length (one per person)."),
            TaskOption("queries", 50, "Queries per length (--limit caps them)."),
            TaskOption("pooling", "mean", "Embedding: mean of the real tokens' states, or cls."),
            TaskOption(
                "truncate",
                False,
                "Score lengths past the model's positions on documents cut to its first "
                "max_length tokens (LongEmbed's default run) instead of not applicable.",
            ),
        ),
        metric_types={MAIN: MEAN_BINARY},
    )

    def run(self, model: ModelAdapter, ctx: TaskContext) -> TaskResult:
        lengths = parse_lengths(ctx.options["lengths"])
        pooling = str(ctx.options["pooling"])
        if pooling not in POOLINGS:
            raise OptionError(
                f"--task-arg passkey.pooling={pooling}: unknown pooling, expected one of "
                f"{', '.join(POOLINGS)}"
            )
        documents, queries = int(ctx.options["documents"]), int(ctx.options["queries"])
        if ctx.limit is not None:
            queries = min(queries, ctx.limit)
        truncate = bool(ctx.options["truncate"])
        built, skipped = build_set(model, ctx, lengths, documents, queries, truncate)
        if not built:
            raise no_length_applies("passkey", lengths, model, skipped)
        metrics: dict[str, Metric] = {}
        examples: list[Example] = []
        per_length: dict[str, Any] = {}
        for length, whole in built.items():
            seen = whole.as_seen_by(model)
            picks = seen.picks
            query_vectors, doc_vectors = embed(model, ctx, picks, seen.documents, pooling, length)
            relevant = np.asarray(picks.asked)
            similarity = cosine_scores(query_vectors, doc_vectors)
            ranks = relevant_ranks(similarity, relevant)
            scores = (ranks == 1).astype(np.float64)  # nDCG@1 with one relevant document
            top = similarity.argmax(axis=1)
            name = truncated_metric(length) if seen.truncated else length_metric(length)
            metrics[name] = Metric(float(scores.mean()), stderr=_stderr(scores), n=len(scores))
            key_seen = seen.key_seen[relevant]
            per_length[str(length)] = {
                "ndcg_at_1": float(scores.mean()),
                "mean_rank": float(ranks.mean()),
                "mean_depth": float(np.mean(seen.depths)),
            }
            if seen.truncated:
                per_length[str(length)].update(
                    truncated_to=model.max_length,
                    share_seen=model.max_length / length,
                    key_seen=float(key_seen.mean()),
                )
            for q, document in enumerate(picks.asked):
                examples.append(
                    Example(
                        id=f"L{length}-q{q:03d}",
                        label=int(document),
                        prediction=int(top[q]),
                        score=float(scores[q]),
                        **{MAIN: float(scores[q]), name: float(scores[q])},
                        rank=int(ranks[q]),
                        depth=round(float(seen.depths[document]), 4),
                        length=length,
                        key_seen=bool(key_seen[q]),
                    )
                )
        everything = np.array([e.value(MAIN) for e in examples])
        values = [m.value for n, m in metrics.items() if n != MAIN]
        metrics[MAIN] = Metric(float(np.mean(values)), stderr=_stderr(everything), n=len(examples))
        settings = {
            "lengths": list(lengths),
            "lengths_scored": list(built),
            "lengths_truncated": [n for n in built if n > model.max_length],
            "documents": documents,
            "queries": queries,
            "pooling": pooling,
            "truncate": truncate,
            "seed": ctx.seed,
            "generator": GENERATOR_VERSION,
            "max_length": model.max_length,
        }
        return TaskResult(
            metrics=metrics,
            data_hash=set_identity(lengths, documents, queries, ctx.seed)[:16],
            details={"per_length": per_length, "not_applicable": skipped},
            examples=examples,
            settings=settings,
        )


def _stderr(values: np.ndarray) -> float | None:
    return float(values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else None


def set_identity(lengths: tuple[int, ...], documents: int, queries: int, seed: int) -> str:
    corpus = reference_text()
    return hash_obj(
        {
            "generator": GENERATOR_VERSION,
            "lengths": list(lengths),
            "documents": documents,
            "queries": queries,
            "seed": seed,
            "filler": hash_file(corpus),
        }
    )


@dataclass(frozen=True)
class LengthSet:
    """One length's documents as built: ``[documents, L - specials]`` content token ids,
    the key sentence's depth and its ``[start, end)`` span in each, and whether they were
    cut to the model's positions (``truncated``; ``key_seen``: the key sentence starts
    within what is left, so the document still names its person)."""

    picks: LengthDraw
    documents: np.ndarray
    depths: np.ndarray
    key_spans: np.ndarray
    truncated: bool = False

    @property
    def key_seen(self) -> np.ndarray:
        return self.key_spans[:, 0] < self.documents.shape[1]

    def as_seen_by(self, model: ModelAdapter) -> LengthSet:
        """The documents the model is given: whole where they fit its positions, else cut
        to its first ``max_length`` tokens, special tokens included — what a tokenizer
        called with ``truncation=True, max_length=max_length`` keeps, as LongEmbed's
        default run does (its right-side truncation keeps the beginning)."""
        frame = len(model.wrap_token_ids([]))
        room = model.max_length - frame
        if self.documents.shape[1] <= room:
            return self
        return replace(self, documents=self.documents[:, :room], truncated=True)


def build_set(
    model: ModelAdapter,
    ctx: TaskContext,
    lengths: tuple[int, ...],
    documents: int,
    queries: int,
    truncate: bool = False,
) -> tuple[dict[int, LengthSet], dict[str, str]]:
    """Per length to score: its documents as built, whole (``LengthSet``); per other
    length, why not. With ``truncate`` a length past the model's positions is built whole
    too (the same text as for a model that takes it) and cut later. Built once per (seed,
    lengths, sizes, filler, tokenizer): cached under the model's fingerprint, which covers
    its tokenizer."""
    sentences = filler_sentences(reference_text())
    frame = len(model.wrap_token_ids([]))
    skipped: dict[str, str] = {}
    draws: dict[int, LengthDraw] = {}
    for length in lengths:
        reason = beyond_model(length, model)
        if reason is not None and not truncate:
            skipped[str(length)] = reason
        else:
            draws[length] = draw(length, documents, queries, len(sentences), ctx.seed)
    if not draws:
        return {}, skipped
    identity = set_identity(tuple(draws), documents, queries, ctx.seed)
    key = ctx.cache.key(model.fingerprint(), "tokens", identity, SET_KIND)

    def compute() -> dict:
        import torch

        filler = [_content_ids(t) for t in model.tokenize(sentences)]
        filler = [ids for ids in filler if ids]
        tensors = {}
        for length, picks in draws.items():
            rows, depths, spans = [], [], []
            needles = model.tokenize(
                [passkey_sentence(n, k) for n, k in zip(picks.names, picks.keys, strict=True)]
            )
            for needle, start, depth in zip(
                needles, picks.filler_starts, picks.depths, strict=True
            ):
                ids = _content_ids(needle)
                made = assemble(filler, ids, length - frame, start, depth)
                if made is None:
                    break
                rows.append(made.ids)
                depths.append(made.depth)
                spans.append((made.key_start, made.key_start + len(ids)))
            if len(rows) == len(needles):
                tensors[f"documents_{length}"] = torch.tensor(rows, dtype=torch.int64)
                tensors[f"depths_{length}"] = torch.tensor(depths, dtype=torch.float64)
                tensors[f"key_spans_{length}"] = torch.tensor(spans, dtype=torch.int64)
        return tensors

    tensors = ctx.cache.get_or_compute(key, SET_KIND, compute, meta={"lengths": list(draws)})
    built = {}
    for length, picks in draws.items():
        if f"documents_{length}" not in tensors:
            skipped[str(length)] = (
                f"not applicable: {length} tokens cannot hold the pass key sentence and the "
                f"model's {frame} special tokens"
            )
            continue
        built[length] = LengthSet(
            picks,
            tensors[f"documents_{length}"].numpy(),
            tensors[f"depths_{length}"].numpy(),
            tensors[f"key_spans_{length}"].numpy(),
        )
    return built, skipped


def _content_ids(item) -> list[int]:
    return [i for i, s in zip(item.input_ids, item.special_tokens_mask, strict=True) if not s]


def embed(
    model: ModelAdapter,
    ctx: TaskContext,
    picks: LengthDraw,
    doc_ids: np.ndarray,
    pooling: str,
    length: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Pooled last-layer vectors of the queries and the documents, cached by the model's
    fingerprint, the mode, the pooling and the inputs."""
    query_items = model.tokenize(picks.queries)
    doc_items = [model.wrap_token_ids([int(i) for i in row]) for row in doc_ids]
    inputs = hash_obj(
        {"queries": [list(q.input_ids) for q in query_items], "documents": doc_ids.tolist()}
    )
    key = ctx.cache.key(
        model.fingerprint(), mode_identity(model, ctx.mode), inputs, EMBEDDING_KIND, pooling
    )

    def compute() -> dict:
        import torch

        encoder = ctx.encoder(frozenset({HIDDEN}))
        out = {}
        for name, items in (("queries", query_items), ("documents", doc_items)):
            vectors = None
            advance = ctx.progress(f"passkey {length}: {name}", len(items))
            for indices, output in encoder.batches(items, on_progress=advance):
                assert output.hidden_states is not None
                pooled = pool(output.hidden_states[-1], output.attention_mask, pooling).cpu()
                if vectors is None:
                    vectors = torch.zeros((len(items), pooled.shape[1]), dtype=torch.float32)
                vectors[torch.tensor(indices)] = pooled
            out[name] = vectors
        return out

    tensors = ctx.cache.get_or_compute(key, EMBEDDING_KIND, compute, meta={"length": length})
    return tensors["queries"].double().numpy(), tensors["documents"].double().numpy()
