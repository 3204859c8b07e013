"""Pretraining text: reading a corpus, fingerprinting it, and packing it into fixed blocks.

A corpus is a plain-text file, a folder of them, WikiExtractor output (the usual way
Wikipedia is turned into text for BERT pretraining; docs/pretraining.md), or a Hugging Face
``datasets`` dataset (saved, local parquet, or ``hf:NAME``: ``datasets_corpus.py``). Packing follows
RoBERTa's FULL-SENTENCES input (Liu et al. 2019, §4.2), which is BERT's recipe without
next-sentence prediction: documents are concatenated, one separator token between
documents, and cut into blocks of equal length that may cross document boundaries. Every
block is then framed as ``[CLS] ... [SEP]``, so no position is ever padding. Batches take
the blocks epoch by epoch in a seeded order (:class:`BlockOrder`).
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from posharness.base.errors import DataError, OptionError
from posharness.models.pretrain.datasets_corpus import (
    dataset_description,
    dataset_documents,
    dataset_identity,
    dataset_spec,
    update_with_files,
)

NO_TEXT_FIX = "point --corpus at plain-text or WikiExtractor files, a datasets folder or hf:NAME"
Corpus = str | os.PathLike[str]  # a path, or a dataset spec such as hf:wikipedia@train
MIN_BLOCK_SIZE = 8
_COMPRESSED = (".bz2", ".gz", ".xz", ".zip", ".zst")
_WIKIEXTRACTOR_FILE = re.compile(r"wiki_\d+(\.[A-Za-z0-9]+)?")


def corpus_files(path: Corpus) -> list[Path]:
    """The files of a corpus in a fixed order: sorted relative paths, hidden files skipped.

    A folder that holds WikiExtractor output (``AA/wiki_00`` ...) is read as that output
    alone: a dump is usually shipped with a README, a licence or a source note beside it,
    and their text must not become pretraining data.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"corpus {path} does not exist: {NO_TEXT_FIX}")
    if path.is_file():
        return [path]
    files = [
        p
        for p in path.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
    ]
    extracted = [p for p in files if _WIKIEXTRACTOR_FILE.fullmatch(p.name)]
    return sorted(extracted or files, key=lambda p: p.relative_to(path).as_posix())


def read_corpus(path: Corpus) -> Iterator[str]:
    """Every document's text, file by file, with blank lines and WikiExtractor markup removed.

    Plain text: a document is a blank-line-separated block, or a line where the file has no
    blank lines. WikiExtractor: a ``<doc ...>`` element without its title line (its default
    html-safe output escapes ``&<>``, undone here), or a ``--json`` line's ``text``. A
    dataset: each row of its text column (``datasets_corpus.dataset_documents``).
    """
    spec = dataset_spec(path)
    if spec is not None:
        yield from dataset_documents(spec)
        return
    found = False
    files = corpus_files(path)
    for file in files:
        for document in _file_documents(file):
            found = True
            yield document
    if not found:
        size = sum(file.stat().st_size for file in files)
        read = (
            f"{len(files)} file{'s' if len(files) != 1 else ''} of {size} bytes read, every "
            "line blank or every document empty"
            if files
            else "a folder without files"
        )
        raise DataError(f"corpus {path} has no text ({read}): {NO_TEXT_FIX}")


def corpus_identity(path: Corpus) -> str:
    """sha256 over the sorted relative file names and their bytes: moving the folder keeps it.

    A dataset's identity is ``datasets_corpus.dataset_identity`` (its data files, split and
    column). ``path`` may be a ``Path`` made from a dataset spec (``Path("hf:wikipedia")``).
    """
    spec = dataset_spec(path)
    if spec is not None:
        return dataset_identity(spec)
    path = Path(path)
    digest = hashlib.sha256()
    update_with_files(digest, path, corpus_files(path))
    return digest.hexdigest()


def corpus_description(path: Corpus) -> dict[str, Any]:
    """What the corpus is and what its identity hashes (a prepared corpus's manifest).

    The source is named, not located: its file or folder name, with the content hash beside
    it in the manifest, so no path of the preparing machine is written (issue 39).
    """
    spec = dataset_spec(path)
    if spec is not None:
        return dataset_description(spec)
    return {
        "kind": "text files",
        "source": Path(path).name,
        "hashed": "sha256 over the sorted relative file names, sizes and bytes",
    }


