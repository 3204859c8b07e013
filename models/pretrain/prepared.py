"""Corpora tokenised and packed once, on disk, read back as a memory map.

Pretraining used to tokenise the whole corpus into one in-memory int32 array per run
folder: BERT's 3.3 B-token corpus would need ~13 GB of RAM before the first step, and every
scheme and seed tokenised it again (issue 30). A prepared corpus is the same packed blocks
(``corpus.packed_blocks``: RoBERTa's FULL-SENTENCES packing framed as ``[CLS] ... [SEP]``,
row for row) written as they are made, in chunks, to a raw int32 file beside a small
manifest, so preparing holds one chunk in memory and training reads only the rows of each
batch (``PreparedRows``). It is keyed by what determines its bytes — the corpus identity, the
tokenizer's vocabulary identity and the block size — and lives in a shared folder, so
every scheme and seed that uses one corpus, tokenizer and block size reads one copy.

A preparation is written under a staging name and renamed when complete (a full disk or a
kill leaves nothing a reader would take for a corpus), and a file lock makes two
processes that ask for the same corpus at once tokenise it once.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from posharness.base.errors import DataError, OptionError
from posharness.models.pretrain.corpus import (
    Corpus,
    blocks,
    check_block_size,
    corpus_bytes,
    corpus_description,
    corpus_identity,
    read_corpus,
    tokenised_documents,
)
from posharness.models.pretrain.prepared_check import (  # names kept importable here
    BLOCKS,
    FORMAT_VERSION,
    MANIFEST,
    SAMPLE_BYTES,
    SAMPLE_CHUNK,
    check_content,
    content_summary,
)
from posharness.models.pretrain.prepared_check import (
    damaged as _damaged,
)
from posharness.models.pretrain.prepared_check import (
    read_manifest as _read_manifest,
)

_ROWS_PER_WRITE = 4096  # rows framed and written at once: the memory preparing needs


@dataclass(frozen=True)
class PreparedCorpus:
    """A packed corpus on disk: ``n_blocks`` rows of ``block_size`` token ids."""

    folder: Path
    n_blocks: int
    block_size: int
    corpus_sha256: str
    tokenizer_sha256: str

    def blocks(self) -> PreparedRows:
        """The rows, read from disk as batches ask for them."""
        return PreparedRows(self.folder / BLOCKS, self.n_blocks, self.block_size)


class PreparedRows:
    """Rows of a prepared corpus, read with ``pread`` when indexed: ``rows[indices]``.

    Not a memory map: on a memory map each row a random batch touches pulls the megabyte
    around it into the process (read-ahead on the page fault, which ``MADV_RANDOM`` did not
    stop here), so a run's resident memory grew with the corpus — 220 -> 390 MB for 160 rows
    of a 100 MB corpus. Reads go to the page cache instead, which the kernel can drop.
    """

    def __init__(self, path: Path, n_blocks: int, block_size: int) -> None:
        self.path, self.n_blocks, self.block_size = Path(path), n_blocks, block_size
        self._row_bytes = block_size * np.dtype(np.int32).itemsize
        self._fd: int | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return self.n_blocks, self.block_size

    def __len__(self) -> int:
        return self.n_blocks

    def __getitem__(self, indices: Any) -> np.ndarray:
        """The rows at ``indices`` (an int or an integer array), as an int32 array."""
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        wanted = np.asarray(indices, dtype=np.int64)
        flat = wanted.reshape(-1)
        if flat.size and (flat.min() < 0 or flat.max() >= self.n_blocks):
            raise IndexError(f"row index out of range for {self.n_blocks} rows")
        out = np.empty((flat.size, self.block_size), dtype=np.int32)
        for slot, row in enumerate(flat):
            data = os.pread(self._fd, self._row_bytes, int(row) * self._row_bytes)
            out[slot] = np.frombuffer(data, dtype=np.int32)
        return out.reshape(*wanted.shape, self.block_size)

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        # At interpreter exit ``os`` may already be torn down, or ``__init__`` may not have
        # run to the end: closing is best effort and never raises out of a finaliser.
        try:  # noqa: SIM105 - contextlib too may be gone at interpreter exit
            self.close()
        except Exception:  # noqa: BLE001 - nothing a finaliser could report to
            pass


def prepared_key(corpus_sha256: str, tokenizer_sha256: str, block_size: int) -> str:
    """The folder name of a preparation: what its bytes depend on, hashed."""
    text = json.dumps([FORMAT_VERSION, corpus_sha256, tokenizer_sha256, block_size])
    return f"blocks{block_size}-{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def prepare_corpus(
    corpus: Corpus,
    tokenizer: Any,
    block_size: int,
    root: Path,
    *,
    corpus_sha256: str | None = None,
    documents_per_call: int = 256,
    verify: bool = False,
) -> PreparedCorpus:
    """The prepared form of ``corpus`` under ``root``: found, or tokenised and written now.

    ``corpus`` is a path or a dataset spec (``hf:NAME``; ``corpus.read_corpus``).
    ``corpus_sha256`` skips hashing the corpus again when the caller already has it.
    ``verify`` hashes every byte of a found preparation against its manifest (the cheap
    sampled check of :func:`load_prepared` runs on every open).
    """
    from filelock import FileLock

    from posharness.models.pretrain.checkpoint import vocabulary_identity

    check_block_size(block_size)
    corpus_sha256 = corpus_sha256 or corpus_identity(corpus)
    tokenizer_sha256 = vocabulary_identity(tokenizer)
    root = Path(root)
    key = prepared_key(corpus_sha256, tokenizer_sha256, block_size)
    vocabulary = _vocabulary(tokenizer)
    found = load_prepared(root / key, vocabulary=vocabulary, verify=verify)
    if found is not None:
        return found
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OptionError(
            f"cannot create the prepared-corpus folder {root} ({exc.strerror}): choose a "
            "writable folder"
        ) from None
    with FileLock(str(root / f".{key}.lock")):
        # another process may have finished it meanwhile
        found = load_prepared(root / key, vocabulary=vocabulary, verify=verify)
        if found is not None:
            return found
        return _write(
            corpus, tokenizer, block_size, root, key, corpus_sha256, tokenizer_sha256,
            documents_per_call,
        )  # fmt: skip


def load_prepared(
    folder: Path, *, vocabulary: int | None = None, verify: bool = False
) -> PreparedCorpus | None:
    """The preparation in ``folder``; None when there is none (nothing renamed in place yet).

    A folder at a preparation's key exists only once a complete preparation was renamed
    there, so anything wrong inside it is damage, and damage is one line that says to delete
    the folder and prepare again (never a traceback, never a silent re-tokenisation into
    the same folder). What is checked on every open, cheaply (:func:`check_content`): the
    manifest, the file's size, a sampled hash of each chunk, and the token ids against
    ``vocabulary`` (the tokenizer's size; ids at or beyond it would fail inside the
    embedding). ``verify`` also hashes every byte against the manifest's full hash.
    """
    folder = Path(folder)
    if not folder.is_dir() or folder.name.startswith("."):  # absent, or a staging folder
        return None
    manifest = _read_manifest(folder)
    try:
        prepared = PreparedCorpus(
            folder,
            int(manifest["n_blocks"]),
            int(manifest["block_size"]),
            str(manifest["corpus_sha256"]),
            str(manifest["tokenizer_sha256"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise _damaged(folder, f"its {MANIFEST} lacks a valid {exc}") from None
    try:
        size = (folder / BLOCKS).stat().st_size
    except FileNotFoundError:
        raise _damaged(folder, f"{BLOCKS} is missing") from None
    except OSError as exc:
        raise _damaged(folder, f"{BLOCKS} cannot be read ({exc.strerror})") from None
    expected = prepared.n_blocks * prepared.block_size * np.dtype(np.int32).itemsize
    if size != expected:
        raise _damaged(folder, f"{BLOCKS} is not {prepared.n_blocks} x {prepared.block_size} int32")
    check_content(folder, manifest, vocabulary=vocabulary, verify=verify)
    return prepared


def _vocabulary(tokenizer: Any) -> int | None:
    """The number of ids the model built on ``tokenizer`` embeds (``len``, as pretraining
    sizes it), or None for a tokenizer that does not say."""
    try:
        return len(tokenizer)
    except TypeError:
        return None


def _write(
    corpus: Corpus,
    tokenizer: Any,
    block_size: int,
    root: Path,
    key: str,
    corpus_sha256: str,
    tokenizer_sha256: str,
    documents_per_call: int,
) -> PreparedCorpus:
    import shutil

    from posharness.storage.io import sweep_stale_temporaries, temporary_tag

    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    if cls_id is None or sep_id is None:
        raise OptionError(
            "the tokenizer has no [CLS]/[SEP] tokens: use a BERT-style tokenizer "
            "(or let pretraining train a WordPiece one)"
        )
    sweep_stale_temporaries(root)  # a preparation a killed process left half-written
    staging = root / f".{temporary_tag()}{key}"
    staging.mkdir()
    progress = _Progress()
    try:
        pieces = blocks(
            tokenised_documents(progress.count(read_corpus(corpus)), tokenizer, documents_per_call),
            block_size,
            separator=sep_id,
        )
        with (staging / BLOCKS).open("wb") as handle:
            output = _BlocksFile(handle, block_size, cls_id, sep_id)
            count = _write_rows(pieces, output, progress)
            handle.flush()
            os.fsync(handle.fileno())
        content = output.content
        if count == 0:
            raise DataError(
                f"the corpus has fewer than {block_size - 2} tokens, not one block of "
                f"--block-size {block_size}: give more text or a smaller --block-size"
            )
        manifest = {
            "format": FORMAT_VERSION,
            "n_blocks": count,
            "block_size": block_size,
            "corpus_sha256": corpus_sha256,
            "tokenizer_sha256": tokenizer_sha256,
            "dtype": "int32",
            "identity": corpus_description(corpus),
            "content": {
                "sha256": content.sha256.hexdigest(),
                "max_id": content.max_id,
                "sampled_sha256": content_summary(staging / BLOCKS)["sampled_sha256"],
                "sampled": f"the first {SAMPLE_BYTES} bytes of every {SAMPLE_CHUNK} bytes",
            },
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        staging.rename(root / key)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise OptionError(_no_space(corpus, root, progress)) from None
        if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
            raise DataError(
                f"prepared corpus {root / key} appeared while this one was written and cannot "
                "be replaced: delete the folder and prepare it again"
            ) from None
        raise OptionError(
            f"cannot write the prepared corpus under {root} ({exc.strerror or exc}): free "
            "space or choose another folder; nothing half-written is kept"
        ) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    found = load_prepared(root / key, vocabulary=_vocabulary(tokenizer))
    assert found is not None
    return found


class _Content:
    """The full hash and largest id of the rows, taken as they are written."""

    def __init__(self) -> None:
        self.sha256 = hashlib.sha256()
        self.max_id = -1


class _Progress:
    """Characters read and bytes written so far: a full disk's message extrapolates them."""

    def __init__(self) -> None:
        self.characters = self.written = 0

    def count(self, texts: Iterable[str]) -> Iterator[str]:
        for text in texts:
            self.characters += len(text)
            yield text


