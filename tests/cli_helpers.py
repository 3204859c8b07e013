"""Calling ``posharness`` from tests the way a user calls it: exit code and stderr.

Several test modules drive ``posharness run`` into a temporary folder; they share the
call and its isolation options here, so a new option that every run needs (a cache, a
device) is added once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from posharness.cli import main


def cli(*args: str) -> int:
    """The exit code of one ``posharness`` command (click always exits)."""
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    return int(exit_info.value.code)


def run_isolated(tmp_path: Path, *args: str) -> int:
    """``posharness run`` on CPU with data, results, cache and leaderboard under tmp_path."""
    (tmp_path / "data").mkdir(parents=True, exist_ok=True)
    return cli(
        "run",
        "--device",
        "cpu",
        "--data-dir",
        str(tmp_path / "data"),
        "--output-dir",
        str(tmp_path / "results"),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--leaderboard",
        str(tmp_path / "board.json"),
        *args,
    )


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    """The command's stderr, which must be one line and no traceback."""
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err
