"""Plain text made safe for a LaTeX table: every special character escaped, so a row,
column or caption named ``TUPE-A^mid``, ``{2, 3, 4, 5}e-5`` or ``50% & more`` always
compiles and prints what it says.

LaTeX's ten special characters (``# $ % & ~ _ ^ \\ { }``, *The LaTeX Companion* §2.1)
become their text commands; the few symbols our tables print (Δ, ▲▼, ×, →, ≤, ±, ...)
become math or text commands that plain ``pdflatex`` (with ``amssymb`` for ▲▼) knows;
``[`` and ``]`` are braced so a cell that opens with one is never read as the optional
argument of the ``\\\\`` or ``\\midrule`` before it; ``<``, ``>`` and ``|`` get their text
commands, since the default OT1 font prints them as other glyphs. Accented Latin letters
pass through (``inputenc``'s UTF-8 knows them); any other character ``pdflatex`` would
refuse is written as its code point, ``[U+2605]``, so nothing vanishes silently.
"""

from __future__ import annotations

import re
import unicodedata

SPECIALS = "#$%&~_^\\{}"

_ESCAPES = {
    "#": r"\#",
    "$": r"\$",
    "%": r"\%",
    "&": r"\&",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\\": r"\textbackslash{}",
    "[": "{[}",
    "]": "{]}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "\n": " ",
    "\r": " ",
    "\t": " ",
}

_SYMBOLS = {
    "Δ": r"$\Delta$",
    "δ": r"$\delta$",
    "α": r"$\alpha$",
    "β": r"$\beta$",
    "γ": r"$\gamma$",
    "λ": r"$\lambda$",
    "μ": r"$\mu$",
    "σ": r"$\sigma$",
    "ρ": r"$\rho$",
    "▲": r"$^{\blacktriangle}$",
    "▼": r"$^{\blacktriangledown}$",
    "×": r"$\times$",
    "→": r"$\rightarrow$",
    "≤": r"$\leq$",
    "≥": r"$\geq$",
    "≈": r"$\approx$",
    "±": r"$\pm$",
    "·": r"$\cdot$",
    "−": "-",  # U+2212, the minus sign papers print
    "–": "--",
    "—": "---",
    "…": r"\ldots{}",
    "§": r"\S{}",
    "²": r"$^{2}$",
    "°": r"$^{\circ}$",
    "✓": r"$\checkmark$",
    "‘": "`",
    "’": "'",
    "“": "``",
    "”": "''",
    "ß": r"\ss{}",
    "æ": r"\ae{}",
    "Æ": r"\AE{}",
    "ø": r"\o{}",
    "Ø": r"\O{}",
    "å": r"\aa{}",
    "Å": r"\AA{}",
    "*": r"$^{*}$",  # BERT-A* as the paper sets it, BERT-A$^{*}$
}


def latex_escape(text: str) -> str:
    """``text`` as LaTeX that typesets it literally (the module docstring lists how)."""
    return "".join(_escape_char(char) for char in text)


def _escape_char(char: str) -> str:
    if char in _ESCAPES:
        return _ESCAPES[char]
    if char in _SYMBOLS:
        return _SYMBOLS[char]
    if char.isascii():
        return char if char.isprintable() else " "
    if _accented_latin(char):
        return char
    return f"[U+{ord(char):04X}]"


def _accented_latin(char: str) -> bool:
    """A Latin letter with accents (é, ü, ñ): UTF-8 ``inputenc`` typesets it as is."""
    decomposed = unicodedata.normalize("NFD", char)
    base = decomposed[0]
    return (
        len(decomposed) > 1
        and base.isascii()
        and base.isalpha()
        and all(unicodedata.combining(mark) for mark in decomposed[1:])
    )


def latex_label(key: str) -> str:
    """A ``\\label`` key from a table id: letters, digits, ``:`` and ``-`` only."""
    return re.sub(r"[^A-Za-z0-9:-]+", "-", key)