def corpus_bytes(path: Corpus) -> int:
    """Bytes of the files the corpus is read from (0 for a hub dataset, whose size is not
    known before loading): what a full-disk message scales its estimate by."""
    spec = dataset_spec(path)
    if spec is not None:
        return 0 if spec.kind == "hub" else sum(f.stat().st_size for f in corpus_files(spec.source))
    return sum(file.stat().st_size for file in corpus_files(path))


def blocks(
    token_ids: Iterable[list[int]], block_size: int, *, separator: int | None = None
) -> Iterator[list[int]]:
    """Concatenate tokenised documents and cut them into ``block_size - 2`` pieces each.

    Two positions per block are left for ``[CLS]`` and ``[SEP]``. ``separator`` (the
    tokenizer's ``[SEP]`` in :func:`packed_blocks`) goes between documents, as in RoBERTa.
    The remainder shorter than a block is dropped, as in ``run_mlm.py``'s ``group_texts``.
    """
    check_block_size(block_size)
    width = block_size - 2
    buffer: list[int] = []
    first = True
    for ids in token_ids:
        if not ids:
            continue
        if separator is not None and not first:
            buffer.append(separator)
        first = False
        buffer.extend(ids)
        if len(buffer) >= width:
            full = len(buffer) // width * width
            for start in range(0, full, width):
                yield buffer[start : start + width]
            del buffer[:full]


def packed_blocks(
    texts: Iterable[str], tokenizer: Any, block_size: int, *, documents_per_call: int = 256
) -> np.ndarray:
    """The corpus as an ``(n_blocks, block_size)`` int32 array of ``[CLS] pieces [SEP]`` rows."""
    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    if cls_id is None or sep_id is None:
        raise OptionError(
            "the tokenizer has no [CLS]/[SEP] tokens: use a BERT-style tokenizer "
            "(or let pretraining train a WordPiece one)"
        )
    documents = tokenised_documents(texts, tokenizer, documents_per_call)
    pieces = blocks(documents, block_size, separator=sep_id)
    chunks, rows = [], []
    for piece in pieces:  # kept as int32 chunks: Python lists of ints cost ~9x the memory
        rows.append(piece)
        if len(rows) == 4096:
            chunks.append(np.asarray(rows, dtype=np.int32))
            rows = []
    if rows:
        chunks.append(np.asarray(rows, dtype=np.int32))
    if not chunks:
        raise DataError(
            f"the corpus has fewer than {block_size - 2} tokens, not one block of "
            f"--block-size {block_size}: give more text or a smaller --block-size"
        )
    framed = np.empty((sum(len(c) for c in chunks), block_size), dtype=np.int32)
    framed[:, 0], framed[:, -1] = cls_id, sep_id
    framed[:, 1:-1] = np.concatenate(chunks)
    return framed


class BlockOrder:
    """Which blocks make up each batch: epoch after epoch, each a seeded permutation.

    Batch ``i`` holds positions ``i*B .. i*B+B-1`` of the endless sequence of epochs, so a
    run cycles through the corpus when the steps exceed an epoch and any batch can be
    found again from its index alone (what resuming needs).
    """

    def __init__(self, n_blocks: int, seed: int) -> None:
        self.n_blocks, self.seed = n_blocks, seed
        self._epochs: dict[int, np.ndarray] = {}

    def permutation(self, epoch: int) -> np.ndarray:
        if epoch not in self._epochs:
            if len(self._epochs) > 4:
                self._epochs.clear()
            epoch_seed = np.random.SeedSequence([self.seed, 1, epoch]).generate_state(1)[0]
            generator = torch.Generator().manual_seed(int(epoch_seed))
            self._epochs[epoch] = torch.randperm(self.n_blocks, generator=generator).numpy()
        return self._epochs[epoch]

    def batch(self, index: int, batch_size: int) -> np.ndarray:
        positions = np.arange(index * batch_size, (index + 1) * batch_size, dtype=np.int64)
        epochs, offsets = np.divmod(positions, self.n_blocks)
        chosen = np.empty(batch_size, dtype=np.int64)
        for epoch in np.unique(epochs):
            here = epochs == epoch
            chosen[here] = self.permutation(int(epoch))[offsets[here]]
        return chosen


