"""Every published number is in its paper's text, near the table it was copied from; a
row the paper does not print (``recomputed``: Table A3 without Root) is recomputed from the
paper's printed lines.

The texts live outside the repository (../shared/science/papers); without them the test
is skipped with the reason."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from posharness.tasks.papers import published

PAPERS = Path(__file__).resolve().parents[4].parent / "shared" / "science" / "papers"
FILES = ("chen2023", "chen2023-draft", "tupe2021", "tisa2021")
WINDOW = 25  # lines either side of the table's anchor line


# Tables whose published row spreads over several printed lines: Table A3 prints a model's
# numbers as three lines (Macro Avg, short, long) of three modes each.
LINES_PER_ROW = {("chen2023", "tablea3"): 3}


# Table A3's relation rows as the dump prints them: relation, distance, contextual,
# positional, both.
A3_ROW = re.compile(r"^(\w+) (\d+\.\d) (\d+\.\d) (\d+\.\d) (\d+\.\d)$")
A3_MODES = ("contextual", "positional", "both")
SHORT = 4.0  # "whether the average length of the relation is greater than 4"


def _a3_averages(region: list[str], with_root: bool) -> dict[str, float]:
    """Table A3's macro / short / long averages per mode, recomputed from its rows."""
    rows = [m.groups() for m in map(A3_ROW.match, region) if m]
    assert len(rows) == 20 and rows[0][0] == "Root", [r[0] for r in rows]
    kept = [(float(r[1]), [float(v) for v in r[2:]]) for r in rows if with_root or r[0] != "Root"]
    groups = {
        "macro": kept,
        "short": [r for r in kept if r[0] <= SHORT],
        "long": [r for r in kept if r[0] > SHORT],
    }
    return {
        f"{group}_{mode}": sum(r[1][i] for r in members) / len(members)
        for group, members in groups.items()
        for i, mode in enumerate(A3_MODES)
    }


RECOMPUTED = {("chen2023", "tablea3"): lambda region: _a3_averages(region, with_root=False)}


def _region(text: str, anchor: str) -> list[str]:
    lines = text.splitlines()
    hits = [i for i, line in enumerate(lines) if anchor in line]
    assert len(hits) == 1, f"anchor {anchor!r} found {len(hits)} times"
    return lines[max(0, hits[0] - WINDOW) : hits[0] + WINDOW + 1]


def _pattern(number: float) -> str:
    """The number as the paper prints it: the same digits, maybe more trailing zeros."""
    sign = r"[-\u2212]" if number < 0 else r"(?<![-\u2212\d.])"  # ASCII or U+2212 minus
    return rf"{sign}{re.escape(repr(abs(number)))}0*(?!\d)"


def _printed(number: float, region: str) -> bool:
    return re.search(_pattern(number), region) is not None


def _in_order(numbers: list[float], line: str) -> int:
    """How many of ``numbers``, from the first, the line prints in that order."""
    position = 0
    for count, number in enumerate(numbers):
        found = re.compile(_pattern(number)).search(line, position)
        if found is None:
            return count
        position = found.end()
    return len(numbers)


def _lines_printing(numbers: list[float], region: list[str]) -> int | None:
    """The fewest printed lines that hold the numbers as consecutive runs, in order (a
    table row is one line of the dump); None when some number is on no line."""
    used = 0
    while numbers:
        longest = max(_in_order(numbers, line) for line in region)
        if longest == 0:
            return None
        numbers, used = numbers[longest:], used + 1
    return used


@pytest.mark.parametrize("paper", FILES)
def test_every_published_number_is_in_the_paper_near_its_table(paper: str) -> None:
    data = published.document(paper)
    path = PAPERS / data["text"]
    if not path.exists():
        pytest.skip(f"the papers' texts are not here ({path})")
    text = path.read_text(encoding="utf-8")
    for name, table in data["tables"].items():
        region = _region(text, table["anchor"])
        expected = LINES_PER_ROW.get((paper, name), 1)
        for row in table.get("rows", ()):
            if "recomputed" in row:
                computed = RECOMPUTED[paper, name](region)
                assert {k: round(v, 1) for k, v in computed.items()} == row["values"], row
                continue
            printed = [*map(float, row["values"].values())]
            printed += [float(row["average"])] if "average" in row else []
            where = f"{paper} {name} {row['model']}"
            assert _lines_printing(printed, region) == expected, f"{where}: {printed}"
            spread = [*map(float, row.get("spread", {}).values())]
            assert _lines_printing(spread, region) in (0, 1), f"{where} spread: {spread}"


def test_the_number_check_is_not_vacuous() -> None:
    assert _lines_printing([87.9, -63.9], ["BERT 87.9 -0.3 -63.9"]) == 1
    assert _lines_printing([-63.9, 87.9], ["BERT 87.9 -0.3 -63.9"]) == 2
    assert _lines_printing([87.9, 1.5], ["BERT 87.9 -0.3 -63.9"]) is None
    assert _printed(-63.9, "BERT 87.9 -0.3 -63.9")
    assert _printed(87.1, "| 87.1 |") and _printed(85.3, "<b>85.30</b>")
    assert not _printed(63.9, "x -63.95") and not _printed(7.5, "17.5")
    assert not _printed(-0.4, "0.4")


def test_table_a3s_printed_averages_include_root() -> None:
    """The paper's Macro Avg / short / long are the means of its rows with Root (27.47 /
    45.98 / 55.43), not without (23.7 / 48.2 / 53.8): what Table A3's columns compare."""
    data = published.document("chen2023")
    path = PAPERS / data["text"]
    if not path.exists():
        pytest.skip(f"the papers' texts are not here ({path})")
    table = data["tables"]["tablea3"]
    region = _region(path.read_text(encoding="utf-8"), table["anchor"])
    with_root = _a3_averages(region, with_root=True)
    printed = next(row for row in table["rows"] if "recomputed" not in row)["values"]
    assert {k: round(v, 1) for k, v in with_root.items()} == printed
    macro = [round(with_root[f"macro_{mode}"], 2) for mode in A3_MODES]
    assert macro == [27.47, 45.98, 55.43]
    without = _a3_averages(region, with_root=False)
    assert [round(without[f"macro_{mode}"], 1) for mode in A3_MODES] == [23.7, 48.2, 53.8]