def _no_space(corpus: Corpus, root: Path, progress: _Progress) -> str:
    """One line: where the disk filled and roughly how much room the whole corpus needs.

    The estimate scales the bytes written per character read to the corpus's size in bytes
    (about one byte a character for English text): good to a few tens of percent.
    """
    import shutil

    head = f"no space left on device while preparing {os.fspath(corpus)} in {root}"
    tail = "or point --prepared-dir elsewhere (--out for prepare-corpus)"
    try:
        size, free = corpus_bytes(corpus), shutil.disk_usage(root).free
    except (OSError, ValueError):
        size = free = 0
    if not (size and progress.characters and progress.written):
        return f"{head}: free space (the rows take 4 bytes a token) {tail}"
    mb = 1_000_000
    needed = progress.written / progress.characters * size
    rows = f"the rows need ~{int(needed) // mb + 1} MB, {free // mb} MB are free"
    if needed <= free:  # room again once the partial rows went: something else fills the disk
        return f"{head}: free space ({rows} now; another writer may be filling it) {tail}"
    return f"{head}: free about {-(-int(needed - free) // mb)} MB ({rows}) {tail}"


@dataclass
class _BlocksFile:
    """The blocks file being written: where rows go, how each is framed (``[CLS]`` first,
    ``[SEP]`` last, ``block_size`` ids) and the hash of what went there so far."""

    handle: Any
    block_size: int
    cls_id: int
    sep_id: int
    content: _Content = field(default_factory=_Content)


def _write_rows(
    pieces: Iterable[list[int]], output: _BlocksFile, progress: _Progress | None = None
) -> int:
    """Frame the pieces as ``[CLS] ... [SEP]`` rows and append them in int32 chunks."""
    count, rows = 0, []
    row_bytes = output.block_size * np.dtype(np.int32).itemsize
    for piece in pieces:
        rows.append(piece)
        if len(rows) == _ROWS_PER_WRITE:
            count += _flush(rows, output)
            rows = []
            if progress is not None:
                progress.written = count * row_bytes
    if rows:
        count += _flush(rows, output)
    return count


def _flush(rows: list[list[int]], output: _BlocksFile) -> int:
    framed = np.empty((len(rows), output.block_size), dtype=np.int32)
    framed[:, 0], framed[:, -1] = output.cls_id, output.sep_id
    framed[:, 1:-1] = np.asarray(rows, dtype=np.int32)
    framed.tofile(output.handle)
    output.content.sha256.update(framed.tobytes())
    output.content.max_id = max(output.content.max_id, int(framed.max()))
    return len(rows)
