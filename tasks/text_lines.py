"""Numbered, decoded lines of a text file, for every task family that reads one: the
fine-tuning datasets (``finetune.data.readers``) and the raw text spaCy parses
(``dep_heads.spacy_parse``).

Files are read line by line in binary and decoded here, so that every problem can be
reported as ``FILE:LINE: what is wrong: what to do``. No csv module: GLUE quotes are
literal text (a quote-aware reader silently merges rows of MNLI and QQP), and a line's
fields are simply ``line.split("\\t")``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from posharness.base.errors import DataError

__all__ = ["numbered_lines"]

_BOM = "\ufeff"
_GZIP_MAGIC = b"\x1f\x8b"


def numbered_lines(path: Path, *, latin1_fallback: bool = False) -> Iterator[tuple[int, str]]:
    """(line number, text) for each line, without its ``\\n`` or ``\\r\\n``.

    UTF-8 is required unless ``latin1_fallback``: then a file that is not valid UTF-8 as a
    whole is read as Latin-1 (SentEval's TREC train file is Latin-1; SentEval itself reads
    it so). A UTF-8 byte-order mark on the first line (GLUE's MRPC) is dropped.
    """
    _check_readable(path)
    if latin1_fallback:
        return _lines_of_whole_file(path)
    return _strict_utf8_lines(path)


def _check_readable(path: Path) -> None:
    if not path.is_file():
        reason = "is a directory" if path.is_dir() else "no such file"
        raise DataError(f"{path}: {reason}: give the path of the data file")


def _open(path: Path) -> BinaryIO:
    try:
        return path.open("rb")
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise DataError(f"{path}: cannot be read ({reason}): check its permissions") from None


def _strict_utf8_lines(path: Path) -> Iterator[tuple[int, str]]:
    with _open(path) as handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1 and raw.startswith(_GZIP_MAGIC):
                raise DataError(f"{path}:1: the file is gzip-compressed: decompress it (gunzip)")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise DataError(
                    f"{path}:{number}: not UTF-8 (byte 0x{raw[error.start]:02x} at column "
                    f"{error.start + 1}): re-save the file as UTF-8"
                ) from None
            yield number, _without_line_end(text, number)


def _lines_of_whole_file(path: Path) -> Iterator[tuple[int, str]]:
    with _open(path) as handle:
        data = handle.read()
    if data.startswith(_GZIP_MAGIC):
        raise DataError(f"{path}:1: the file is gzip-compressed: decompress it (gunzip)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")  # every byte is a Latin-1 character: cannot fail
    # split("\n"), not splitlines(): the latter also splits at \x1c, \x85, \u2028, ...
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        yield number, _without_line_end(line, number)


def _without_line_end(text: str, number: int) -> str:
    if text.endswith("\n"):
        text = text[:-1]
    if text.endswith("\r"):
        text = text[:-1]
    if number == 1 and text.startswith(_BOM):
        text = text[1:]
    return text
