"""The reference corpus is a setting of the ``both`` row too (issue 40, part 6).

A ``both`` cell's ``positional_term_*`` metrics are computed under the positional mode's
split, which reads the reference corpus: WikiText-2 under ``--data-dir``, else the
embedded corpus. A run with and one without must add rows beside each other, never
replace one's scores with the other's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_isolated

WORDS = [
    "the",
    "cat",
    "sat",
    "on",
    "a",
    "mat",
    "and",
    "dog",
    "ran",
    "to",
    "park",
    "with",
    "red",
    "ball",
    "in",
    "garden",
]


def write_wikitext(data: Path) -> None:
    """A small WikiText-2-shaped file where ``--data-dir`` looks for the reference corpus."""
    folder = data / "wikitext-2"
    folder.mkdir(parents=True)
    lines = [" ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(12)) for i in range(300)]
    (folder / "wiki.valid.tokens").write_text(" = Heading = \n\n" + "\n".join(lines) + "\n")


def run(tmp_path: Path, model: Path) -> int:
    return run_isolated(
        tmp_path, "--model", f"hf:{model}", "--tasks", "locality_symmetry",
        "--mode", "both,positional", "--limit", "4", "--task-arg", "locality_symmetry.length=32",
    )  # fmt: skip


def test_a_run_with_and_without_data_dir_replaces_no_row(
    tmp_path: Path, tiny_bert: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(tmp_path, tiny_bert) == 0  # the embedded corpus
    capsys.readouterr()
    write_wikitext(tmp_path / "data")
    assert run(tmp_path, tiny_bert) == 0  # WikiText-2 from --data-dir
    said = capsys.readouterr()
    assert "replaced" not in said.out + said.err
    rows = json.loads((tmp_path / "board.json").read_text())["rows"]
    both = [row for row in rows if row["mode"] == "both"]
    assert len(both) == 2  # one per corpus, each with its own positional-term numbers
    references = [row["settings"].get("reference") for row in both]
    assert None in references  # the embedded corpus adds nothing: earlier rows keep their key
    wiki = next(r for r in references if r)
    assert "wiki.valid.tokens" in wiki
    positional = [row for row in rows if row["mode"] == "positional"]
    assert wiki in {row["settings"].get("reference") for row in positional}


def test_a_rerun_with_the_same_corpus_keeps_one_both_row(
    tmp_path: Path, tiny_bert: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_wikitext(tmp_path / "data")
    assert run(tmp_path, tiny_bert) == 0
    assert run(tmp_path, tiny_bert) == 0
    rows = json.loads((tmp_path / "board.json").read_text())["rows"]
    assert [row["mode"] for row in rows].count("both") == 1
