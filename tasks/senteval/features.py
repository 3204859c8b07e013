"""Sentence vectors per layer, each unique sentence encoded once per (model, mode, pooling).

Conneau et al. 2018 probe one fixed-size vector per sentence; Chen et al. (App. C.3) take
the mean over a layer's token states (Reimers & Gurevych 2019), for every layer, and pick
the layer on dev. The ten tasks share many sentences (and a rerun shares all), so vectors
are kept in an append-only store keyed by the sentence itself, not by task or file: a
second task, or the same task again, encodes only what no earlier run encoded.

The store is a folder of chunk files (safetensors): each holds the 16-byte BLAKE2b keys of
its sentences and one ``[n, d]`` tensor per layer, the embeddings output first. A chunk is
written atomically under a name derived from its content, so two processes adding the
same sentences end with one complete file. Reading one layer maps each chunk's tensor for
that layer and gathers the rows a task needs, so memory holds one layer of the task's
sentences at a time (what the classifier needs), never all layers of all sentences.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from posharness.base.errors import OptionError

if TYPE_CHECKING:
    from posharness.contracts.adapter import EncoderOutput

POOLINGS = ("mean", "cls")
STORE_VERSION = 1
CHUNK = 2048  # sentences per chunk file: bounds memory while encoding


def sentence_key(sentence: str) -> bytes:
    return hashlib.blake2b(sentence.encode("utf-8"), digest_size=16).digest()


def check_pooling(name: str, task: str) -> None:
    if name not in POOLINGS:
        raise OptionError(
            f"--task-arg {task}.pooling={name}: unknown pooling, expected one of "
            f"{', '.join(POOLINGS)}"
        )


def pool(output: EncoderOutput, pooling: str) -> list[np.ndarray]:
    """One ``[B, d]`` array per layer: the mean over the sentence's pieces without special
    tokens (the papers' choice), or the first token's state (``cls``)."""
    import torch

    assert output.hidden_states is not None
    keep = output.attention_mask.bool() & ~output.special_tokens_mask
    weights = keep.to(torch.float32)
    weights = weights / weights.sum(dim=1, keepdim=True).clamp(min=1.0)
    pooled = []
    for states in output.hidden_states:
        states = states.to(torch.float32)
        if pooling == "cls":
            vectors = states[:, 0]
        else:
            vectors = torch.einsum("btd,bt->bd", states, weights.to(states.device))
        pooled.append(vectors.cpu().numpy())
    return pooled


@dataclass
class EncodeLog:
    encoded: int = 0  # sentences run through the model in this call
    reused: int = 0  # sentences found in the store


class SentenceFeatureStore:
    """Pooled vectors of one (model, mode, pooling) for any number of sentences."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._index: dict[bytes, tuple[Path, int]] | None = None

    def index(self) -> dict[bytes, tuple[Path, int]]:
        """Sentence key → (chunk file, row); read once, extended as chunks are added."""
        if self._index is None:
            from safetensors import safe_open

            self._index = {}
            for path in sorted(self.folder.glob("chunk-*.safetensors")):
                with safe_open(str(path), framework="numpy") as handle:
                    keys = handle.get_tensor("keys")
                for row, key in enumerate(keys):
                    self._index.setdefault(key.tobytes(), (path, row))
        return self._index

    def reload(self) -> None:
        """Forget the index; the next read lists the chunk files again."""
        self._index = None

    def missing(self, sentences: Sequence[str]) -> list[str]:
        """Sentences not in the store, each once, in first-seen order."""
        index = self.index()
        seen: dict[str, None] = {}
        for sentence in sentences:
            if sentence_key(sentence) not in index:
                seen.setdefault(sentence, None)
        return list(seen)

    def add(self, sentences: Sequence[str], layers: Sequence[np.ndarray]) -> Path:
        """One chunk: ``layers`` holds ``[len(sentences), d]`` per layer."""
        from safetensors.numpy import save_file

        from posharness.storage.io import atomic_target

        keys = np.frombuffer(b"".join(sentence_key(s) for s in sentences), dtype=np.uint8)
        keys = keys.reshape(len(sentences), 16)
        name = hashlib.blake2b(keys.tobytes(), digest_size=12).hexdigest()
        path = self.folder / f"chunk-{name}.safetensors"
        tensors = {"keys": keys}
        tensors.update(
            {f"layer_{i:03d}": np.ascontiguousarray(a, np.float32) for i, a in enumerate(layers)}
        )
        self.folder.mkdir(parents=True, exist_ok=True)
        hint = "pass a writable --cache-dir or use --no-cache"
        with atomic_target(path, hint=hint) as tmp:
            save_file(tensors, str(tmp), metadata={"format": f"sentence-features/{STORE_VERSION}"})
        index = self.index()
        for row, key in enumerate(keys):
            index.setdefault(key.tobytes(), (path, row))
        return path

    def layers(self, sentences: Sequence[str]) -> int:
        """How many layers the stored vectors have (embeddings output included)."""
        from safetensors import safe_open

        path, _ = self.index()[sentence_key(sentences[0])]
        with safe_open(str(path), framework="numpy") as handle:
            return sum(1 for name in handle.keys() if name.startswith("layer_"))  # noqa: SIM118

    def layer(self, sentences: Sequence[str], layer: int) -> np.ndarray:
        """``[len(sentences), d]`` vectors of one layer, in the order given."""
        from safetensors import safe_open

        index = self.index()
        where = [index[sentence_key(s)] for s in sentences]
        by_chunk: dict[Path, list[int]] = {}
        for position, (path, _) in enumerate(where):
            by_chunk.setdefault(path, []).append(position)
        out: np.ndarray | None = None
        for path, positions in sorted(by_chunk.items()):
            with safe_open(str(path), framework="numpy") as handle:
                block = handle.get_tensor(f"layer_{layer:03d}")
            if out is None:
                out = np.empty((len(sentences), block.shape[1]), dtype=np.float32)
            rows = [where[p][1] for p in positions]
            out[positions] = block[rows]
        assert out is not None, "no sentences asked for"
        return out


def encode_missing(
    store: SentenceFeatureStore,
    sentences: Sequence[str],
    tokenize: Callable[[list[str]], list[Any]],
    batches: Callable[[list[Any], Callable[[int], None] | None], Any],
    pooling: str,
    progress: Callable[[int], None] | None = None,
) -> EncodeLog:
    """Encode the sentences the store lacks, ``CHUNK`` at a time, and add them.

    Under a data-parallel launch the main process says what is missing and alone writes
    the chunks; the others wait for them and read the store again afterwards.
    """
    from posharness.base.distributed import launched, main_decides, wait_for_everyone

    todo = main_decides(lambda: store.missing(sentences))
    log = EncodeLog(encoded=len(todo), reused=len(set(sentences)) - len(todo))
    for start in range(0, len(todo), CHUNK):
        chunk = todo[start : start + CHUNK]
        items = tokenize(chunk)
        layers: list[np.ndarray] | None = None
        for indices, output in batches(items, progress):
            pooled = pool(output, pooling)
            if layers is None:
                layers = [np.empty((len(chunk), p.shape[1]), np.float32) for p in pooled]
            for target, values in zip(layers, pooled, strict=True):
                target[indices] = values
        assert layers is not None
        store.add(chunk, layers)
    if launched():
        wait_for_everyone()  # the main process's chunks are in place
        store.reload()
    return log
