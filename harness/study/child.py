"""A family command run as a child process of the study: ``python -m posharness ARGS``.

The child is the same command a user would type, so it resumes the way the command does
(pretraining from its last checkpoint). It is tied to its parent: on Linux the kernel
kills it when the study process dies (``PR_SET_PDEATHSIG``), so a study killed with
SIGKILL leaves no orphan still writing into the folder the rerun resumes from. Its output
goes to the stage's log; a failure is reported by the command's own one-line error.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ERROR_PREFIX = "posharness: error: "


def run_command(argv: Sequence[str], log: Path, launcher: Sequence[str] = ()) -> str | None:
    """Run ``posharness argv`` to the end; None on success, else its one-line error.

    ``launcher`` replaces ``python -m`` (``accelerate launch --num_processes 4 -m``) for a
    multi-process pretraining job."""
    log.parent.mkdir(parents=True, exist_ok=True)
    command = [*(launcher or (sys.executable, "-m")), "posharness", *argv]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with log.open("a", encoding="utf-8") as out:
        out.write("$ posharness " + " ".join(argv) + "\n")
        out.flush()
        returncode = subprocess.call(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, preexec_fn=_die_with_parent
        )
    if returncode == 0:
        return None
    return _last_error(log) or f"posharness {argv[0]} exited with code {returncode} (see {log})"


def _die_with_parent() -> None:
    """In the child, before exec: ask for SIGKILL when the parent dies (Linux only)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        return


def _last_error(log: Path) -> str | None:
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    for line in reversed(lines):
        if line.startswith(ERROR_PREFIX):
            return line[len(ERROR_PREFIX) :]
    tail = [line for line in lines[-5:] if line.strip()]
    return tail[-1].strip() if tail else None
