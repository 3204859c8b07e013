"""docs/README.md links every documentation page, one line each (issue 45, part 2): the
README sends a reader there for everything it no longer says itself, so a page missing
from the index is a page nobody finds."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[3] / "docs"


def test_every_docs_page_has_one_index_line() -> None:
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    lines = [line for line in index.splitlines() if line.startswith("- [")]
    linked = [re.match(r"- \[[^\]]+\]\(([^)#]+)\)", line) for line in lines]
    targets = [m[1] for m in linked if m]
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md") if p != DOCS / "README.md")
    assert sorted(t for t in targets if not t.startswith("../")) == pages
    for target in targets:
        assert (DOCS / target).resolve().is_file(), target
