"""What a printed board shows where a number or a header would mislead (issue 47, part 10).

**Headers.** Rich folds a column header that is wider than its column inside a word
(``absolut`` / ``e``, ``contextua`` / ``l``). Here the column is made at least as wide as
the longest piece of its header that cannot be broken (a word, or a name part up to its
``-``, ``/`` or ``@``), and a word wider than that (a spec such as
``bert-a@pretrain/BERT-seed1/final``) is broken after those characters beforehand; rich
then wraps at spaces only.

**Scores with no structure to measure.** A score whose shuffled-positions control (the
same metric with ``_shuffled``, e.g. ``toeplitz/attention_r2``) equals it did not change
when positions were relabelled: the matrix holds nothing that depends on their order. A
Toeplitz R² of the identical-word probe's attention in mode ``contextual`` is the case met
(issue 47: −59 beside a control of −59): with no positional term, every probe position
sees the same word, the attention is uniform up to rounding, and R² = 1 − RSS/TSS divides
rounding by rounding — a least-squares Toeplitz fit, which contains the constant, cannot
otherwise fall below 0 (Wennberg & Henter 2021, App. B). The table shows ``n/a`` there
and a note says why; the board keeps the number (JSON and CSV show it as computed).
"""

from __future__ import annotations

import math
import re

from posharness.boards.leaderboard import Row

CONTROL_SUFFIX = "_shuffled"  # as run/flags.py names a metric's shuffled control
NOT_MEASURABLE = "n/a"
_PIECES = re.compile(r"[^\s/@-]*[/@-]+|[^\s/@-]+")  # a word, or a part ending in - / @


def pieces(text: str) -> list[str]:
    """``text``'s pieces that a header may not break inside (words, and path or name
    parts up to their ``/``, ``@`` or ``-``)."""
    return _PIECES.findall(text)


def widest_piece(texts: list[str]) -> int:
    return max((len(piece) for text in texts for piece in pieces(text)), default=1)


def wrap_header(text: str, width: int) -> str:
    """``text`` with every word wider than ``width`` broken between its pieces into lines
    of at most ``width`` (a piece wider than that keeps a line of its own). Shorter words
    are left to rich, which wraps at spaces only where the table needs the room, and
    never folds a word narrower than its column."""
    return "\n".join(
        " ".join(_broken(word, width) if len(word) > width else word for word in line.split(" "))
        for line in text.split("\n")
    )


def _broken(word: str, width: int) -> str:
    lines = [""]
    for piece in pieces(word):
        if lines[-1] and len(lines[-1]) + len(piece) > width:
            lines.append("")
        lines[-1] += piece
    return "\n".join(lines)


def no_structure(row: Row, key: str) -> bool:
    """Whether ``row``'s score ``key`` (or the metric it is the control of) equals its
    shuffled control: nothing in it depends on the order of positions."""
    metric = key.removesuffix(CONTROL_SUFFIX)
    value, control = row.scores.get(metric), row.scores.get(metric + CONTROL_SUFFIX)
    if value is None or control is None:
        return False
    return math.isclose(value.mean, control.mean, rel_tol=1e-9, abs_tol=1e-12)


def no_structure_notes(rows: list[Row], keys: list[str]) -> list[str]:
    """One note per (row, metric) shown as ``n/a`` by :func:`no_structure`."""
    notes = []
    for row in rows:
        for key in keys:
            if key.endswith(CONTROL_SUFFIX) or not no_structure(row, key):
                continue
            value = row.scores[key].mean
            notes.append(
                f"{NOT_MEASURABLE}: {row.model} ({row.label}) {key} = {value:.4g} equals its "
                "shuffled control: relabelling positions changes nothing, so there is no "
                "positional structure to measure (e.g. attention uniform up to rounding)"
            )
    return notes
