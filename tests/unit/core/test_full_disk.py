"""A full disk or a read-only folder at the moment of writing: one line naming the file
and the fix, exit 2, and the earlier state intact."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from posharness.base.errors import OutputError

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
    assert ("free space on that disk" in message) == (code == errno.ENOSPC)
    assert {p: p.read_bytes() for p in before} == before
    assert not list(tmp_path.rglob("*.tmp"))


@pytest.fixture
def small_disk(tmp_path):
    """A real 64 KiB file system (tmpfs), where a grid's figures and results run out of
    space for real; skipped where mounting is not allowed (not root, no CAP_SYS_ADMIN)."""
    import shutil
    import subprocess

    mount_point = tmp_path / "small-disk"
    mount_point.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root and mount(8)")
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def test_a_really_full_disk_is_one_line_and_the_board_elsewhere_is_intact(
    tiny_bert, tmp_path, small_disk
):
    grid(tiny_bert, tmp_path)
    board = (tmp_path / "board.json").read_bytes()
    heavy = {**FAST, "figures": "true", "length": "48"}  # figures fill 64 KiB
    with pytest.raises(OutputError) as caught:
        grid(
            tiny_bert,
            tmp_path,
            output_dir=small_disk / "results",
            modes=["both", "positional"],
            task_args={"locality_symmetry": heavy},
            model_args={"absolute": "mean-word-stream"},
            overwrite=True,  # other options than the board holds: replace, do not refuse
        )
    message = str(caught.value)
    assert "\n" not in message and "No space left on device" in message, message
    assert str(small_disk) in message and "free space on that disk" in message
    assert (tmp_path / "board.json").read_bytes() == board
    assert not list(small_disk.rglob("*.tmp")) and not list(small_disk.rglob("*.json"))


def test_the_cli_prints_the_one_line_and_exits_2(tiny_bert, tmp_path, monkeypatch, capsys):
    from tests.cli_helpers import cli, one_line_error

    fail_writes_to(monkeypatch, "board.json", errno.ENOSPC)
    args = ["run", "--model", f"hf:{tiny_bert}", "--tasks", "locality_symmetry", "--device"]
    args += ["cpu", "--no-cache", "--output-dir", str(tmp_path / "r")]
    args += ["--leaderboard", str(tmp_path / "board.json")]
    args += [f"--task-arg=locality_symmetry.{k}={v}" for k, v in FAST.items()]
    assert cli(*args) == 2
    assert "No space left on device" in one_line_error(capsys)