def check_block_size(block_size: int) -> None:
    if block_size < MIN_BLOCK_SIZE:
        raise OptionError(
            f"--block-size {block_size}: must be at least {MIN_BLOCK_SIZE} "
            "(two positions go to [CLS] and [SEP])"
        )


def tokenised_documents(texts: Iterable[str], tokenizer: Any, per_call: int) -> Iterator[list[int]]:
    """Token ids per document, in batches (the fast tokenizer runs a batch in parallel)."""
    batch: list[str] = []
    for text in texts:
        batch.append(text)
        if len(batch) == per_call:
            yield from tokenizer(batch, add_special_tokens=False, verbose=False)["input_ids"]
            batch = []
    if batch:
        yield from tokenizer(batch, add_special_tokens=False, verbose=False)["input_ids"]


def _file_documents(file: Path) -> Iterator[str]:
    first = next((text for _, text in _decoded_lines(file) if text.strip()), "").strip()
    if first.startswith("<doc") and first.endswith(">"):
        yield from _wikiextractor_documents(_decoded_lines(file))
    elif _is_json_document(first):
        yield from _wikiextractor_json_documents(file, _decoded_lines(file))
    else:
        yield from _plain_documents(_decoded_lines(file), _blocks_are_documents(file))


def _decoded_lines(file: Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, text) pairs; a byte that is not UTF-8 names its file and line."""
    with file.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                fix = (
                    "decompress it first"
                    if file.suffix.lower() in _COMPRESSED
                    else "convert it to UTF-8 or move it out of the corpus"
                )
                raise DataError(
                    f"{file}:{number}: not UTF-8 text (byte {exc.start} of the line): {fix}"
                ) from exc
            if number == 1:
                text = text.removeprefix("\ufeff")
            yield number, text.rstrip("\r\n")


def _blocks_are_documents(file: Path) -> bool:
    """True when a blank line separates two stretches of text (read as bytes, streaming)."""
    seen_text = seen_gap = False
    with file.open("rb") as handle:
        for raw in handle:
            if raw.strip():
                if seen_gap:
                    return True
                seen_text = True
            elif seen_text:
                seen_gap = True
    return False


def _plain_documents(lines: Iterable[tuple[int, str]], by_block: bool) -> Iterator[str]:
    block: list[str] = []
    for _, text in lines:
        text = text.strip()
        if text and not by_block:
            yield text
        elif text:
            block.append(text)
        elif block:
            yield "\n".join(block)
            block = []
    if block:
        yield "\n".join(block)


def _wikiextractor_documents(lines: Iterable[tuple[int, str]]) -> Iterator[str]:
    body: list[str] | None = None
    title_pending = False
    for _, text in lines:
        stripped = text.strip()
        if stripped.startswith("<doc") and stripped.endswith(">"):
            body, title_pending = [], True
        elif stripped == "</doc>":
            if body:
                yield html.unescape("\n".join(body))
            body = None
        elif body is not None and stripped:
            if title_pending:
                title_pending = False  # WikiExtractor repeats the title as the first line
            else:
                body.append(stripped)
    if body:  # an unclosed last <doc> (a truncated file) still counts
        yield html.unescape("\n".join(body))


def _is_json_document(line: str) -> bool:
    if not line.startswith("{"):
        return False
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return False
    return isinstance(record, dict) and isinstance(record.get("text"), str)


def _wikiextractor_json_documents(file: Path, lines: Iterable[tuple[int, str]]) -> Iterator[str]:
    for number, text in lines:
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(
                f"{file}:{number}: not a JSON line ({exc.msg}) in WikiExtractor --json output: "
                "fix or remove the line"
            ) from exc
        body = record.get("text") if isinstance(record, dict) else None
        if not isinstance(body, str):
            raise DataError(
                f'{file}:{number}: JSON line without a "text" string: expected WikiExtractor '
                "--json output"
            )
        body = "\n".join(line.strip() for line in body.splitlines() if line.strip())
        if body:
            yield body
