"""Text escaped for LaTeX typesets what it says and never breaks a table: every special
character escaped (checked by a parser-level reading, no LaTeX engine needed)."""

from __future__ import annotations

import re

import pytest

from posharness.study.latex_text import SPECIALS, latex_escape, latex_label
from posharness.study.render import latex_escape as render_escape
from tests.unit.study.latex_check import latex_problems, tabular_problems

# The text commands an escape writes, read back to the character they print.
_PRINTED = {
    r"\textasciitilde{}": "~",
    r"\textasciicircum{}": "^",
    r"\textbackslash{}": "\\",
    r"\textless{}": "<",
    r"\textgreater{}": ">",
    r"\textbar{}": "|",
    "{[}": "[",
    "{]}": "]",
}

NAMES = [
    "TUPE-A^mid",
    "TUPE-A^tie-cls",
    "BERT-A^d",
    "{2, 3, 4, 5}e-5",
    r"a\b",
    r"ends with \\",
    "50% & more #1 ~ $5_x",
    "[draft] first",
    "x < y > z | w",
    "}{",
]


def _printed(tex: str) -> str:
    """What ``tex`` (ASCII escapes only) prints: the inverse of the text escapes."""
    for command, char in _PRINTED.items():
        tex = tex.replace(command, "\x00" + char)
    return re.sub(r"\\([#$%&_{}])", "\x00\\1", tex).replace("\x00", "")


@pytest.mark.parametrize("name", NAMES)
def test_escaped_text_has_no_raw_special_and_balanced_braces(name: str) -> None:
    assert latex_problems(latex_escape(name)) == []


@pytest.mark.parametrize("name", NAMES)
def test_escaped_text_prints_the_text_itself(name: str) -> None:
    assert _printed(latex_escape(name)) == name


def test_every_latex_special_is_escaped_one_by_one() -> None:
    for char in SPECIALS:
        escaped = latex_escape(char)
        assert escaped != char and latex_problems(escaped) == [], char
    assert set(SPECIALS) == set("#$%&~_^\\{}")


def test_braces_of_a_caption_survive() -> None:
    assert latex_escape("{2, 3, 4, 5}e-5") == r"\{2, 3, 4, 5\}e-5"


def test_a_cell_opening_with_a_bracket_is_not_an_optional_argument() -> None:
    assert latex_escape("[x]").startswith("{[}")


def test_the_papers_symbols_become_commands() -> None:
    assert latex_escape("Δ") == r"$\Delta$"
    assert latex_escape("BERT-A*") == r"BERT-A$^{*}$"
    assert latex_escape("≤ 4") == r"$\leq$ 4"
    assert latex_escape("§3.4") == r"\S{}3.4"
    assert latex_problems(latex_escape("▲▼×→–−±·…²")) == []


def test_an_unknown_symbol_is_written_as_its_code_point_never_dropped() -> None:
    assert latex_escape("★") == "[U+2605]"
    assert latex_escape("café") == "café"  # accented Latin: UTF-8 inputenc knows it


def test_line_breaks_inside_a_cell_become_spaces() -> None:
    assert latex_escape("a\n\nb") == "a  b"  # a blank line would end the tabular's row


def test_labels_keep_only_safe_characters() -> None:
    assert latex_label("chen2023.table1") == "chen2023-table1"
    assert latex_label("x_{y}#%") == "x-y-"


def test_render_exports_the_same_escape() -> None:
    assert render_escape is latex_escape


def test_the_checker_finds_what_breaks_latex() -> None:
    """The check is not vacuous: the unescaped forms the issue reported fail it."""
    assert latex_problems("TUPE-A^mid")
    assert latex_problems("{2, 3, 4, 5")
    assert latex_problems("50% done")
    assert latex_problems("a & b")
    assert latex_problems("a & b", cells_allowed=True) == []
    assert latex_problems(r"$x^{2}$ \% \{ \}") == []
    assert latex_problems("$x") == ["a math shift ($) left open"]
    tex = "\\begin{tabular}{lr}\na & b \\\\\na \\& b \\\\\n\\end{tabular}"
    assert tabular_problems(tex) == ["1 cells for 2: a \\& b \\\\"]
