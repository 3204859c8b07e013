"""Static word vectors from a file, read once per process with gensim's ``KeyedVectors``.

Chen et al. (2023, §3.3.1) put frozen 840B-300d GloVe vectors under their positional
encoder. Researchers hold such vectors in a few formats, all read by gensim (no
hand-written parser):

* GloVe text (``glove.840B.300d.txt``): ``word v1 ... vd`` per line, no header
  (``no_header=True``);
* word2vec text and fastText ``.vec``: the same lines after a ``COUNT DIM`` header;
* word2vec binary (``.bin``).

A sweep of ~100 encoders x 5 repeats x 2 datasets reads the file once: the loaded vectors
are cached by (path, size, mtime). gensim's own errors name no line ("could not broadcast
input array"), so when a text file fails to load, the first line with the wrong number of
fields or a non-number is found and named instead, in one line.
"""

from __future__ import annotations

import itertools
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from posharness.base.errors import OptionError

if TYPE_CHECKING:
    from gensim.models import KeyedVectors

FORMATS = ("auto", "glove", "word2vec", "word2vec-binary", "fasttext")


def detect_format(path: Path) -> str:
    """``glove`` (no header), ``word2vec`` (text with a header) or ``word2vec-binary``."""
    if path.suffix == ".bin":
        return "word2vec-binary"
    with path.open("rb") as handle:
        first = handle.readline(1 << 16)
    try:
        fields = first.decode("utf-8").split()
    except UnicodeDecodeError:
        return "word2vec-binary"
    if len(fields) == 2 and all(field.isdigit() for field in fields):
        return "word2vec"
    return "glove"


def load_vectors(path: str | Path, fmt: str = "auto") -> KeyedVectors:
    """The vectors in ``path``; cached, so a sweep's many settings share one read."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise OptionError(f"vectors file {path} not found: pass vectors=FILE (GloVe/word2vec/.vec)")
    if fmt not in FORMATS:
        raise OptionError(f"vectors_format={fmt!r}: expected one of {', '.join(FORMATS)}")
    stat = path.stat()
    return _load(str(path.resolve()), stat.st_size, stat.st_mtime_ns, fmt)


@lru_cache(maxsize=2)
def _load(path: str, size: int, mtime: int, fmt: str) -> KeyedVectors:
    del size, mtime  # part of the cache key only: an edited file is read again
    from gensim.models import KeyedVectors

    resolved = detect_format(Path(path)) if fmt == "auto" else fmt
    binary = resolved == "word2vec-binary"
    no_header = resolved == "glove"
    try:
        vectors = KeyedVectors.load_word2vec_format(path, binary=binary, no_header=no_header)
    except (ValueError, EOFError, UnicodeDecodeError, IndexError) as exc:
        if binary:
            raise OptionError(
                f"{path}: not a readable word2vec binary file ({exc}); "
                "give vectors_format=glove or word2vec for a text file"
            ) from None
        raise OptionError(
            _bad_line(Path(path), has_header=not no_header) or f"{path}: {exc}"
        ) from None
    if len(vectors) == 0:
        raise OptionError(f"{path}: no vectors read; is it a GloVe/word2vec/fastText file?")
    return vectors


def _bad_line(path: Path, has_header: bool) -> str | None:
    """One line naming the first line whose fields disagree with the file's dimension."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        start = 1
        if has_header:
            header = handle.readline().split()
            start = 2
            if len(header) != 2 or not all(part.isdigit() for part in header):
                return (
                    f"{path}, line 1: expected a 'COUNT DIM' header, got "
                    f"{' '.join(header)[:40]!r}; "
                    "give vectors_format=glove for a file without one"
                )
            dim = int(header[1])
        else:
            dim = None
        for number, line in zip(itertools.count(start), handle):
            fields = line.rstrip("\n").rstrip(" ").split(" ")
            if dim is None:
                dim = len(fields) - 1
            if len(fields) - 1 != dim:
                return (
                    f"{path}, line {number}: {len(fields) - 1} numbers after the word, "
                    f"expected {dim} (inconsistent dimensions)"
                )
            try:
                [float(value) for value in fields[1:]]
            except ValueError:
                return f"{path}, line {number}: a value is not a number (unknown format?)"
    return None


def coverage(vectors: KeyedVectors, sentences: list[list[str]]) -> dict[str, float]:
    """Share of word types and of running tokens that have a vector."""
    tokens = [word for sentence in sentences for word in sentence]
    types = set(tokens)
    known = {word for word in types if word in vectors.key_to_index}
    return {
        "types": len(known) / max(len(types), 1),
        "tokens": sum(word in known for word in tokens) / max(len(tokens), 1),
    }
