"""A parser-level check of LaTeX text, run without a LaTeX engine: it reads the text the
way TeX's tokenizer does (control words, control symbols, braces, math shifts) and lists
what would break a table or print something other than the text: an unbalanced brace, a
special character (``# % ~ ^ _ &``) outside its escape, a math shift left open, and, for
a whole ``tabular``, a row with another number of cells than the header.
"""

from __future__ import annotations

import re

# What a raw (unescaped) special does in text mode: each is a problem in a table's text.
RAW_SPECIALS = {
    "#": "a macro parameter",
    "%": "a comment (swallows the rest of the line)",
    "~": "a non-breaking space",
    "^": "a superscript outside math",
    "_": "a subscript outside math",
    "&": "a column separator",
}


def latex_problems(text: str, cells_allowed: bool = False) -> list[str]:
    """What is wrong with ``text`` as LaTeX; ``cells_allowed``: ``&`` separates columns."""
    problems: list[str] = []
    depth, math, i = 0, False, 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            if i + 1 == len(text):
                problems.append(f"a lone backslash at the end (offset {i})")
                break
            word = re.match(r"[A-Za-z]+", text[i + 1 :])
            i += 1 + (len(word.group()) if word else 1)
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                problems.append(f"a closing brace with none open (offset {i})")
                depth = 0
        elif char == "$":
            math = not math
        elif char in RAW_SPECIALS and not (char in "^_" and math or char == "&" and cells_allowed):
            problems.append(f"raw {char!r}, {RAW_SPECIALS[char]} (offset {i})")
        i += 1
    if depth:
        problems.append(f"{depth} brace(s) left open")
    if math:
        problems.append("a math shift ($) left open")
    return problems


def raw_ampersands(line: str) -> int:
    """The column separators of one tabular row (``\\&`` is text, not a separator)."""
    return len(re.findall(r"(?<!\\)&", line))


def tabular_problems(tex: str) -> list[str]:
    """Every row of every ``tabular`` has as many cells as its column specification."""
    problems: list[str] = []
    for spec, body in re.findall(r"\\begin\{tabular\}\{([lrc]+)\}(.*?)\\end\{tabular\}", tex, re.S):
        for line in body.splitlines():
            if not line.rstrip().endswith(r"\\") or line.startswith(r"\multicolumn"):
                continue
            if raw_ampersands(line) != len(spec) - 1:
                problems.append(f"{raw_ampersands(line) + 1} cells for {len(spec)}: {line[:80]}")
    return problems
