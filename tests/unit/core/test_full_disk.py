"""A full disk or a read-only folder at the moment of writing: one line naming the file
and the fix, exit 2, and the earlier state intact."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from posharness.errors import OutputError

FAST = {"length": "16", "words": "6", "bootstrap": "10", "figures": "false"}


def grid(tiny_bert: Path, tmp_path: Path, **overrides):
    from posharness.api import evaluate

    values = dict(
        models=f"hf:{tiny_bert}",
        tasks="locality_symmetry",
        output_dir=tmp_path / "results",
        leaderboard=tmp_path / "board.json",
        cache_dir=None,
        device="cpu",
        task_args={"locality_symmetry": dict(FAST)},
    )
    values.update(overrides)
    return evaluate(**values)


def fail_writes_to(monkeypatch, name_part: str, code: int) -> None:
    """Every write to a temporary of a file whose name holds ``name_part`` fails."""
    real = Path.write_text

    def write_text(self: Path, *args, **kwargs):
        if name_part in self.name and ".ph-" in self.name:
            raise OSError(code, os.strerror(code))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", write_text)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
@pytest.mark.parametrize("target", ["board.json", "locality_symmetry__both"])
def test_a_failed_write_is_one_line_and_leaves_the_earlier_files_whole(
    tiny_bert, tmp_path, monkeypatch, code, target
):
    grid(tiny_bert, tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.json")}
    fail_writes_to(monkeypatch, target, code)
    with pytest.raises(OutputError) as caught:  # a second seed: new results, a new board
        grid(tiny_bert, tmp_path, seeds=[0, 1])
    message = str(caught.value)
    assert "\n" not in message and os.strerror(code) in message and target in message
    assert {p: p.read_bytes() for p in before} == before
    assert not list(tmp_path.rglob("*.tmp"))


def test_the_cli_prints_the_one_line_and_exits_2(tiny_bert, tmp_path, monkeypatch, capsys):
    from tests.cli_helpers import cli, one_line_error

    fail_writes_to(monkeypatch, "board.json", errno.ENOSPC)
    args = ["run", "--model", f"hf:{tiny_bert}", "--tasks", "locality_symmetry", "--device"]
    args += ["cpu", "--no-cache", "--output-dir", str(tmp_path / "r")]
    args += ["--leaderboard", str(tmp_path / "board.json")]
    args += [f"--task-arg=locality_symmetry.{k}={v}" for k, v in FAST.items()]
    assert cli(*args) == 2
    assert "No space left on device" in one_line_error(capsys)
