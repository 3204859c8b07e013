"""Calling ``posharness`` from tests the way a user calls it: exit code and stderr.

Several test modules drive ``posharness run`` into a temporary folder; they share the
call and its isolation options here, so a new option that every run needs (a cache, a
device) is added once.
"""

from __future__ import annotations

import os
import subprocess
import sys
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


def posharness_cli(
    *args: str | Path, cwd: Path, pythonpath: Path | None = None, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    """``python -m posharness ARGS`` in a fresh interpreter, offline, with a wide console."""
    env = dict(os.environ)  # keeps POSHARNESS_CACHE (a tmp dir, set by conftest)
    env["HF_HUB_OFFLINE"] = "1"
    env["COLUMNS"] = "400"  # rich tables must not wrap long paths
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(pythonpath), env.get("PYTHONPATH", "")) if p
        )
    return subprocess.run(
        [sys.executable, "-m", "posharness", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
