"""The README's "A first real number" runs as written, shrunk (issue 45, part 3).

The block pretrains two zoo PEs with ``--recipe cpu-hour --size narrow`` (minutes each),
measures their locality at the trained length and compares the two boards. Here each
command runs as the README gives it, with settings appended that make it finish in
seconds (click keeps the last value of a repeated option): a tiny model, two steps, a
120-piece vocabulary on a small corpus, four probe words. What must hold is the chain: the
bare names load what ``pretrain`` wrote, the runs write the boards ``compare`` reads.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.cli_helpers import cli
from tests.readme_tour import _commands
from tests.unit.models.zoo.test_native_models import write_corpus

README = Path(__file__).resolve().parents[2] / "README.md"
SHRINK = {
    "pretrain": ["--size", "tiny", "--steps", "2", "--batch-size", "2", "--block-size", "24",
                 "--vocab-size", "120", "--device", "cpu"],
    "run": ["--task-arg", "locality_symmetry.words=4", "--task-arg",
            "locality_symmetry.length=16", "--device", "cpu"],
}  # fmt: skip


def first_number_block() -> list[str]:
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index("## A first real number")
    fence = next(i for i in range(start, len(lines)) if lines[i].startswith("```bash"))
    end = next(i for i in range(fence + 1, len(lines)) if lines[i].startswith("```"))
    return [c.code for c in _commands(lines[fence + 1 : end], first_line=fence + 2)]


@pytest.mark.integration
def test_the_first_real_number_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commands = first_number_block()
    assert [c.split()[1] for c in commands] == ["pretrain", "pretrain", "run", "run", "compare"]
    assert all("--recipe cpu-hour --size narrow" in c for c in commands[:2])
    corpus = write_corpus(tmp_path / "corpus.txt")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("POSHARNESS_RUNS", str(tmp_path / "runs"))
    for command in commands:
        argv = shlex.split(command)[1:]
        if argv[0] == "pretrain":
            argv[argv.index("--corpus") + 1] = str(corpus)
        assert cli(*argv, *SHRINK.get(argv[0], [])) == 0, command
    assert (tmp_path / "results" / "tupe-r.json").is_file()
